"""Lint rules on config overrides: every override source, per engine and hardware profile,
through the one placement rule of :mod:`recipecli.recipes.overrides` (the findings render gives),
and stale ``text_overrides_known_keys``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import recipecli.recipes.engines as E
from recipecli.errors import RecipeError
from recipecli.findings import Finding
from recipecli.recipes.lint.common import finding
from recipecli.recipes.loader import Recipe
from recipecli.recipes.override_sources import override_sources
from recipecli.recipes.overrides import OverrideSource, place_overrides


def lint_known_keys(recipe: Recipe) -> list[Finding]:
    """A ``text_overrides_known_keys`` entry that ``text_overrides`` does not set is stale."""
    overrides = recipe.get("text_overrides") or {}
    return [
        finding(
            "recipe.known_key_unused",
            "warning",
            "any",
            f"text_overrides_known_keys lists {key!r} but text_overrides does not set it",
            recipe.where("text_overrides_known_keys", str(i)),
            key=key,
        )
        for i, key in enumerate(recipe.get("text_overrides_known_keys") or ())
        if key not in overrides
    ]


def _snapshot_config(target: str) -> Mapping[str, Any] | None:
    from recipecli.recipes.targets import bundled_snapshot_path

    snap = bundled_snapshot_path(str(target or ""))
    if snap is None:
        return None
    config: Mapping[str, Any] = json.loads(snap.read_text(encoding="utf-8"))["config"]
    return config


ENGINE_NEUTRAL: frozenset[str] = frozenset(
    {"recipe.override_absent", "recipe.override_unknown_key", "recipe.override_is_engine_flag"}
)
"""Override findings that do not depend on the engine (lint reports them once, engine ``any``)."""

NEUTRAL_RULES: dict[str, str] = {
    "recipe.override_absent": "the target's config.json; docs/engines/vllm.md#hf-overrides",
    "recipe.override_unknown_key": (
        "the target's config.json and transformers 5.24.0 configuration_utils.py "
        "PreTrainedConfig fields"
    ),
    "recipe.override_is_engine_flag": (
        "docker/model-runner#912; docs/engines/vllm.md#hf-overrides, "
        "docs/engines/tokenspeed.md#hf-overrides"
    ),
}


def _local_config(recipe: Recipe, source: str) -> tuple[Mapping[str, Any] | None, str]:
    """The recipe's ``target_config`` when it is a local file or checkpoint dir (relative to the
    recipe file, or as given), else None and why (lint reads nothing from the network).

    Returns:
        (config, "") or (None, why it could not be read: one clause for a message).
    """
    from pathlib import Path

    from recipecli.errors import RecipeCliError
    from recipecli.recipes.targets import load_target_config

    for candidate in (Path(recipe.path).parent / source, Path(source)):
        if candidate.exists():
            try:
                return load_target_config("", override=str(candidate))[0], ""
            except RecipeCliError as exc:
                return None, f"{candidate} could not be read ({exc.message})"
    return None, "it is not a local file or directory (lint reads no network)"


def _override_keys(sources: Sequence[OverrideSource]) -> str:
    """``rope_theta, rope_scaling``: the keys the override sources set, sorted."""
    keys = {str(k) for src in sources if isinstance(src.value, Mapping) for k in src.value}
    return ", ".join(sorted(keys)) or "(none)"


def _unchecked(
    recipe: Recipe,
    hw_name: str | None,
    sources: Sequence[OverrideSource],
    target: str,
    given: str | None,
    why: str,
) -> Finding:
    """The ``recipe.override_unchecked`` warning: the override keys could not be checked against
    the target's config, and what to add so that they are (docs/lint.md)."""
    keys = _override_keys(sources)
    add = (
        "a local config.json, checkpoint directory or `recipecli inspect ... --save-metadata` "
        "snapshot, relative to the recipe"
    )
    if given:
        path = ("hardware", hw_name, "target_config") if hw_name else ("target_config",)
        message = (
            f"override keys {keys} not checked: target_config {given!r}: {why}; point "
            f"target_config at {add}"
        )
        where = recipe.where(*path)
    else:
        message = (
            f"override keys {keys} not checked: recipecli ships no snapshot of target "
            f"{target!r} and lint reads no network (render reads its config.json from the HF "
            f"cache or the Hub and refuses a key it lacks); to check them here, add "
            f"`target_config: PATH` ({add})"
        )
        where = next(src.where for src in sources if src.value)
    return finding("recipe.override_unchecked", "warning", "any", message, where, "docs/lint.md")


def _target_config(
    recipe: Recipe, hw_name: str | None, sources: Sequence[OverrideSource]
) -> tuple[Mapping[str, Any] | None, Finding | None]:
    """The target config lint checks ``sources`` against on ``hw_name`` (the profile's or the
    recipe's ``target_config`` when local, else the target's bundled snapshot), or None and
    the ``recipe.override_unchecked`` warning saying what to add."""
    hw = (recipe.get("hardware") or {}).get(hw_name) or {} if hw_name else {}
    target = hw.get("target") or recipe.get("target")
    given = hw.get("target_config") or recipe.get("target_config")
    if given:
        config, why = _local_config(recipe, given)
        given_hw = hw_name if hw.get("target_config") else None
    else:
        config, why, given_hw = _snapshot_config(target), "", None
    if config is not None:
        return config, None
    return None, _unchecked(recipe, given_hw, sources, str(target or ""), given, why)


def lint_overrides(recipe: Recipe) -> list[Finding]:
    """Every override source, per engine and hardware profile, through the one placement rule
    (:func:`recipecli.recipes.overrides.place_overrides`) against the target's bundled snapshot
    (unknown targets: only the engine-flag check). Same findings as ``render``."""
    known = recipe.get("text_overrides_known_keys") or ()
    profiles = [None, *((recipe.get("hardware") or {}).keys())]
    out: list[Finding] = []
    seen: set[tuple[str, ...]] = set()
    unsupported = recipe.get("unsupported") or {}
    for engine in E.ENGINES:
        if engine in unsupported:
            continue  # the recipe says why the engine cannot serve the pair (render refuses it)
        for hw_name in profiles:
            try:
                sources = override_sources(recipe, engine, hw_name)
            except RecipeError as exc:
                key: tuple[str, ...] = ("recipe.json_invalid", exc.path or "", engine)
                if key not in seen:
                    seen.add(key)
                    out.append(
                        finding(
                            "recipe.override_value", "error", engine, exc.message, exc.path or ""
                        )
                    )
                continue
            if not any(src.value for src in sources):
                continue
            config, unchecked = _target_config(recipe, hw_name, sources)
            if unchecked is not None:
                key = (unchecked.code, unchecked.source, unchecked.message)
                if key not in seen:
                    seen.add(key)
                    out.append(unchecked)
            for f in place_overrides(engine, sources, config, known=known).findings:
                if f.code in ENGINE_NEUTRAL:
                    # the same fact for both engines: report it once, for any engine
                    f = replace(
                        f,
                        engine="any",
                        source=f"{f.source.partition('; ')[0]}; {NEUTRAL_RULES[f.code]}",
                    )
                key = (f.code, f.source.partition("; ")[0], f.message, f.engine)
                if key in seen:
                    continue
                seen.add(key)
                out.append(f)
    return out
