"""``--set draft=`` / ``--set target=`` naming a local path that does not exist is refused
(issue #28: it rendered silently); a repo id stays allowed and an existing path is kept."""

from __future__ import annotations

import pytest

from recipecli.cli.app import main


def _render(capsys, *sets: str) -> tuple[int, str, str]:
    args = ["render", "llama3.1-8b-eagle3", "--engine", "vllm"]
    for s in sets:
        args += ["--set", s]
    try:
        code = main(args)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("value", ["./no-such-draft", "/no/such/draft", "~/no-such-draft-o28", "x"])
def test_missing_local_draft_is_refused(capsys, value):
    code, out, err = _render(capsys, f"draft={value}")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and f"--set draft={value}" in err


def test_missing_local_target_is_refused(capsys):
    code, _, err = _render(capsys, "target=./no-such-target")
    assert code == 2 and "--set target=./no-such-target" in err


def test_repo_id_and_existing_path_render(capsys, tmp_path):
    code, out, _ = _render(capsys, "draft=someone/other-draft")
    assert code == 0 and "someone/other-draft" in out
    local = tmp_path / "draft"
    local.mkdir()
    code, out, err = _render(capsys, f"draft={local}")
    assert str(local) in out, err
