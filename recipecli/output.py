"""Output helpers shared by commands: one JSON document on stdout, atomic file writes."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from recipecli.errors import UsageError


def to_jsonable(obj: Any) -> Any:
    """Convert dataclasses, tuples, paths, numpy scalars and mappings into plain JSON values.

    The result is strict JSON (RFC 8259): a float that is not finite (``inf``, ``-inf``,
    ``nan``; also numpy's) becomes ``None`` (``null``), because ``Infinity`` and ``NaN`` are not
    JSON and most parsers (``jq``, JavaScript's ``JSON.parse``, Go, Rust serde) reject the whole
    document. A command whose value can be unbounded says what its ``null`` means in its docs
    (e.g. ``report``'s ``request_rate`` is the string ``"inf"``, as vLLM writes it).
    """
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        if hasattr(obj, "to_dict"):
            return to_jsonable(obj.to_dict())
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "item") and callable(obj.item) and getattr(obj, "shape", None) == ():
        return to_jsonable(obj.item())
    return obj


def emit_json(obj: Any, *, plain: bool = False, compact: bool = False) -> None:
    """Print ``obj`` as one strict JSON document on stdout (key order kept).

    Never prints ``Infinity`` or ``NaN``: non-finite floats become ``null``
    (:func:`to_jsonable`), and the encoder runs with ``allow_nan=False`` as a last guard.

    Args:
        obj: the document; dataclasses, tuples and paths are converted unless ``plain``.
        plain: ``obj`` already holds only JSON types (skips the conversion walk; should a
            non-finite float be in it after all, the document is converted and printed again).
        compact: no indentation (Python's C encoder; ~10x faster for 100k-entry tables).
    """
    doc = obj if plain else to_jsonable(obj)
    kwargs: dict[str, Any] = {"separators": (",", ":")} if compact else {"indent": 2}
    try:
        text = json.dumps(doc, ensure_ascii=False, allow_nan=False, **kwargs)
    except ValueError:  # a non-finite float in a ``plain`` document
        text = json.dumps(to_jsonable(doc), ensure_ascii=False, allow_nan=False, **kwargs)
    click.echo(text)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same directory and ``os.replace``.

    A crash or error leaves either the old file or none, never a half-written one. The parent
    directory must exist (it is not created: a typo must not create directories). The file gets
    the usual ``0666 & ~umask`` mode.

    Raises:
        UsageError: the parent directory is missing or not a directory, or the file cannot be
            written (permissions, read-only file system, ``path`` is a directory).
    """
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        why = "is not a directory" if parent.exists() else "does not exist"
        raise UsageError(f"cannot write {path}: directory {parent} {why}")
    if path.is_dir():
        raise UsageError(f"cannot write {path}: it is a directory")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError):
            raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
        raise


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """UTF-8 text variant of :func:`atomic_write_bytes`."""
    atomic_write_bytes(path, text.encode("utf-8"))
