"""Safe reading of input files: every reader of recipecli goes through here.

Rules, each one giving one clear error line (the caller's error class, exit 2):

* **Regular files only, never blocking.** The path is ``stat``-ed first (a stat never blocks) and
  anything but a regular file -- a directory, a FIFO, a device, a socket -- is refused before it
  is opened; it is then opened with ``O_NONBLOCK`` and ``fstat``-ed again, so a file swapped for a
  FIFO in between cannot block either (``open(2)``: "O_NONBLOCK ... neither the open() nor any
  subsequent I/O operations on the file descriptor ... will cause the calling process to wait").
* **Bounded size.** Every read has a byte cap; a file over it is refused without being read.
* **Bounded parse.** JSON is parsed by the standard library, then its nesting depth is checked
  (:data:`MAX_JSON_DEPTH`); a document nested past Python's recursion limit (``RecursionError``)
  or holding an integer longer than Python's integer-string limit (``ValueError``, see
  :func:`sys.get_int_max_str_digits`, 4300 digits by default) is refused with one line. YAML is
  checked with PyYAML's event parser (iterative, so it cannot overflow the stack) for depth and
  integer length before it is composed (:func:`check_yaml_limits`).
* **Never a file's bytes in a message.** Errors name the file and the position, never content:
  a symlink to a token file must not print the token.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from typing import Any

from recipecli.errors import RecipeCliError

#: Deepest JSON/YAML nesting accepted. Real config.json files nest 3-4 levels, bench results 3.
MAX_JSON_DEPTH = 64
#: Default byte cap of :func:`read_regular` (64 MiB): config.json, indexes, recipes and bench
#: results are far smaller; callers reading larger documents pass their own cap.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024


def _int_digit_limit() -> int:
    """Python's limit on decimal digits in ``int(str)`` (0 means unlimited: use 4300)."""
    get = getattr(sys, "get_int_max_str_digits", None)
    limit = get() if get is not None else 0
    return limit or 4300


def file_kind(mode: int) -> str:
    """A phrase for a non-regular file's type: ``a directory``, ``a FIFO (named pipe)`` …"""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def stat_regular(
    path: str | os.PathLike[str], *, what: str, error: type[RecipeCliError] = RecipeCliError
) -> os.stat_result:
    """``os.stat(path)`` (following links), refusing anything that is not a regular file.

    Raises:
        ``error``: missing, unreadable, or a directory / FIFO / device / socket.
    """
    where = os.fspath(path)
    try:
        st = os.stat(where)
    except FileNotFoundError:
        raise error(f"{what} not found", path=where) from None
    except OSError as exc:
        raise error(f"cannot read {what} ({exc.strerror})", path=where) from None
    if not stat.S_ISREG(st.st_mode):
        raise error(
            f"{what} is {file_kind(st.st_mode)}, not a regular file",
            path=where,
            hint="recipecli reads only regular files",
        )
    return st


def open_regular(
    path: str | os.PathLike[str], *, what: str, error: type[RecipeCliError] = RecipeCliError
) -> tuple[int, os.stat_result]:
    """Open a regular file read-only without blocking; returns ``(fd, fstat result)``.

    The caller closes ``fd``. Reads on a regular file never block, ``O_NONBLOCK`` or not.

    Raises:
        ``error``: as :func:`stat_regular`; also a file replaced by a non-regular one between the
            stat and the open.
    """
    where = os.fspath(path)
    before = stat_regular(where, what=what, error=error)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(where, flags)
    except OSError as exc:
        raise error(f"cannot open {what} ({exc.strerror})", path=where) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        raise error(f"{what} changed while being opened (now {file_kind(st.st_mode)})", path=where)
    return fd, st


def pread_exact(fd: int, length: int, offset: int) -> bytes:
    """Read exactly ``length`` bytes at ``offset`` (fewer only at end of file)."""
    chunks: list[bytes] = []
    got = 0
    while got < length:
        chunk = os.pread(fd, min(length - got, 1 << 30), offset + got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_regular(
    path: str | os.PathLike[str],
    *,
    what: str,
    error: type[RecipeCliError] = RecipeCliError,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` bytes.

    Raises:
        ``error``: as :func:`open_regular`; also a file over ``max_bytes`` (refused unread).
    """
    where = os.fspath(path)
    fd, st = open_regular(where, what=what, error=error)
    try:
        if st.st_size > max_bytes:
            raise error(
                f"{what} is {st.st_size} bytes, over the {max_bytes}-byte limit", path=where
            )
        try:
            data = pread_exact(fd, max_bytes + 1, 0)
        except OSError as exc:
            raise error(f"cannot read {what} ({exc.strerror})", path=where) from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # grew while being read
        raise error(f"{what} is over the {max_bytes}-byte limit", path=where)
    return data


def json_too_deep(obj: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when ``obj`` (parsed JSON) nests dicts/lists more than ``limit`` levels deep.

    Iterative (no recursion), visiting containers only.
    """
    stack: list[tuple[Any, int]] = [(obj, 1)]
    containers = (dict, list)
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if type(node) is dict else node
        stack.extend((c, depth + 1) for c in children if type(c) in containers)
    return False


def json_loads(
    data: bytes | str,
    *,
    where: str,
    what: str = "JSON",
    error: type[RecipeCliError] = RecipeCliError,
    max_depth: int | None = MAX_JSON_DEPTH,
) -> Any:
    """:func:`json.loads` with bounded depth and integer length.

    Like :func:`loads_json`, but a syntax error propagates as :class:`json.JSONDecodeError`
    (and bad UTF-8 bytes as :class:`UnicodeDecodeError`), for callers with their own message.

    Raises:
        ``error``: nested deeper than ``max_depth`` (or than Python's recursion limit), or an
            integer with more digits than Python converts.
        json.JSONDecodeError: malformed JSON.
    """
    try:
        obj = json.loads(data)
    except RecursionError:
        raise error(
            f"{what} is nested more than {max_depth or MAX_JSON_DEPTH} levels deep",
            path=where,
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise
    except ValueError as exc:  # int() refusing a number over the integer-string limit
        if "digits" in str(exc):
            raise error(
                f"{what} holds an integer of more than {_int_digit_limit()} digits", path=where
            ) from None
        raise error(f"malformed {what}", path=where) from None
    if max_depth is not None and type(obj) in (dict, list) and json_too_deep(obj, max_depth):
        raise error(f"{what} is nested more than {max_depth} levels deep", path=where)
    return obj


def loads_json(
    data: bytes | str,
    *,
    where: str,
    what: str = "JSON",
    error: type[RecipeCliError] = RecipeCliError,
    max_depth: int | None = MAX_JSON_DEPTH,
) -> Any:
    """Parse JSON with bounded depth and integer length; errors never quote the document.

    Args:
        data: the document (bytes: UTF-8, or UTF-16/32 with a BOM, as :func:`json.loads`).
        where: file (or URL) named in errors.
        what: what the document is, for messages (``config.json``, ``weight index`` …).
        error: the :class:`RecipeCliError` subclass to raise.
        max_depth: deepest nesting accepted; None skips the check (the caller validates shape).

    Raises:
        ``error``: not UTF-8, malformed JSON (line and column), nested too deep, or an integer
            with more digits than Python converts.
    """
    try:
        return json_loads(data, where=where, what=what, error=error, max_depth=max_depth)
    except UnicodeDecodeError as exc:
        raise error(
            f"{what} is not UTF-8 text ({exc.reason} at byte {exc.start})", path=where
        ) from None
    except json.JSONDecodeError as exc:
        raise error(
            f"malformed {what}: {exc.msg} (line {exc.lineno} column {exc.colno})", path=where
        ) from None


_YAML_DECIMAL_INT = re.compile(r"[-+]?[0-9_]+")


def check_yaml_limits(
    text: str,
    *,
    where: str,
    what: str = "YAML",
    error: type[RecipeCliError] = RecipeCliError,
    max_depth: int = MAX_JSON_DEPTH,
) -> None:
    """Refuse YAML nested deeper than ``max_depth`` or holding an over-long decimal integer.

    Runs an event parser, which is iterative, so a deeply nested document cannot raise
    ``RecursionError`` here (PyYAML's composer and constructor recurse once per level): libyaml's
    (``yaml.CSafeLoader``, about 20 times faster: a 256 KiB recipe of 12,000 flags in 0.07 s
    instead of 1.6 s) when PyYAML was built with it, else PyYAML's own. Both give the same
    events (but a plain scalar's style: None, or ""). Syntax errors are left to the caller's own parse, which reports them with a line
    number.

    Raises:
        ``error``: naming ``where`` and the line of the offending node.
    """
    import yaml

    limit = _int_digit_limit()
    depth = 0
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > max_depth:
                    line = event.start_mark.line + 1 if event.start_mark else 0
                    raise error(
                        f"{what} is nested more than {max_depth} levels deep",
                        path=f"{where}:{line}" if line else where,
                    )
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
            elif (
                isinstance(event, yaml.ScalarEvent)
                and not event.style  # plain: None from PyYAML, "" from libyaml
                and event.tag is None
                and len(event.value) > limit
                and _YAML_DECIMAL_INT.fullmatch(event.value)
            ):
                line = event.start_mark.line + 1 if event.start_mark else 0
                raise error(
                    f"{what} holds an integer of more than {limit} digits",
                    path=f"{where}:{line}" if line else where,
                )
    except yaml.YAMLError:
        return  # the caller's parse reports it with file:line
