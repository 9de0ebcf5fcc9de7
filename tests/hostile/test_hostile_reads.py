"""Reads outside the recipe (issue #29, item 2): a recipe's ``results`` entries name bench files
that ``docs`` reads and publishes; they must stay inside the recipe's folder. NOT YET: docs
(recipecli/docsgen/results.py) reads any path and lint says nothing; these cases are strict
xfails, so they fail once the rule lands and the marks must go."""

from __future__ import annotations

import os

import pytest

from recipecli.cli import main

_OPEN = pytest.mark.xfail(
    strict=True, reason="issue #29 item 2: results paths are not confined to the recipe's folder"
)


@pytest.fixture
def nested(scratch):
    """rec/rr.yaml: the scratch recipe one folder down, the bench files above it."""
    (scratch / "rec").mkdir()
    text = (scratch / "my.yaml").read_text().replace("name: my", "name: rr")
    (scratch / "rec" / "rr.yaml").write_text(text)
    return scratch


def _docs_with_results(capsys, scratch, baseline: str, candidate: str) -> int:
    path = scratch / "rec" / "rr.yaml"
    extra = f"results:\n  - title: A/B\n    baseline: {baseline}\n    candidate: {candidate}\n    gpus: 4\n"
    path.write_text(path.read_text() + extra)
    with pytest.raises(SystemExit) as exc:
        main(["docs", "rec/rr.yaml", "-o", "site", "--checkpoints", "none"])
    capsys.readouterr()
    return int(exc.value.code or 0)


@_OPEN
def test_results_with_dotdot_are_refused(nested, capsys):
    assert _docs_with_results(capsys, nested, "../base.json", "../cand.json") == 2
    assert not (nested / "site").exists()


@_OPEN
def test_results_with_an_absolute_path_are_refused(nested, capsys):
    base, cand = nested / "base.json", nested / "cand.json"
    assert _docs_with_results(capsys, nested, str(base), str(cand)) == 2


@_OPEN
def test_results_through_a_link_out_of_the_folder_are_refused(nested, capsys):
    os.symlink("../base.json", nested / "rec" / "base.json")
    os.symlink("../cand.json", nested / "rec" / "cand.json")
    assert _docs_with_results(capsys, nested, "base.json", "cand.json") == 2


def test_results_inside_the_folder_are_read(nested, capsys):
    for name in ("base.json", "cand.json"):
        os.rename(nested / name, nested / "rec" / name)
    assert _docs_with_results(capsys, nested, "base.json", "cand.json") == 0
    assert "| Baseline | Candidate |" in (nested / "site" / "rr.md").read_text()
