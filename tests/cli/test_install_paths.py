"""Messages name bundled files inside the package (``recipecli/data/recipes/<file>:LINE``),
never by their install path (issue #28 item 10)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import recipecli

PACKAGE = str(Path(recipecli.__file__).resolve().parent)


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf"), NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "recipecli", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("args", "code"),
    [
        # minimax-m3-eagle3.yaml marks sglang unsupported (unsupported: sglang: at line 23)
        (("render", "minimax-m3-eagle3", "--engine", "sglang"), 2),
        (("lint", "minimax-m3-eagle3"), 0),
        (("render", "minimax-m3-eagle3", "--engine", "vllm", "--hardware", "nope"), 2),
    ],
)
def test_bundled_recipe_messages_name_the_package_file(tmp_path, args, code):
    proc = _run(tmp_path, *args)
    assert proc.returncode == code, proc.stderr
    text = proc.stdout + proc.stderr
    assert PACKAGE not in text
    assert "recipecli/data/recipes/minimax-m3-eagle3.yaml" in text


def test_lint_json_sources_are_package_relative(tmp_path):
    proc = _run(tmp_path, "lint", "qwen3-30b-a3b-eagle3", "--json")
    assert PACKAGE not in proc.stdout
    sources = [f["source"] for f in json.loads(proc.stdout)["recipes"][0]["findings"]]
    assert sources and all(s.startswith("recipecli/data/recipes/") for s in sources), sources
