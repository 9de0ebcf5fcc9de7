"""convert keeps to EAGLE3 formats (issue #27): a DFlash draft or an EAGLE-1 head is refused in
one line (exit 2), and OUT is not created."""

from __future__ import annotations

from pathlib import Path

import pytest

from recipecli.cli import main
from tests.methods.helpers import dflash_draft, eagle1_head


@pytest.mark.parametrize(
    ("make", "words"),
    [(dflash_draft, "a DFlash draft"), (eagle1_head, "an EAGLE-1 head")],
)
def test_convert_refuses_other_methods(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make, words
):
    ck = make(tmp_path / "src")
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exc:
        main(["convert", ck.source, str(out), "--to", "speculators"])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert words in err and "EAGLE3 draft formats only" in err
    assert "Traceback" not in err and not out.exists()
