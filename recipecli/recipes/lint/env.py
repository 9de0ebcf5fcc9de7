"""Lint rules on environment variables: wrong for the profile's vendor, or a ``VLLM_*`` name vLLM
does not read."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import recipecli.recipes.engines as E
from recipecli.findings import Finding
from recipecli.recipes.catalog import load_catalog
from recipecli.recipes.lint.common import finding
from recipecli.recipes.loader import Recipe


def _vendor_env_sets(
    recipe: Recipe,
) -> Iterable[tuple[str, str, str, Mapping[str, Any], tuple[str, ...]]]:
    """(engine or 'any', vendor, label, env, key path) for every env that reaches a profile."""
    profiles = recipe.get("hardware") or {}
    for name, hw in profiles.items():
        hw = hw or {}
        vendor = hw.get("vendor")
        yield "any", vendor, name, hw.get("env") or {}, ("hardware", name, "env")
        for engine, env in (hw.get("engine_env") or {}).items():
            yield engine, vendor, name, env or {}, ("hardware", name, "engine_env", engine)
        for engine, eng in (recipe.get("engines") or {}).items():
            yield engine, vendor, name, (eng or {}).get("env") or {}, ("engines", engine, "env")


def lint_env(recipe: Recipe) -> list[Finding]:
    out: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for engine, vendor, profile, env, path in _vendor_env_sets(recipe):
        for name in env:
            where = recipe.where(*path, name)
            for rule in E.ENV_RULES:
                if (
                    rule.vendor == vendor
                    and rule.matches(name)
                    and (where, rule.prefix) not in seen
                ):
                    seen.add((where, rule.prefix))
                    out.append(
                        finding(
                            "recipe.env_vendor",
                            "error",
                            engine,
                            f"{name} on {vendor} profile {profile!r}: {rule.message}",
                            where,
                            rule.source,
                            name=name,
                            vendor=vendor,
                        )
                    )
            prefix_engine = [e for e, p in E.ENGINE_ENV_PREFIX.items() if name.startswith(p)]
            for eng in prefix_engine:
                catalog = load_catalog(eng)
                if name not in catalog.env and (where, name) not in seen:
                    seen.add((where, name))
                    close = catalog.suggest_env(name)
                    hint = f"; did you mean {close}?" if close else ""
                    out.append(
                        finding(
                            "recipe.env_unknown",
                            "warning",
                            eng,
                            f"{name} is not an env var vLLM {catalog.version} reads{hint}",
                            where,
                            "vllm/envs.py",
                            name=name,
                        )
                    )
    return out
