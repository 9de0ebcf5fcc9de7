"""The one writer every recipecli output goes through.

Every file or folder a command writes (``inspect --save-metadata``, ``report -o``/``--plot``,
``docs -o`` pages, ``convert`` OUT) is checked here first and written here:

* **Never an input.** The destination is refused when it *is*, *contains* or *lies inside* any
  input of the command (checkpoint folders and their files, the ``--target``, recipe files,
  bench files). Paths are compared after resolving symbolic links **and** by device/inode, so a
  hard link, a bind mount or ``..`` detours are caught as well.
* **Only regular files and our own folders.** An existing FIFO, device (``/dev/null``), socket
  or folder is never replaced by a regular file. An existing regular file is replaced only when
  it is a previous output of the same kind (an :class:`OutputKind` recognises it: the snapshot
  key, the report layout, the PNG tag, the generated-page marker) or empty; anything else is
  refused. ``convert`` replaces an existing OUT only with ``--force`` and only when OUT is empty
  or a previous ``convert`` output (its :data:`CONVERT_MARKER` lists the files it wrote) holding
  nothing else; only those files are deleted.
* **One folder rule.** The folder that holds the output must exist: recipecli creates the output
  itself (a file; ``convert``'s OUT and ``docs``' ``-o DIR`` folders) but never a folder above
  it, so a typo cannot scatter folders. The missing-folder message is the same for every writer
  (:func:`check_parent`).
* **Atomic.** Data goes to a temporary file in the destination's folder, is flushed with
  ``fsync`` and renamed over the destination (then the folder is flushed). The temporary file is
  removed on every exit path: errors, Ctrl-C (SIGINT), SIGTERM and SIGHUP
  (:func:`interrupt_on_signals` turns the latter two into ``KeyboardInterrupt``).

Errors are :class:`recipecli.errors.UsageError`: one line naming the destination, what is wrong
and what to do (exit 2); nothing is written or removed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import stat
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from recipecli.errors import UsageError
from recipecli.safeio import file_kind

#: One input of a command: (how messages name it, its path), e.g. ("the draft", Path("models/d")).
Input = tuple[str, "str | os.PathLike[str]"]

#: File ``convert`` writes into every OUT: its format version and the files it wrote. ``--force``
#: replaces a folder only when this file is there and lists everything in it.
CONVERT_MARKER = ".recipecli-convert.json"
CONVERT_MARKER_KEY = "recipecli_convert"

#: Largest existing file read to recognise a previous output (report JSON tables are small).
RECOGNISE_MAX_BYTES = 16 << 20

#: ``Software`` text chunk of the PNG that ``report --plot`` writes (its output mark).
PLOT_SOFTWARE_TAG = "recipecli report --plot"


# --------------------------------------------------------------------------- output kinds


@dataclass(frozen=True)
class OutputKind:
    """What a command writes, and how a previous output of it is recognised.

    Attributes:
        name: how messages name it, e.g. "recipecli snapshot".
        recognise: ``head -> bool`` on the first ``head_bytes`` bytes of an existing file.
        head_bytes: how much of the existing file ``recognise`` needs.
    """

    name: str
    recognise: Callable[[bytes], bool]
    head_bytes: int = 4096


def _is_snapshot(head: bytes) -> bool:
    # dumps_snapshot writes the version key first: {"recipecli_snapshot": 1, ...}
    return re.match(rb'\s*\{\s*"recipecli_snapshot"\s*:', head) is not None


def _is_report(head: bytes) -> bool:
    # markdown (render_markdown): first line "Workload: ..."; JSON (Report.to_dict): these keys
    if head.startswith(b"Workload: "):
        return True
    try:
        doc = json.loads(head)
    except (ValueError, RecursionError):
        return False
    return isinstance(doc, dict) and {"labels", "files", "workload", "rows"} <= doc.keys()


def _is_plot(head: bytes) -> bool:
    # PNG signature, then a tEXt chunk "Software\0recipecli report --plot" (before the image data)
    tag = b"tEXtSoftware\x00" + PLOT_SOFTWARE_TAG.encode()
    return head.startswith(b"\x89PNG\r\n\x1a\n") and tag in head


SNAPSHOT = OutputKind("recipecli snapshot (inspect --save-metadata)", _is_snapshot, 256)
REPORT = OutputKind("recipecli report table", _is_report, RECOGNISE_MAX_BYTES)
PLOT = OutputKind("recipecli report --plot chart", _is_plot, 4096)


def generated_page_kind(*markers: str) -> OutputKind:
    """The kind of ``docs`` pages: files whose first line is one of ``markers``."""
    firsts = {m.encode("utf-8") for m in markers}
    return OutputKind(
        "generated page (recipecli docs)",
        lambda head: head.split(b"\n", 1)[0].rstrip(b"\r") in firsts,
        max(len(f) for f in firsts) + 2,
    )


# --------------------------------------------------------------------------- path identity


def _ident(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """(device, inode) of ``path`` following links; None when it cannot be stat'ed."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _chain(path: Path) -> set[tuple[int, int]]:
    """Identities of ``path`` and every folder above it (those that exist)."""
    out = set()
    for p in (path, *path.parents):
        ident = _ident(p)
        if ident is not None:
            out.add(ident)
    return out


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def check_inputs(
    dest: str | os.PathLike[str],
    inputs: Iterable[Input],
    *,
    what: str,
    noun: str,
    shown: str | os.PathLike[str] | None = None,
) -> None:
    """Refuse a destination that is, contains or lies inside one of ``inputs``.

    Args:
        dest: the destination (need not exist; its folder must).
        inputs: the command's inputs as (label, path); paths that do not exist are skipped.
        what: the destination in messages, e.g. "-o file", "OUT".
        noun: what to give instead, e.g. "-o path", "OUT".
        shown: how messages name ``dest`` (default: ``dest``), e.g. as the user typed it.

    Raises:
        UsageError: one line naming ``dest`` and the input.
    """
    dest = Path(dest)
    name = str(shown if shown is not None else dest)
    real = _real(dest)
    ident = _ident(dest)
    dest_is_dir = ident is not None and os.path.isdir(dest)
    above = _chain(real.parent)
    items = [(label, Path(p)) for label, p in inputs if p is not None and str(p) != ""]
    checked = []
    for label, p in items:
        p_ident = _ident(p)
        if p_ident is None and not os.path.lexists(p):
            continue
        checked.append((label, p, _real(p), p_ident))
    hint = f"give another {noun}; recipecli never writes over or into its inputs"
    for label, _p, p_real, p_ident in checked:
        if real == p_real or (ident is not None and ident == p_ident):
            raise UsageError(f"cannot write {what}: it is {label}", path=name, hint=hint)
    for label, _p, p_real, _id in checked:
        if dest_is_dir and (real in p_real.parents or ident in _chain(p_real.parent)):
            raise UsageError(
                f"cannot write {what}: it holds {label}, which replacing it would delete",
                path=name,
                hint=hint,
            )
    for label, _p, p_real, p_ident in checked:
        if p_ident is not None and os.path.isdir(p_real):
            if p_real in real.parents or p_ident in above:
                raise UsageError(
                    f"cannot write {what}: it lies inside {label}", path=name, hint=hint
                )


def path_inputs(label: str, path: str | os.PathLike[str]) -> list[Input]:
    """``path`` as an input, and when it is a folder each file directly in it (so that a
    message says "it is config.json of SOURCE d" rather than "it lies inside SOURCE d")."""
    out: list[Input] = [(label, path)]
    with contextlib.suppress(OSError):
        if os.path.isdir(path):
            for entry in sorted(os.scandir(path), key=lambda e: e.name):
                if entry.is_file():
                    out.append((f"{entry.name} of {label}", Path(path) / entry.name))
    return out


def checkpoint_inputs(ck, label: str) -> list[Input]:
    """The local paths a checkpoint was read from, for :func:`check_inputs`.

    Args:
        ck: a :class:`recipecli.checkpoint.model.Checkpoint`.
        label: how messages name it, e.g. "the draft models/draft".

    Returns:
        (label, path) for its folder (or snapshot / config file) and for each file in it that
        was read (``config.json``, indexes, shards: links into the HF cache's ``blobs/`` are
        compared by what they point to). Nothing for Hub sources (nothing local was read).
    """
    if ck.kind == "hub" or not ck.root:
        return []
    root = Path(ck.root)
    out: list[Input] = [(label, root)]
    if ck.kind in ("snapshot", "config"):
        return out
    names = ["config.json", "model.safetensors.index.json", "pytorch_model.bin.index.json"]
    names += list(ck.shards)
    for name in names:
        if (root / name).exists():
            out.append((f"{name} of {label}", root / name))
    return out


# --------------------------------------------------------------------------- checks


def check_parent(dest: str | os.PathLike[str], *, what: str, noun: str) -> Path:
    """The folder rule shared by every writer: the folder holding ``dest`` must exist, be a
    folder and be writable; it is never created.

    Returns:
        The folder.

    Raises:
        UsageError: ``{dest}: cannot write {what}: directory P does not exist — give another
            {noun} or create P first`` (or: P is a file, not a directory; P is not writable).
    """
    dest = Path(dest)
    parent = dest.parent
    if parent.is_dir():
        if os.access(parent, os.W_OK | os.X_OK):
            return parent
        why, more = f"directory {parent} is not writable", ""
    else:
        blocker = next((p for p in (parent, *parent.parents) if p.exists()), None)
        if blocker is not None and not blocker.is_dir():
            why, more = f"{blocker} is a file, not a directory", ""
        else:
            why, more = f"directory {parent} does not exist", f" or create {parent} first"
    raise UsageError(
        f"cannot write {what}: {why}", path=str(dest), hint=f"give another {noun}{more}"
    )


def _read_head(path: Path, n: int) -> bytes | None:
    """First ``n`` bytes of regular file ``path`` (opened without blocking); None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, left = [], n
        while left > 0:
            b = os.read(fd, min(left, 1 << 20))
            if not b:
                break
            chunks.append(b)
            left -= len(b)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _cannot(what: str, exc: OSError, given: Path, noun: str) -> UsageError:
    """The one line for an OS error met while checking or writing ``given``."""
    return UsageError(
        f"cannot write {what}: {exc.strerror or exc}",
        path=str(given),
        hint=f"give another {noun}",
    )


def _stat_or_none(
    stat_fn: Callable[[Path], os.stat_result], path: Path, *, given: Path, what: str, noun: str
) -> os.stat_result | None:
    """``stat_fn(path)``, or None when nothing is there (or a folder on the way is a file:
    :func:`check_parent` then says why).

    Raises:
        UsageError: any other OS error (permissions, a loop of links).
    """
    try:
        return stat_fn(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise _cannot(what, exc, given, noun) from None


def _refuse_unrecognised(
    final: Path, kind: OutputKind | None, *, given: Path, what: str, noun: str
) -> None:
    """Refuse a non-empty existing file that is not a previous ``kind`` output."""
    head = _read_head(final, kind.head_bytes) if kind is not None else None
    if head is None or kind is None or not kind.recognise(head):
        name = f"a {kind.name}" if kind is not None else "an empty file"
        raise UsageError(
            f"cannot write {what}: the file exists and is not {name}; refusing to overwrite it",
            path=str(given),
            hint=f"give another {noun} or move the file away",
        )


def prepare_file(
    dest: str | os.PathLike[str],
    *,
    what: str,
    noun: str,
    kind: OutputKind | None,
    inputs: Iterable[Input] = (),
    existing: bool = True,
) -> Path:
    """Check that ``dest`` may be written as a ``kind`` output; nothing is written.

    A symbolic link is followed (the file it names is the destination). ``dest`` may be missing,
    an empty regular file, or a previous output that ``kind`` recognises.

    Args:
        dest: the file to write.
        what: the destination in messages ("-o file", "--save-metadata file").
        noun: what to give instead ("-o path").
        kind: what is written (recognises a previous output); None: only a missing or empty
            file may be written.
        inputs: the command's inputs (:func:`check_inputs`).
        existing: also check that an existing file is a previous ``kind`` output; False for an
            early check made before all inputs are known (so that the later check can say
            which input a file is).

    Returns:
        The path that will be replaced (links resolved).

    Raises:
        UsageError: one line; see the module docstring.
    """
    given = Path(dest)
    final = _real(given) if given.is_symlink() else given
    st = _stat_or_none(os.stat, final, given=given, what=what, noun=noun)
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISDIR(st.st_mode):
            why = "it is a directory"
        else:  # /dev/null, a FIFO, a socket: never replaced by a regular file
            why = f"it is {file_kind(st.st_mode)}, not a regular file"
        raise UsageError(
            f"cannot write {what}: {why}", path=str(given), hint=f"give another {noun}"
        )
    check_parent(final, what=what, noun=noun)
    check_inputs(final, inputs, what=what, noun=noun, shown=given)
    if existing and st is not None and st.st_size > 0:
        _refuse_unrecognised(final, kind, given=given, what=what, noun=noun)
    return final


# --------------------------------------------------------------------------- signals


_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))


def _interrupt(signum, frame):  # pragma: no cover - exercised through subprocess tests
    raise KeyboardInterrupt


@contextlib.contextmanager
def interrupt_on_signals() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP into ``KeyboardInterrupt`` (as Ctrl-C already is) while the
    block runs, so that ``finally`` clauses remove temporary files. Signals the process ignores
    (``nohup``) stay ignored; outside the main thread nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {}
    for sig in _SIGNALS:
        if sig == signal.SIGINT:
            continue
        current = signal.getsignal(sig)
        if current is signal.SIG_DFL:
            old[sig] = signal.signal(sig, _interrupt)
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def _signals_blocked() -> Iterator[None]:
    """Hold SIGINT/SIGTERM/SIGHUP back for a few statements (creating a temporary file and
    recording its name), so that no signal lands between the two."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


# --------------------------------------------------------------------------- writing files


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """fsync a folder (makes renames and new entries in it durable)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def current_umask() -> int:
    """The process umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_file(
    dest: str | os.PathLike[str],
    data: bytes,
    *,
    what: str,
    noun: str,
    kind: OutputKind | None,
    inputs: Iterable[Input] = (),
) -> Path:
    """Check ``dest`` (:func:`prepare_file`) and replace it atomically with ``data``.

    The file gets the mode ``0o666 & ~umask``. On any failure or signal the temporary file is
    removed and ``dest`` is untouched.

    Args:
        dest, what, noun, kind, inputs: see :func:`prepare_file`.
        data: the file's bytes.

    Returns:
        The path written (links resolved).

    Raises:
        UsageError: refused (:func:`prepare_file`), or the write failed (permissions, full or
            read-only file system); one line.
    """
    inputs = list(inputs)
    final = prepare_file(dest, what=what, noun=noun, kind=kind, inputs=inputs)
    tmp: str | None = None
    with interrupt_on_signals():
        try:
            with _signals_blocked():
                fd, tmp = tempfile.mkstemp(
                    prefix=f".{final.name}.", suffix=".tmp", dir=final.parent
                )
            with os.fdopen(fd, "wb") as fh:
                os.fchmod(fh.fileno(), 0o666 & ~current_umask())
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            # the destination may have changed while we wrote (a FIFO created meanwhile)
            prepare_file(dest, what=what, noun=noun, kind=kind, inputs=inputs)
            os.replace(tmp, final)
            tmp = None
            fsync_dir(final.parent)
        except OSError as exc:
            raise UsageError(
                f"cannot write {what}: {exc.strerror or exc}",
                path=str(dest),
                hint=f"give another {noun}",
            ) from None
        finally:
            if tmp is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
    return final


# --------------------------------------------------------------------------- output folders


def read_convert_marker(folder: Path) -> list[str] | None:
    """The files a previous ``convert`` wrote into ``folder`` (from :data:`CONVERT_MARKER`),
    or None when ``folder`` holds no valid marker."""
    head = _read_head(folder / CONVERT_MARKER, 1 << 20)
    if head is None:
        return None
    try:
        doc = json.loads(head)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get(CONVERT_MARKER_KEY) != 1:
        return None
    files = doc.get("files")
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    if any("/" in f or f in ("", ".", "..") for f in files):
        return None
    return [*files, CONVERT_MARKER]


def convert_marker_text(files: Sequence[str], to: str) -> str:
    """The :data:`CONVERT_MARKER` of an OUT holding ``files`` (names relative to OUT), ``to``
    the output format. Holds no path of this machine."""
    doc = {CONVERT_MARKER_KEY: 1, "to": to, "files": sorted(files)}
    return json.dumps(doc, indent=1) + "\n"


def _refuse_not_a_folder(st: os.stat_result, *, given: Path, what: str, noun: str) -> None:
    """Refuse an existing ``dest`` (``lstat`` result ``st``) that is a link or not a folder."""
    if stat.S_ISLNK(st.st_mode):
        raise UsageError(
            f"cannot write {what}: it is a symbolic link; recipecli replaces only folders it wrote",
            path=str(given),
            hint=f"give another {noun} (or the folder the link points to)",
        )
    if not stat.S_ISDIR(st.st_mode):
        kind = "a regular file" if stat.S_ISREG(st.st_mode) else file_kind(st.st_mode)
        raise UsageError(
            f"cannot write {what}: it is {kind}, not a folder",
            path=str(given),
            hint=f"give another {noun}",
        )


def _refuse_cwd(absolute: Path, *, given: Path, what: str, noun: str) -> None:
    """Refuse a folder that is the current directory or holds it."""
    cwd = Path(os.getcwd())
    if _real(absolute) == _real(cwd) or _ident(absolute) in _chain(_real(cwd).parent):
        raise UsageError(
            f"cannot write {what}: it is the current directory or holds it",
            path=str(given),
            hint=f"run from another directory or give another {noun}",
        )


def _replaceable_files(absolute: Path, *, given: Path, what: str, noun: str) -> list[str]:
    """The files of the existing folder ``absolute`` that replacing it deletes: none when it is
    empty, else those its :data:`CONVERT_MARKER` lists (which must be everything in it).

    Raises:
        UsageError: it cannot be listed, has no valid marker, or holds anything else.
    """
    try:
        present = sorted(os.listdir(absolute))
    except OSError as exc:
        raise _cannot(what, exc, given, noun) from None
    if not present:
        return []
    owned = read_convert_marker(absolute)
    if owned is None:
        raise UsageError(
            f"cannot write {what}: the folder exists and is not a recipecli convert output (no "
            f"{CONVERT_MARKER}); --force replaces only a previous convert output",
            path=str(given),
            hint=f"give another {noun} or move the folder away",
        )
    foreign = [n for n in present if n not in owned or not (absolute / n).is_file()]
    if foreign:
        more = f" (and {len(foreign) - 1} more)" if len(foreign) > 1 else ""
        raise UsageError(
            f"cannot write {what}: it holds {foreign[0]}{more}, which convert did not write; "
            "--force never deletes anything else",
            path=str(given),
            hint=f"move {foreign[0]} out of it or give another {noun}",
        )
    return [n for n in owned if n in present]


def prepare_dir(
    dest: str | os.PathLike[str],
    *,
    what: str,
    noun: str,
    force: bool,
    inputs: Iterable[Input] = (),
    existing: bool = True,
) -> tuple[Path, list[str] | None]:
    """Check that ``dest`` may become a ``convert`` output folder; nothing is written.

    ``dest`` may be missing; with ``force`` also an empty folder or a previous ``convert``
    output holding only the files its marker lists. Never a link, a file, the current folder
    (or one above it), or anything that is, holds or lies inside an input.

    ``existing=False`` leaves out the checks of an existing folder's contents (``--force``, the
    marker): an early check made before all inputs are known.

    Returns:
        (the folder's absolute path, the files to delete when replacing it — None when
        ``dest`` does not exist, [] for an empty folder or an early check).

    Raises:
        UsageError: one line naming ``dest``.
    """
    given = Path(dest)
    absolute = Path(os.path.abspath(given))
    st = _stat_or_none(os.lstat, absolute, given=given, what=what, noun=noun)
    check_parent(given, what=what, noun=noun)
    inputs = list(inputs)
    if st is None:
        check_inputs(absolute, inputs, what=what, noun=noun, shown=given)
        return absolute, None
    _refuse_not_a_folder(st, given=given, what=what, noun=noun)
    check_inputs(absolute, inputs, what=what, noun=noun, shown=given)
    _refuse_cwd(absolute, given=given, what=what, noun=noun)
    if not existing:
        return absolute, []
    if not force:
        raise UsageError(
            f"cannot write {what}: output exists",
            path=str(given),
            hint=f"give another {noun}, or add --force to replace a previous convert output",
        )
    return absolute, _replaceable_files(absolute, given=given, what=what, noun=noun)


def replace_dir(tmp: Path, out: Path, owned: list[str] | None) -> str | None:
    """Rename the finished folder ``tmp`` to ``out``; a previous ``out`` (checked by
    :func:`prepare_dir`) is moved aside first and only its ``owned`` files are then deleted.

    Returns:
        A note when the previous folder could not be removed completely (it then stays, hidden,
        next to ``out``), else None.

    Raises:
        OSError: a rename failed (the previous ``out`` is put back first).
    """
    if owned is None:
        os.rename(tmp, out)
        return None
    backup = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    old = backup / "old"
    try:
        os.rename(out, old)
    except BaseException:
        os.rmdir(backup)
        raise
    try:
        os.rename(tmp, out)
    except BaseException:
        os.rename(old, out)
        os.rmdir(backup)
        raise
    for name in owned:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(old / name)
    try:
        os.rmdir(old)
        os.rmdir(backup)
    except OSError:
        return f"the previous {out.name} gained files while converting; kept them in {backup}"
    return None


__all__ = [
    "CONVERT_MARKER",
    "PLOT",
    "PLOT_SOFTWARE_TAG",
    "REPORT",
    "SNAPSHOT",
    "OutputKind",
    "check_inputs",
    "check_parent",
    "checkpoint_inputs",
    "path_inputs",
    "convert_marker_text",
    "generated_page_kind",
    "interrupt_on_signals",
    "prepare_dir",
    "prepare_file",
    "read_convert_marker",
    "replace_dir",
    "write_file",
]
