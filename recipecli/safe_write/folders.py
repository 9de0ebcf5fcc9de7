"""``convert``'s OUT folders: :func:`prepare_dir` checks one (``--force`` replaces only an empty
folder or a previous ``convert`` output holding nothing but the files its marker lists),
:func:`replace_dir` moves the finished folder into place and deletes only those files."""

from __future__ import annotations

import contextlib
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
