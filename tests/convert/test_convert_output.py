"""`recipecli convert`: what OUT looks like on disk (modes), what stderr shows (progress only on
a terminal), and bad OUT paths (one line, exit 2, nothing created)."""

from __future__ import annotations

import errno
import io
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.convert import tiny, write_draft

from recipecli.convert import ConvertOptions, Progress, convert
from recipecli.convert import write as convert_write
from recipecli.errors import UsageError
from recipecli.testing.specs import valid_vocab_map


@pytest.fixture
def draft(tmp_path, fixture_config) -> Path:
    cfg = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"))
    d2t, t2d = valid_vocab_map(1000, 100, seed=21)
    return write_draft(tmp_path / "ck" / "small-draft", cfg, d2t=d2t, t2d=t2d, num_shards=2)


def run_cli(*args: str, umask: int | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recipecli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=(lambda: os.umask(umask)) if umask is not None else None,
    )


def modes(root: Path) -> dict[str, int]:
    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in [root, *sorted(root.iterdir())]}


@pytest.mark.parametrize(
    ("umask", "dmode", "fmode"), [(0o022, 0o755, 0o644), (0o077, 0o700, 0o600)]
)
def test_out_has_mkdir_and_file_modes_not_temp_dir_mode(tmp_path, draft, umask, dmode, fmode):
    out = tmp_path / "out"
    proc = run_cli("convert", str(draft), str(out), "--to", "eagle3", umask=umask)
    assert proc.returncode == 0, proc.stderr
    # 2 source shards -> 1 output shard (default --max-shard-size 5GB): no index file; the
    # marker that lets a later --force replace OUT has the file mode too
    assert modes(out) == {
        "out": dmode,
        ".recipecli-convert.json": fmode,
        "config.json": fmode,
        "model.safetensors": fmode,
    }


def test_sharded_out_index_has_file_mode(tmp_path, draft):
    out = tmp_path / "out"
    old = os.umask(0o022)
    try:
        convert(str(draft), out, ConvertOptions(to="eagle3", max_shard_size=40_000), progress=False)
    finally:
        os.umask(old)
    got = modes(out)
    assert got.pop("out") == 0o755
    shards = sorted(n for n in got if n.endswith(".safetensors"))
    assert len(shards) > 1 and all(n.startswith("model-0000") for n in shards)
    assert sorted(got) == [
        ".recipecli-convert.json",
        "config.json",
        *shards,
        "model.safetensors.index.json",
    ]
    assert set(got.values()) == {0o644}


def test_not_a_tty_one_summary_line_no_progress(tmp_path, draft):
    out = tmp_path / "out"
    proc = run_cli("convert", str(draft), str(out), "--to", "eagle3")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"recipecli: wrote and verified 0.1 MB in 1 shard(s) into {out} (")
    assert "%" not in proc.stderr and "\r" not in proc.stderr


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("stream", "drawn"), [(io.StringIO, False), (_Tty, True)])
def test_progress_bar_only_on_a_tty(monkeypatch, stream, drawn):
    pytest.importorskip("tqdm")
    err = stream()
    monkeypatch.setattr(sys, "stderr", err)
    bar = Progress(2_000_000, "convert: write")
    for _ in range(20):
        bar.update(100_000)
    bar.close()
    assert bar.done == 2_000_000
    assert ("convert: write" in err.getvalue()) is drawn
    if not drawn:
        assert err.getvalue() == ""


def test_progress_disabled_prints_nothing(monkeypatch):
    err = _Tty()
    monkeypatch.setattr(sys, "stderr", err)
    bar = Progress(100, "convert: write", enabled=False)
    bar.update(100)
    bar.close()
    assert err.getvalue() == ""


# the folder rule every writer shares (recipecli.safe_write.check_parent): same words as
# report -o / --plot, inspect --save-metadata and docs -o
BAD_OUT = {
    "under_a_file": ("f.txt/out", "{tmp}/f.txt is a file, not a directory — give another OUT"),
    "deep_under_a_file": (
        "f.txt/a/out",
        "{tmp}/f.txt is a file, not a directory — give another OUT",
    ),
    "missing_parent": (
        "nodir/out",
        "directory {tmp}/nodir does not exist — give another OUT or create {tmp}/nodir first",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_OUT))
def test_bad_out_path_exit_2_one_line(tmp_path, draft, case):
    rel, why = BAD_OUT[case]
    (tmp_path / "f.txt").write_text("x\n")
    out = tmp_path / rel
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = run_cli("convert", str(draft), str(out), "--to", "eagle3")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"recipecli: error: {out}: cannot write OUT: {why.format(tmp=tmp_path)}"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no directory created


def test_temp_dir_creation_failure_is_one_line(tmp_path, draft, monkeypatch):
    # e.g. a read-only or virtual file system (/proc): mkdtemp fails although the parent exists
    def refuse(*args, **kw):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(convert_write.tempfile, "mkdtemp", refuse)
    out = tmp_path / "out"
    with pytest.raises(UsageError) as exc:
        convert(str(draft), out, ConvertOptions(to="eagle3"), progress=False)
    assert exc.value.one_line() == (
        f"{out}: cannot write OUT: Read-only file system — give another OUT"
    )
    assert not out.exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_unwritable_parent_exit_2(tmp_path, draft):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        proc = run_cli("convert", str(draft), str(ro / "out"), "--to", "eagle3")
    finally:
        ro.chmod(0o755)
    assert proc.returncode == 2
    assert f"cannot write OUT: directory {ro} is not writable" in proc.stderr
