"""The method corpus (tests/methods/method_corpus.json, issue #27's done-when): public model
configs (tests/fixtures/methods/, tests/fixtures/configs/, each with its SOURCE.txt) and the
verdict each engine's code gives them, worked out by hand from that code (each case's ``why``).

A target is written config-only (no tensor index, as a Hub header-only source without weights);
a draft gets the tensors its case names (sparse holes) so that its ``fc`` width is seen.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from recipecli.check import run_check
from recipecli.checkpoint import open_checkpoint
from recipecli.testing.builder import TensorSpec, write_checkpoint

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures"
CORPUS = json.loads((HERE / "method_corpus.json").read_text())["cases"]


def _write(root: Path, fixture: str, tensors: list[Any], update: dict[str, Any]) -> Path:
    cfg = json.loads((FIXTURES / fixture / "config.json").read_text())
    cfg.update(update)
    if tensors:
        specs = [TensorSpec(n, "BF16", tuple(s)) for n, s in tensors]
        return write_checkpoint(root, cfg, specs)
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps(cfg))
    return root


def test_the_corpus_is_large_enough_and_sourced():
    assert len(CORPUS) >= 30
    for case in CORPUS:
        for key in ("target", "draft"):
            if case.get(key):
                assert (FIXTURES / case[key] / "SOURCE.txt").is_file(), case[key]


@pytest.mark.parametrize("case", CORPUS, ids=[c["name"] for c in CORPUS])
def test_corpus_verdicts(tmp_path: Path, case: dict[str, Any]):
    target_ck = open_checkpoint(str(_write(tmp_path / "t", case["target"], [], {})))
    if case["draft"] is None:
        draft_ck = target_ck
    else:
        d = _write(tmp_path / "d", case["draft"], case.get("draft_tensors", []),
                   case.get("draft_update", {}))  # fmt: skip
        draft_ck = open_checkpoint(str(d))
    res = run_check(
        target_ck,
        draft_ck,
        tps=(1,),
        method=case["method"],
        num_speculative_tokens=case.get("num_speculative_tokens"),
    )
    for engine, want in case["expect"].items():
        got = sorted(
            f.code
            for f in res.findings
            if f.engine == engine and f.code.startswith("method.") and f.severity == "error"
        )
        assert got == sorted(want), (
            engine,
            [f.message for f in res.findings if f.engine == engine],
        )
        if not want:
            assert any(f.code == "method.supported" and f.engine == engine for f in res.findings)
