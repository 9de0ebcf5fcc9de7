"""Each engine's own lint rules (``EngineSpec.lint``), run on the recipe's merged serve flags per
hardware profile. The rules live in the engine folders (``recipecli/engines/<engine>/lint.py``);
this module builds the flag layers they read and turns their verdicts into findings."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from recipecli.engines import engine_specs
from recipecli.engines.spec import EngineLint, EngineSpec
from recipecli.errors import RecipeError
from recipecli.findings import Finding
from recipecli.recipes.lint.common import finding
from recipecli.recipes.loader import Recipe


def _arg_flag(key: Any, lint: EngineLint) -> str:
    return "--" + (str(key).lstrip("-") if lint.strips_arg_dashes else str(key))


def _speculative_layer(recipe: Recipe, spec: EngineSpec) -> dict[str, tuple[Any, str]]:
    """The speculative flags the engine renders from the recipe's ``speculative:`` section (none
    when ``num_speculative_tokens`` is not a positive integer or the method has no algorithm)."""
    section = recipe.get("speculative") or {}
    n = section.get("num_speculative_tokens")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        return {}
    where = recipe.where("speculative", "num_speculative_tokens")
    try:
        flags = spec.speculative_flags(str(section.get("method")), "", n, {})
    except RecipeError:
        return {}
    return {flag: (value, where) for flag, value in flags}


def flag_layers(
    recipe: Recipe, spec: EngineSpec, lint: EngineLint
) -> list[dict[str, tuple[Any, str]]]:
    """The merged flags (value, ``file:line``) of ``spec``'s engine: first with no hardware
    profile, then one per profile. Order: serve fields (the engine's flags), the rendered
    speculative flags (:attr:`EngineLint.sees_speculative`), ``engines.<engine>.args``, then the
    profile's ``args.<engine>``."""
    name = spec.name
    base: dict[str, tuple[Any, str]] = {}
    for key, value in (recipe.get("serve") or {}).items():
        flag = spec.serve_flags.get(key)
        if flag:
            base[flag] = (value, recipe.where("serve", key))
    if lint.sees_speculative:
        base.update(_speculative_layer(recipe, spec))
    eng_args = ((recipe.get("engines") or {}).get(name) or {}).get("args") or {}
    for key, value in eng_args.items():
        base[_arg_flag(key, lint)] = (value, recipe.where("engines", name, "args", key))
    layers = [dict(base)]
    for profile, hw in (recipe.get("hardware") or {}).items():
        merged = dict(base)
        for key, value in (((hw or {}).get("args") or {}).get(name) or {}).items():
            where = recipe.where("hardware", profile, "args", name, key)
            merged[_arg_flag(key, lint)] = (value, where)
        layers.append(merged)
    return layers


def _engine_findings(recipe: Recipe, spec: EngineSpec, lint: EngineLint) -> Iterable[Finding]:
    for hit in lint.rules(flag_layers(recipe, spec, lint)):
        yield finding(hit.code, hit.severity, spec.name, hit.message, hit.where, hit.rule)


def lint_engine_rules(recipe: Recipe) -> list[Finding]:
    """Every registered engine's own rules (``EngineSpec.lint``), in registry order, on
    ``recipe``; an engine whose rules are skipped where the recipe marks it unsupported
    (:attr:`EngineLint.skip_when_unsupported`) is left out there."""
    unsupported = recipe.get("unsupported") or {}
    out: list[Finding] = []
    for spec in engine_specs():
        lint = spec.lint
        if lint is not None and not (lint.skip_when_unsupported and spec.name in unsupported):
            out.extend(_engine_findings(recipe, spec, lint))
    return out
