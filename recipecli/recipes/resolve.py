"""Resolve a recipe for one engine and hardware profile: the layers merged into one set of serve
flags and env (:class:`Resolved`), from which :mod:`.argv` builds the commands.

Layering (last wins, one flag per name): base (``serve`` fields, speculative flags, the placed
config overrides) < ``engines.<engine>.args`` < ``hardware.<name>.args.<engine>`` < ``--set
NAME=VALUE`` (typed by the flag it sets: :mod:`.sets`). A value of ``true`` renders a bare flag,
``false``/``null`` removes the flag, a mapping renders JSON, a list renders JSON (or one argv item
per element for ``nargs`` flags). When two layers give a mapping for the same flag they are
merged recursively — except the overrides flag (``--hf-overrides``,
``--json-model-override-args``): every override source goes through the one placement rule of
:mod:`.overrides`, which merges per key and nests or flattens for the engine.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import recipecli.recipes.engines as E
from recipecli import codes
from recipecli.engines import engine_spec
from recipecli.errors import RecipeError, UsageError
from recipecli.findings import Finding
from recipecli.recipes.loader import Recipe
from recipecli.recipes.override_sources import override_sources, overrides_flag
from recipecli.recipes.overrides import (
    OverrideSource,
    place_overrides,
)
from recipecli.recipes.sets import SetItem, check_set
from recipecli.recipes.values import deep_merge, normalise_json_value, scalar_text


@dataclass(frozen=True)
class Resolved:
    """Everything the serve/bench/eval commands of one (recipe, engine, hardware) need.

    Attributes:
        recipe: the recipe.
        engine: ``vllm``, ``tokenspeed`` or ``sglang``.
        hardware: the hardware profile used, or None.
        vendor: that profile's ``vendor`` (``nvidia``, ``amd``), or None.
        target: the target SOURCE served (after ``--set target=``).
        draft: the draft SOURCE (after ``--set draft=``).
        env: environment to export (name -> text), in layer order.
        flags: the merged serve flags (flag -> typed value), in output order.
        warnings: non-fatal findings (serve fields without a flag, override warnings).
        bench: ``--set`` bench flags (flag -> typed value; None drops it), in order.
        sweep: ``(flag, values)`` of a bench sweep, or None.
    """

    recipe: Recipe
    engine: str
    hardware: str | None
    vendor: str | None
    target: str
    draft: str
    env: dict[str, str]
    flags: dict[str, Any]
    warnings: tuple[Finding, ...]
    bench: dict[str, Any] = field(default_factory=dict)
    sweep: tuple[str, tuple[Any, ...]] | None = None


def _hardware(recipe: Recipe, name: str | None) -> tuple[str | None, Mapping[str, Any]]:
    profiles: Mapping[str, Any] = recipe.get("hardware", {}) or {}
    name = name or recipe.get("default_hardware")
    if name is None:
        return None, {}
    if name not in profiles:
        close = difflib.get_close_matches(name, list(profiles), n=1)
        hint = (
            f"did you mean {close[0]!r}?" if close else f"profiles: {', '.join(profiles) or 'none'}"
        )
        raise UsageError(f"recipe has no hardware profile {name!r}", path=recipe.label, hint=hint)
    return name, profiles[name]


def _arg_layer(args: Mapping[str, Any] | None) -> list[tuple[str, Any]]:
    return [("--" + str(k).lstrip("-"), v) for k, v in (args or {}).items()]


def _merge(layers: Iterable[Iterable[tuple[str, Any]]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for layer in layers:
        for flag, value in layer:
            if isinstance(merged.get(flag), Mapping) and isinstance(value, Mapping):
                merged[flag] = deep_merge(merged[flag], value)
            elif value is False or value is None:
                merged.pop(flag, None)
            else:
                merged[flag] = value
    return merged


@dataclass
class _SetLayer:
    """What the ``--set`` items change: the pair, the speculative fields (in place), the top
    flag layer, the bench flags and the sweep."""

    target: str
    draft: str
    flags: list[tuple[str, Any]] = field(default_factory=list)
    env: dict[str, str | None] = field(default_factory=dict)
    bench: dict[str, Any] = field(default_factory=dict)
    sweep: tuple[str, tuple[Any, ...]] | None = None


def engine_spelling(key: str, value: Any, engine: str) -> Any:
    """Serve field ``key``'s ``value`` as ``engine`` spells it (``EngineSpec.value_spellings``:
    SGLang's ``fp8_e4m3`` for a recipe's ``kv_cache_dtype: fp8``); other values unchanged.
    Recipe files and ``--set`` go through it alike."""
    spelling = engine_spec(engine).value_spellings.get(key, {})
    return spelling[value] if isinstance(value, str) and value in spelling else value


def _model_source(item: SetItem) -> str:
    """The value of ``--set target=`` / ``--set draft=``: an ``org/name`` repo id as given, or
    a local path (read from the current directory, as any command-line path) that exists.

    Raises:
        UsageError: a path (absolute, relative, ``~``, or not an ``org/name`` id) that names
            nothing.
    """
    import os

    from recipecli.checkpoint.hub import looks_like_repo_id

    value = str(item.value)
    if looks_like_repo_id(value) and not value.startswith((".", "/", "~")):
        return value
    if not os.path.exists(os.path.expanduser(value)):
        raise UsageError(
            f"--set {item.text}: no such file or directory, and not an org/name repo id",
            hint=f"give the {item.key}'s checkpoint directory (it must exist) or its Hugging "
            "Face repo id",
        )
    return value


def _apply_sets(
    items: Sequence[SetItem], engine: str, target: str, draft: str, spec: dict[str, Any]
) -> _SetLayer:
    """Sort the checked ``--set`` items into their layers (``spec`` is updated in place).

    Raises:
        UsageError: two different sweeps.
    """
    out = _SetLayer(target, draft)
    for item in items:
        if item.kind == "target":
            out.target = _model_source(item)
        elif item.kind == "draft":
            out.draft = _model_source(item)
        elif item.kind == "speculative":
            if item.value is None:
                spec.pop(item.key, None)
            else:
                spec[item.key] = item.value
        elif item.kind == "serve":
            value = engine_spelling(item.key, item.value, engine)
            out.flags.append((engine_spec(engine).serve_flags[item.key], value))
        elif item.kind == "bench":
            if item.sweep:
                if out.sweep is not None and out.sweep[0] != item.key:
                    raise UsageError(
                        f"--set {item.text}: one sweep at a time ({out.sweep[0]} is swept already)"
                    )
                out.sweep = (item.key, item.sweep)
            out.bench.pop(item.key, None)
            out.bench[item.key] = item.value
        elif item.kind == "flag" and item.key != overrides_flag(engine):
            out.flags.append((item.key, item.value))
        elif item.kind == "env":
            out.env.pop(item.key, None)  # last wins, in command-line order
            out.env[item.key] = item.value
    return out


def _set_layer(
    recipe: Recipe,
    engine: str,
    hw: Mapping[str, Any],
    sets: Sequence[str],
    spec: dict[str, Any],
) -> tuple[list[SetItem], _SetLayer]:
    """The ``--set`` items checked (:func:`check_set`) and sorted into their layers over the
    profile's (else the recipe's) pair (``spec`` updated in place: :func:`_apply_sets`)."""
    items = [check_set(text, engine) for text in sets]
    target = hw.get("target") or recipe.get("target")
    return items, _apply_sets(items, engine, target, hw.get("draft") or recipe.get("draft"), spec)


def _serve_layer(recipe: Recipe, engine: str) -> tuple[list[tuple[str, Any]], list[Finding]]:
    """The ``serve`` fields as ``engine``'s flags (values respelled where the engine spells them
    differently: ``EngineSpec.value_spellings``), and a warning per field the engine has no
    flag for."""
    base: list[tuple[str, Any]] = []
    warnings: list[Finding] = []
    for key, value in dict(recipe.get("serve") or {}).items():
        flag = E.serve_flag(engine, key)
        if flag is None:
            warnings.append(
                codes.finding(
                    "recipe.serve_field_unsupported",
                    f"serve.{key} has no {engine} flag and is not rendered",
                    engine=engine,
                    source=recipe.where("serve", key),
                )
            )
            continue
        base.append((flag, engine_spelling(key, value, engine)))
    return base, warnings


def _speculative_flags(
    recipe: Recipe, engine: str, spec: Mapping[str, Any], draft: str, eng: Mapping[str, Any]
) -> list[tuple[str, Any]]:
    """``engine``'s speculative flags (``EngineSpec.speculative_flags``).

    Raises:
        RecipeError: ``num_speculative_tokens`` is not an integer >= 1; a method the engine has
            no algorithm for.
    """
    n = spec.get("num_speculative_tokens")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise RecipeError(
            f"num_speculative_tokens must be an integer >= 1, got {n!r}",
            path=recipe.where("speculative", "num_speculative_tokens"),
        )
    extra: dict[str, Any] = {}
    if "draft_tensor_parallel_size" in spec:
        extra["draft_tensor_parallel_size"] = spec["draft_tensor_parallel_size"]
    extra.update(eng.get("speculative_config") or {})
    return engine_spec(engine).speculative_flags(spec["method"], draft, n, extra)


def _target_config_for(
    recipe: Recipe,
    hw: Mapping[str, Any],
    target: str,
    target_config: str | None,
    where: str,
    offline: bool | None,
) -> Mapping[str, Any]:
    from recipecli.recipes.targets import load_target_config

    config, _ = load_target_config(
        target,
        override=target_config,
        recipe_config=hw.get("target_config") or recipe.get("target_config"),
        recipe_dir=Path(recipe.path).parent,
        where=where,
        offline=offline,
    )
    return config


def _placed_overrides(
    recipe: Recipe,
    engine: str,
    sources: Sequence[OverrideSource],
    config: Mapping[str, Any],
    force: bool,
) -> tuple[Mapping[str, Any], list[Finding]]:
    """The overrides value to render and its warnings (with ``force``, errors demoted).

    Raises:
        RecipeError: an override the engine would drop (unless ``force``): the first error,
            ``(+N more)``.
    """
    placed = place_overrides(
        engine,
        sources,
        config,
        known=recipe.get("text_overrides_known_keys") or (),
        force=force,
    )
    errors = [f for f in placed.findings if f.severity == "error"]
    if errors and not force:
        first = errors[0]
        where, _, _rule = first.source.partition("; ")
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        raise RecipeError(
            f"{first.message}{more}",
            path=where,
            hint="fix it, or render anyway with --force",
        )
    warnings: list[Finding] = []
    for f in placed.findings:
        if f.severity == "error":
            warnings.append(replace(f, severity="warning"))
        elif f.severity == "warning":
            warnings.append(f)
    return placed.value, warnings


def _merged_flags(
    recipe: Recipe,
    engine: str,
    hw_name: str | None,
    hw: Mapping[str, Any],
    base: list[tuple[str, Any]],
    set_flags: list[tuple[str, Any]],
) -> dict[str, Any]:
    """base < engine args < hardware args < ``--set``, JSON strings normalised, ordered by
    ``engines.<engine>.order`` then first appearance.

    Raises:
        RecipeError: an invalid JSON-valued arg; vLLM's ``--speculative-config`` with
            ``tensor_parallel_size`` or without ``method``.
    """
    eng: Mapping[str, Any] = (recipe.get("engines") or {}).get(engine) or {}
    flag = overrides_flag(engine)

    def arg_layer(args: Mapping[str, Any] | None) -> list[tuple[str, Any]]:
        return [(f, v) for f, v in _arg_layer(args) if f != flag]

    hw_args = (hw.get("args") or {}).get(engine)
    layers = [base, arg_layer(eng.get("args")), arg_layer(hw_args), set_flags]
    where_of = {}
    for f, _ in _arg_layer(eng.get("args")):
        where_of[f] = recipe.where("engines", engine, "args", f[2:])
    for f, _ in _arg_layer(hw_args):
        where_of[f] = recipe.where("hardware", hw_name or "", "args", engine, f[2:])
    merged = _merge(layers)
    for f, value in list(merged.items()):
        merged[f] = normalise_json_value(f, value, engine, where_of.get(f, recipe.label))

    _check_speculative_config(recipe, engine, merged)

    order = [("--" + str(o).lstrip("-")) for o in eng.get("order") or ()]
    rank = {f: i for i, f in enumerate(order)}
    position = {f: i for i, f in enumerate(merged)}
    keys = sorted(merged, key=lambda f: (rank.get(f, len(rank)), position[f]))
    return {k: merged[k] for k in keys}


def _check_speculative_config(recipe: Recipe, engine: str, merged: Mapping[str, Any]) -> None:
    """The engine's checks on its speculative JSON mapping (vLLM's ``--speculative-config``;
    ``EngineSpec.speculative_config``), when it has one and the args give a mapping.

    Raises:
        RecipeError: a key the engine rejects (names the key to use instead), a required key
            missing.
    """
    rules = engine_spec(engine).speculative_config
    spec_cfg = merged.get(rules.flag) if rules is not None else None
    if rules is None or not isinstance(spec_cfg, Mapping):
        return
    for key, instead in rules.refused.items():
        if key in spec_cfg:
            raise RecipeError(
                f"{rules.flag} must not contain {key} ({engine_spec(engine).title} rejects it; use {instead})",
                path=recipe.where("engines", engine),
            )
    for key in rules.required:
        if key not in spec_cfg:
            raise RecipeError(f"{rules.flag} must name {key}", path=recipe.label)


def _env(recipe: Recipe, engine: str, hw: Mapping[str, Any]) -> dict[str, str]:
    """``engines.<engine>.env`` < ``hardware.<name>.env`` < ``hardware.<name>.engine_env``."""
    eng: Mapping[str, Any] = (recipe.get("engines") or {}).get(engine) or {}
    env: dict[str, str] = {}
    for layer in (eng.get("env"), hw.get("env"), (hw.get("engine_env") or {}).get(engine)):
        for name, value in (layer or {}).items():
            env[str(name)] = scalar_text(value)
    return env


def _tp_size(flags: Mapping[str, Any], engine: str) -> int:
    """The TP size ``flags`` serve at: the engine's flag of the ``tensor_parallel_size`` serve
    field (1, every engine's default, when it is absent or not an integer)."""
    flag = E.serve_flag(engine, "tensor_parallel_size")
    value = flags.get(flag) if flag else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def _first_devices(n: int) -> str:
    """``0,1,...,n-1``: the first ``n`` device indices, as a visible-devices var lists them."""
    return ",".join(str(i) for i in range(n))


def _layout_env(
    recipe: Recipe,
    engine: str,
    hw_name: str | None,
    env: Mapping[str, str],
    tps: tuple[int, int],
    set_env: Mapping[str, str | None],
) -> tuple[dict[str, str], list[Finding]]:
    """The env with what derives from the TP size re-derived, then the ``--set env.NAME``
    layer on top.

    Args:
        hw_name: the hardware profile (where a warning points).
        env: the recipe's env layers (:func:`_env`).
        tps: (the recipe's own TP size, the TP size rendered after ``--set``).
        set_env: ``--set env.NAME=VALUE`` (None: unset NAME).

    Returns:
        (env, warnings): a visible-devices var (:data:`~.engines.VISIBLE_DEVICES_VARS`) that
        lists exactly the first N devices for the recipe's TP N lists the first M for a
        rendered TP M (unless ``--set env.NAME`` gives it); one listing other devices is kept;
        a ``recipe.visible_devices`` warning for each that lists fewer than M devices (the
        engine cannot start M ranks on them).
    """
    own, now = tps
    out = dict(env)
    for name in E.VISIBLE_DEVICES_VARS:
        if name in out and name not in set_env and now != own and out[name] == _first_devices(own):
            out[name] = _first_devices(now)
    for name, value in set_env.items():
        if value is None:
            out.pop(name, None)
        else:
            out[name] = value
    warnings = []
    for name in E.VISIBLE_DEVICES_VARS:
        count = len([d for d in out.get(name, "").split(",") if d.strip()])
        if name in out and count < now:
            warnings.append(
                codes.finding(
                    "recipe.visible_devices",
                    f"{name}={out[name]} lists {count} device(s) for TP {now}: {engine} cannot "
                    f"start {now} ranks on them; set it with --set env.{name}={_first_devices(now)}"
                    " (or the devices to use)",
                    engine=engine,
                    source=f"--set env.{name}"
                    if name in set_env
                    else recipe.where("hardware", hw_name or "", "env", name),
                )
            )
    return out, warnings


def _forced_unsupported(
    recipe: Recipe, engine: str, force: bool, own_draft: bool = True
) -> list[Finding]:
    """The ``recipe.engine_unsupported`` warning of a recipe rendered with ``--force`` for an
    engine it marks unsupported (said beside the command; without force render refuses). Not
    when another draft is rendered (``--set draft=``): the reason is about the recipe's own."""
    reason = (recipe.get("unsupported") or {}).get(engine) if force and own_draft else None
    if not reason:
        return []
    return [
        codes.finding(
            "recipe.engine_unsupported",
            f"{recipe.name} is not served on {engine}: {' '.join(str(reason).split())}; "
            "rendered anyway (--force)",
            severity="warning",
            engine=engine,
            source=recipe.where("unsupported", engine),
        )
    ]


def _overrides_layer(
    recipe: Recipe,
    engine: str,
    profile: tuple[str | None, Mapping[str, Any]],
    items: Sequence[SetItem],
    target: str,
    how: tuple[str | None, bool, bool | None],
) -> tuple[list[tuple[str, Any]], list[Finding]]:
    """The overrides flag (every override source placed against the target's config) and its
    warnings; nothing when no source sets a key.

    Args:
        how: (``--target-config SOURCE``, ``force``, ``offline``) as :func:`resolve` takes them.

    Raises:
        RecipeError: as :func:`_placed_overrides` and :func:`_target_config_for` raise it.
    """
    hw_name, hw = profile
    target_config, force, offline = how
    sources = override_sources(recipe, engine, hw_name, items)
    if not any(src.value for src in sources):
        return [], []
    config = _target_config_for(recipe, hw, target, target_config, sources[0].where, offline)
    value, warnings = _placed_overrides(recipe, engine, sources, config, force)
    return ([(overrides_flag(engine), value)] if value else []), warnings


def _env_layer(
    recipe: Recipe,
    engine: str,
    profile: tuple[str | None, Mapping[str, Any]],
    base: list[tuple[str, Any]],
    flags: Mapping[str, Any],
    set_env: Mapping[str, str | None],
) -> tuple[dict[str, str], list[Finding]]:
    """The env of the rendered command and its warnings (:func:`_layout_env`): the recipe's
    layers (:func:`_env`) with the visible devices re-derived from the rendered TP size
    (``flags``) when it differs from the recipe's own (``base`` without ``--set``), then
    ``--set env.NAME``."""
    hw_name, hw = profile
    own_tp = _tp_size(_merged_flags(recipe, engine, hw_name, hw, base, []), engine)
    tps = (own_tp, _tp_size(flags, engine))
    return _layout_env(recipe, engine, hw_name, _env(recipe, engine, hw), tps, set_env)


def resolve(
    recipe: Recipe,
    engine: str,
    *,
    hardware: str | None = None,
    sets: Sequence[str] = (),
    target_config: str | None = None,
    force: bool = False,
    offline: bool | None = None,
) -> Resolved:
    """Apply the layers and return the merged serve flags and env.

    Args:
        recipe: a loaded recipe.
        engine: a registered engine name (:data:`recipecli.engines.ENGINES`).
        hardware: hardware profile name (default: the recipe's ``default_hardware``).
        sets: ``NAME=VALUE`` strings, checked and typed by :func:`check_set`.
        target_config: ``--target-config SOURCE`` override.
        force: render overrides the engine would drop (their errors become warnings).
        offline: how overrides may read a target config that is no bundled snapshot: True HF
            cache only, False may ask the Hub, None as ``HF_HUB_OFFLINE`` says.

    Returns:
        :class:`Resolved`.

    Raises:
        UsageError: unknown engine or hardware profile, bad ``--set`` (unknown name, wrong
            type, out of range), two sweeps.
        RecipeError: an override the engine would drop (:mod:`.overrides`; unless ``force``),
            ``tensor_parallel_size`` in the speculative config, unreadable target config.
    """
    engine_spec(engine)  # UsageError: unknown engine
    hw_name, hw = _hardware(recipe, hardware)
    eng: Mapping[str, Any] = (recipe.get("engines") or {}).get(engine) or {}
    spec: dict[str, Any] = dict(recipe.get("speculative") or {})
    items, top = _set_layer(recipe, engine, hw, sets, spec)
    base, warnings = _serve_layer(recipe, engine)
    own_draft = top.draft == (hw.get("draft") or recipe.get("draft"))
    warnings[:0] = _forced_unsupported(recipe, engine, force, own_draft)
    base.extend(_speculative_flags(recipe, engine, spec, top.draft, eng))
    placed, placed_warnings = _overrides_layer(
        recipe, engine, (hw_name, hw), items, top.target, (target_config, force, offline)
    )
    base.extend(placed)
    warnings.extend(placed_warnings)
    flags = _merged_flags(recipe, engine, hw_name, hw, base, top.flags)
    env, env_warnings = _env_layer(recipe, engine, (hw_name, hw), base, flags, top.env)
    return Resolved(
        recipe,
        engine,
        hw_name,
        hw.get("vendor"),
        top.target,
        top.draft,
        env,
        flags,
        (*warnings, *env_warnings),
        top.bench,
        top.sweep,
    )
