"""Reads outside the recipe (issue #29, item 2): a recipe's ``results`` entries name bench files
that ``docs`` reads and publishes; they must stay inside the recipe's folder (links followed).
``docs`` refuses the others with one line naming the recipe line, ``lint`` reports each as
``recipe.results_outside``; a recipe path that is a loop of links says so."""

from __future__ import annotations

import json
import os

import pytest

from recipecli.cli import main
from recipecli.docsgen.results import results_sections
from recipecli.errors import RecipeError
from recipecli.recipes.loader import load_recipe


@pytest.fixture
def nested(scratch):
    """rec/rr.yaml: the scratch recipe one folder down, the bench files above it."""
    (scratch / "rec").mkdir()
    text = (scratch / "my.yaml").read_text().replace("name: my", "name: rr")
    (scratch / "rec" / "rr.yaml").write_text(text)
    return scratch


def _add_results(scratch, baseline: str, candidate: str) -> int:
    """Append a results entry to rec/rr.yaml; the line of its ``baseline:`` key."""
    path = scratch / "rec" / "rr.yaml"
    text = path.read_text()
    extra = f"results:\n  - title: A/B\n    baseline: {baseline}\n    candidate: {candidate}\n    gpus: 4\n"
    path.write_text(text + extra)
    return len(text.splitlines()) + 3  # results:, - title:, baseline:


def _docs_with_results(capsys, scratch, baseline: str, candidate: str) -> int:
    _add_results(scratch, baseline, candidate)
    return _docs(capsys)[0]


def _docs(capsys) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(["docs", "rec/rr.yaml", "-o", "site", "--checkpoints", "none"])
    return int(exc.value.code or 0), capsys.readouterr().err


def _refused(result: tuple[int, str], line: int, value: str) -> bool:
    """Exit 2 and one line naming the recipe line (render's lint gate may add its hint)."""
    code, err = result
    head = (
        f"recipecli: error: rec/rr.yaml:{line}: results entry {value!r} is outside the recipe's "
        "folder rec; copy it beside the recipe"
    )
    return code == 2 and err.startswith(head) and err.count("\n") == 1


def test_results_with_dotdot_are_refused(nested, capsys):
    line = _add_results(nested, "../base.json", "../cand.json")
    assert _refused(_docs(capsys), line, "../base.json")
    assert not (nested / "site").exists()


def test_results_with_an_absolute_path_are_refused(nested, capsys):
    base, cand = nested / "base.json", nested / "cand.json"
    line = _add_results(nested, str(base), str(cand))
    assert _refused(_docs(capsys), line, str(base))
    assert not (nested / "site").exists()


def test_results_through_a_link_out_of_the_folder_are_refused(nested, capsys):
    os.symlink("../base.json", nested / "rec" / "base.json")
    os.symlink("../cand.json", nested / "rec" / "cand.json")
    line = _add_results(nested, "base.json", "cand.json")
    assert _refused(_docs(capsys), line, "base.json")
    assert not (nested / "site").exists()


def test_only_the_candidate_outside_is_refused_at_its_line(nested, capsys):
    os.rename(nested / "base.json", nested / "rec" / "base.json")
    line = _add_results(nested, "base.json", "../cand.json")
    assert _refused(_docs(capsys), line + 1, "../cand.json")


def test_lint_reports_each_results_file_outside(nested, capsys):
    line = _add_results(nested, "../base.json", "[../cand.json]")
    with pytest.raises(SystemExit) as exc:
        main(["lint", "rec/rr.yaml", "--json"])
    assert exc.value.code == 1
    doc = json.loads(capsys.readouterr().out)
    found = [f for f in doc["recipes"][0]["findings"] if f["code"] == "recipe.results_outside"]
    assert [(f["severity"], f["source"].split(";")[0]) for f in found] == [
        ("error", f"rec/rr.yaml:{line}"),
        ("error", f"rec/rr.yaml:{line + 1}"),
    ]
    assert "'../cand.json' is outside the recipe's folder rec" in found[1]["message"]


def test_a_link_that_stays_in_the_folder_is_read(nested, capsys):
    (nested / "rec" / "data").mkdir()
    for name in ("base.json", "cand.json"):
        os.rename(nested / name, nested / "rec" / "data" / name)
        os.symlink(f"data/{name}", nested / "rec" / name)
    assert _docs_with_results(capsys, nested, "base.json", "data/../cand.json") == 0


def test_bundled_results_stay_inside(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["lint", "minimax-m3-eagle3", "--json"])
    doc = json.loads(capsys.readouterr().out)
    codes = [f["code"] for f in doc["recipes"][0]["findings"]]
    assert exc.value.code in (0, 1)
    assert "recipe.results_outside" not in codes


def test_results_inside_the_folder_are_read(nested, capsys):
    for name in ("base.json", "cand.json"):
        os.rename(nested / name, nested / "rec" / name)
    assert _docs_with_results(capsys, nested, "base.json", "cand.json") == 0
    assert "| Baseline | Candidate |" in (nested / "site" / "rr.md").read_text()


@pytest.mark.parametrize("command", ["render", "lint"])
def test_a_recipe_that_is_a_loop_of_links_says_so(scratch, capsys, command):
    os.symlink("loop-b.yaml", scratch / "loop-a.yaml")
    os.symlink("loop-a.yaml", scratch / "loop-b.yaml")
    args = (
        ["render", "loop-a.yaml", "--engine", "vllm"]
        if command == "render"
        else ["lint", "loop-a.yaml"]
    )
    with pytest.raises(SystemExit) as exc:
        main(args)
    captured = capsys.readouterr()
    assert exc.value.code == (2 if command == "render" else 1)
    text = captured.err + captured.out
    assert "loop-a.yaml: " in text and "is a loop of symbolic links" in text
    assert "no such recipe" not in text


def test_results_sections_refuse_without_the_lint_gate(nested):
    """The docs layer refuses on its own (a caller that skips lint still reads nothing)."""
    line = _add_results(nested, "../base.json", "../cand.json")
    recipe = load_recipe("rec/rr.yaml")
    with pytest.raises(RecipeError) as exc:
        results_sections(recipe, "vllm")
    assert exc.value.path == f"rec/rr.yaml:{line}"
    assert exc.value.message == (
        "results entry '../base.json' is outside the recipe's folder rec; copy it beside the recipe"
    )
