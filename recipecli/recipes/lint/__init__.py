"""``recipecli lint``: findings about a recipe without rendering or touching the network.

Checks (each finding's ``source`` is ``file:line``, plus the rule's origin):

* schema errors (all of them, not just the first);
* engine flags unknown to the engine's shipped catalog (each built from the engine's argument
  definitions at its pin: :mod:`recipecli.engines.catalog`), with "did you mean"; flags
  REMOVED from vLLM (``--rope-scaling``) with what to use instead; ``bench`` keys unknown to
  ``vllm bench serve``; values of the wrong type for the flag (catalog ``type``);
* env vars wrong for the profile's vendor (``CUDA_VISIBLE_DEVICES``/``ROCR_VISIBLE_DEVICES`` on
  AMD -> ``HIP_VISIBLE_DEVICES``, ROCm vars on NVIDIA), unknown ``VLLM_*`` vars;
* each engine's own rules (``EngineSpec.lint``, in ``recipecli/engines/<engine>/lint.py``):
  tokenspeed's ``--tensor-parallel-size``/``--tp`` together with ``--attn-tp-size`` and EAGLE
  top-k other than 1 (docs/engines/tokenspeed.md#serve-flags); SGLang's two names of one argument,
  draft tokens it would reset, a top-k > 1 tree on paged KV with a backend that cannot run it
  (:mod:`.engine_rules` runs them);
* every override source (``text_overrides``, ``hf-overrides`` engine args, per engine and hardware
  profile) through the placement rule of :mod:`recipecli.recipes.overrides` — the findings render
  gives; ``tensor_parallel_size`` inside the speculative config, JSON-valued args that are not
  valid JSON, a ``default_hardware`` that names no profile.

Modules: :mod:`.flags`, :mod:`.env`, :mod:`.engine_rules` (the engines' own rules), :mod:`.override_rules`;
:mod:`.common` builds every finding; this module runs them (:func:`lint_loaded`).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from recipecli.errors import RecipeError
from recipecli.findings import Finding
from recipecli.recipes.lint.common import finding
from recipecli.recipes.lint.engine_rules import lint_engine_rules
from recipecli.recipes.lint.env import lint_env
from recipecli.recipes.lint.flags import check_flag, check_flag_value, lint_flags
from recipecli.recipes.lint.layout_rules import lint_layout
from recipecli.recipes.lint.override_rules import (
    ENGINE_NEUTRAL,
    NEUTRAL_RULES,
    lint_known_keys,
    lint_overrides,
)
from recipecli.recipes.lint.results_rules import lint_results
from recipecli.recipes.lint.text_rules import lint_text
from recipecli.recipes.loader import Recipe, bundled_dir, load_recipe
from recipecli.recipes.schema import validate

__all__ = [
    "ENGINE_NEUTRAL",
    "NEUTRAL_RULES",
    "RECIPE_GLOBS",
    "check_flag",
    "check_flag_value",
    "expand_refs",
    "lint_loaded",
    "lint_recipe",
]


def _lint_unsupported(recipe: Recipe) -> list[Finding]:
    """``unsupported: {engine: reason}``: the recipe says the engine cannot serve its pair (info:
    the recipe is right to say so; render refuses that engine unless --force, docs show the
    reason)."""
    return [
        finding(
            "recipe.engine_unsupported",
            "info",
            engine,
            f"{recipe.name} is not served on {engine}: {reason}",
            recipe.where("unsupported", engine),
            "docs/recipes-format.md#unsupported-engines",
        )
        for engine, reason in (recipe.get("unsupported") or {}).items()
    ]


def _lint_misc(recipe: Recipe) -> list[Finding]:
    out: list[Finding] = []
    default = recipe.get("default_hardware")
    profiles = recipe.get("hardware") or {}
    if default is not None and default not in profiles:
        out.append(
            finding(
                "recipe.default_hardware",
                "error",
                "any",
                f"default_hardware {default!r} names no hardware profile "
                f"(profiles: {', '.join(profiles) or 'none'})",
                recipe.where("default_hardware"),
            )
        )
    return out


def lint_loaded(recipe: Recipe) -> list[Finding]:
    """Lint a loaded recipe (``render`` calls this before rendering: :func:`.render.lint_gate`).

    Args:
        recipe: a recipe loaded with or without schema validation.

    Returns:
        findings, schema errors first; when the schema fails, the other checks run on what is
        valid (the refused parts left out; a check that needs one of them is not run).
    """
    schema_errors = validate(recipe.data)
    out = [
        finding(
            "recipe.schema", "error", "any", message, recipe.where(*path), "docs/recipe.schema.json"
        )
        for path, message in schema_errors
    ]
    checks = (
        _lint_unsupported,
        _lint_misc,
        lint_flags,
        lint_env,
        lint_engine_rules,
        lint_overrides,
        lint_known_keys,
        lint_text,
        lint_layout,
        lint_results,
    )
    if not schema_errors:
        for check in checks:
            out.extend(check(recipe))
        return out
    # the later layers run on the valid part: each part the schema refused is left out; a
    # layer that still needs a refused part is not run (the schema errors already fail lint)
    valid = replace(recipe, data=_without(recipe.data, [path for path, _ in schema_errors]))
    for check in checks:
        try:
            found = check(valid)
        except (KeyError, TypeError, AttributeError, ValueError, IndexError, RecipeError):
            continue
        out.extend(f for f in found if f not in out)
    return out


def _without(data: Mapping[str, Any], paths: Iterable[tuple[str, ...]]) -> dict[str, Any]:
    """A deep copy of ``data`` without the value at each key path in ``paths`` (a list item's
    index as a string); an empty path (the document itself) removes nothing."""
    out: dict[str, Any] = copy.deepcopy(dict(data))
    for path in sorted(paths, key=len, reverse=True):
        parent: Any = out
        for key in path[:-1]:
            parent = _child(parent, key)
        if path and isinstance(parent, dict):
            parent.pop(path[-1], None)
        elif path and isinstance(parent, list) and path[-1].isdigit():
            if int(path[-1]) < len(parent):
                parent[int(path[-1])] = None
    return out


def _child(node: Any, key: str) -> Any:
    if isinstance(node, dict):
        return node.get(key)
    if isinstance(node, list) and key.isdigit() and int(key) < len(node):
        return node[int(key)]
    return None


def lint_recipe(ref: str) -> list[Finding]:
    """Lint one recipe.

    Args:
        ref: recipe path or bundled name.

    Returns:
        findings, schema errors first. A YAML-level problem (invalid YAML, alias, duplicate key,
        too large) is returned as one ``recipe.yaml`` error.

    Raises:
        RecipeError: only when the file cannot be found at all or is a directory.
    """
    try:
        recipe = load_recipe(ref, validate_schema=False)
    except RecipeError as exc:
        if exc.message.startswith(("no such recipe", "is a directory")):
            raise
        return [finding("recipe.yaml", "error", "any", exc.message, exc.path or ref)]
    return lint_loaded(recipe)


RECIPE_GLOBS: tuple[str, ...] = ("*.yaml", "*.yml")
"""Files of a directory that ``recipecli lint DIR`` lints (not recursive), as ``docs`` does."""


def expand_refs(refs: Iterable[str]) -> list[str]:
    """Replace each directory in ``refs`` by its ``*.yaml``/``*.yml`` files (sorted, not
    recursive); files and bundled names pass through.

    Raises:
        RecipeError: a directory that holds no such file (names the directory).
    """
    from pathlib import Path

    out: list[str] = []
    for ref in refs:
        path = Path(ref)
        if not path.is_dir() or ("/" not in ref and (bundled_dir() / f"{ref}.yaml").is_file()):
            out.append(ref)
            continue
        files = sorted({str(f) for g in RECIPE_GLOBS for f in path.glob(g) if f.is_file()})
        if not files:
            raise RecipeError(
                "is a directory with no *.yaml/*.yml recipe files",
                path=ref,
                hint="lint takes recipe files, bundled names, or directories of recipe files",
            )
        out.extend(files)
    return out
