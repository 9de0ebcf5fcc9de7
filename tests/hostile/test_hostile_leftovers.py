"""Leftovers of killed runs (issue #29, item 4): a SIGKILL cannot be caught, so what a run was
writing stays: ``docs -o``/``report -o`` temporary files (``.NAME.recipecli-*.tmp``) and
``convert --force``'s backup of the previous OUT (``.OUT.old-*``). Each is marked as ours
(the name, a marker file) and locked while its run lives; the next run onto the same output
removes those nobody holds, and nothing else. Real subprocesses are killed at chosen points."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest
from hostile_helpers import hidden

# The command runs with a hook: at the chosen point it prints "at" and sleeps (to be killed).
_HOOKED = textwrap.dedent(
    """
    import sys, time
    point, args = sys.argv[1], sys.argv[2:]
    import recipecli.safe_write.files as files
    import recipecli.safe_write.folders as folders
    real_stage, real_rename = files._stage, folders.os.rename
    count = [0]
    def stage(final, data):
        tmp = real_stage(final, data)
        count[0] += 1
        if point == "staged" and count[0] == 2 or point == "hold":
            print("at", flush=True); time.sleep(600)
        return tmp
    def rename(a, b):
        real_rename(a, b)
        count[0] += 1
        if point == f"rename{count[0]}":
            print("at", flush=True); time.sleep(600)
    files._stage = stage
    class OS:  # replace_dir's os, with the hooked rename
        def __getattr__(self, name):
            return rename if name == "rename" else getattr(os, name)
    import os
    folders.os = OS()
    from recipecli.cli import main
    main(args)
    """
)


def _kill_at(scratch, point: str, *args: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOOKED, point, *args],
        cwd=scratch, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env={**os.environ, "NO_COLOR": "1", "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    while line and line.strip() != "at":
        line = proc.stdout.readline()
    assert line.strip() == "at", "the hook was never reached"
    return proc


def _kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)


DOCS = ("docs", "my.yaml", "-o", "site", "--checkpoints", "none")
REPORT = ("report", "base.json", "cand.json", "--gpus", "4", "-o", "ab.md")


@pytest.mark.parametrize(("args", "folder"), [(DOCS, "site"), (REPORT, ".")])
def test_killed_write_leaves_marked_temp_files_the_next_run_removes(run, scratch, args, folder):
    if folder == "site":
        (scratch / "site").mkdir()
    _kill(_kill_at(scratch, "staged" if folder == "site" else "hold", *args))
    left = [n for n in os.listdir(scratch / folder) if ".recipecli-" in n]
    assert left and all(n.endswith(".tmp") for n in left)  # what the kill left
    mine = scratch / folder / ".notes.md.tmp"  # a user's hidden file: not ours
    mine.write_text("keep\n")
    again = run(*args)
    assert again.returncode == 0, again.stderr
    assert [n for n in os.listdir(scratch / folder) if ".recipecli-" in n] == []
    assert mine.read_text() == "keep\n"
    mine.unlink()
    assert hidden(scratch) == []


def test_a_running_writes_temp_file_is_never_removed(run, scratch):
    proc = _kill_at(scratch, "hold", *REPORT)
    try:
        held = [n for n in os.listdir(scratch) if ".recipecli-" in n]
        assert len(held) == 1
        other = run(*REPORT)  # a second report onto ab.md meanwhile
        assert other.returncode == 0, other.stderr
        assert held[0] in os.listdir(scratch)  # the running one's file is still there
    finally:
        _kill(proc)


CONVERT = ("convert", "draft", "out", "--to", "eagle3", "--force")


def _outs(scratch) -> list[str]:
    return sorted(n for n in os.listdir(scratch) if n.startswith(".out."))


@pytest.mark.parametrize("point", ["rename1", "rename2"])
def test_killed_force_convert_backup_is_finished_by_the_next_run(run, scratch, point):
    # rename1: killed after the previous OUT moved into .out.old-*/old (OUT missing);
    # rename2: killed after the new OUT is in place (the previous one not yet deleted)
    first = run(*CONVERT)
    assert first.returncode == 0, first.stderr
    before = (scratch / "out" / "model.safetensors").read_bytes()
    _kill(_kill_at(scratch, point, *CONVERT))
    assert (scratch / "out").exists() == (point == "rename2")
    backups = [n for n in _outs(scratch) if n.startswith(".out.old-")]
    assert len(backups) == 1
    assert (scratch / backups[0] / ".recipecli-convert-backup").is_file()
    (scratch / ".out.old-mine").mkdir()  # a user's folder of the same shape: never ours
    again = run(*CONVERT)
    assert again.returncode == 0, again.stderr
    assert _outs(scratch) == [".out.old-mine"]
    assert sorted(os.listdir(scratch / "out")) == [
        ".recipecli-convert.json",
        "config.json",
        "model.safetensors",
    ]
    assert (scratch / "out" / "model.safetensors").read_bytes() == before  # same draft, same out
