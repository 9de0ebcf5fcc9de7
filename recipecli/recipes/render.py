"""Render a recipe into commands: layering, argv building from data tables, one shell formatter.

Layering (last wins, one flag per name): base (``serve`` fields, speculative flags) <
``engines.<engine>`` < ``hardware.<name>`` < ``--set NAME=VALUE`` (typed by the flag it sets:
:mod:`.sets`). A value of ``true`` renders a bare flag, ``false``/``null`` removes the flag, a
mapping renders JSON, a list renders JSON (or one argv item per element for ``nargs`` flags).
When two layers give a mapping for the same flag they are merged recursively — except
``--hf-overrides``: every override source (``text_overrides``, the engine-arg and hardware
``hf-overrides``, ``--set hf-overrides=`` / ``--set text_overrides.KEY=``) goes through the one
placement rule of :mod:`.overrides`, which merges per key and nests or flattens for the engine.

Public entry points:

* :func:`render_command` — (recipe, engine, hardware, what, sets) -> :class:`Rendered`
  (env + argv + typed flags); ``docs`` and ``diff`` call it. :func:`render_all` renders several
  (``--what all``, bench sweeps).
* :func:`format_shell` — the one shell formatter (``export`` lines, one flag per line with
  `` \\`` continuations, ``shlex`` quoting).
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recipecli.errors import RecipeError, UsageError
from recipecli.findings import Finding
from recipecli.recipes import engines as E
from recipecli.recipes.catalog import load_catalog
from recipecli.recipes.loader import Recipe, load_recipe
from recipecli.recipes.overrides import FORCEABLE_CODES, OverrideSource, place_overrides
from recipecli.recipes.sets import SWITCH_KINDS, SetItem, check_set

__all__ = [
    "SWITCH_KINDS",
    "Rendered",
    "SetItem",
    "check_set",
    "format_shell",
    "render_all",
    "render_command",
]

ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Rendered:
    """One rendered command.

    Attributes:
        what: ``serve``, ``bench`` or ``eval``.
        engine: ``vllm``, ``tokenspeed`` or ``sglang``.
        hardware: the hardware profile used, or None.
        env: environment to export before the command (name -> value), in order.
        argv: the command as an argv list (no shell involved).
        flags: for ``serve``, the merged (flag, typed value) pairs in output order (``True`` =
            bare flag, mappings = JSON); used by ``--format vllm-config``.
        head: number of argv items on the first shell line (program + subcommands + model).
        warnings: non-fatal findings (text overrides absent from the config, …).
        point: for one command of a bench sweep, ``NAME=VALUE`` of its sweep point; else ``""``.
    """

    what: str
    engine: str
    hardware: str | None
    env: dict[str, str]
    argv: list[str]
    flags: tuple[tuple[str, Any], ...] = ()
    head: int = 0
    warnings: tuple[Finding, ...] = field(default_factory=tuple)
    point: str = ""

    def to_dict(self) -> dict[str, Any]:
        """``{"env": ..., "argv": ...}`` (the ``argv-json`` format)."""
        return {"env": dict(self.env), "argv": list(self.argv)}


# --------------------------------------------------------------------------- shell formatting


def _safe_json(text: str):
    """json.loads with bounded nesting and integer length (recipecli.safeio.json_loads): deep
    or huge values give one UsageError line instead of a RecursionError/ValueError."""
    from recipecli.errors import UsageError
    from recipecli.safeio import json_loads

    return json_loads(text, where="--set", what="JSON value", error=UsageError)


def format_shell(
    env: Mapping[str, str], argv: Sequence[str], *, head: int | None = None, indent: str = "  "
) -> str:
    """Format ``env`` + ``argv`` as copy-pasteable POSIX shell.

    ``export NAME=VALUE`` lines, a blank line, then the command: the first ``head`` argv items
    on the first line (default: up to the first item starting with ``-``), then one flag with its
    values per line, every line but the last ending in `` \\``. Every item is quoted with
    :func:`shlex.quote`, so ``shlex.split`` of the command lines gives back ``argv`` exactly and
    nothing is expanded by the shell (``$``, backticks, ``{{ }}`` stay literal).

    Args:
        env: environment variables (names must match ``[A-Za-z_][A-Za-z0-9_]*``).
        argv: the command, at least one item.
        head: argv items on the first line; None = up to the first ``-`` item.
        indent: indentation of continuation lines.

    Returns:
        the shell text, ending with a newline.

    Raises:
        ValueError: empty argv or an invalid env var name.
    """
    if not argv:
        raise ValueError("format_shell: empty argv")
    lines: list[str] = []
    for name, value in env.items():
        if not ENV_NAME_RE.match(name):
            raise ValueError(f"format_shell: invalid environment variable name {name!r}")
        lines.append(f"export {name}={shlex.quote(str(value))}")
    if lines:
        lines.append("")
    if head is None:
        head = next((i for i, a in enumerate(argv) if a.startswith("-") and i > 0), len(argv))
    head = max(1, min(head, len(argv)))
    groups: list[list[str]] = [list(argv[:head])]
    for item in argv[head:]:
        if item.startswith("-") or len(groups) == 1:
            groups.append([item])
        else:
            groups[-1].append(item)
    parts = [" ".join(shlex.quote(a) for a in g) for g in groups]
    command = (" \\\n" + indent).join(parts)
    lines.append(command)
    return "\n".join(lines) + "\n"


def unfold_continuations(text: str) -> str:
    """Remove backslash-newline line continuations outside single quotes, as a POSIX shell does
    (``shlex`` does not), so ``shlex.split(unfold_continuations(text))`` sees what bash sees."""
    out: list[str] = []
    i, n, state = 0, len(text), ""  # state: "" (unquoted), "'" or '"'
    while i < n:
        c = text[i]
        if state == "'":
            state = "" if c == "'" else state
        elif c == "\\" and i + 1 < n:
            if text[i + 1] != "\n":
                out.append(text[i : i + 2])
            i += 2
            continue
        elif c in "'\"" and (state == "" or state == c):
            state = "" if state == c else c
        out.append(c)
        i += 1
    return "".join(out)


def split_shell(text: str) -> tuple[dict[str, str], list[str]]:
    """Inverse of :func:`format_shell`: ``(env, argv)`` from its output.

    Raises:
        ValueError: unbalanced quotes or an ``export`` without ``NAME=VALUE``.
    """
    tokens = shlex.split(unfold_continuations(text))
    env: dict[str, str] = {}
    while len(tokens) >= 2 and tokens[0] == "export":
        name, sep, value = tokens[1].partition("=")
        if not sep:
            raise ValueError(f"split_shell: export without NAME=VALUE: {tokens[1]!r}")
        env[name] = value
        tokens = tokens[2:]
    return env, tokens


# --------------------------------------------------------------------------- values


def json_text(value: Any) -> str:
    """Serialise a JSON-valued argument: ``json.dumps`` defaults (``", "``/``": "``), key order
    kept, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False)


def scalar_text(value: Any) -> str:
    """The argv text of a scalar value (``repr`` for floats so no precision is lost)."""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def normalise_json_value(flag: str, value: Any, engine: str, where: str) -> Any:
    """Parse a JSON-valued flag given as a string (the catalog says ``json``, or it starts with
    ``{``/``[``) so it is re-serialised canonically.

    Raises:
        RecipeError: the string is not valid JSON (names ``where``).
    """
    if not isinstance(value, str):
        return value
    kind = load_catalog(engine).kind(flag)
    if kind == "json" or value.lstrip().startswith(("{", "[")):
        try:
            return _safe_json(value)
        except ValueError as exc:
            if kind == "json":
                raise RecipeError(
                    f"{flag} is JSON-valued but {value!r} is not valid JSON ({exc})",
                    path=where,
                    hint="write it as a YAML mapping",
                ) from None
    return value


def flag_argv(flag: str, value: Any, *, multi: bool = False) -> list[str]:
    """argv items for one flag: ``True`` -> bare, ``False``/``None`` -> nothing, mapping -> JSON
    text, list -> JSON text (or, with ``multi`` for ``nargs="+"`` flags such as vLLM's
    ``--served-model-name``, one argv item per element), other scalars -> text."""
    if value is True:
        return [flag]
    if value is False or value is None:
        return []
    if multi and isinstance(value, list):
        return [flag, *(scalar_text(v) for v in value)]
    if isinstance(value, (Mapping, list)):
        return [flag, json_text(value)]
    return [flag, scalar_text(value)]


def serve_flag_argv(engine: str, flag: str, value: Any) -> list[str]:
    """:func:`flag_argv` for a serve flag of ``engine``: list values of the catalog's
    ``nargs`` flags become several argv items."""
    entry = load_catalog(engine).flags().get(flag) or {}
    return flag_argv(flag, value, multi=entry.get("nargs") in ("+", "*"))


def deep_merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """Recursive dict merge; ``top`` wins, key order of first appearance kept."""
    out = dict(base)
    for key, value in top.items():
        if isinstance(out.get(key), Mapping) and isinstance(value, Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


# --------------------------------------------------------------------------- layering


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
        raise UsageError(f"recipe has no hardware profile {name!r}", path=recipe.path, hint=hint)
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


@dataclass(frozen=True)
class Resolved:
    """Everything the serve/bench/eval commands of one (recipe, engine, hardware) need.

    Attributes:
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


HF_OVERRIDES = "--hf-overrides"


def overrides_flag(engine: str) -> str:
    """The flag that carries config overrides on ``engine`` (:data:`engines.OVERRIDES_FLAG`):
    ``--hf-overrides`` (vLLM, tokenspeed), ``--json-model-override-args`` (SGLang)."""
    return E.OVERRIDES_FLAG.get(engine, (HF_OVERRIDES, False))[0]


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


def _target_config_for(
    recipe: Recipe,
    hw: Mapping[str, Any],
    target: str,
    target_config: str | None,
    where: str,
) -> Mapping[str, Any]:
    from recipecli.recipes.targets import load_target_config

    config, _ = load_target_config(
        target,
        override=target_config,
        recipe_config=hw.get("target_config") or recipe.get("target_config"),
        recipe_dir=Path(recipe.path).parent,
        where=where,
    )
    return config


def resolve(
    recipe: Recipe,
    engine: str,
    *,
    hardware: str | None = None,
    sets: Sequence[str] = (),
    target_config: str | None = None,
    force: bool = False,
) -> Resolved:
    """Apply the layers and return the merged serve flags and env.

    Args:
        recipe: a loaded recipe.
        engine: ``vllm``, ``tokenspeed`` or ``sglang``.
        hardware: hardware profile name (default: the recipe's ``default_hardware``).
        sets: ``NAME=VALUE`` strings, checked and typed by :func:`check_set`.
        target_config: ``--target-config SOURCE`` override.
        force: render overrides the engine would drop (their errors become warnings).

    Returns:
        :class:`Resolved`.

    Raises:
        UsageError: unknown engine or hardware profile, bad ``--set`` (unknown name, wrong
            type, out of range), two sweeps.
        RecipeError: an override the engine would drop (:mod:`.overrides`; unless ``force``),
            ``tensor_parallel_size`` in the speculative config, unreadable target config.
    """
    if engine not in E.ENGINES:
        raise UsageError(f"unknown engine {engine!r} (choose {', '.join(E.ENGINES)})")
    hw_name, hw = _hardware(recipe, hardware)
    eng: Mapping[str, Any] = (recipe.get("engines") or {}).get(engine) or {}
    serve: dict[str, Any] = dict(recipe.get("serve") or {})
    spec: dict[str, Any] = dict(recipe.get("speculative") or {})
    target = hw.get("target") or recipe.get("target")
    draft = hw.get("draft") or recipe.get("draft")

    items = [check_set(text, engine) for text in sets]
    set_layer: list[tuple[str, Any]] = []
    bench: dict[str, Any] = {}
    sweep: tuple[str, tuple[Any, ...]] | None = None
    for item in items:
        if item.kind == "target":
            target = item.value
        elif item.kind == "draft":
            draft = item.value
        elif item.kind == "speculative":
            if item.value is None:
                spec.pop(item.key, None)
            else:
                spec[item.key] = item.value
        elif item.kind == "serve":
            set_layer.append((E.SERVE_FIELDS[item.key][1][engine], item.value))
        elif item.kind == "bench":
            if item.sweep:
                if sweep is not None and sweep[0] != item.key:
                    raise UsageError(
                        f"--set {item.text}: one sweep at a time ({sweep[0]} is swept already)"
                    )
                sweep = (item.key, item.sweep)
            bench.pop(item.key, None)
            bench[item.key] = item.value
        elif item.kind == "flag" and item.key != overrides_flag(engine):
            set_layer.append((item.key, item.value))

    warnings: list[Finding] = []
    base: list[tuple[str, Any]] = []
    for key, value in serve.items():
        flag = E.SERVE_FIELDS[key][1].get(engine)
        if flag is None:
            warnings.append(
                Finding(
                    "recipe.serve_field_unsupported",
                    "warning",
                    engine,
                    f"serve.{key} has no {engine} flag and is not rendered",
                    source=recipe.where("serve", key),
                )
            )
            continue
        spelling = E.SERVE_VALUE_SPELLING.get(key, {}).get(engine, {})
        if isinstance(value, str) and value in spelling:
            value = spelling[value]
        base.append((flag, value))

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
    base.extend(E.SPECULATIVE_FLAGS[engine](spec["method"], draft, n, extra))

    sources = override_sources(recipe, engine, hw_name, items)
    if any(src.value for src in sources):
        config = _target_config_for(recipe, hw, target, target_config, sources[0].where)
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
            where, _, rule = first.source.partition("; ")
            more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
            raise RecipeError(
                f"{first.message}{more}",
                path=where,
                hint="fix it, or render anyway with --force",
            )
        for f in placed.findings:
            if f.severity == "error":
                warnings.append(
                    Finding(
                        f.code, "warning", f.engine, f.message, evidence=f.evidence, source=f.source
                    )
                )
            elif f.severity == "warning":
                warnings.append(f)
        if placed.value:
            base.append((overrides_flag(engine), placed.value))

    def arg_layer(args: Mapping[str, Any] | None) -> list[tuple[str, Any]]:
        return [(f, v) for f, v in _arg_layer(args) if f != overrides_flag(engine)]

    hw_args = (hw.get("args") or {}).get(engine)
    layers = [base, arg_layer(eng.get("args")), arg_layer(hw_args), set_layer]
    where_of = {}
    for flag, _ in _arg_layer(eng.get("args")):
        where_of[flag] = recipe.where("engines", engine, "args", flag[2:])
    for flag, _ in _arg_layer(hw_args):
        where_of[flag] = recipe.where("hardware", hw_name or "", "args", engine, flag[2:])
    merged = _merge(layers)
    for flag, value in list(merged.items()):
        merged[flag] = normalise_json_value(flag, value, engine, where_of.get(flag, recipe.path))

    spec_cfg = merged.get("--speculative-config")
    if engine == "vllm" and isinstance(spec_cfg, Mapping):
        if "tensor_parallel_size" in spec_cfg:
            raise RecipeError(
                "--speculative-config must not contain tensor_parallel_size (vLLM rejects it; "
                "use draft_tensor_parallel_size)",
                path=recipe.where("engines", engine),
            )
        if "method" not in spec_cfg:
            raise RecipeError("--speculative-config must name method", path=recipe.path)

    order = [("--" + str(o).lstrip("-")) for o in eng.get("order") or ()]
    rank = {flag: i for i, flag in enumerate(order)}
    position = {flag: i for i, flag in enumerate(merged)}
    keys = sorted(merged, key=lambda f: (rank.get(f, len(rank)), position[f]))
    flags = {k: merged[k] for k in keys}

    env: dict[str, str] = {}
    for layer in (eng.get("env"), hw.get("env"), (hw.get("engine_env") or {}).get(engine)):
        for name, value in (layer or {}).items():
            env[str(name)] = scalar_text(value)

    return Resolved(
        recipe,
        engine,
        hw_name,
        hw.get("vendor"),
        target,
        draft,
        env,
        flags,
        tuple(warnings),
        bench,
        sweep,
    )


# --------------------------------------------------------------------------- commands


def _endpoint(flags: Mapping[str, Any], engine: str = "vllm") -> tuple[str, str]:
    host = flags.get("--host")
    host = E.CLIENT_HOST if host is None or str(host) in E.WILDCARD_HOSTS else str(host)
    default = E.ENGINE_DEFAULT_PORT.get(engine, E.DEFAULT_PORT)
    port = scalar_text(flags.get("--port", default))
    return host, port


def served_model(res: Resolved) -> str:
    """The model name clients must send: ``--served-model-name`` (first) or the target."""
    name = res.flags.get("--served-model-name")
    if isinstance(name, list) and name:
        return str(name[0])
    return str(name) if name not in (None, True) else res.target


def serve_argv(res: Resolved) -> list[str]:
    """``<engine> serve TARGET`` (SGLang: ``python -m sglang.launch_server --model-path
    TARGET``) + the merged flags."""
    model_flag = E.SERVE_MODEL_FLAG.get(res.engine)
    argv = [*E.SERVE_COMMAND[res.engine], *([model_flag] if model_flag else []), res.target]
    for flag, value in res.flags.items():
        argv.extend(serve_flag_argv(res.engine, flag, value))
    return argv


# bench keys that describe the workload but that `vllm bench serve` does not save in its result
# JSON (vllm v0.33.0 vllm/benchmarks/serve.py main: it saves backend, label, model_id,
# tokenizer_id, num_prompts, request_rate, burstiness, max_concurrency, then every --metadata
# KEY=VALUE as a top-level string). recipecli records them with --metadata so `recipecli report`
# can match workloads exactly (docs/engines/vllm.md#bench-serve).
WORKLOAD_PREFIXES: tuple[str, ...] = (
    "dataset_",
    "random_",
    "sharegpt_",
    "sonnet_",
    "hf_",
    "prefix_repetition_",
    "spec_bench_",
    "speed_bench_",
    "custom_",
    "blazedit_",
    "bfcl_",
    "asr_",
    "timed_trace_",
)
WORKLOAD_KEYS: frozenset[str] = frozenset(
    {
        "input_len",
        "output_len",
        "ignore_eos",
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "frequency_penalty",
        "presence_penalty",
        "repetition_penalty",
        "seed",
        "num_warmups",
        "disable_shuffle",
        "no_oversample",
    }
)
RECORDING_FLAGS: tuple[str, ...] = ("--label", "--result-filename", "--metadata")
"""Flags recipecli adds to every rendered bench command unless the recipe or --set gives them."""


def bench_label(res: Resolved) -> str:
    """``RECIPE-ENGINE[-HARDWARE]``: the ``--label`` of the rendered bench command."""
    return "-".join(p for p in (res.recipe.name, res.engine, res.hardware) if p)


def _metadata_items(res: Resolved, flags: Mapping[str, Any]) -> list[str]:
    items = [f"recipe={res.recipe.name}", f"engine={res.engine}"]
    if res.hardware:
        items.append(f"hardware={res.hardware}")
    for flag, value in flags.items():
        key = flag[2:].replace("-", "_")
        if value is None or value is False:
            continue
        if key.startswith(WORKLOAD_PREFIXES) or key in WORKLOAD_KEYS:
            text = (
                "true"
                if value is True
                else json_text(value)
                if isinstance(value, (Mapping, list))
                else scalar_text(value)
            )
            items.append(f"{key}={text}")
    return items


def bench_argv(res: Resolved, values: Mapping[str, Any] | None = None) -> list[str]:
    """``vllm bench serve`` against the served endpoint (docs/engines/vllm.md#bench-serve).

    Order: ``--backend``, ``--base-url``, ``--model``, the recipe's ``bench`` keys in order
    (``--set`` bench values replace them in place, new ones follow), then — unless given —
    ``--label RECIPE-ENGINE[-HW]``, ``--result-filename LABEL-cN.json`` (``N`` = max concurrency,
    else ``-rRATE``) and ``--metadata KEY=VALUE …`` recording the recipe, engine, hardware and
    the workload keys vLLM does not save itself (:data:`WORKLOAD_PREFIXES`, :data:`WORKLOAD_KEYS`).

    Args:
        res: the resolved recipe.
        values: extra flag -> value overrides on top of ``res.bench`` (one sweep point).

    Raises:
        RecipeError: the recipe has no bench section.
    """
    bench: Mapping[str, Any] = res.recipe.get("bench")
    if bench is None:
        raise RecipeError("recipe has no bench section", path=res.recipe.path)
    host, port = _endpoint(res.flags, res.engine)
    flags: dict[str, Any] = {}
    for key, value in bench.items():
        if key != "base_url":
            flags["--" + key.replace("_", "-")] = value
    for flag, value in {**res.bench, **(values or {})}.items():
        flags[flag] = value
    base_url = flags.pop("--base-url", None) or bench.get("base_url") or f"http://{host}:{port}"
    model = flags.pop("--model", None) or served_model(res)
    backend = flags.pop("--backend", None)
    ordered: dict[str, Any] = {}
    if backend is not None:
        ordered["--backend"] = backend
    ordered["--base-url"] = base_url
    ordered["--model"] = model
    ordered.update(flags)
    if "--label" not in ordered:
        ordered["--label"] = bench_label(res)
    if "--result-filename" not in ordered:
        mc = ordered.get("--max-concurrency")
        rate = ordered.get("--request-rate")
        tail = (
            f"-c{scalar_text(mc)}"
            if mc not in (None, False)
            else (f"-r{scalar_text(rate)}" if rate not in (None, False) else "")
        )
        ordered["--result-filename"] = f"{ordered['--label'] or bench_label(res)}{tail}.json"
    metadata = ordered.pop("--metadata", None)
    argv = ["vllm", "bench", "serve"]
    for flag, value in ordered.items():
        argv.extend(flag_argv(flag, value))
    if metadata is None:
        argv.extend(["--metadata", *_metadata_items(res, ordered)])
    elif metadata is not False:
        argv.extend(["--metadata", *(metadata if isinstance(metadata, list) else [str(metadata)])])
    return argv


def _kv_list(mapping: Mapping[str, Any]) -> str:
    return ",".join(
        f"{k}={scalar_text(v).lower() if isinstance(v, bool) else scalar_text(v)}"
        for k, v in mapping.items()
    )


def eval_argv(res: Resolved) -> tuple[list[str], int]:
    """lm-eval against the endpoint: ``--model`` type matches the endpoint
    (``local-chat-completions`` with ``/v1/chat/completions``: EleutherAI/lm-evaluation-harness#3125).

    Returns:
        (argv, number of launcher items).
    """
    ev: Mapping[str, Any] = res.recipe.get("eval")
    if ev is None:
        raise RecipeError("recipe has no eval section", path=res.recipe.path)
    launcher = list(ev.get("launcher") or ["lm_eval"])
    endpoint = ev.get("endpoint", "/v1/chat/completions")
    host, port = _endpoint(res.flags, res.engine)
    model_args = {
        "model": served_model(res),
        "base_url": ev.get("base_url") or f"http://{host}:{port}{endpoint}",
        "tokenizer": ev.get("tokenizer") or res.target,
        **(ev.get("model_args") or {}),
    }
    argv = [
        *launcher,
        "--model",
        E.LM_EVAL_MODEL_TYPE[endpoint],
        "--model_args",
        _kv_list(model_args),
    ]
    skip = {"launcher", "endpoint", "base_url", "tokenizer", "model_args"}
    for key, value in ev.items():
        if key in skip:
            continue
        if isinstance(value, Mapping):
            value = _kv_list(value)
        argv.extend(flag_argv("--" + key, value))
    return argv, len(launcher)


def lint_gate(recipe: Recipe, engine: str, *, force: bool = False) -> None:
    """Refuse to render a recipe that ``recipecli lint`` rejects for ``engine``.

    A recipe whose ``unsupported.<engine>`` names a reason is refused for that engine (the
    engine cannot serve its pair). Errors of :func:`recipecli.recipes.lint.lint_loaded` whose
    engine is ``engine`` or ``any``
    block rendering (unknown or removed flags, bad flag values, vendor env mistakes, tokenspeed
    TP/top-k rules, overrides the engine would drop, ...); warnings do not. With ``force``,
    override errors (:data:`recipecli.recipes.overrides.FORCEABLE_CODES`) do not block either.
    About 20 ms for a bundled recipe.

    Raises:
        RecipeError: one line: ``file:line: <first error> (+N more) — run `recipecli lint FILE```.
    """
    from recipecli.recipes.lint import lint_loaded

    reason = (recipe.get("unsupported") or {}).get(engine)
    if reason and not force:
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


def _rendered(res: Resolved, what: str) -> list[Rendered]:
    engine = res.engine
    if what == "serve":
        return [
            Rendered(
                "serve",
                engine,
                res.hardware,
                res.env,
                serve_argv(res),
                tuple(res.flags.items()),
                len(E.SERVE_COMMAND[engine]) + 1 + (engine in E.SERVE_MODEL_FLAG),
                res.warnings,
            )
        ]
    if what == "bench":
        if res.sweep is None:
            argv = bench_argv(res)
            return [
                Rendered("bench", engine, res.hardware, {}, argv, head=3, warnings=res.warnings)
            ]
        flag, values = res.sweep
        return [
            Rendered(
                "bench",
                engine,
                res.hardware,
                {},
                bench_argv(res, {flag: v}),
                head=3,
                warnings=res.warnings,
                point=f"{flag[2:].replace('-', '_')}={scalar_text(v)}",
            )
            for v in values
        ]
    argv, head = eval_argv(res)
    return [Rendered("eval", engine, res.hardware, {}, argv, head=head, warnings=res.warnings)]


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
        lint_gate(recipe, engine, force=force)
    res = resolve(
        recipe, engine, hardware=hardware, sets=sets, target_config=target_config, force=force
    )
    out = _rendered(res, what)
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
) -> list[Rendered]:
    """Render ``what`` (or, for ``all``, serve plus the bench/eval sections the recipe has);
    lints the recipe once first (:func:`lint_gate`). A bench sweep (``--set
    max_concurrency=1,4,16``) gives one bench command per value, in the order given."""
    if isinstance(recipe, str):
        recipe = load_recipe(recipe)
    if what not in (*E.WHATS, "all"):
        raise UsageError(f"unknown --what {what!r} (choose {', '.join(E.WHATS)} or all)")
    if engine in E.ENGINES:
        lint_gate(recipe, engine, force=force)
    whats = [w for w in E.WHATS if w == "serve" or recipe.get(w) is not None]
    if what != "all":
        whats = [what]
    res = resolve(
        recipe, engine, hardware=hardware, sets=sets, target_config=target_config, force=force
    )
    return [r for w in whats for r in _rendered(res, w)]


def vllm_config_mapping(rendered: Rendered, target: str | None = None) -> dict[str, Any]:
    """The ``vllm serve --config FILE`` mapping of a rendered vLLM serve command: keys are long
    flag names without dashes, ``true`` for bare flags (``no-x: true`` for ``--no-x``), nested
    mappings for JSON flags.

    vLLM 0.33.0 ``FlexibleArgumentParser.load_config_file`` (vllm/utils/argparse_utils.py) turns
    ``x: false`` into ``--no-x`` only when the TOP-LEVEL parser has ``--no-x``, which ``vllm serve
    --config`` never has (the flags live on the serve subparser): a ``false`` is dropped silently.
    ``no-x: true`` becomes ``--no-x``, which the serve parser accepts.
    """
    out: dict[str, Any] = {"model": target or rendered.argv[2]}
    for flag, value in rendered.flags:
        out[flag[2:]] = value
    return out
