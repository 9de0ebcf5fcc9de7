"""Usage lines and help that say what a command needs (issue #28, item 10)."""

from __future__ import annotations

import pytest

from recipecli.cli.app import main


def _help(capsys, *args: str) -> str:
    with pytest.raises(SystemExit) as exc:
        main([*args, "--help"])
    assert exc.value.code == 0
    return " ".join(capsys.readouterr().out.split())  # unwrapped


def test_check_usage_names_the_three_ways_to_give_the_pair(capsys):
    # TARGET and DRAFT are not optional extras: the pair is TARGET DRAFT, --example or --recipe
    text = _help(capsys, "check")
    assert text.startswith(
        "Usage: recipecli check [OPTIONS] (TARGET DRAFT | --example NAME | --recipe NAME_OR_FILE)"
    )
    assert "[TARGET]" not in text and "[DRAFT]" not in text


def test_render_help_marks_engine_required(capsys):
    assert "Engine to render for (required, except with --list)." in _help(capsys, "render")


def test_render_without_engine_still_says_which(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["render", "llama3.1-8b-eagle3"])
    assert exc.value.code == 2
    assert "missing --engine (vllm, tokenspeed, sglang)" in capsys.readouterr().err
