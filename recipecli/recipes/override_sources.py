"""Where a recipe's config overrides come from, lowest first (the placement rule of
:mod:`recipecli.recipes.overrides` then reads them all alike): the recipe's ``text_overrides``, the
engine's override flag in ``engines.<engine>.args``, in the hardware profile's
``args.<engine>``, then ``--set`` items in command-line order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from recipecli.engines import engine_names, engine_spec
from recipecli.errors import RecipeError, UsageError
from recipecli.recipes.loader import Recipe
from recipecli.recipes.overrides import OverrideSource
from recipecli.recipes.sets import SetItem
from recipecli.recipes.values import normalise_json_value

HF_OVERRIDES = "--hf-overrides"


def overrides_flag(engine: str) -> str:
    """The flag that carries config overrides on ``engine`` (``EngineSpec.overrides``):
    ``--hf-overrides`` (vLLM, tokenspeed), ``--json-model-override-args`` (SGLang);
    ``--hf-overrides`` for an engine that is not registered."""
    if engine not in engine_names():
        return HF_OVERRIDES
    return engine_spec(engine).overrides.flag


def override_sources(
    recipe: Recipe, engine: str, hw_name: str | None, sets: Sequence[SetItem] = ()
) -> list[OverrideSource]:
    """Every override source of (recipe, engine, hardware profile, ``--set`` items), lowest
    first: ``text_overrides`` < ``engines.<engine>.args.hf-overrides`` <
    ``hardware.<name>.args.<engine>.hf-overrides`` < ``--set`` (command-line order).

    JSON strings are parsed (an engine arg may be written as JSON text).

    Raises:
        RecipeError: an ``hf-overrides`` value that is neither a mapping, JSON object text,
            nor false/null (names file:line).
    """
    flag = overrides_flag(engine)
    out: list[OverrideSource] = []
    overrides = recipe.get("text_overrides")
    if overrides:
        out.append(
            OverrideSource("text_overrides", recipe.where("text_overrides"), overrides, True)
        )
    layers: list[tuple[str, tuple[str, ...], Mapping[str, Any]]] = []
    eng = (recipe.get("engines") or {}).get(engine) or {}
    layers.append((f"engines.{engine}.args", ("engines", engine, "args"), eng.get("args") or {}))
    if hw_name is not None:
        hw = (recipe.get("hardware") or {}).get(hw_name) or {}
        layers.append(
            (
                f"hardware.{hw_name}.args.{engine}",
                ("hardware", hw_name, "args", engine),
                ((hw.get("args") or {}).get(engine)) or {},
            )
        )
    for label, path, args in layers:
        for key, value in args.items():
            if "--" + str(key).lstrip("-") != flag:
                continue
            where = recipe.where(*path, str(key))
            value = normalise_json_value(flag, value, engine, where)
            if value not in (None, False) and not isinstance(value, Mapping):
                raise RecipeError(
                    f"{label}.{key} must be a mapping of config keys (or false), "
                    f"got {type(value).__name__}",
                    path=where,
                )
            out.append(OverrideSource(f"{label}.{key}", where, value))
    for item in sets:
        if item.kind == "text_override":
            label, where = f"--set text_overrides.{item.key}", f"--set {item.text}"
            if item.value is None:  # an empty VALUE drops that one key
                out.append(OverrideSource(label, where, {}, True, remove=(item.key,)))
            else:
                out.append(OverrideSource(label, where, {item.key: item.value}, True))
        elif item.kind == "flag" and item.key == flag:
            value = None if item.value is False else item.value
            if value is not None and not isinstance(value, Mapping):
                name, _, raw = item.text.partition("=")
                raise UsageError(
                    f"--set {name}={raw!r}: {flag} takes a JSON object of config keys "
                    f"(or false to drop it), got {type(value).__name__}"
                )
            out.append(OverrideSource(f"--set {flag[2:]}", f"--set {item.text}", value))
    return out
