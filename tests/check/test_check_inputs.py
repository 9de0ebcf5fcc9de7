"""`check`/`inspect` on bad configs, weightless drafts and config-only sources; usage errors; writes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers.fixtures import load_fixture_config

from recipecli.testing.builder import TensorSpec, write_checkpoint
from recipecli.testing.specs import draft_specs, valid_vocab_map

EXAMPLE_TARGET = "recipecli/data/examples/llama3.1-8b-instruct.target.json"


def run(*args: str, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recipecli", *args], capture_output=True, text=True, cwd=cwd
    )


@pytest.fixture
def repo_root():
    from helpers.fixtures import REPO_ROOT

    return str(REPO_ROOT)


@pytest.mark.parametrize(
    "key,value,expect",
    [
        ("hidden_size", "big", "hidden_size must be a positive integer, got 'big'"),
        ("num_attention_heads", 0, "num_attention_heads must be a positive integer, got 0"),
        ("rms_norm_eps", -1e-5, "rms_norm_eps must be a positive number"),
        (
            "eagle_aux_hidden_state_layer_ids",
            [1, "x"],
            "eagle_aux_hidden_state_layer_ids must be a list of integers",
        ),
        ("draft_vocab_size", 1.5, "draft_vocab_size must be a positive integer"),
    ],
)
def test_badly_typed_draft_config_is_exit_2_naming_the_file(
    tmp_path, repo_root, key, value, expect
):
    cfg = load_fixture_config("sgl-project-SpecForge-template__llama3-8B-eagle3")
    cfg[key] = value
    write_checkpoint(tmp_path, cfg, [TensorSpec("fc.weight", "F16", (4, 4))])
    proc = run("check", EXAMPLE_TARGET, str(tmp_path), "--kernel", "skip", cwd=repo_root)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert f"{tmp_path}/config.json" in proc.stderr and expect in proc.stderr


def test_badly_typed_wrapped_target_names_the_dotted_key(tmp_path):
    cfg = load_fixture_config("nvidia__MiniMax-M3-NVFP4")
    cfg["text_config"]["vocab_size"] = "200064"
    write_checkpoint(tmp_path, cfg, [TensorSpec("x", "F16", (2,))])
    proc = run("inspect", str(tmp_path))
    assert proc.returncode == 2
    assert "text_config.vocab_size must be a positive integer, got '200064'" in proc.stderr


def test_draft_directory_without_weights_is_not_ready(tmp_path, repo_root):
    cfg = load_fixture_config("SafeAILab__EAGLE3-traineagle3-config")
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    # vLLM only: tokenspeed also refuses this draft's architecture (LlamaForCausalLM + NextN)
    proc = run(
        "check",
        EXAMPLE_TARGET,
        str(tmp_path),
        "--engine",
        "vllm",
        "--kernel",
        "skip",
        "--json",
        cwd=repo_root,
    )
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    errs = [f for f in doc["findings"] if f["severity"] == "error"]
    assert [f["code"] for f in errs] == ["tensor.missing"]
    assert errs[0]["evidence"]["missing"] == ["<all weights>"]
    assert doc["engines"]["vllm"]["ready"] is False


def test_bare_config_draft_says_what_was_not_checked(tmp_path, repo_root):
    cfg = load_fixture_config("SafeAILab__EAGLE3-traineagle3-config")
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    proc = run(
        "check",
        EXAMPLE_TARGET,
        str(tmp_path / "config.json"),
        "--engine",
        "vllm",
        "--kernel",
        "skip",
        "--json",
        cwd=repo_root,
    )
    assert proc.returncode == 0
    codes = {(f["code"], f["severity"]) for f in json.loads(proc.stdout)["findings"]}
    assert ("tensor.unchecked", "warning") in codes


def test_usage_errors_are_one_line():
    for args in (
        ["check", "--example", "llama3.1-8b-eagle3", "--engine", "trtllm"],
        ["--bogus"],
        ["completion", "tcsh"],
    ):
        proc = run(*args)
        assert proc.returncode == 2
        assert proc.stderr.startswith("recipecli: error: ") and proc.stderr.count("\n") == 1, (
            proc.stderr
        )


def test_save_metadata_to_unwritable_places(tmp_path, repo_root):
    (tmp_path / "file").write_text("x")
    d = tmp_path / "draft"
    cfg = load_fixture_config("sgl-project-SpecForge-template__llama3-8B-eagle3")
    d2t, t2d = valid_vocab_map(128256, 32000)
    write_checkpoint(d, cfg, draft_specs(cfg, d2t=d2t, t2d=t2d))
    for target, why in (
        (tmp_path / "file" / "x.json", "not a directory"),
        (tmp_path / "nope" / "x.json", "does not exist"),
        (tmp_path, "is a directory"),
    ):
        proc = run("inspect", str(d), "--save-metadata", str(target))
        assert proc.returncode == 2, proc.stderr
        assert str(target) in proc.stderr and why in proc.stderr
        assert proc.stderr.count("\n") == 1
        assert "Traceback" not in proc.stderr
    assert not (tmp_path / "nope").exists()  # no directory created by a typo


def test_inspect_shows_derived_head_dim(repo_root):
    # SafeAILab EAGLE3 config has no head_dim: 4096 / 32 heads = 128
    proc = run(
        "inspect",
        "recipecli/data/examples/eagle3-llama3.1-instruct-8b.draft.json",
        "--json",
        cwd=repo_root,
    )
    doc = json.loads(proc.stdout)
    assert (doc["head_dim"], doc["head_dim_from"]) == (128, "hidden_size / num_attention_heads")


def test_path_with_existing_first_part_is_not_sent_to_the_hub(tmp_path):
    (tmp_path / "ck").mkdir()
    proc = run("inspect", "ck/llama8", cwd=str(tmp_path))
    assert proc.returncode == 2
    assert "ck/llama8: no such directory" in proc.stderr and proc.stderr.count("\n") == 1


def test_swapped_arguments_get_a_hint(repo_root):
    draft = "recipecli/data/examples/eagle3-llama3.1-instruct-8b.draft.json"
    proc = run("check", draft, EXAMPLE_TARGET, "--kernel", "skip", "--json", cwd=repo_root)
    assert proc.returncode == 1
    (f,) = [f for f in json.loads(proc.stdout)["findings"] if f["code"] == "draft.not_eagle3"]
    assert "did you swap TARGET and DRAFT?" in f["message"]


@pytest.mark.parametrize("tp", ["1,,2", "2,4,", "", "0", "a"])
def test_tp_lists_are_strict(repo_root, tp):
    proc = run(
        "check", "--example", "llama3.1-8b-eagle3", "--kernel", "skip", "--tp", tp, cwd=repo_root
    )
    assert proc.returncode == 2 and "--tp" in proc.stderr
