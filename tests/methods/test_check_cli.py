"""``recipecli check --method`` on the command line (issue #27): MTP without DRAFT, auto on an
EAGLE3 pair printing what it printed before, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recipecli.cli import main
from tests.helpers.pairs import base_pair
from tests.methods.helpers import llama_target, mtp_target


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(["check", *args])
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def test_mtp_needs_no_draft(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    mtp_target(tmp_path)
    code, out, _ = run(capsys, str(tmp_path / "target"), "--method", "mtp", "--tp", "1",
                       "--kernel", "skip", "--json")  # fmt: skip
    assert code == 0
    doc = json.loads(out)
    supported = [f for f in doc["findings"] if f["code"] == "method.supported"]
    assert {f["engine"] for f in supported} == {"vllm", "sglang", "tokenspeed"}


def test_mtp_on_a_target_without_mtp_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    llama_target(tmp_path)
    code, out, _ = run(capsys, str(tmp_path / "target"), "--method", "mtp", "--tp", "1",
                       "--kernel", "skip")  # fmt: skip
    assert code == 1 and "method.mtp_target" in out


def test_a_missing_draft_is_still_refused_without_mtp(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    llama_target(tmp_path)
    code, _, err = run(capsys, str(tmp_path / "target"), "--kernel", "skip")
    assert code == 2 and "missing DRAFT" in err


def test_auto_prints_what_check_printed_before(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    # the text of the EAGLE3 check without any method (run_check's method=None, the check of
    # before issue #27) is what the CLI prints with its default --method auto
    from recipecli.check import format_result, run_check
    from recipecli.checkpoint import open_checkpoint

    t, d = base_pair().write(tmp_path)
    res = run_check(open_checkpoint(str(t)), open_checkpoint(str(d)), tps=(1, 2))
    code, out, _ = run(
        capsys, str(t), str(d), "--tp", "1,2", "--kernel", "skip", "--method", "auto"
    )
    assert code == 0
    assert out == format_result(res, color=False) + "\n"
