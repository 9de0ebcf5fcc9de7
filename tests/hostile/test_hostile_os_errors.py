"""Ordinary failures of the machine are one line and a conventional exit code, never a
traceback (issue #29, item 4): a full disk (ENOSPC), the file-size limit (EFBIG, ``ulimit -f``),
stdout closed by its reader (EPIPE: quiet, 141), and every other OS error (EACCES, EISDIR,
ENXIO, ELOOP) on the way to main (exit 2, the errno's name in the line)."""

from __future__ import annotations

import errno
import os
import subprocess

import pytest
from hostile_helpers import hidden, one_error_line

from recipecli.cli import main

# -------------------------------------------------------------------- EFBIG: `ulimit -f` (KiB)

# the draft's one shard is 131,152 bytes (a 64-wide, 100-token draft in float32 + maps), so 50 KiB
# cannot hold it; a docs page is a few KiB (1 KiB cannot hold one); a report table ~1.3 KiB


@pytest.mark.parametrize(
    ("args", "limit_kb", "dest"),
    [
        (("convert", "draft", "out", "--to", "eagle3"), 50, "out"),
        (("docs", "my.yaml", "-o", "site", "--checkpoints", "none"), 1, "site/"),
        (("report", "base.json", "cand.json", "--gpus", "4", "-o", "ab.md"), 0, "ab.md"),
    ],
)
def test_file_size_limit_is_one_line_and_leaves_nothing(run, scratch, args, limit_kb, dest):
    before = sorted(os.listdir(scratch))
    proc = run(*args, limit_kb=limit_kb)
    line = one_error_line(proc.stderr)
    assert proc.returncode == 2
    assert line.startswith(f"recipecli: error: {dest}"), line
    assert "(EFBIG)" in line and "ulimit -f" in line, line
    assert sorted(os.listdir(scratch)) == before  # no OUT, no site/, no ab.md
    assert hidden(scratch) == []  # no temporary file or folder


# -------------------------------------------------------------------- stdout on a full device


@pytest.mark.parametrize(
    "args",
    [
        ("inspect", "draft"),
        ("render", "my.yaml", "--engine", "vllm"),
        ("report", "base.json", "cand.json", "--gpus", "4", "--json"),
    ],
)
def test_stdout_on_a_full_device(run, args):
    with open("/dev/full", "w") as full:
        proc = run(*args, stdout=full)
    line = one_error_line(proc.stderr)
    assert proc.returncode == 2
    assert line == (
        "recipecli: error: no space left on the device (ENOSPC) — free some space or write "
        "somewhere else"
    )


# -------------------------------------------------------------------- EPIPE: quiet, 128 + 13


@pytest.mark.parametrize(
    "args",
    [
        ("inspect", "draft", "--json"),
        ("render", "my.yaml", "--engine", "vllm", "--what", "all"),
        ("lint", "my.yaml", "--json"),
    ],
)
def test_stdout_closed_by_its_reader_is_quiet(scratch, args):
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "recipecli", *args],
        cwd=scratch, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # `| head -0`: the reader is gone before the first byte
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141  # 128 + SIGPIPE, as the shell reports `cat` stopped so
    assert err == ""


# -------------------------------------------------------------------- other OS errors -> main


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (errno.EACCES, "permission denied (EACCES)"),
        (errno.EISDIR, "it is a directory, not a file (EISDIR)"),
        (errno.ENXIO, "no such device or address (a FIFO with no reader"),
        (errno.ELOOP, "too many levels of symbolic links (a loop of links) (ELOOP)"),
        (errno.ENOSPC, "no space left on the device (ENOSPC)"),
    ],
)
def test_os_error_anywhere_is_one_line(scratch, capsys, monkeypatch, code, words):
    # the first thing `render` does is to read its recipe: that read fails with `code`
    import recipecli.recipes.loader as loader

    def failing(ref, **kw):
        raise OSError(code, os.strerror(code), "my.yaml")

    monkeypatch.setattr(loader, "load_recipe", failing)
    with pytest.raises(SystemExit) as exc:
        main(["render", "my.yaml", "--engine", "vllm"])
    err = capsys.readouterr().err
    line = one_error_line(err)
    assert exc.value.code == 2
    assert line.startswith("recipecli: error: my.yaml: ") and words in line, line


def test_debug_shows_the_traceback(scratch, capsys, monkeypatch):
    import recipecli.recipes.loader as loader

    def failing(ref, **kw):
        raise OSError(errno.EACCES, "Permission denied", "my.yaml")

    monkeypatch.setattr(loader, "load_recipe", failing)
    with pytest.raises(SystemExit) as exc:
        main(["render", "my.yaml", "--engine", "vllm", "--debug"])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert "Traceback" in err and err.splitlines()[-1].endswith(
        "check the permissions or give another path"
    )


def test_save_metadata_on_a_full_disk(scratch, capsys, monkeypatch):
    import recipecli.safe_write.files as files

    def full(final, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files, "_stage", full)
    with pytest.raises(SystemExit) as exc:
        main(["inspect", "draft", "--save-metadata", "snap.json"])
    line = one_error_line(capsys.readouterr().err)
    assert exc.value.code == 2
    assert line == (
        "recipecli: error: snap.json: cannot write --save-metadata file: no space left on the "
        "device (ENOSPC); nothing was written — free some space or write somewhere else"
    )
    assert not (scratch / "snap.json").exists() and hidden(scratch) == []


@pytest.mark.parametrize("at", ["tensor", "config"])
def test_convert_on_a_full_disk_is_one_line_and_leaves_nothing(scratch, capsys, monkeypatch, at):
    # ENOSPC while a shard's tensor is written, or while config.json is
    import recipecli.convert.run as run_mod
    import recipecli.convert.write as write_mod

    def full(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    if at == "tensor":
        monkeypatch.setattr(write_mod, "write_tensor", full)
    else:
        monkeypatch.setattr(run_mod, "write_new_file", full)
    before = sorted(os.listdir(scratch))
    with pytest.raises(SystemExit) as exc:
        main(["convert", "draft", "out", "--to", "eagle3"])
    line = one_error_line(capsys.readouterr().err)
    assert exc.value.code == 2
    assert line.startswith("recipecli: error: out") and "(ENOSPC)" in line, line
    assert sorted(os.listdir(scratch)) == before and hidden(scratch) == []
