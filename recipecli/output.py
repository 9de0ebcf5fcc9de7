"""Output helpers shared by the library and the CLI: the one JSON serialiser, atomic file writes,
and the styling of human output (ANSI colour, wrapping to a width).

No click here (``report`` and ``docsgen`` import this module): what depends on the running
command — its ``--no-color`` flag, printing through click — is in :mod:`recipecli.cli.terminal`."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import sys
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from recipecli.safe_write import Input, OutputKind, write_file


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


#: ``schema_version`` of every ``--json`` document (docs/json.md, docs/json.schema.json): raised
#: only when a key is removed or changes meaning; new keys keep it.
JSON_SCHEMA_VERSION = 1


def envelope(doc: Any, ok: bool) -> Any:
    """``doc`` (plain JSON values) in the ``--json`` envelope: ``schema_version``
    (:data:`JSON_SCHEMA_VERSION`) and ``ok`` (the command's verdict: true iff it exits 0) first,
    then the payload's own keys where they were (docs/json.md).

    A payload's own ``ok`` is replaced by the verdict (the key keeps its place); ``passed``
    (``verify-kernel``) stays, an alias that always equals ``ok``. A list (``render --format
    argv-json`` with several commands) stays a list, each of its objects an envelope.

    Raises:
        TypeError: ``doc`` is neither an object nor a list of objects.
    """
    if isinstance(doc, list):
        return [envelope(item, ok) for item in doc]
    if not isinstance(doc, Mapping):
        raise TypeError(f"a --json document is an object, not {type(doc).__name__}")
    out: dict[str, Any] = {"schema_version": JSON_SCHEMA_VERSION, "ok": bool(ok)}
    out.update((k, v) for k, v in doc.items() if k not in out)
    if "passed" in out:
        out["passed"] = out["ok"]
    return out


def json_text(obj: Any, *, plain: bool = False, compact: bool = False) -> str:
    """``obj`` as one strict JSON document (key order kept), without a trailing newline.

    Never holds ``Infinity`` or ``NaN``: non-finite floats become ``null``
    (:func:`to_jsonable`), and the encoder runs with ``allow_nan=False`` as a last guard.

    Args:
        obj: the document; dataclasses, tuples and paths are converted unless ``plain``.
        plain: ``obj`` already holds only JSON types (skips the conversion walk; should a
            non-finite float be in it after all, the document is converted again).
        compact: no indentation (Python's C encoder; ~10x faster for 100k-entry tables);
            else an indent of 2.
    """
    doc = obj if plain else to_jsonable(obj)
    kwargs: dict[str, Any] = {"separators": (",", ":")} if compact else {"indent": 2}
    try:
        return json.dumps(doc, ensure_ascii=False, allow_nan=False, **kwargs)
    except ValueError:  # a non-finite float in a ``plain`` document
        return json.dumps(to_jsonable(doc), ensure_ascii=False, allow_nan=False, **kwargs)


def emit_json(
    obj: Any, *, plain: bool = False, compact: bool = False, file: IO[str] | None = None
) -> None:
    """Print ``obj`` as one strict JSON document and a newline on ``file`` (default: stdout);
    see :func:`json_text` for the arguments. Commands print through
    :func:`recipecli.cli.terminal.print_json` (the same text, through click)."""
    out = sys.stdout if file is None else file
    out.write(json_text(obj, plain=plain, compact=compact) + "\n")
    out.flush()


def atomic_write_bytes(
    path: str | os.PathLike[str],
    data: bytes,
    *,
    kind: OutputKind | None = None,
    inputs: Iterable[Input] = (),
    what: str | None = None,
    noun: str | None = None,
) -> Path:
    """Write ``data`` to ``path`` through the one safe writer (:func:`recipecli.safe_write.write_file`).

    Temporary file in the same directory, ``fsync``, rename; removed on errors and signals. A
    crash leaves the old file or none, never a half-written one. Refuses (nothing written) a
    ``path`` that is, or lies inside, one of ``inputs``; a special file (``/dev/null``, a FIFO)
    or a directory; an existing non-empty file that is not a previous ``kind`` output; a missing
    parent directory (never created: a typo must not create directories).

    Args:
        path: the file.
        data: its bytes.
        kind: what is written (:data:`recipecli.safe_write.SNAPSHOT`, ``REPORT``, ``PLOT``, …).
        inputs: the command's inputs as (label, path).
        what: the destination in messages (default ``"output file"``).
        noun: what to give instead (default ``"path"``).

    Returns:
        The path written (symbolic links resolved).

    Raises:
        UsageError: one line naming ``path``.
    """
    return write_file(
        path, data, what=what or "output file", noun=noun or "path", kind=kind, inputs=inputs
    )


def atomic_write_text(path: str | os.PathLike[str], text: str, **kw: Any) -> Path:
    """UTF-8 text variant of :func:`atomic_write_bytes` (same keywords)."""
    return atomic_write_bytes(path, text.encode("utf-8"), **kw)


# --------------------------------------------------------------------------- terminal styling

#: Style of each kind of text: verdicts and severities, as ECMA-48 SGR parameters (32 green,
#: 31 red, 33 yellow, 36 cyan, 1 bold, 2 dim), written in this order before the text.
STYLES: dict[str, tuple[int, ...]] = {
    "ok": (32, 1),
    "error": (31, 1),
    "warning": (33, 1),
    "info": (36,),
    "code": (1,),
    "dim": (2,),
}

#: SGR 0: every attribute off, written after a styled text.
RESET = "\x1b[0m"


def _isatty(stream: IO[Any] | None) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError, OSError):  # closed or odd streams
        return False


def color_enabled(stream: IO[Any] | None = None, *, no_color: bool = False) -> bool:
    """Whether human output to ``stream`` gets colour.

    Colour only when ``stream`` (default: stdout) is a terminal, ``NO_COLOR`` is unset or empty
    (https://no-color.org: any non-empty value turns colour off), and ``no_color`` (the
    ``--no-color`` flag; :func:`recipecli.cli.terminal.color` reads it from the running
    command) is false.
    """
    if no_color or os.environ.get("NO_COLOR"):
        return False
    return _isatty(sys.stdout if stream is None else stream)


def terminal_width(stream: IO[Any] | None = None) -> int | None:
    """Columns to wrap human output to, or None (no wrapping).

    ``$COLUMNS`` when set to a positive integer; else the terminal's width when ``stream``
    (default: stdout) is a terminal; else None — piped output keeps one line per item, for grep.
    """
    cols = os.environ.get("COLUMNS", "")
    if cols.isdigit() and int(cols) > 0:
        return int(cols)
    stream = sys.stdout if stream is None else stream
    if not _isatty(stream):
        return None
    try:
        width = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        width = 0
    return width if width > 0 else shutil.get_terminal_size().columns


def paint(text: str, kind: str, color: bool) -> str:
    """``text`` in the style of ``kind`` (:data:`STYLES`) when ``color``, else unchanged (an
    empty ``text`` stays empty). The codes are those of ``click.style`` with the same style."""
    if not (color and text):
        return text
    return "".join(f"\x1b[{code}m" for code in STYLES[kind]) + text + RESET


def wrap_line(text: str, width: int | None, *, indent: str = "    ") -> list[str]:
    """``text`` wrapped at word boundaries to ``width`` columns (None: one line); continuation
    lines start with the first line's leading spaces plus ``indent``. Words longer than the
    width (paths, repo ids) are never split."""
    if width is None or len(text) <= width:
        return [text]
    lead = text[: len(text) - len(text.lstrip(" "))]
    return textwrap.wrap(
        text,
        width=width,
        subsequent_indent=lead + indent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [text]
