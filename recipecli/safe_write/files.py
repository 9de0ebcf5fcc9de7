"""Files: :func:`prepare_file` checks a destination, :func:`write_file` replaces it atomically
(temporary file, ``fsync``, rename, folder ``fsync``), removing the temporary file on errors and
on SIGINT, SIGTERM and SIGHUP (:func:`interrupt_on_signals`)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import stat
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import NoReturn

from recipecli.errors import UsageError, os_error_parts
from recipecli.safe_write.kinds import OutputKind
from recipecli.safe_write.paths import (
    Input,
    _read_head,
    _real,
    _stat_or_none,
    check_inputs,
    check_parent,
    check_within,
)
from recipecli.safeio import file_kind


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
    within: str | os.PathLike[str] | None = None,
) -> Path:
    """Check that ``dest`` may be written as a ``kind`` output; nothing is written.

    A symbolic link is followed (the file it names is the destination), unless ``within`` is
    given and the link leads out of that folder (:func:`check_within`). ``dest`` may be
    missing, an empty regular file, or a previous output that ``kind`` recognises.

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
        within: the folder the user gave (``docs -o DIR``): ``dest`` lies in it and no link
            may take the write out of it.

    Returns:
        The path that will be replaced (links resolved).

    Raises:
        UsageError: one line; see the module docstring.
    """
    given = Path(dest)
    if within is not None:
        check_within(given, within, what=what, noun=noun)
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


_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))


def _interrupt(signum: int, frame: FrameType | None) -> NoReturn:  # pragma: no cover
    # exercised through subprocess tests
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


#: Temporary files of a write are named ``.NAME.recipecli-XXXXXXXX.tmp`` (NAME the destination's
#: name) and locked (``flock``) from creation until renamed or removed: a SIGKILL leaves one,
#: and the next write of the same destination removes those of this user that nobody holds.
TEMP_TAG = ".recipecli-"
_HELD: dict[str, int] = {}  # temporary file -> the descriptor holding its lock


def _temp_prefix(final: Path) -> str:
    return f".{final.name}{TEMP_TAG}"


def _release(tmp: str) -> None:
    fd = _HELD.pop(tmp, None)
    if fd is not None:
        os.close(fd)


def _stage(final: Path, data: bytes) -> str:
    """Write ``data`` to a new temporary file next to ``final`` (mode ``0o666 & ~umask``,
    flushed with ``fsync``, locked until :func:`_release`) and return its name; on any failure
    or signal it is removed."""
    tmp: str | None = None
    try:
        with _signals_blocked():
            fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(final), suffix=".tmp", dir=final.parent)
            with contextlib.suppress(OSError):  # a file system without locks: left unheld
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            _HELD[tmp] = os.dup(fd)
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), 0o666 & ~current_umask())
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        if tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            _release(tmp)
        raise
    return tmp


def remove_stale_temp(final: Path) -> list[str]:
    """Remove the temporary files a killed write of ``final`` left: in its folder, named
    ``.NAME.recipecli-*.tmp``, regular files of this user that no running write holds (the
    lock goes with the process, also on SIGKILL). Nothing else is touched.

    Returns:
        The names removed.
    """
    prefix, removed = _temp_prefix(final), []
    try:
        names = [n for n in os.listdir(final.parent) if n.startswith(prefix) and n.endswith(".tmp")]
    except OSError:
        return []
    for name in sorted(names):
        path = final.parent / name
        with contextlib.suppress(OSError):
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
                    continue
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # OSError: a write holds it
                os.unlink(path)
                removed.append(name)
            finally:
                os.close(fd)
    return removed


def _write_error(exc: OSError, dest: str | os.PathLike[str], what: str, noun: str) -> UsageError:
    """The one line of a failed write: what happened in recipecli's words, nothing left."""
    why, hint = os_error_parts(exc)
    return UsageError(
        f"cannot write {what}: {why}; nothing was written",
        path=str(dest),
        hint=hint or f"give another {noun}",
    )


@dataclass(frozen=True)
class OutputFile:
    """One file of a multi-file write (:func:`write_outputs`): where, what, and the checks.

    Attributes:
        dest: the destination path as given.
        data: the file's bytes.
        what, noun, kind, inputs, within: see :func:`prepare_file`.
    """

    dest: str | os.PathLike[str]
    data: bytes
    what: str
    noun: str
    kind: OutputKind | None
    inputs: tuple[Input, ...] = ()
    within: str | os.PathLike[str] | None = None

    def check(self) -> Path:
        """:func:`prepare_file` of this destination (the path to write, links resolved)."""
        return prepare_file(
            self.dest,
            what=self.what,
            noun=self.noun,
            kind=self.kind,
            inputs=self.inputs,
            within=self.within,
        )


def write_file(
    dest: str | os.PathLike[str],
    data: bytes,
    *,
    what: str,
    noun: str,
    kind: OutputKind | None,
    inputs: Iterable[Input] = (),
    within: str | os.PathLike[str] | None = None,
) -> Path:
    """Check ``dest`` (:func:`prepare_file`) and replace it atomically with ``data``.

    The file gets the mode ``0o666 & ~umask``. On any failure or signal the temporary file is
    removed and ``dest`` is untouched.

    Args:
        dest, what, noun, kind, inputs, within: see :func:`prepare_file`.
        data: the file's bytes.

    Returns:
        The path written (links resolved).

    Raises:
        UsageError: refused (:func:`prepare_file`), or the write failed (permissions, full or
            read-only file system, file-size limit); one line.
    """
    return write_files({dest: data}, what=what, noun=noun, kind=kind, inputs=inputs, within=within)[
        0
    ]


def write_files(
    files: Mapping[str | os.PathLike[str], bytes],
    *,
    what: str,
    noun: str,
    kind: OutputKind | None,
    inputs: Iterable[Input] = (),
    within: str | os.PathLike[str] | None = None,
) -> list[Path]:
    """Replace several files of one kind all or none (:func:`write_outputs`).

    Args:
        files: ``{destination: bytes}`` (written in this order).
        what, noun, kind, inputs, within: see :func:`prepare_file`.

    Returns:
        The paths written (links resolved), in order.

    Raises:
        UsageError: a destination is refused, or a write failed (full disk, file-size limit,
            permissions); one line naming the destination.
    """
    shared = tuple(inputs)
    return write_outputs(
        [OutputFile(d, b, what, noun, kind, shared, within) for d, b in files.items()]
    )


def write_outputs(outputs: Sequence[OutputFile]) -> list[Path]:
    """Replace several files all or none, each with its own name, kind and inputs (``report
    -o`` with ``--plot``): each is checked (:func:`prepare_file`) and staged in a temporary file
    next to it first; only when every one is on disk, and every destination checked again, are
    they renamed into place. A failure or signal before the renames removes every temporary file
    and changes nothing.

    Returns:
        The paths written (links resolved), in order.

    Raises:
        UsageError: a destination is refused, or a write failed (full disk, file-size limit,
            permissions); one line naming that destination, in its own words.
    """
    finals = [out.check() for out in outputs]
    if not outputs:
        return []
    staged: dict[Path, str] = {}
    current = outputs[0]
    for final in finals:
        remove_stale_temp(final)
    with interrupt_on_signals():
        try:
            for current, final in zip(outputs, finals, strict=True):
                staged[final] = _stage(final, current.data)
            for current in outputs:  # a destination may have changed meanwhile (a FIFO created)
                current.check()
            for final in finals:
                os.replace(staged[final], final)
                _release(staged.pop(final))
            for folder in {final.parent for final in finals}:
                fsync_dir(folder)
        except OSError as exc:
            raise _write_error(exc, current.dest, current.what, current.noun) from None
        finally:
            for tmp in staged.values():
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
                _release(tmp)
    return finals
