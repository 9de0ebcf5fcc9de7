"""Printing for the commands: JSON documents through click, and the colour and width of human
output as the running command asks for them (its ``--no-color`` flag, ``NO_COLOR``, a terminal).

The styling itself (ANSI codes, wrapping) and the JSON serialiser are click-free, in
:mod:`recipecli.output`, so the library formats text with them too.
"""

from __future__ import annotations

from typing import IO, Any

import click

from recipecli.output import color_enabled, envelope, json_text, terminal_width, to_jsonable


def print_json(
    obj: Any, *, ok: bool | None = None, plain: bool = False, compact: bool = False
) -> None:
    """Print ``obj`` as one strict JSON document on stdout (:func:`recipecli.output.json_text`:
    dataclasses converted unless ``plain``, non-finite floats ``null``, indent 2 unless
    ``compact``).

    Args:
        obj: the command's payload (an object, or ``render``'s list of objects).
        ok: the command's verdict, true iff it exits 0: the document gets the ``--json``
            envelope (``schema_version``, ``ok``; :func:`recipecli.output.envelope`,
            docs/json.md). Every command passes it; None prints ``obj`` as it is.
        plain: ``obj`` holds only JSON values already.
        compact: no indentation.

    Raises:
        TypeError: ``ok`` given and ``obj`` is not an object or a list of objects.
    """
    if ok is not None:
        obj, plain = envelope(obj if plain else to_jsonable(obj), ok), True
    click.echo(json_text(obj, plain=plain, compact=compact))


def no_color_flag() -> bool:
    """Whether the running ``recipecli`` command was given ``--no-color`` (False outside one)."""
    ctx = click.get_current_context(silent=True)
    obj = ctx.find_root().obj if ctx is not None else None
    return bool(isinstance(obj, dict) and obj.get("no_color"))


def color(stream: IO[Any] | None = None) -> bool:
    """Whether human output to ``stream`` (default: stdout) gets colour: a terminal, no
    ``NO_COLOR``, no ``--no-color`` (:func:`recipecli.output.color_enabled`)."""
    return color_enabled(stream, no_color=no_color_flag())


def style() -> dict[str, Any]:
    """Colour and width of human output on stdout, as the library's text formatters take them
    (``color=``, ``width=``): on a terminal, colour unless ``NO_COLOR`` or ``--no-color``, and
    its width (or ``$COLUMNS``); piped, neither."""
    return {"color": color(), "width": terminal_width()}
