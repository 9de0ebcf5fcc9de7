"""What the pages are built from: the recipes named on the command line, their hardware profiles,
and their commands rendered exactly as ``recipecli render`` prints them."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recipecli.docsgen.markdown import fence
from recipecli.errors import RecipeError, UsageError
from recipecli.recipes.loader import Recipe, bundled_names, load_recipe
from recipecli.recipes.render import Rendered, format_shell, render_command

WHAT_TITLES: dict[str, str] = {
    "serve": "Serve",
    "bench": "Benchmark (`vllm bench serve` against the server above)",
    "eval": "Accuracy (lm-eval against the server above)",
}


def collect_recipes(refs: Sequence[str], *, bundled: bool = False) -> list[Recipe]:
    """Load the recipes named on the command line.

    Args:
        refs: recipe files, bundled recipe names, or directories (their ``*.yaml``/``*.yml``
            files, not recursive).
        bundled: also take every bundled recipe.

    Returns:
        the recipes, sorted by name.

    Raises:
        UsageError: nothing given.
        RecipeError: a directory without recipes, an invalid recipe, or two recipes with the
            same name (the message names both files).
    """
    if not refs and not bundled:
        raise UsageError("give RECIPE files, directories or bundled names, or --bundled")
    loaded: list[Recipe] = []
    for ref in refs:
        path = Path(ref)
        if path.is_dir():
            files = sorted([*path.glob("*.yaml"), *path.glob("*.yml")])
            if not files:
                raise RecipeError(
                    "directory holds no *.yaml recipes", path=ref, hint="give recipe files"
                )
            loaded += [load_recipe(str(f)) for f in files]
        else:
            loaded.append(load_recipe(ref))
    if bundled:
        have = {r.path for r in loaded}
        loaded += [r for r in (load_recipe(n) for n in bundled_names()) if r.path not in have]
    by_name: dict[str, Recipe] = {}
    for r in loaded:
        first = by_name.get(r.name)
        if first is not None and first.path != r.path:
            raise RecipeError(
                f"two recipes are named {r.name!r} (also {first.path})",
                path=r.path,
                hint="page names come from recipe names: rename one",
            )
        by_name[r.name] = r
    return [by_name[n] for n in sorted(by_name)]


def hardware_names(recipe: Recipe) -> list[str | None]:
    """Hardware profiles of ``recipe``: the default first, then the others in file order;
    ``[None]`` for a recipe without profiles."""
    profiles = list(recipe.get("hardware") or {})
    if not profiles:
        return [None]
    default = recipe.get("default_hardware")
    first = [default] if default in profiles else []
    return [*first, *(p for p in profiles if p != default)]


def hardware_profile(recipe: Recipe, hw: str | None) -> Mapping[str, Any]:
    """The mapping of hardware profile ``hw`` (``{}`` for None or a profile without keys)."""
    return (recipe.get("hardware") or {}).get(hw) or {} if hw else {}


def profile_mentions_engine(recipe: Recipe, hw: str | None, engine: str) -> bool:
    """True when hardware profile ``hw`` names something for ``engine`` (``args.<engine>`` or
    ``engine_env.<engine>``): the models page only lists such non-default variants."""
    prof = hardware_profile(recipe, hw)
    return bool((prof.get("args") or {}).get(engine) or (prof.get("engine_env") or {}).get(engine))


def recipe_ref(recipe: Recipe, out_dir: Path) -> str:
    """How pages name a recipe: the bundled name, or its path relative to the output directory
    (POSIX separators, so pages do not depend on the machine)."""
    if recipe.bundled:
        return recipe.name
    rel = os.path.relpath(Path(recipe.path).resolve(), out_dir.resolve())
    return Path(rel).as_posix()


@dataclass(frozen=True)
class Command:
    """One rendered command as the pages show it.

    Attributes:
        what: serve, bench or eval.
        title: heading text for the block.
        shell: the shell text from :func:`format_shell` (what ``recipecli render`` prints).
        block: ``shell`` in a fenced ``bash`` block.
        rendered: the underlying render (env + argv).
    """

    what: str
    title: str
    shell: str
    block: str
    rendered: Rendered


def command_of(rendered: Rendered) -> Command:
    """Wrap a render into a :class:`Command` (one formatter: :func:`format_shell`)."""
    shell = format_shell(rendered.env, rendered.argv, head=rendered.head)
    return Command(rendered.what, WHAT_TITLES[rendered.what], shell, fence(shell), rendered)


def render_commands(
    recipe: Recipe, engine: str, hw: str | None, *, offline: bool | None = None
) -> list[Command]:
    """Serve plus the bench / eval commands the recipe has, for ``engine`` on ``hw``. For an
    engine the recipe marks ``unsupported`` they are rendered anyway (``force``), so that the
    check section judges the deployment the recipe describes; pages do not show them.

    Args:
        recipe: the recipe.
        engine: the engine.
        hw: the hardware profile (None: the recipe's default).
        offline: how a target config for the overrides may be read (:func:`render_command`).

    Raises:
        RecipeError, UsageError: from :func:`render_command`.
    """
    whats = ["serve", *(w for w in ("bench", "eval") if recipe.get(w) is not None)]
    force = unsupported_reason(recipe, engine) is not None
    return [
        command_of(
            render_command(recipe, engine, hardware=hw, what=w, force=force, offline=offline)
        )
        for w in whats
    ]


def unsupported_reason(recipe: Recipe, engine: str) -> str | None:
    """The recipe's ``unsupported.<engine>`` reason (the engine cannot serve its pair), or None."""
    reason = (recipe.get("unsupported") or {}).get(engine)
    return str(reason) if reason else None
