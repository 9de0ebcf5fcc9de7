"""The last line of `check`'s human report names the exit code and why (issue #28, item 1).

Expected verdicts of the bundled example (meta-llama/Llama-3.1-8B-Instruct +
yuhuili/EAGLE3-LLaMA3.1-Instruct-8B, recipecli/data/examples/) are worked out from its configs:

* the draft's config says ``architectures: ["LlamaForCausalLM"]``: tokenspeed renames it to
  ``LlamaForCausalLMNextN`` (tokenspeed get_config: arch + "NextN"), which it does not register,
  and SGLang 0.5.23 keeps it (configs/model_config.py _config_draft_model) and builds the Llama
  target class: both are NOT READY at every TP size;
* vLLM v0.33.0 renames it to ``Eagle3LlamaForCausalLM`` and loads it: READY wherever the
  target's 32 attention heads divide by the TP size (vllm/config/parallel.py
  verify_with_model_config: num_attention_heads % tensor_parallel_size), i.e. at 1, 2, 4, 8 and
  16 but not at 3 (32 % 3 = 2).
"""

from __future__ import annotations

import dataclasses

import pytest

from recipecli.check import format_result, run_check, verdict_line
from recipecli.checkpoint import open_checkpoint
from recipecli.cli.app import main
from recipecli.codes import finding
from recipecli.examples import example_pair

EXAMPLE = ("--example", "llama3.1-8b-eagle3", "--kernel", "skip")


def _run(capsys, *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(["check", *args])
    return int(exc.value.code or 0), capsys.readouterr().out


@pytest.fixture(scope="module")
def example():
    target, draft = example_pair("llama3.1-8b-eagle3")
    return open_checkpoint(target), open_checkpoint(draft)


def test_all_engines_last_line_names_exit_1(capsys):
    rc, out = _run(capsys, *EXAMPLE)
    assert rc == 1
    assert out.rstrip("\n").splitlines()[-1] == (
        "exit 1: not ready on tokenspeed, sglang (errors above)"
    )


def test_vllm_alone_exits_0_and_says_so(capsys):
    rc, out = _run(capsys, *EXAMPLE, "--engine", "vllm")
    assert rc == 0
    lines = out.rstrip("\n").splitlines()
    assert lines[-1] == "exit 0: ready on vllm at TP 1, 2, 4, 8"
    assert lines[-2] == ""  # a blank line before it, as between the report's sections


def test_a_tp_size_the_heads_do_not_divide(capsys):
    rc, out = _run(capsys, *EXAMPLE, "--engine", "vllm", "--tp", "3,16")
    assert rc == 1
    assert out.splitlines()[-1] == "exit 1: vllm not ready at TP 3 (errors above)"


def test_json_has_no_verdict_line(capsys):
    rc, out = _run(capsys, *EXAMPLE, "--engine", "vllm", "--json")
    assert rc == 0 and out.lstrip().startswith("{") and "exit 0" not in out


def test_warnings_under_strict(example):
    """A warning on vLLM (hand-made finding) passes by default and fails under --strict."""
    res = run_check(*example, engines=("vllm",), tps=(1, 2), kernel="skip")
    warned = dataclasses.replace(
        res,
        findings=(
            *res.findings,
            finding("maxpos.short", "made up", severity="warning", engine="vllm", source="test"),
        ),
    )
    assert verdict_line([warned]) == ["exit 0: ready on vllm at TP 1, 2 (warnings above)"]
    assert verdict_line([warned], strict=True) == [
        "exit 1: warnings fail --strict on vllm (warnings above)"
    ]
    assert format_result(warned, strict=True).splitlines()[-1] == (
        "exit 1: warnings fail --strict on vllm (warnings above)"
    )
    assert "exit" not in format_result(warned, verdict=False).splitlines()[-1]


def test_several_runs_group_engines_by_tp(example):
    """check --recipe prints one line for all its runs: engines checked at the same TP sizes
    are named together."""
    a = run_check(*example, engines=("vllm",), tps=(4,), kernel="skip")
    b = run_check(*example, engines=("tokenspeed", "sglang"), tps=(4,), kernel="skip")
    c = run_check(*example, engines=("vllm",), tps=(1,), kernel="skip")
    assert verdict_line([a, c]) == ["exit 0: ready on vllm at TP 4; vllm at TP 1"]
    assert verdict_line([a, b]) == ["exit 1: not ready on tokenspeed, sglang (errors above)"]


def test_colour_paints_only_the_exit_code(example):
    res = run_check(*example, engines=("vllm",), tps=(1,), kernel="skip")
    (line,) = verdict_line([res], color=True)
    assert line.startswith("\x1b[") and line.endswith(": ready on vllm at TP 1")
    assert "exit 0" in line


def test_check_recipe_names_the_engines_it_left_out(capsys):
    """llama3.1-8b-eagle3 (its YAML) marks tokenspeed and SGLang unsupported: check --recipe
    checks vLLM alone at the serve command's TP 1, and its verdict says the others were not."""
    rc, out = _run(capsys, "--recipe", "llama3.1-8b-eagle3", "--kernel", "skip")
    assert rc == 0
    assert out.splitlines()[-1] == "exit 0: ready on vllm at TP 1; not checked: tokenspeed, sglang"
    rc, out = _run(
        capsys, "--recipe", "llama3.1-8b-eagle3", "--kernel", "skip", "--engine", "sglang"
    )
    assert rc == 1
    assert out.splitlines()[-1] == "exit 1: not ready on sglang (errors above)"
