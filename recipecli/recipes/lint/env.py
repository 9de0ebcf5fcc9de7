"""Lint rules on environment variables: wrong for the profile's vendor, or a name with an engine's
env prefix (``VLLM_*``) that the engine does not read (``EngineSpec.env_vars``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import recipecli.recipes.engines as E
from recipecli.engines import engine_spec, engine_specs
from recipecli.engines.catalog import load_catalog
from recipecli.engines.spec import EnvVars
from recipecli.findings import Finding
from recipecli.recipes.lint.common import finding
from recipecli.recipes.loader import Recipe


def _vendor_env_sets(
    recipe: Recipe,
) -> Iterable[tuple[str, str | None, str, Mapping[str, Any], tuple[str, ...]]]:
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


def _env_readers(name: str) -> list[tuple[str, EnvVars]]:
    """The engines whose env prefix ``name`` carries, with their env facts."""
    return [
        (spec.name, spec.env_vars)
        for spec in engine_specs()
        if spec.env_vars is not None and name.startswith(spec.env_vars.prefix)
    ]


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
            for eng, env_vars in _env_readers(name):
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
                            f"{name} is not an env var {engine_spec(eng).title} "
                            f"{catalog.version} reads{hint}",
                            where,
                            env_vars.source,
                            name=name,
                        )
                    )
    return out
