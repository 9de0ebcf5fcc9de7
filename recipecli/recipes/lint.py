"""``recipecli lint``: findings about a recipe without rendering or touching the network.

Checks (each finding's ``source`` is ``file:line``, plus the rule's origin):

* schema errors (all of them, not just the first);
* engine flags unknown to the engine's shipped catalog (vLLM: built from the v0.33.0 wheel;
  tokenspeed: lightseekorg/tokenspeed f4d8ec6e ``server_args.py``; SGLang: 0.5.23
  ``server_args.py``), with "did you mean"; flags
  REMOVED from vLLM (``--rope-scaling``) with what to use instead; ``bench`` keys unknown to
  ``vllm bench serve``; values of the wrong type for the flag (catalog ``type``);
* env vars wrong for the profile's vendor (``CUDA_VISIBLE_DEVICES``/``ROCR_VISIBLE_DEVICES`` on
  AMD -> ``HIP_VISIBLE_DEVICES``, ROCm vars on NVIDIA), unknown ``VLLM_*`` vars;
* tokenspeed: ``--tensor-parallel-size``/``--tp`` together with ``--attn-tp-size``; an EAGLE top-k
  other than 1 (docs/engines/tokenspeed.md#serve-flags);
* SGLang (0.5.23 catalog from ``server_args.py``): two names of one argument, draft tokens SGLang
  would reset, a top-k > 1 tree on paged KV with a backend that cannot run it (:func:`_lint_sglang`);
* every override source (``text_overrides``, ``hf-overrides`` engine args, per engine and hardware
  profile) through the placement rule of :mod:`recipecli.recipes.overrides` — the findings render
  gives; ``tensor_parallel_size`` inside the speculative config, JSON-valued args that are not
  valid JSON, a ``default_hardware`` that names no profile.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from recipecli.errors import RecipeError
from recipecli.findings import Finding
from recipecli.recipes import engines as E
from recipecli.recipes.catalog import Catalog, load_catalog
from recipecli.recipes.loader import Recipe, bundled_dir, load_recipe
from recipecli.recipes.overrides import override_sources, place_overrides
from recipecli.recipes.schema import validate
from recipecli.recipes.sets import SWITCH_KINDS
from recipecli.recipes.values import parse_json


def _finding(
    code: str, severity: str, engine: str, message: str, where: str, rule: str = "", **evidence: Any
) -> Finding:
    source = f"{where}; {rule}" if rule else where
    return Finding(code, severity, engine, message, evidence=evidence, source=source)  # type: ignore[arg-type]


def check_flag(
    catalog: Catalog, flag: str, value: Any, where: str, command: str = "serve"
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
                _finding(
                    "recipe.flag_removed",
                    "error",
                    engine,
                    f"{flag} was removed from {label} (last seen in "
                    f"{removed['last_seen_in']}): {removed['hint']}",
                    where,
                    rule,
                    flag=flag,
                )
            ]
        close = catalog.suggest(flag, command)
        hint = f"; did you mean {close}?" if close else ""
        return [
            _finding(
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
                _finding(
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
    field = E.SERVE_FLAG_FIELDS[engine].get(flag)
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
        _finding(
            "recipe.flag_value",
            "error",
            engine,
            message,
            where,
            f"{engine} {catalog.version} flag catalog",
            flag=flag,
        )
    ]


def _lint_flags(recipe: Recipe) -> list[Finding]:
    out: list[Finding] = []
    for engine in E.ENGINES:
        catalog = load_catalog(engine)
        for _, args, path in _engine_arg_sets(recipe, engine):
            for key, value in args.items():
                flag = "--" + str(key).lstrip("-")
                where = recipe.where(*path, key)
                found = check_flag(catalog, flag, value, where)
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
    vllm = load_catalog("vllm")
    for key, value in bench.items():
        if key == "base_url":
            continue
        out.extend(
            check_flag(
                vllm,
                "--" + key.replace("_", "-"),
                value,
                recipe.where("bench", key),
                command="bench serve",
            )
        )
    return out


def _lint_spec_config(recipe: Recipe, engine: str, value: Any, where: str) -> list[Finding]:
    if isinstance(value, str):
        try:
            value = parse_json(value, where="recipe")
        except ValueError:
            return []  # reported by check_flag
    if isinstance(value, Mapping) and "tensor_parallel_size" in value:
        return [
            _finding(
                "recipe.spec_tensor_parallel",
                "error",
                engine,
                "the speculative config must not contain tensor_parallel_size (vLLM "
                "rejects it); use draft_tensor_parallel_size (1 or the target TP)",
                where,
                "vllm v0.33.0 vllm/config/speculative.py SpeculativeConfig._verify_args",
            )
        ]
    return []


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


def _lint_env(recipe: Recipe) -> list[Finding]:
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
                        _finding(
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
                        _finding(
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


def _tokenspeed_layers(recipe: Recipe) -> Iterable[tuple[str | None, dict[str, tuple[Any, str]]]]:
    """Merged tokenspeed flags (value, where) per hardware profile (None = no profile)."""
    base: dict[str, tuple[Any, str]] = {}
    for key, value in (recipe.get("serve") or {}).items():
        flag = E.SERVE_FIELDS.get(key, ("", {}))[1].get("tokenspeed")
        if flag:
            base[flag] = (value, recipe.where("serve", key))
    eng_args = ((recipe.get("engines") or {}).get("tokenspeed") or {}).get("args") or {}
    for key, value in eng_args.items():
        base["--" + key] = (value, recipe.where("engines", "tokenspeed", "args", key))
    profiles = recipe.get("hardware") or {}
    yield None, dict(base)
    for name, hw in profiles.items():
        merged = dict(base)
        for key, value in (((hw or {}).get("args") or {}).get("tokenspeed") or {}).items():
            merged["--" + key] = (value, recipe.where("hardware", name, "args", "tokenspeed", key))
        yield name, merged


def _lint_tokenspeed(recipe: Recipe) -> list[Finding]:
    out: list[Finding] = []
    catalog = load_catalog("tokenspeed")
    seen: set[str] = set()
    for _, flags in _tokenspeed_layers(recipe):
        present = {f: v for f, v in flags.items() if v[0] not in (False, None)}
        tp_like = [f for f in present if catalog.canonical(f) == "--attn-tp-size"]
        if "--attn-tp-size" in tp_like and len(tp_like) > 1:
            other = next(f for f in tp_like if f != "--attn-tp-size")
            where = present["--attn-tp-size"][1]
            if where not in seen:
                seen.add(where)
                out.append(
                    _finding(
                        "recipe.tokenspeed_tp_conflict",
                        "error",
                        "tokenspeed",
                        f"{other} is an alias of --attn-tp-size in tokenspeed; giving "
                        f"both is an error: keep one",
                        where,
                        "tokenspeed f4d8ec6e runtime/utils/server_args.py (--tp and "
                        "--tensor-parallel-size alias --attn-tp-size; both is a ValueError); "
                        "docs/engines/tokenspeed.md#serve-flags",
                    )
                )
        topk = present.get("--speculative-eagle-topk")
        if topk is not None and topk[0] != 1 and topk[1] not in seen:
            seen.add(topk[1])
            out.append(
                _finding(
                    "recipe.tokenspeed_topk",
                    "error",
                    "tokenspeed",
                    f"--speculative-eagle-topk {topk[0]}: tokenspeed only allows 1",
                    topk[1],
                    "tokenspeed f4d8ec6e runtime/utils/server_args.py (--speculative-eagle-topk "
                    "choices=[1]; resolve_speculative_decoding); "
                    "docs/engines/tokenspeed.md#speculative-flags",
                )
            )
    return out


def _sglang_layers(recipe: Recipe) -> Iterable[tuple[str | None, dict[str, tuple[Any, str]]]]:
    """Merged SGLang flags (value, where) per hardware profile (None = no profile): serve fields,
    the rendered speculative flags, ``engines.sglang.args``, then the profile's args."""
    base: dict[str, tuple[Any, str]] = {}
    for key, value in (recipe.get("serve") or {}).items():
        flag = E.SERVE_FIELDS.get(key, ("", {}))[1].get("sglang")
        if flag:
            base[flag] = (value, recipe.where("serve", key))
    spec = recipe.get("speculative") or {}
    n = spec.get("num_speculative_tokens")
    if isinstance(n, int) and not isinstance(n, bool) and n >= 1:
        where = recipe.where("speculative", "num_speculative_tokens")
        try:
            for flag, value in E.SPECULATIVE_FLAGS["sglang"](spec.get("method"), "", n, {}):
                base[flag] = (value, where)
        except RecipeError:
            pass
    eng_args = ((recipe.get("engines") or {}).get("sglang") or {}).get("args") or {}
    for key, value in eng_args.items():
        base["--" + str(key).lstrip("-")] = (value, recipe.where("engines", "sglang", "args", key))
    yield None, dict(base)
    for name, hw in (recipe.get("hardware") or {}).items():
        merged = dict(base)
        for key, value in (((hw or {}).get("args") or {}).get("sglang") or {}).items():
            flag = "--" + str(key).lstrip("-")
            merged[flag] = (value, recipe.where("hardware", name, "args", "sglang", key))
        yield name, merged


SGLANG_SPEC_RULE = (
    "sgl-project/sglang 0.5.23 python/sglang/srt/arg_groups/speculative_hook.py "
    "_handle_eagle_family; docs/engines/sglang.md"
)
# SGLang 0.5.23 speculative_hook.py _handle_eagle_family _PAGE_TREE_SPEC_BACKENDS: the backends
# that run a top-k > 1 draft tree on pages of more than one token.
SGLANG_PAGE_TREE_BACKENDS: tuple[str, ...] = ("flashinfer", "fa3", "triton")


def _int_or_none(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        return int(value)
    return None


def _lint_sglang(recipe: Recipe) -> list[Finding]:
    """SGLang rules on the merged flags (each finding once per place):

    * ``recipe.sglang_alias_conflict`` (warning): two names of one SGLang argument
      (``--tp-size`` and its alias ``--tensor-parallel-size``; catalog ``alias_of``): argparse
      stores both in one field and the later one on the command line wins silently;
    * ``recipe.sglang_draft_tokens`` (warning): top-k 1 with ``--speculative-num-draft-tokens``
      other than steps + 1: SGLang resets it to steps + 1;
    * ``recipe.sglang_topk_page_size`` (error; warning when the attention backend is left to
      SGLang): top-k > 1 with ``--page-size`` > 1 on a backend outside
      :data:`SGLANG_PAGE_TREE_BACKENDS` is a ``ValueError`` at start-up.
    """
    if "sglang" in (recipe.get("unsupported") or {}):
        return []
    catalog = load_catalog("sglang")
    out: list[Finding] = []
    seen: set[tuple[str, str]] = set()

    def emit(code: str, severity: str, message: str, where: str, rule: str) -> None:
        if (code, where) not in seen:
            seen.add((code, where))
            out.append(_finding(code, severity, "sglang", message, where, rule))

    for _, flags in _sglang_layers(recipe):
        present = {f: v for f, v in flags.items() if v[0] not in (False, None)}
        by_canonical: dict[str, list[str]] = {}
        for flag in present:
            by_canonical.setdefault(catalog.canonical(flag), []).append(flag)
        for canonical, names in by_canonical.items():
            if len(names) > 1:
                emit(
                    "recipe.sglang_alias_conflict",
                    "warning",
                    f"{' and '.join(names)} are one SGLang argument ({canonical}): the later "
                    f"one on the command line wins silently; give one",
                    present[names[-1]][1],
                    "sgl-project/sglang 0.5.23 python/sglang/srt/arg_groups/arg_utils.py "
                    "add_cli_args_from_dataclass (Arg.aliases)",
                )
        steps = _int_or_none(present.get("--speculative-num-steps", (None, ""))[0])
        topk = _int_or_none(present.get("--speculative-eagle-topk", (None, ""))[0])
        tokens = present.get("--speculative-num-draft-tokens")
        if steps is not None and topk == 1 and tokens is not None:
            if _int_or_none(tokens[0]) != steps + 1:
                emit(
                    "recipe.sglang_draft_tokens",
                    "warning",
                    f"--speculative-num-draft-tokens {tokens[0]} with top-k 1: SGLang resets "
                    f"it to --speculative-num-steps + 1 = {steps + 1}",
                    tokens[1],
                    SGLANG_SPEC_RULE,
                )
        page = present.get("--page-size")
        if topk is not None and topk > 1 and page is not None and (_int_or_none(page[0]) or 1) > 1:
            backend = present.get("--attention-backend")
            if backend is None or str(backend[0]) not in SGLANG_PAGE_TREE_BACKENDS:
                emit(
                    "recipe.sglang_topk_page_size",
                    "error" if backend is not None else "warning",
                    f"--speculative-eagle-topk {topk} with --page-size {page[0]}: SGLang runs a "
                    f"top-k > 1 draft tree on pages of more than one token only with the "
                    f"{', '.join(SGLANG_PAGE_TREE_BACKENDS)} attention backends (a ValueError at "
                    f"start-up otherwise)"
                    + (
                        f"; this recipe gives {backend[0]}"
                        if backend is not None
                        else "; set --attention-backend to one of them or --page-size 1"
                    ),
                    page[1],
                    SGLANG_SPEC_RULE,
                )
    return out


def _lint_known_keys(recipe: Recipe) -> list[Finding]:
    """A ``text_overrides_known_keys`` entry that ``text_overrides`` does not set is stale."""
    overrides = recipe.get("text_overrides") or {}
    return [
        _finding(
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
    return json.loads(snap.read_text(encoding="utf-8"))["config"]


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


def _local_config(recipe: Recipe, source: str) -> Mapping[str, Any] | None:
    """The recipe's ``target_config`` when it is a local file or checkpoint dir (relative to the
    recipe file, or as given); None otherwise (lint reads nothing from the network)."""
    from pathlib import Path

    from recipecli.errors import RecipeCliError
    from recipecli.recipes.targets import load_target_config

    for candidate in (Path(recipe.path).parent / source, Path(source)):
        if candidate.exists():
            try:
                return load_target_config("", override=str(candidate))[0]
            except RecipeCliError:
                return None
    return None


def _lint_overrides(recipe: Recipe) -> list[Finding]:
    """Every override source, per engine and hardware profile, through the one placement rule
    (:func:`recipecli.recipes.overrides.place_overrides`) against the target's bundled snapshot
    (unknown targets: only the engine-flag check). Same findings as ``render``."""
    known = recipe.get("text_overrides_known_keys") or ()
    profiles = [None, *((recipe.get("hardware") or {}).keys())]
    out: list[Finding] = []
    seen: set[tuple[str, str, str]] = set()
    unsupported = recipe.get("unsupported") or {}
    for engine in E.ENGINES:
        if engine in unsupported:
            continue  # the recipe says why the engine cannot serve the pair (render refuses it)
        for hw_name in profiles:
            hw = (recipe.get("hardware") or {}).get(hw_name) or {} if hw_name else {}
            try:
                sources = override_sources(recipe, engine, hw_name)
            except RecipeError as exc:
                key = ("recipe.json_invalid", exc.path or "", engine)
                if key not in seen:
                    seen.add(key)
                    out.append(
                        _finding(
                            "recipe.override_value", "error", engine, exc.message, exc.path or ""
                        )
                    )
                continue
            if not any(src.value for src in sources):
                continue
            target = hw.get("target") or recipe.get("target")
            given = hw.get("target_config") or recipe.get("target_config")
            config = _local_config(recipe, given) if given else _snapshot_config(target)
            for f in place_overrides(engine, sources, config, known=known).findings:
                if f.code in ENGINE_NEUTRAL:
                    # the same fact for both engines: report it once, for any engine
                    f = Finding(
                        f.code,
                        f.severity,
                        "any",
                        f.message,
                        evidence=f.evidence,
                        source=f"{f.source.partition('; ')[0]}; {NEUTRAL_RULES[f.code]}",
                    )
                key = (f.code, f.source.partition("; ")[0], f.message, f.engine)
                if key in seen:
                    continue
                seen.add(key)
                out.append(f)
    return out


def _lint_unsupported(recipe: Recipe) -> list[Finding]:
    """``unsupported: {engine: reason}``: the recipe says the engine cannot serve its pair (info:
    the recipe is right to say so; render refuses that engine unless --force, docs show the
    reason)."""
    return [
        _finding(
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
            _finding(
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
        findings, schema errors first (only those when the schema fails: the other checks
        assume the documented shapes).
    """
    schema_errors = validate(recipe.data)
    out = [
        _finding(
            "recipe.schema", "error", "any", message, recipe.where(*path), "docs/recipe.schema.json"
        )
        for path, message in schema_errors
    ]
    if schema_errors:
        return out
    for check in (
        _lint_unsupported,
        _lint_misc,
        _lint_flags,
        _lint_env,
        _lint_tokenspeed,
        _lint_sglang,
        _lint_overrides,
        _lint_known_keys,
    ):
        out.extend(check(recipe))
    return out


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
        return [_finding("recipe.yaml", "error", "any", exc.message, exc.path or ref)]
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
