"""``--set`` of the TP size re-derives the visible devices; ``--set env.NAME=VALUE`` (issue #28,
item 6).

Expected values from the recipes' YAML: llama3.1-8b-eagle3's h200 profile exports
``CUDA_VISIBLE_DEVICES: "0"`` with ``serve.tensor_parallel_size: 1`` (the first device for TP
1); gpt-oss-120b-eagle3's h200x4 exports ``"0,1,2,3"`` for TP 4. A TP size of N needs N
devices: each engine runs one worker per TP rank, each on its own visible GPU.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from recipecli.errors import UsageError
from recipecli.recipes.render import render_command


def test_tp_set_re_derives_the_first_devices():
    r = render_command("llama3.1-8b-eagle3", "vllm", sets=["tensor_parallel_size=2"])
    assert r.env["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert r.argv[r.argv.index("--tensor-parallel-size") + 1] == "2"
    r = render_command("llama3.1-8b-eagle3", "vllm", sets=["serve.tensor_parallel_size=8"])
    assert r.env["CUDA_VISIBLE_DEVICES"] == "0,1,2,3,4,5,6,7"


def test_tp_set_down_and_on_other_engines():
    r = render_command("gpt-oss-120b-eagle3", "vllm", sets=["tensor_parallel_size=2"])
    assert r.env["CUDA_VISIBLE_DEVICES"] == "0,1"
    # the recipe marks tokenspeed unsupported (its draft): --force renders it
    r = render_command(
        "gpt-oss-120b-eagle3", "tokenspeed", sets=["tensor_parallel_size=8"], force=True
    )
    assert r.env["CUDA_VISIBLE_DEVICES"] == "0,1,2,3,4,5,6,7"


def test_without_set_the_recipe_env_is_kept():
    assert render_command("gpt-oss-120b-eagle3", "vllm").env["CUDA_VISIBLE_DEVICES"] == "0,1,2,3"
    assert render_command("llama3.1-8b-eagle3", "vllm").warnings == ()


def test_env_set_adds_replaces_and_unsets():
    r = render_command(
        "llama3.1-8b-eagle3",
        "vllm",
        sets=["env.VLLM_LOGGING_LEVEL=DEBUG", "env.NCCL_DEBUG=INFO", "env.NCCL_DEBUG=WARN"],
    )
    assert r.env == {
        "CUDA_VISIBLE_DEVICES": "0",
        "VLLM_LOGGING_LEVEL": "DEBUG",
        "NCCL_DEBUG": "WARN",
    }
    unset = render_command("llama3.1-8b-eagle3", "vllm", sets=["env.CUDA_VISIBLE_DEVICES="])
    assert unset.env == {}
    # an explicit value wins over the derived one, in command-line order either way
    for sets in (
        ["env.CUDA_VISIBLE_DEVICES=4,5", "tensor_parallel_size=2"],
        ["tensor_parallel_size=2", "env.CUDA_VISIBLE_DEVICES=4,5"],
    ):
        r = render_command("llama3.1-8b-eagle3", "vllm", sets=sets)
        assert r.env["CUDA_VISIBLE_DEVICES"] == "4,5" and r.warnings == ()


def test_env_value_is_text_verbatim():
    r = render_command("llama3.1-8b-eagle3", "vllm", sets=["env.X=a b=c 'd'"])
    assert r.env["X"] == "a b=c 'd'"


@pytest.mark.parametrize("name", ["env.1X=a", "env.A-B=a", "env.=a"])
def test_env_name_must_be_a_variable_name(name):
    with pytest.raises(UsageError, match="not an environment variable name"):
        render_command("llama3.1-8b-eagle3", "vllm", sets=[name])


def _pinned(tmp_path: Path, devices: str) -> str:
    recipe = {
        "name": "pinned",
        "target": "meta-llama/Llama-3.1-8B-Instruct",
        "draft": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
        "speculative": {"method": "eagle3", "num_speculative_tokens": 3},
        "serve": {"tensor_parallel_size": 2},
        "default_hardware": "h200",
        "hardware": {"h200": {"vendor": "nvidia", "env": {"CUDA_VISIBLE_DEVICES": devices}}},
    }
    path = tmp_path / "pinned.yaml"
    path.write_text(yaml.safe_dump(recipe, sort_keys=False))
    return str(path)


def test_pinned_devices_are_kept_and_too_few_warn(tmp_path):
    path = _pinned(tmp_path, "6,7")  # devices 6 and 7, not the first two: chosen, not derived
    assert render_command(path, "vllm").warnings == ()  # 2 devices for TP 2
    r = render_command(path, "vllm", sets=["tensor_parallel_size=4"])
    assert r.env["CUDA_VISIBLE_DEVICES"] == "6,7"
    (w,) = r.warnings
    assert w.code == "recipe.visible_devices" and w.severity == "warning"
    assert "lists 2 device(s) for TP 4" in w.message
    assert "--set env.CUDA_VISIBLE_DEVICES=0,1,2,3" in w.message
    lines = Path(path).read_text().splitlines()
    line = next(i for i, t in enumerate(lines, 1) if "CUDA_VISIBLE_DEVICES" in t)
    assert w.source == f"{path}:{line}"
    # fewer is fine: TP 1 on two visible devices uses the first
    assert render_command(path, "vllm", sets=["tensor_parallel_size=1"]).warnings == ()


def _render_cli(capsys, *args: str) -> tuple[int, str, str]:
    from recipecli.cli.app import main

    with pytest.raises(SystemExit) as exc:
        main(["render", *args])
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def test_render_refuses_the_tp_check_refuses(capsys):
    """Llama-3.1-8B-Instruct (bundled snapshot): 32 attention heads, 8 KV heads, vocab 128256;
    the draft's lm_head has 32000 rows. TP 3 splits none of them (32 % 3 = 2, 8 % 3 = 2 and
    3 % 8 = 3, 32000 % 3 = 2): vLLM's LlamaAttention asserts, as check says (check --example
    ... --tp 3: vllm not ready at TP 3). TP 16: 32 % 16 = 0, KV heads replicated (16 % 8 = 0),
    128256 / 16 = 8016 and 32000 / 16 = 2000 rows: renders."""
    rc, _, err = _render_cli(
        capsys, "llama3.1-8b-eagle3", "--engine", "vllm", "--set", "tensor_parallel_size=3"
    )
    assert rc == 2
    (line,) = err.splitlines()
    assert line.startswith("recipecli: error: --set tensor_parallel_size=3: vllm refuses TP 3: ")
    assert "attention heads 32 / KV heads 8 do not split over TP 3" in line and "(+2 more)" in line
    assert "--force" in line
    rc, out, err = _render_cli(
        capsys, "llama3.1-8b-eagle3", "--engine", "vllm", "--set", "tensor_parallel_size=16"
    )
    assert rc == 0 and err == ""
    assert "export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15" in out


def test_forced_layout_errors_are_warnings(capsys):
    args = ("llama3.1-8b-eagle3", "--engine", "vllm", "--set", "tensor_parallel_size=3", "--force")
    rc, out, err = _render_cli(capsys, *args)
    assert rc == 0 and "--tensor-parallel-size 3" in out
    assert len(err.splitlines()) == 3  # target heads, draft heads, draft lm_head rows
    assert all(line.startswith("recipecli: warning: ") for line in err.splitlines())


def test_bench_alone_is_not_gated(capsys):
    # the bench command does not depend on the TP size; only a rendered serve command is checked
    args = ("llama3.1-8b-eagle3", "--engine", "vllm", "--what", "bench")
    rc, _, err = _render_cli(capsys, *args, "--set", "tensor_parallel_size=3")
    assert rc == 0 and err == ""
