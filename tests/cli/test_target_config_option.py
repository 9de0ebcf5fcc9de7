"""``--target-config`` naming a path that does not exist is an error when the option is read, on
every command that takes it, even for a recipe without config overrides (whose target config is
otherwise never opened); a repo id passes until it is needed."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recipecli", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "args",
    [
        ("render", "llama3.1-8b-eagle3", "--engine", "vllm"),
        ("diff", "llama3.1-8b-eagle3", "llama3.1-8b-eagle3"),
    ],
)
def test_a_missing_target_config_path_is_one_line_exit_2(args, tmp_path):
    missing = str(tmp_path / "no-such-dir")
    r = _cli(*args, "--target-config", missing)
    assert r.returncode == 2
    assert "--target-config names no such file or directory" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_repo_id_passes_the_option_check():
    # the llama recipe has no config overrides: the repo id is never looked up
    r = _cli(
        "render", "llama3.1-8b-eagle3", "--engine", "vllm",
        "--target-config", "meta-llama/Llama-3.1-8B-Instruct",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
