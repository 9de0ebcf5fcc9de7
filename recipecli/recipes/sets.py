"""``--set NAME=VALUE``: find what NAME addresses and type VALUE by what it sets.

NAME is one of (undotted names are tried in this order):

* ``target`` / ``draft`` — the model, text taken verbatim;
* a speculative field (``num_speculative_tokens``) or ``speculative.FIELD``;
* a serve field (``max_model_len``, ``served_model_name``) or ``serve.FIELD``;
* an engine serve flag of the shipped catalog, without dashes (``served-model-name``);
* a ``vllm bench serve`` flag (``num_prompts``, ``max_concurrency``) or ``bench.FLAG``;
* ``text_overrides.KEY`` — one text-config override;
* ``env.NAME`` — one environment variable exported before the serve command (the top layer of
  the env: over ``engines.<engine>.env``, the profile's ``env`` and ``engine_env``).

VALUE is typed by what NAME sets, never guessed: a string flag or field takes the text verbatim
(``no``, ``0x10``, ``2026-01-01``, newlines, unicode); an integer is ``[+-]digits``; a number is
anything ``float()`` reads except nan; a JSON flag (``hf-overrides``, ``speculative-config``) takes
JSON; a switch or boolean field takes ``true``/``false``; ranges (port 1..65535, sizes >= 1) are
checked. ``text_overrides.KEY`` (a config value bound for the JSON ``--hf-overrides``) takes a
JSON value, and any text that is not JSON verbatim. ``env.NAME`` takes the text verbatim (an
empty VALUE unsets the variable).
An empty VALUE drops the flag (``null`` too, for flags that are not strings). An integer or number
``bench`` flag given a comma list (``max_concurrency=1,4,16``) is a sweep: one bench command per
value.

Errors are one line naming the ``--set``, the flag or field, its type and the value as typed.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import recipecli.recipes.engines as E
from recipecli.engines import engine_spec
from recipecli.engines.catalog import load_catalog
from recipecli.errors import UsageError
from recipecli.recipes.values import parse_json

SET_SECTIONS: tuple[str, ...] = ("serve", "speculative", "bench", "text_overrides", "env")
"""Prefixes ``--set SECTION.NAME=VALUE`` may use."""

SWITCH_KINDS = frozenset({"flag", "negation", "bool"})
"""Catalog kinds of flags that take no value (``true`` = present, ``false`` = absent)."""

INT_RE = re.compile(r"[+-]?[0-9]+")

# bench flag -> JSON-schema range keywords (a count of prompts or of concurrent requests is
# positive; a rate is positive, ``inf`` = all at once: vllm v0.33.0 vllm/benchmarks/serve.py).
BENCH_LIMITS: dict[str, dict[str, Any]] = {
    "--max-concurrency": {"minimum": 1},
    "--num-prompts": {"minimum": 1},
    "--request-rate": {"exclusiveMinimum": 0},
}

TYPE_WORDS: dict[str, str] = {
    "int": "an integer",
    "integer": "an integer",
    "float": "a number",
    "number": "a number",
    "json": "JSON",
    "json_or_str": "JSON or text",
    "switch": "true or false (a switch)",
    "boolean": "true or false",
    "str": "text",
    "string": "text",
    "optional": "true, false or text",
}


@dataclass(frozen=True)
class SetItem:
    """One checked ``--set``.

    Attributes:
        kind: ``target``/``draft`` (the model), ``speculative`` or ``serve`` (a recipe field),
            ``flag`` (an engine serve flag), ``bench`` (a ``vllm bench serve`` flag),
            ``text_override`` (one ``text_overrides`` key), ``env`` (one environment variable).
        key: the field name (underscores), the flag with its dashes for ``flag``/``bench``, the
            override key, or the variable's name.
        value: the typed value; None drops the flag (or field, or variable).
        text: the ``NAME=VALUE`` text as typed (for messages).
        sweep: for a bench sweep, the typed values (one bench command each); else ``()``.
    """

    kind: str
    key: str
    value: Any
    text: str = ""
    sweep: tuple[Any, ...] = ()


def split_set(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` -> (NAME without leading dashes, VALUE exactly as typed).

    Raises:
        UsageError: no ``=`` or an empty NAME.
    """
    name, sep, raw = text.partition("=")
    name = name.strip().lstrip("-")
    if not sep or not name:
        raise UsageError(f"--set {text!r}: expected NAME=VALUE, e.g. --set max_model_len=65536")
    return name, raw


def _fail(name: str, raw: str, what: str, vtype: str, extra: str = "") -> UsageError:
    word = TYPE_WORDS.get(vtype, vtype)
    return UsageError(f"--set {name}={raw!r}: {what} takes {word}, got {raw!r}{extra}")


def parse_typed(
    name: str,
    raw: str,
    vtype: str,
    what: str,
    *,
    choices: list[str] | None = None,
    nargs: str | None = None,
    limits: Mapping[str, Any] | None = None,
    removable: bool = True,
) -> Any:
    """Type one ``--set`` VALUE.

    Args:
        name: the NAME as typed (for messages).
        raw: the VALUE exactly as typed.
        vtype: ``str``/``string``, ``int``/``integer``, ``float``/``number``, ``json``,
            ``json_or_str``, ``switch``/``boolean`` or ``optional`` (catalog types and the
            recipe schema's type names).
        what: the flag or field, e.g. ``--max-num-seqs (vllm 0.33.0)``.
        choices: allowed texts, if the flag has a fixed set.
        nargs: ``+``/``*`` for list flags: a JSON array gives several values, each typed.
        limits: JSON-schema range keywords (``minimum``, ``exclusiveMinimum``, ``maximum``,
            ``minLength``).
        removable: an empty VALUE (and ``null`` for non-strings) drops the flag; else an error.

    Returns:
        the typed value (``True`` for a present switch), or None to drop the flag.

    Raises:
        UsageError: one line naming NAME, ``what``, the type and the value.
    """
    is_str = vtype in ("str", "string")
    if raw == "" or (raw == "null" and not is_str):
        if removable:
            return None
        raise UsageError(f"--set {name}={raw!r}: {what} needs a value ({TYPE_WORDS[vtype]})")
    if nargs in ("+", "*") and raw.lstrip().startswith("["):
        try:
            items = parse_json(raw, where="--set")
        except ValueError:
            items = None
        if isinstance(items, list) and items:
            return [
                parse_typed(
                    name,
                    item if isinstance(item, str) else json.dumps(item),
                    vtype,
                    what,
                    choices=choices,
                    limits=limits,
                    removable=False,
                )
                for item in items
            ]
    if vtype in ("switch", "boolean"):
        low = raw.strip().lower()
        if low not in ("true", "false"):
            raise _fail(name, raw, what, vtype)
        return True if low == "true" else (None if vtype == "switch" else False)
    value = _typed_value(name, raw, vtype, what)
    _check_allowed(name, raw, what, value, choices, limits)
    return value


def _typed_value(name: str, raw: str, vtype: str, what: str) -> Any:
    """A non-switch ``--set`` VALUE by its type: a number, JSON, an optional value, or the text.

    Raises:
        UsageError: not a number or not valid JSON where one is needed.
    """
    value: Any
    if vtype in ("int", "integer", "float", "number"):
        value = _number(name, raw, what, vtype)
    elif vtype == "json" or (vtype == "json_or_str" and raw.lstrip().startswith(("{", "["))):
        try:
            value = parse_json(raw, where="--set")
        except ValueError as exc:
            raise _fail(name, raw, what, "json", f" ({exc})") from None
    elif vtype == "optional":
        low = raw.strip().lower()
        value = True if low == "true" else None if low == "false" else raw
    else:
        value = raw
    return value


def _number(name: str, raw: str, what: str, vtype: str) -> int | float:
    """An ``int``/``integer`` or ``float``/``number`` VALUE (NaN refused).

    Raises:
        UsageError: not a number of that type.
    """
    if vtype in ("int", "integer"):
        # more than 30 digits is past any flag's range and past Python's int() limit at 4300
        if not INT_RE.fullmatch(raw.strip()) or len(raw.strip()) > 30:
            raise _fail(name, raw[:40] + ("…" if len(raw) > 40 else ""), what, vtype)
        return int(raw.strip())
    text = raw.strip()
    try:
        if len(text) > 400:
            raise ValueError(text[:40])
        value = int(text) if INT_RE.fullmatch(text) else float(text)
    except ValueError:
        raise _fail(name, raw[:40] + ("…" if len(raw) > 40 else ""), what, vtype) from None
    if isinstance(value, float) and math.isnan(value):
        raise _fail(name, raw, what, vtype)
    return value


def _check_allowed(
    name: str,
    raw: str,
    what: str,
    value: Any,
    choices: list[str] | None,
    limits: Mapping[str, Any] | None,
) -> None:
    """The typed value is one of ``choices`` and within ``limits`` (JSON-schema keywords).

    Raises:
        UsageError: it is not.
    """
    if choices:
        items = value if isinstance(value, list) else [value]
        bad = [v for v in items if str(v) not in choices]
        if bad:
            raise UsageError(
                f"--set {name}={raw!r}: {what} takes one of {', '.join(choices)}, got {raw!r}"
            )
    if limits:
        from recipecli.recipes.schema import validate

        schema = {k: v for k, v in limits.items() if k != "type"}
        errors = validate(value, schema, ("x",))
        if errors:
            detail = errors[0][1].split(": ", 1)[-1]
            raise UsageError(f"--set {name}={raw!r}: {what}: {detail}")


def config_value(raw: str) -> Any:
    """A ``text_overrides.KEY`` VALUE: the JSON value it spells (``8``, ``1e-06``, ``true``,
    ``null``, ``{"type": "yarn"}``, ``"quoted text"``), else the text verbatim. The value lands in
    ``--hf-overrides``, a JSON flag, and config.json is JSON: YAML 1.1 look-alikes (``no``,
    ``0x10``, ``2026-01-01``) stay text."""
    try:
        return parse_json(raw, where="--set")
    except ValueError:
        return raw


def _section_props(section: str) -> Mapping[str, Any]:
    from recipecli.recipes.schema import SCHEMA

    props: Mapping[str, Any] = SCHEMA["properties"][section]["properties"]
    return props


def _bench_flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def set_candidates(engine: str) -> list[str]:
    """Every NAME ``--set`` accepts for ``engine`` (for "did you mean")."""
    flags = [f[2:] for f in load_catalog(engine).flags()]
    bench = [f[2:].replace("-", "_") for f in E.bench_catalog().flags("bench serve")]
    spec = [f"speculative.{k}" for k in _section_props("speculative")]
    return [*E.SERVE_FIELD_TYPES, *spec, "target", "draft", *flags, *bench]


#: the short names users type for a layout field (``check --tp/--pp/--dp``): suggested as the field
SHORT_FIELDS = {
    "tp": "tensor_parallel_size",
    "pp": "pipeline_parallel_size",
    "dp": "data_parallel_size",
}


def _unknown(name: str, engine: str, what: str) -> UsageError:
    short = SHORT_FIELDS.get(name.removeprefix("serve.").replace("-", "_").lower())
    close = [short] if short else []
    close = close or difflib.get_close_matches(name, set_candidates(engine), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else "see docs/recipes-format.md (Layering)"
    return UsageError(f"--set {name}: {what}", hint=hint)


def _field_item(section: str, key: str, name: str, raw: str, engine: str, text: str) -> SetItem:
    schema = _section_props(section)[key]
    flag = E.serve_flag(engine, key) if section == "serve" else None
    what = f"{section}.{key}" + (f" ({flag})" if flag else "")
    removable = section == "serve" or key == "draft_tensor_parallel_size"
    vtype = schema.get("type", "string")
    if section == "serve" and flag is None:
        reason = E.serve_field_reason(engine, key)
        raise UsageError(
            f"--set {name}: serve field {key} has no {engine} flag"
            + (f": {reason}" if reason else "")
        )
    choices = [str(c) for c in schema["enum"]] if "enum" in schema else None
    if flag is not None and choices is None:
        # the engine's own choices for the field's flag (tokenspeed --kv-cache-dtype: auto, fp8, …)
        choices = (load_catalog(engine).flags().get(flag) or {}).get("choices")
        # a serve field is written the recipe's way and spelled for the engine when rendered
        # (EngineSpec.value_spellings: SGLang's fp8_e4m3 for a recipe's fp8)
        spelled = engine_spec(engine).value_spellings.get(key, {})
        if choices:
            choices = [*choices, *(str(k) for k, v in spelled.items() if str(v) in choices)]
    value = parse_typed(name, raw, vtype, what, choices=choices, limits=schema, removable=removable)
    return SetItem(section, key, value, text)


def _flag_item(name: str, raw: str, engine: str, text: str, command: str) -> SetItem:
    catalog = load_catalog(engine) if command == "serve" else E.bench_catalog()
    flag = "--" + name.replace("_", "-")
    entry = catalog.flags(command)[flag]
    kind = entry.get("kind")
    vtype = entry.get("type") or ("switch" if kind in SWITCH_KINDS else "str")
    label = E.bench_name() if command == "bench serve" else engine
    what = f"{flag} ({label} {catalog.version})"
    limits: dict[str, Any] = {}
    field = E.serve_flag_fields(engine).get(flag) if command == "serve" else None
    if field is not None:
        limits = E.SERVE_LIMITS.get(field, {})
    elif command == "bench serve":
        limits = BENCH_LIMITS.get(flag, {})
    if command == "bench serve" and vtype in ("int", "float") and "," in raw:
        values = tuple(
            parse_typed(name, part.strip(), vtype, what, limits=limits, removable=False)
            for part in raw.split(",")
        )
        return SetItem("bench", flag, values[0], text, sweep=values)
    value = parse_typed(
        name,
        raw,
        vtype,
        what,
        choices=entry.get("choices"),
        nargs=entry.get("nargs"),
        limits=limits,
    )
    return SetItem("flag" if command == "serve" else "bench", flag, value, text)


def _env_item(name: str, var: str, raw: str, text: str) -> SetItem:
    """``env.NAME=VALUE``: the variable, its text verbatim (empty: unset it).

    Raises:
        UsageError: NAME is not a shell variable name (the recipe schema's ``env`` names).
    """
    from recipecli.recipes.schema import ENV_NAME

    if not re.fullmatch(ENV_NAME, var):
        raise UsageError(
            f"--set {name}: {var!r} is not an environment variable name "
            "(letters, digits and _, not starting with a digit)"
        )
    return SetItem("env", var, raw if raw != "" else None, text)


def _dotted_item(name: str, section: str, rest: str, raw: str, engine: str, text: str) -> SetItem:
    """``SECTION.NAME=VALUE`` for a section of :data:`SET_SECTIONS`.

    Raises:
        UsageError: an unknown section, or name in it; a bad value (as :func:`check_set`).
    """
    if section not in SET_SECTIONS:
        raise _unknown(
            name,
            engine,
            "dotted names must be serve.FIELD, speculative.FIELD, bench.FLAG, "
            "text_overrides.KEY or env.NAME",
        )
    if section == "env":
        return _env_item(name, rest, raw, text)
    if section == "text_overrides":
        if not rest:
            raise UsageError(f"--set {name}: give the config key, text_overrides.KEY=VALUE")
        if raw == "":
            return SetItem("text_override", rest, None, text)
        return SetItem("text_override", rest, config_value(raw), text)
    if section == "bench":
        flag = _bench_flag(rest)
        if flag not in E.bench_catalog().flags("bench serve"):
            raise _unknown(name, engine, f"not a {E.bench_name()} flag ({flag})")
        return _flag_item(rest, raw, engine, text, "bench serve")
    key = rest.replace("-", "_")
    if key not in _section_props(section):
        raise _unknown(name, engine, f"{section} has no field {rest!r}")
    return _field_item(section, key, name, raw, engine, text)


def check_set(text: str, engine: str) -> SetItem:
    """Parse and type one ``--set NAME=VALUE`` for ``engine`` (see the module docstring).

    Args:
        text: the ``NAME=VALUE`` text.
        engine: ``vllm`` or ``tokenspeed``.

    Returns:
        the :class:`SetItem`.

    Raises:
        UsageError: malformed, unknown NAME (with "did you mean"), a removed flag, or a value
            of the wrong type or out of range; one line naming the ``--set``.
    """
    name, raw = split_set(text)
    section, dot, rest = name.partition(".")
    if dot:
        return _dotted_item(name, section, rest, raw, engine, text)
    key = name.replace("-", "_")
    if key in ("target", "draft"):
        if raw == "":
            raise UsageError(f"--set {name}={raw!r}: {key} must not be empty")
        return SetItem(key, key, raw, text)
    if key in _section_props("speculative"):
        return _field_item("speculative", key, name, raw, engine, text)
    if key in E.SERVE_FIELD_TYPES:
        return _field_item("serve", key, name, raw, engine, text)
    catalog = load_catalog(engine)
    flag = "--" + name.replace("_", "-")
    if flag in catalog.flags():
        return _flag_item(name, raw, engine, text, "serve")
    if flag in E.bench_catalog().flags("bench serve"):
        return _flag_item(name, raw, engine, text, "bench serve")
    removed = catalog.removed.get(flag)
    if removed is not None:
        raise UsageError(
            f"--set {name}: {flag} was removed from {engine} serve "
            f"(last seen in {removed['last_seen_in']})",
            hint=removed["hint"],
        )
    raise _unknown(
        name,
        engine,
        f"not a serve field nor a {engine} {catalog.version} serve flag nor a {E.bench_name()} flag",
    )
