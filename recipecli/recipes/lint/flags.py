"""Lint rules on engine flags: unknown or removed flags (with "did you mean"), values of the wrong
type or range, JSON that is not JSON, ``tensor_parallel_size`` in the speculative config, and
``bench`` keys ``vllm bench serve`` does not know."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import recipecli.recipes.engines as E
from recipecli.engines import engine_spec
from recipecli.engines.catalog import Catalog, load_catalog
from recipecli.findings import Finding
from recipecli.recipes.lint.common import finding
from recipecli.recipes.loader import Recipe
from recipecli.recipes.schema import validate
from recipecli.recipes.sets import SWITCH_KINDS
from recipecli.recipes.values import parse_json

#: Unknown flags of one recipe that get a "did you mean" (difflib over the engine's catalog, 1-2 ms
#: each): a 256 KiB recipe of 15,000 unknown vLLM flags took 30 s to lint; the rest get none
#: (issue #29: recipes with many unknown flags are checked in linear time, quickly).
MAX_SUGGESTED = 100


def check_flag(
    catalog: Catalog,
    flag: str,
    value: Any,
    where: str,
    command: str = "serve",
    *,
    suggest: bool = True,
) -> list[Finding]:
    """Findings for one engine flag (long form with dashes): unknown / removed / bad JSON.

    Args:
        catalog: the engine's catalog.
        flag: e.g. ``--max-model-len``.
        value: the recipe value.
        where: ``file:line``.
        command: catalog command (``serve`` or ``bench serve``).

    Returns:
        findings (empty when the flag is fine).
    """
    engine = catalog.engine
    label = f"{engine} {command}"
    rule = f"{engine} {catalog.version} flag catalog"
    entry = catalog.flags(command).get(flag)
    if entry is None:
        removed = catalog.removed.get(flag) if command == "serve" else None
        if removed is not None:
            return [
                finding(
                    "recipe.flag_removed",
                    "error",
                    engine,
                    f"{flag} is not a {label} flag at {catalog.version} (last seen in "
                    f"{removed['last_seen_in']}): {removed['hint']}",
                    where,
                    rule,
                    flag=flag,
                )
            ]
        close = catalog.suggest(flag, command) if suggest else None
        hint = f"; did you mean {close}?" if close else ""
        return [
            finding(
                "recipe.flag_unknown",
                "error",
                engine,
                f"{flag} is not a {label} flag{hint}",
                where,
                rule,
                flag=flag,
                suggestion=close,
            )
        ]
    if entry.get("kind") == "json" and isinstance(value, str):
        try:
            parse_json(value, where="recipe")
        except ValueError as exc:
            return [
                finding(
                    "recipe.json_invalid",
                    "error",
                    engine,
                    f"{flag} takes JSON but {value!r} is not valid JSON ({exc}); write "
                    f"a YAML mapping instead",
                    where,
                    rule,
                    flag=flag,
                )
            ]
    return []


def _engine_arg_sets(
    recipe: Recipe, engine: str
) -> Iterable[tuple[str, Mapping[str, Any], tuple[str, ...]]]:
    """(label, args, key path) of every args mapping for ``engine``."""
    eng = (recipe.get("engines") or {}).get(engine) or {}
    yield "engines", eng.get("args") or {}, ("engines", engine, "args")
    for name, hw in (recipe.get("hardware") or {}).items():
        args = ((hw or {}).get("args") or {}).get(engine)
        if args:
            yield f"hardware {name}", args, ("hardware", name, "args", engine)


def _type_mismatch(catalog: Catalog, flag: str, value: Any, command: str = "serve") -> str | None:
    """Why ``value`` (as YAML typed it) cannot be the value of ``flag``, per the catalog's
    ``type`` (``int``: an integer or integer text; ``float``: a number or number text; ``json``:
    a mapping, list or JSON text), or None."""
    vtype = (catalog.flags(command).get(flag) or {}).get("type")
    if vtype is None:
        return None
    if value is True and vtype not in ("switch", "optional"):
        return f"{flag} takes a value ({vtype}), not a bare true"
    if vtype == "int":
        ok = (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, str) and value.strip().lstrip("+-").isdigit()
        )
        return None if ok else f"{flag} takes an integer, not {value!r}"
    if vtype == "float":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if isinstance(value, str):
            try:
                float(value)
                ok = True
            except ValueError:
                ok = False
        return None if ok else f"{flag} takes a number, not {value!r}"
    if vtype == "json" and not isinstance(value, (Mapping, list, str)):
        return f"{flag} takes JSON (a mapping or list), not {value!r}"
    return None


def check_flag_value(catalog: Catalog, flag: str, value: Any, where: str) -> list[Finding]:
    """Findings for the VALUE of a known serve flag: a flag that is a ``serve`` field's flag
    (``--tensor-parallel-size``, ``--port``, …) must satisfy that field's schema (type and range:
    sizes >= 1, port 1..65535); a switch takes ``true``/``false`` only. ``false``/``null``
    (remove the flag) is always fine.

    Args:
        catalog: the engine's catalog.
        flag: e.g. ``--tensor-parallel-size``.
        value: the recipe value.
        where: ``file:line``.

    Returns:
        at most one ``recipe.flag_value`` error.
    """
    if value is None or value is False:
        return []
    engine = catalog.engine
    field = E.serve_flag_fields(engine).get(flag)
    message = None
    if field is not None:
        errors = validate(value, E.serve_field_schema(field), (f"{flag} {value!r}",))
        if errors:
            message = f"{errors[0][1]} (as serve.{field})"
    elif catalog.kind(flag) in SWITCH_KINDS and value is not True:
        message = f"{flag} is a switch: give true (or false to drop it), not {value!r}"
    else:
        message = _type_mismatch(catalog, flag, value)
    if message is None:
        return []
    return [
        finding(
            "recipe.flag_value",
            "error",
            engine,
            message,
            where,
            f"{engine} {catalog.version} flag catalog",
            flag=flag,
        )
    ]


def lint_flags(recipe: Recipe) -> list[Finding]:
    out: list[Finding] = []
    unknown = 0  # unknown flags so far: only the first MAX_SUGGESTED get a suggestion
    for engine in E.ENGINES:
        catalog = load_catalog(engine)
        for _, args, path in _engine_arg_sets(recipe, engine):
            for key, value in args.items():
                flag = "--" + str(key).lstrip("-")
                where = recipe.where(*path, key)
                found = check_flag(catalog, flag, value, where, suggest=unknown < MAX_SUGGESTED)
                unknown += sum(f.code == "recipe.flag_unknown" for f in found)
                out.extend(found or check_flag_value(catalog, flag, value, where))
                if flag == "--speculative-config":
                    out.extend(_lint_spec_config(recipe, engine, value, recipe.where(*path, key)))
        spec_extra = ((recipe.get("engines") or {}).get(engine) or {}).get("speculative_config")
        if spec_extra:
            out.extend(
                _lint_spec_config(
                    recipe,
                    engine,
                    spec_extra,
                    recipe.where("engines", engine, "speculative_config"),
                )
            )
    bench = recipe.get("bench") or {}
    bench_catalog = E.bench_catalog()
    for key, value in bench.items():
        if key == "base_url":
            continue
        out.extend(
            check_flag(
                bench_catalog,
                "--" + key.replace("_", "-"),
                value,
                recipe.where("bench", key),
                command="bench serve",
            )
        )
    return out


def _lint_spec_config(recipe: Recipe, engine: str, value: Any, where: str) -> list[Finding]:
    """``recipe.spec_tensor_parallel``: a key the engine rejects in its speculative JSON mapping
    (``EngineSpec.speculative_config``; vLLM's ``tensor_parallel_size``)."""
    rules = engine_spec(engine).speculative_config
    if rules is None:
        return []
    if isinstance(value, str):
        try:
            value = parse_json(value, where="recipe")
        except ValueError:
            return []  # reported by check_flag
    if not isinstance(value, Mapping):
        return []
    title = engine_spec(engine).title
    return [
        finding(
            "recipe.spec_tensor_parallel",
            "error",
            engine,
            f"the speculative config must not contain {key} ({title} rejects it); use "
            f"{instead} ({rules.advice[instead]})",
            where,
            rules.source,
        )
        for key, instead in rules.refused.items()
        if key in value
    ]
