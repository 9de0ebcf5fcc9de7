"""Fixtures of the hostile-input suite: a scratch folder (the cwd) with a tiny format-A draft,
a target config, a copy of a bundled recipe and two vLLM bench files, and a runner of
``python -m recipecli`` in a subprocess (for signals, resource limits and closed streams)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.convert import tiny, write_draft, write_target
from helpers.fixtures import REPO_ROOT
from helpers.report import PR_CANDIDATE, bench_json

from recipecli.testing.specs import valid_vocab_map

RECIPE = REPO_ROOT / "recipecli" / "data" / "recipes" / "llama3.1-8b-eagle3.yaml"


@pytest.fixture
def scratch(tmp_path, fixture_config, monkeypatch) -> Path:
    """The cwd: draft/ (format A, 1000-token target vocab, 100-token draft vocab), target/
    (config.json only), my.yaml (the bundled llama recipe renamed ``my``), base.json and
    cand.json (vLLM ``--save-result`` files)."""
    cfg = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"))
    d2t, t2d = valid_vocab_map(1000, 100, seed=7)
    write_draft(tmp_path / "draft", cfg, d2t=d2t, t2d=t2d)
    write_target(tmp_path / "target")
    text = RECIPE.read_text().replace("name: llama3.1-8b-eagle3", "name: my")
    (tmp_path / "my.yaml").write_text(text)
    (tmp_path / "base.json").write_text(json.dumps(bench_json()))
    (tmp_path / "cand.json").write_text(json.dumps(bench_json(PR_CANDIDATE)))
    monkeypatch.chdir(tmp_path)
    return tmp_path


Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run(scratch) -> Run:
    """``run(*args, code=None, stdout=PIPE, limit_kb=None)``: ``python -m recipecli ARGS`` (or
    ``python -c CODE`` when given) in the scratch folder, with ``ulimit -f limit_kb``."""

    def go(
        *args: str,
        code: str | None = None,
        stdout: int | object = subprocess.PIPE,
        limit_kb: int | None = None,
    ) -> subprocess.CompletedProcess[str]:
        def limit() -> None:
            if limit_kb is not None:
                import resource

                resource.setrlimit(resource.RLIMIT_FSIZE, (limit_kb * 1024, limit_kb * 1024))

        cmd = [sys.executable, "-c", code] if code else [sys.executable, "-m", "recipecli", *args]
        env = {**os.environ, "NO_COLOR": "1", "HF_HUB_OFFLINE": "1"}
        return subprocess.run(
            cmd, cwd=scratch, env=env, stdout=stdout, stderr=subprocess.PIPE,
            text=True, timeout=120, preexec_fn=limit,
        )  # fmt: skip

    return go
