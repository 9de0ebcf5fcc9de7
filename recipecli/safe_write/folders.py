"""``convert``'s OUT folders: :func:`prepare_dir` checks one (``--force`` replaces only an empty
folder or a previous ``convert`` output holding nothing but the files its marker lists),
:func:`replace_dir` moves the finished folder into place and deletes only those files."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from recipecli.errors import UsageError
from recipecli.safe_write.paths import (
    Input,
    _cannot,
    _chain,
    _ident,
    _read_head,
    _real,
    _stat_or_none,
    check_inputs,
    check_parent,
)
from recipecli.safeio import file_kind

#: File ``convert`` writes into every OUT: its format version and the files it wrote. ``--force``
#: replaces a folder only when this file is there and lists everything in it.
CONVERT_MARKER = ".recipecli-convert.json"
CONVERT_MARKER_KEY = "recipecli_convert"


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
    :func:`prepare_dir`) is moved aside first, into a hidden ``.OUT.old-*`` folder marked as
    recipecli's (:data:`BACKUP_MARKER`) and locked while this runs, and only its ``owned``
    files are then deleted. A run killed in between leaves that folder; the next convert onto
    ``out`` finishes the job (:func:`remove_stale_staging`).

    Returns:
        A note when the previous folder could not be removed completely (it then stays, hidden,
        next to ``out``, unmarked: the user's), else None.

    Raises:
        OSError: a rename failed (the previous ``out`` is put back first).
    """
    if owned is None:
        os.rename(tmp, out)
        return None
    backup = Path(tempfile.mkdtemp(prefix=_backup_prefix(out), dir=out.parent))
    lock = _mark(backup, BACKUP_MARKER, _backup_marker_text(tmp))
    old = backup / "old"
    try:
        try:
            os.rename(out, old)
        except BaseException:
            _unmark(backup, remove=True)
            raise
        try:
            os.rename(tmp, out)
        except BaseException:
            os.rename(old, out)
            _unmark(backup, remove=True)
            raise
        for name in owned:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(old / name)
        try:
            os.rmdir(old)
        except OSError:
            _unmark(backup, remove=False)
            return f"the previous {out.name} gained files while converting; kept them in {backup}"
        _unmark(backup, remove=True)
        return None
    finally:
        os.close(lock)


#: File in the folder :func:`replace_dir` moves the previous OUT into (``.OUT.old-XXXXXXXX``):
#: marks it as recipecli's and names the new output's temporary folder; the folder is locked
#: (``flock``) while the replacing convert runs.
BACKUP_MARKER = ".recipecli-convert-backup"
_BACKUP_KEY = "recipecli_convert_backup"


def _backup_marker_text(tmp: Path) -> str:
    return json.dumps({_BACKUP_KEY: 1, "staging": tmp.name}) + "\n"


def _backup_staging(head: bytes | None) -> str | None:
    """The staging folder's name a backup marker records, or None: not a backup marker."""
    try:
        doc = json.loads(head or b"")
    except ValueError:
        return None
    name = doc.get("staging") if isinstance(doc, dict) and doc.get(_BACKUP_KEY) == 1 else None
    if not isinstance(name, str) or "/" in name or not name.startswith("."):
        return None
    return name


def _backup_prefix(out: Path) -> str:
    return f".{out.name}.old-"


def _mark(folder: Path, marker: str, text: str) -> int:
    """Lock ``folder`` (``flock``) and write ``marker`` into it; the descriptor holding the
    lock is returned (close it when done). Raises OSError (a full disk, ...)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        made = os.open(folder / marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(made, "w", encoding="utf-8") as fh:
            fh.write(text)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.rmdir(folder)
        raise
    return fd


def _unmark(backup: Path, *, remove: bool) -> None:
    """Delete the backup folder's marker (and, with ``remove``, the then empty folder)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(backup / BACKUP_MARKER)
    if remove:
        os.rmdir(backup)


#: File in the temporary folder a running ``convert`` writes into (``.OUT.tmp-XXXXXXXX``): marks
#: it as recipecli's own. The running convert holds an ``flock`` on the folder; the lock goes
#: with the process (also on SIGKILL), so a marked folder nobody holds is a stale one.
STAGING_MARKER = ".recipecli-convert-staging"
STAGING_MARKER_TEXT = '{"recipecli_convert_staging": 1}\n'


def _staging_prefix(out: Path) -> str:
    return f".{out.name}.tmp-"


def mark_staging(tmp: Path) -> int:
    """Mark ``tmp`` (a new temporary folder of ``convert``) as recipecli's and lock it.

    Returns:
        The descriptor holding the lock: keep it open while ``tmp`` is in use, close it after.

    Raises:
        OSError: the marker cannot be written (a full disk, …).
    """
    fd = os.open(tmp, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        marker = os.open(tmp / STAGING_MARKER, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(marker, "w", encoding="utf-8") as fh:
            fh.write(STAGING_MARKER_TEXT)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _stale(
    folder: Path, marker: str = STAGING_MARKER, text: str | None = STAGING_MARKER_TEXT
) -> bool:
    """Whether ``folder`` is a folder of ours (``marker`` holding ``text``; a backup marker
    when ``text`` is None) that no process holds."""
    try:
        st = os.lstat(folder)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            return False
        head = _read_head(folder / marker, 4096)
        ours = head == text.encode() if text is not None else _backup_staging(head) is not None
        if not ours:
            return False
        fd = os.open(folder, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # a running convert holds it
        return False
    finally:
        os.close(fd)
    return True


def _ours(name: str) -> bool:
    """Names ``convert`` writes into its temporary folder."""
    return name in (
        STAGING_MARKER,
        CONVERT_MARKER,
        "config.json",
        "model.safetensors.index.json",
    ) or (name.endswith(".safetensors") and "/" not in name)


def _finish_backup(folder: Path, out: Path) -> None:
    """A killed :func:`replace_dir`'s backup ``folder``: with ``out`` in place, delete the
    previous output in it (only the files its :data:`CONVERT_MARKER` lists); with ``out``
    missing (killed between the two renames), put the previous output back as ``out`` and
    remove the new one's temporary folder the marker names (only convert's files in it).
    Raises OSError (the folder then stays)."""
    old = folder / "old"
    staging = _backup_staging(_read_head(folder / BACKUP_MARKER, 4096))
    if os.path.isdir(old) and not os.path.islink(old):
        if not os.path.lexists(out):
            os.rename(old, out)
            new = out.parent / staging if staging else None
            if new is not None and new.name.startswith(_staging_prefix(out)) and new.is_dir():
                _remove_stale_staging_folder(new)  # the killed run's new output, unplaced
        else:
            for name in read_convert_marker(old) or []:
                if os.path.isfile(old / name) and not os.path.islink(old / name):
                    os.unlink(old / name)
            os.rmdir(old)
    _unmark(folder, remove=True)


def _remove_stale_staging_folder(folder: Path) -> None:
    for entry in os.scandir(folder):
        if entry.is_file(follow_symlinks=False) and _ours(entry.name):
            os.unlink(entry.path)
    os.rmdir(folder)


def remove_stale_staging(out: Path) -> list[str]:
    """Remove the temporary folders of killed ``convert`` runs onto ``out``.

    Only folders next to ``out`` named ``.OUT.tmp-*`` (a convert's output being written) or
    ``.OUT.old-*`` (the previous OUT, moved aside by ``--force``: :func:`replace_dir`), owned
    by this user, holding their marker (:data:`STAGING_MARKER`, :data:`BACKUP_MARKER`) and
    locked by nobody. In a ``.tmp-`` folder only the files ``convert`` writes are deleted
    (shards, config.json, the index, the markers); a ``.old-`` folder's previous output loses
    only the files its own marker lists, or goes back to OUT when OUT is missing (the run was
    killed between its two renames). A folder holding anything else keeps it (and stays); a
    running convert's folder (locked) is never touched.

    Returns:
        The names of the folders removed.
    """
    staging, backup = _staging_prefix(out), _backup_prefix(out)
    try:
        names = sorted(n for n in os.listdir(out.parent) if n.startswith((staging, backup)))
    except OSError:
        return []
    removed = []
    for name in names:
        folder = out.parent / name
        with contextlib.suppress(OSError):
            if name.startswith(staging) and _stale(folder):
                _remove_stale_staging_folder(folder)
            elif name.startswith(backup) and _stale(folder, BACKUP_MARKER, None):
                _finish_backup(folder, out)
            else:
                continue
            removed.append(name)
    return removed
