"""Where an output may go: never an input (compared by resolved path and by device/inode), and
only into a folder that exists (:func:`check_parent`); the small OS helpers the writers share."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol

from recipecli.errors import UsageError

#: One input of a command: (how messages name it, its path), e.g. ("the draft", Path("models/d")).
Input = tuple[str, "str | os.PathLike[str]"]


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


class CheckpointPaths(Protocol):
    """What :func:`checkpoint_inputs` reads of a :class:`recipecli.checkpoint.model.Checkpoint`
    (a Protocol: this foundation layer does not import the checkpoint package)."""

    @property
    def kind(self) -> str: ...

    @property
    def root(self) -> str: ...

    @property
    def shards(self) -> Sequence[str]: ...


def checkpoint_inputs(ck: CheckpointPaths, label: str) -> list[Input]:
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


def check_within(
    dest: str | os.PathLike[str], folder: str | os.PathLike[str], *, what: str, noun: str
) -> None:
    """Refuse a ``dest`` in ``folder`` that a symbolic link takes out of ``folder``.

    ``dest`` (or the link it is) must end up directly in ``folder`` once links are resolved:
    a page ``DIR/x.md`` that links to ``../elsewhere.txt`` or ``/etc/x`` is never written
    through. ``folder`` itself may be a link (it is the folder the user gave).

    Raises:
        UsageError: one line naming ``dest`` and where the link leads.
    """
    dest = Path(dest)
    if not dest.is_symlink():
        return
    if _real(dest).parent != _real(Path(folder)):
        raise UsageError(
            f"cannot write {what}: it is a symbolic link to {os.readlink(dest)}, outside "
            f"{folder}; recipecli never writes through a link out of the folder given",
            path=str(dest),
            hint=f"remove the link or give another {noun}",
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
