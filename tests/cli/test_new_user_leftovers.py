"""The new-user leftovers of issue #28's second trial: help examples that name only paths a
reader has, a docs usage line that admits --bundled, and check naming the missing DRAFT."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from recipecli.cli.app import COMMANDS, main

REPO = Path(__file__).resolve().parents[2]


def _help(capsys, *args: str) -> str:
    with pytest.raises(SystemExit) as exc:
        main([*args, "--help"])
    assert exc.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_examples_name_no_recipes_folder(capsys, command):
    # the trial's reader ran `recipecli lint ... recipes/` and `docs recipes/`: no such folder
    # exists in a clone (the bundled recipes sit in recipecli/data/recipes, named by name)
    text = _help(capsys, command)
    examples = [line for line in text.splitlines() if line.strip().startswith("recipecli ")]
    for line in examples:
        assert not re.search(r"(^|\s)\.?/?recipes/", line), line


def test_docs_usage_admits_bundled_and_engines(capsys):
    usage = " ".join(_help(capsys, "docs").split()).split(" Generate ")[0]
    assert usage.startswith("Usage: recipecli docs [OPTIONS] (RECIPE_OR_DIR... | --bundled")
    assert "--engines" in usage


def test_check_target_alone_names_the_missing_draft(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["check", "org/target-only"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "missing DRAFT (TARGET is org/target-only)" in err
    assert "TARGET and DRAFT" not in err


def test_check_example_naming_a_bundled_recipe_points_at_recipe(capsys):
    # qwen3-30b-a3b-eagle3 is a file in recipecli/data/recipes, not an example pair
    with pytest.raises(SystemExit) as exc:
        main(["check", "--example", "qwen3-30b-a3b-eagle3"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "recipecli check --recipe qwen3-30b-a3b-eagle3" in err
    # a name that is neither keeps the list of examples
    with pytest.raises(SystemExit) as exc:
        main(["check", "--example", "no-such-pair"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "unknown example 'no-such-pair'" in err and "--recipe" not in err


def test_convert_errors_do_not_suggest_a_snapshot(capsys, tmp_path, monkeypatch):
    # convert copies the draft's weights, which a snapshot leaves out: its missing-source hint
    # must not offer one (the trial's reader tried and convert refused it)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    with pytest.raises(SystemExit) as exc:
        main(["convert", "someone/not-cached", str(tmp_path / "out"), "--to", "eagle3"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "someone/not-cached" in err
    assert "snapshot" not in err
    assert not (tmp_path / "out").exists()


def test_convert_of_a_bundled_repo_id_does_not_take_the_snapshot(capsys, tmp_path, monkeypatch):
    # yuhuili/EAGLE3-LLaMA3.1-Instruct-8B ships as a snapshot (no weights): convert looks for
    # the real checkpoint (HF cache), so offline with an empty cache it is a missing source
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "convert",
                "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
                str(tmp_path / "o"),
                "--to",
                "eagle3",
            ]
        )
    assert exc.value.code == 2
    assert "not in the HF cache" in capsys.readouterr().err
