"""Render a recipe into commands: ``recipecli render``, ``docs`` and ``diff`` call this module.

The flow, one module per step: load (:mod:`.loader`) -> validate (:mod:`.schema`, and
:func:`lint_gate` through :mod:`.lint`) -> resolve (:mod:`.resolve`: the layers merged into one
set of serve flags, the config overrides placed by :mod:`.overrides`, ``--set`` typed by
:mod:`.sets`) -> argv (:mod:`.argv`: serve, bench, eval; :class:`Rendered`) -> text
(:mod:`.text`: :func:`format_shell`, the ``vllm-config`` YAML).

Public entry points:

* :func:`render_command` — (recipe, engine, hardware, what, sets) -> :class:`Rendered`
  (env + argv + typed flags); ``docs`` and ``diff`` call it. :func:`render_all` renders several
  (``--what all``, bench sweeps).
* :func:`format_shell` — the one shell formatter (``export`` lines, one flag per line with
  `` \\`` continuations, ``shlex`` quoting).

The names of the step modules are re-exported here, so ``from recipecli.recipes.render import
...`` keeps working for every name it offered.
"""

from __future__ import annotations

from collections.abc import Sequence

import recipecli.recipes.engines as E
from recipecli.errors import RecipeError, UsageError
from recipecli.recipes.argv import (
    RECORDING_FLAGS,
    WORKLOAD_KEYS,
    WORKLOAD_PREFIXES,
    Rendered,
    bench_argv,
    bench_label,
    eval_argv,
    rendered_commands,
    serve_argv,
    served_model,
)
from recipecli.recipes.lint import lint_loaded
from recipecli.recipes.loader import Recipe, load_recipe
from recipecli.recipes.override_sources import HF_OVERRIDES, override_sources, overrides_flag
from recipecli.recipes.overrides import (
    FORCEABLE_CODES,
    OverrideSource,
    place_overrides,
)
from recipecli.recipes.resolve import Resolved, resolve
from recipecli.recipes.sets import SWITCH_KINDS, SetItem, check_set
from recipecli.recipes.text import (
    ENV_NAME_RE,
    check_config_file_format,
    format_shell,
    shell_text,
    split_shell,
    unfold_continuations,
    vllm_config_mapping,
    vllm_config_text,
)
from recipecli.recipes.values import (
    deep_merge,
    flag_argv,
    json_text,
    normalise_json_value,
    scalar_text,
    serve_flag_argv,
)

__all__ = [
    "ENV_NAME_RE",
    "FORCEABLE_CODES",
    "HF_OVERRIDES",
    "RECORDING_FLAGS",
    "SWITCH_KINDS",
    "WORKLOAD_KEYS",
    "WORKLOAD_PREFIXES",
    "OverrideSource",
    "Recipe",
    "Rendered",
    "Resolved",
    "SetItem",
    "bench_argv",
    "bench_label",
    "check_set",
    "deep_merge",
    "eval_argv",
    "flag_argv",
    "format_shell",
    "json_text",
    "layout_field_gate",
    "lint_gate",
    "load_recipe",
    "normalise_json_value",
    "override_sources",
    "overrides_flag",
    "place_overrides",
    "render_all",
    "render_command",
    "resolve",
    "own_draft",
    "scalar_text",
    "serve_argv",
    "set_draft",
    "serve_flag_argv",
    "served_model",
    "shell_text",
    "split_shell",
    "unfold_continuations",
    "check_config_file_format",
    "vllm_config_mapping",
    "vllm_config_text",
]


def set_draft(sets: Sequence[str]) -> str | None:
    """The draft ``--set draft=SOURCE`` names (the last one), or None when ``sets`` names none."""
    drafts = [raw for name, _, raw in (t.partition("=") for t in sets) if name.strip() == "draft"]
    return drafts[-1] if drafts else None


def own_draft(recipe: Recipe, hardware: str | None, draft: str | None) -> bool:
    """True when ``draft`` (None: not overridden) is the recipe's own draft on ``hardware``
    (the profile's ``draft``, else the recipe's; default profile when ``hardware`` is None)."""
    if draft is None:
        return True
    name = hardware or recipe.get("default_hardware")
    profile = ((recipe.get("hardware") or {}).get(name) or {}) if name else {}
    return bool(draft == (profile.get("draft") or recipe.get("draft")))


def lint_gate(
    recipe: Recipe, engine: str, *, force: bool = False, recipe_draft: bool = True
) -> None:
    """Refuse to render a recipe that ``recipecli lint`` rejects for ``engine``.

    A recipe whose ``unsupported.<engine>`` names a reason is refused for that engine (the
    engine cannot serve its pair) — when the recipe's own draft is rendered (``recipe_draft``):
    the reason is about that draft, and another one (``--set draft=``, e.g. one written by
    ``recipecli convert ... --to eagle3``) is judged on its own. Errors of :func:`recipecli.recipes.lint.lint_loaded` whose
    engine is ``engine`` or ``any``
    block rendering (unknown or removed flags, bad flag values, vendor env mistakes, tokenspeed
    TP/top-k rules, overrides the engine would drop, ...); warnings do not. With ``force``,
    override errors (:data:`recipecli.recipes.overrides.FORCEABLE_CODES`) do not block either.
    About 20 ms for a bundled recipe.

    Raises:
        RecipeError: one line: ``file:line: <first error> (+N more) — run `recipecli lint FILE```.
    """
    reason = (recipe.get("unsupported") or {}).get(engine)
    if reason and not force and recipe_draft:
        raise RecipeError(
            f"{recipe.name} is not served on {engine}: {reason}",
            path=recipe.where("unsupported", engine),
            hint="render another engine, or render anyway with --force",
        )
    errors = [
        f
        for f in lint_loaded(recipe)
        if f.severity == "error"
        and f.engine in (engine, "any")
        and not (force and f.code in FORCEABLE_CODES)
    ]
    if errors:
        where = errors[0].source.partition("; ")[0]
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        forceable = errors[0].code in FORCEABLE_CODES
        raise RecipeError(
            f"{errors[0].message}{more}",
            path=where,
            hint=f"run `recipecli lint {recipe.path}`"
            + (", or render anyway with --force" if forceable else ""),
        )


def layout_field_gate(recipe: Recipe, engine: str, *, force: bool = False) -> None:
    """Refuse a recipe whose ``serve`` sets a layout field (:data:`~.engines.LAYOUT_FIELDS`:
    pipeline, data or expert parallelism, DP attention) that ``engine`` has no flag for: left
    out, the deployment would run another layout than the recipe says. With ``force`` the
    field is left out with a warning (:func:`resolve`'s ``recipe.serve_field_unsupported``).

    A field set to its no-op value (``false``, a size of 1) is not refused.

    Raises:
        RecipeError: one line: the field, the engine's reason (``EngineSpec.serve_field_reasons``)
            and where the recipe sets it.
    """
    serve = recipe.get("serve") or {}
    for key in E.LAYOUT_FIELDS:
        value = serve.get(key)
        no_op = value is None or value is False or (type(value) is int and value == 1)
        if no_op or E.serve_flag(engine, key) is not None or force:
            continue
        reason = E.serve_field_reason(engine, key) or f"{engine} has no flag for it"
        raise RecipeError(
            f"serve.{key}: {reason}",
            path=recipe.where("serve", key),
            hint="remove it for this engine, or render anyway with --force (it is left out)",
        )


def render_command(
    recipe: Recipe | str,
    engine: str,
    *,
    hardware: str | None = None,
    what: str = "serve",
    sets: Sequence[str] = (),
    target_config: str | None = None,
    lint: bool = True,
    force: bool = False,
    offline: bool | None = None,
) -> Rendered:
    """Render one command of a recipe.

    Args:
        recipe: a :class:`Recipe` or a recipe path / bundled name.
        engine: ``vllm``, ``tokenspeed`` or ``sglang``.
        hardware: hardware profile (default: the recipe's ``default_hardware``).
        what: ``serve``, ``bench`` or ``eval``.
        sets: ``NAME=VALUE`` overrides (top layer).
        target_config: SOURCE of the target config (overrides snapshots and the recipe).
        lint: run :func:`lint_gate` first (False when the caller already did).
        force: render overrides the engine would drop (see :func:`resolve`).
        offline: how a target config may be read (:func:`resolve`; None: ``HF_HUB_OFFLINE``).

    Returns:
        :class:`Rendered` (env only on ``serve``).

    Raises:
        UsageError, RecipeError: see :func:`resolve`; unknown ``what``; lint errors
            (:func:`lint_gate`); a bench sweep (several commands: use :func:`render_all`).
    """
    if isinstance(recipe, str):
        recipe = load_recipe(recipe)
    if what not in E.WHATS:
        raise UsageError(f"unknown --what {what!r} (choose {', '.join(E.WHATS)} or all)")
    if engine in E.ENGINES and lint:
        mine = own_draft(recipe, hardware, set_draft(sets))
        lint_gate(recipe, engine, force=force, recipe_draft=mine)
        layout_field_gate(recipe, engine, force=force)
    res = resolve(
        recipe,
        engine,
        hardware=hardware,
        sets=sets,
        target_config=target_config,
        force=force,
        offline=offline,
    )
    out = rendered_commands(res, what)
    if len(out) > 1:
        flag, values = res.sweep or ("", ())
        raise UsageError(
            f"--set {flag[2:].replace('-', '_')}={','.join(scalar_text(v) for v in values)} is a "
            f"sweep ({len(values)} bench commands); this command compares or renders one: give "
            f"one value"
        )
    return out[0]


def render_all(
    recipe: Recipe | str,
    engine: str,
    *,
    hardware: str | None = None,
    what: str = "all",
    sets: Sequence[str] = (),
    target_config: str | None = None,
    force: bool = False,
    offline: bool | None = None,
) -> list[Rendered]:
    """Render ``what`` (or, for ``all``, serve plus the bench/eval sections the recipe has);
    lints the recipe once first (:func:`lint_gate`). A bench sweep (``--set
    max_concurrency=1,4,16``) gives one bench command per value, in the order given."""
    if isinstance(recipe, str):
        recipe = load_recipe(recipe)
    if what not in (*E.WHATS, "all"):
        raise UsageError(f"unknown --what {what!r} (choose {', '.join(E.WHATS)} or all)")
    if engine in E.ENGINES:
        mine = own_draft(recipe, hardware, set_draft(sets))
        lint_gate(recipe, engine, force=force, recipe_draft=mine)
        layout_field_gate(recipe, engine, force=force)
    whats = [w for w in E.WHATS if w == "serve" or recipe.get(w) is not None]
    if what != "all":
        whats = [what]
    res = resolve(
        recipe,
        engine,
        hardware=hardware,
        sets=sets,
        target_config=target_config,
        force=force,
        offline=offline,
    )
    return [r for w in whats for r in rendered_commands(res, w)]
