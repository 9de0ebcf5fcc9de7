"""Argv values of recipe flags: the one JSON parser of flag values, scalar and JSON text, and the
argv items of one flag (:func:`flag_argv`). Used by render (:mod:`.resolve`, :mod:`.argv`), the
override sources (:mod:`.overrides`), ``--set`` (:mod:`.sets`) and lint.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from recipecli.engines.catalog import load_catalog
from recipecli.errors import RecipeError, UsageError


def parse_json(text: str, *, where: str) -> Any:
    """json.loads with bounded nesting and integer length (:func:`recipecli.safeio.json_loads`):
    deep or huge values give one UsageError line instead of a RecursionError/ValueError.

    Args:
        text: the JSON text.
        where: what the message names as the origin (``--set``, ``recipe``).

    Raises:
        UsageError: too deep or too large; ValueError (``json.JSONDecodeError``): not JSON.
    """
    from recipecli.safeio import json_loads

    return json_loads(text, where=where, what="JSON value", error=UsageError)


def json_text(value: Any) -> str:
    """Serialise a JSON-valued argument: ``json.dumps`` defaults (``", "``/``": "``), key order
    kept, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False)


def scalar_text(value: Any) -> str:
    """The argv text of a scalar value (``repr`` for floats so no precision is lost)."""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def normalise_json_value(flag: str, value: Any, engine: str, where: str) -> Any:
    """Parse a JSON-valued flag given as a string (the catalog says ``json``, or it starts with
    ``{``/``[``) so it is re-serialised canonically.

    Raises:
        RecipeError: the string is not valid JSON (names ``where``).
    """
    if not isinstance(value, str):
        return value
    kind = load_catalog(engine).kind(flag)
    if kind == "json" or value.lstrip().startswith(("{", "[")):
        try:
            return parse_json(value, where="--set")
        except ValueError as exc:
            if kind == "json":
                raise RecipeError(
                    f"{flag} is JSON-valued but {value!r} is not valid JSON ({exc})",
                    path=where,
                    hint="write it as a YAML mapping",
                ) from None
    return value


def flag_argv(flag: str, value: Any, *, multi: bool = False) -> list[str]:
    """argv items for one flag: ``True`` -> bare, ``False``/``None`` -> nothing, mapping -> JSON
    text, list -> JSON text (or, with ``multi`` for ``nargs="+"`` flags such as vLLM's
    ``--served-model-name``, one argv item per element), other scalars -> text."""
    if value is True:
        return [flag]
    if value is False or value is None:
        return []
    if multi and isinstance(value, list):
        return [flag, *(scalar_text(v) for v in value)]
    if isinstance(value, (Mapping, list)):
        return [flag, json_text(value)]
    return [flag, scalar_text(value)]


def serve_flag_argv(engine: str, flag: str, value: Any) -> list[str]:
    """:func:`flag_argv` for a serve flag of ``engine``: list values of the catalog's
    ``nargs`` flags become several argv items."""
    entry = load_catalog(engine).flags().get(flag) or {}
    return flag_argv(flag, value, multi=entry.get("nargs") in ("+", "*"))


def deep_merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """Recursive dict merge; ``top`` wins, key order of first appearance kept."""
    out = dict(base)
    for key, value in top.items():
        if isinstance(out.get(key), Mapping) and isinstance(value, Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out
