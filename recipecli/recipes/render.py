"""Render a recipe into commands: layering, argv building from data tables, one shell formatter.

Layering (last wins, one flag per name): base (``serve`` fields, speculative flags,
``text_overrides``) < ``engines.<engine>`` < ``hardware.<name>`` < ``--set NAME=VALUE``. A value of
``true`` renders a bare flag, ``false``/``null`` removes the flag, a mapping or list renders JSON.
When two layers give a mapping for the same flag they are merged recursively.

Public entry points:

* :func:`render_command` — (recipe, engine, hardware, what, sets) -> :class:`Rendered`
  (env + argv + typed flags); ``docs`` and ``diff`` call it.
* :func:`format_shell` — the one shell formatter (``export`` lines, one flag per line with
  `` \\`` continuations, ``shlex`` quoting).
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recipecli.errors import RecipeError, UsageError
from recipecli.findings import Finding
from recipecli.recipes import engines as E
from recipecli.recipes.catalog import load_catalog
from recipecli.recipes.loader import Recipe, load_recipe, parse_yaml

ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Rendered:
    """One rendered command.

    Attributes:
        what: ``serve``, ``bench`` or ``eval``.
        engine: ``vllm`` or ``tokenspeed``.
        hardware: the hardware profile used, or None.
        env: environment to export before the command (name -> value), in order.
        argv: the command as an argv list (no shell involved).
        flags: for ``serve``, the merged (flag, typed value) pairs in output order (``True`` =
            bare flag, mappings = JSON); used by ``--format vllm-config``.
        head: number of argv items on the first shell line (program + subcommands + model).
        warnings: non-fatal findings (text overrides absent from the config, …).
    """

    what: str
    engine: str
    hardware: str | None
    env: dict[str, str]
    argv: list[str]
    flags: tuple[tuple[str, Any], ...] = ()
    head: int = 0
    warnings: tuple[Finding, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        """``{"env": ..., "argv": ...}`` (the ``argv-json`` format)."""
        return {"env": dict(self.env), "argv": list(self.argv)}


# --------------------------------------------------------------------------- shell formatting


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
            return json.loads(value)
        except ValueError as exc:
            if kind == "json":
                raise RecipeError(
                    f"{flag} is JSON-valued but {value!r} is not valid JSON ({exc})",
                    path=where,
                    hint="write it as a YAML mapping",
                ) from None
    return value


def flag_argv(flag: str, value: Any) -> list[str]:
    """argv items for one flag: ``True`` -> bare, ``False``/``None`` -> nothing, mapping/list ->
    JSON text, other scalars -> text."""
    if value is True:
        return [flag]
    if value is False or value is None:
        return []
    if isinstance(value, (Mapping, list)):
        return [flag, json_text(value)]
    return [flag, scalar_text(value)]


def deep_merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """Recursive dict merge; ``top`` wins, key order of first appearance kept."""
    out = dict(base)
    for key, value in top.items():
        if isinstance(out.get(key), Mapping) and isinstance(value, Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def parse_set(text: str) -> tuple[str, Any]:
    """Parse ``--set NAME=VALUE``; VALUE is read as a YAML scalar/flow value (``65536`` -> int,
    ``true`` -> bool, ``{"a": 1}`` -> mapping, nothing -> ``""``).

    Raises:
        UsageError: no ``=`` or empty NAME.
    """
    name, sep, raw = text.partition("=")
    name = name.strip()
    if not sep or not name:
        raise UsageError(f"--set {text!r}: expected NAME=VALUE, e.g. --set max_model_len=65536")
    try:
        value, _ = parse_yaml(raw, f"--set {name}") if raw.strip() else ("", {})
    except RecipeError:
        value = raw
    return name.lstrip("-"), value


SET_SECTIONS: tuple[str, ...] = ("serve", "speculative")
"""Recipe sections whose fields ``--set SECTION.FIELD=VALUE`` may address."""


@dataclass(frozen=True)
class SetItem:
    """One checked ``--set``.

    Attributes:
        kind: ``target``/``draft`` (the model), ``speculative`` or ``serve`` (a recipe field),
            ``flag`` (an engine flag).
        key: the field name (underscores), or the flag with its dashes for ``flag``.
        value: the typed value; None removes a serve field's / flag's flag.
    """

    kind: str
    key: str
    value: Any


def _section_props(section: str) -> Mapping[str, Any]:
    from recipecli.recipes.schema import SCHEMA

    return SCHEMA["properties"][section]["properties"]


def _check_value(name: str, value: Any, schema: Mapping[str, Any]) -> None:
    """Validate a ``--set`` value against a schema fragment; raise UsageError on the first error."""
    from recipecli.recipes.schema import validate

    errors = validate(value, schema, (f"--set {name}={value!r}",))
    if errors:
        raise UsageError(errors[0][1])


def _set_candidates(engine: str) -> list[str]:
    flags = [f[2:] for f in load_catalog(engine).flags()]
    spec = [f"speculative.{k}" for k in _section_props("speculative")]
    return [*E.SERVE_FIELDS, *spec, "target", "draft", *flags]


def _unknown_set(name: str, engine: str, what: str) -> UsageError:
    close = difflib.get_close_matches(name, _set_candidates(engine), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else "see docs/recipes-format.md (Layering)"
    return UsageError(f"--set {name}: {what}", hint=hint)


def check_set(text: str, engine: str) -> SetItem:
    """Parse and check one ``--set NAME=VALUE`` for ``engine``.

    NAME is ``target``/``draft``, a ``serve`` field (``max_model_len``, dashes allowed), a
    speculative field (``num_speculative_tokens``, or dotted ``speculative.FIELD``), ``serve.FIELD``,
    or an engine flag's long name without dashes (``served-model-name``) that the engine's shipped
    flag catalog knows. Field values are checked against the recipe schema (types and ranges:
    port 1..65535, sizes >= 1); ``null`` removes a serve field's flag. Switch flags take
    ``true``/``false``; other flags need a non-empty value.

    Args:
        text: the ``NAME=VALUE`` text.
        engine: ``vllm`` or ``tokenspeed``.

    Returns:
        the :class:`SetItem`.

    Raises:
        UsageError: malformed, unknown NAME (with "did you mean"), or a value of the wrong type
            or out of range; one line naming the ``--set``.
    """
    name, value = parse_set(text)
    section, dot, field_part = name.partition(".")
    if dot:
        key = field_part.replace("-", "_")
        if section not in SET_SECTIONS:
            raise _unknown_set(
                name, engine, "dotted names must be serve.FIELD or speculative.FIELD"
            )
        if key not in _section_props(section):
            raise _unknown_set(name, engine, f"{section} has no field {field_part!r}")
    else:
        key = name.replace("-", "_")
        if key in ("target", "draft"):
            _check_value(name, value, {"type": "string", "minLength": 1})
            return SetItem(key, key, value)
        section = (
            "speculative"
            if key in _section_props("speculative")
            else "serve"
            if key in E.SERVE_FIELDS
            else ""
        )
    if section:
        removable = section == "serve" or key == "draft_tensor_parallel_size"
        if not (value is None and removable):
            _check_value(name, value, _section_props(section)[key])
        return SetItem(section, key, value)
    return SetItem("flag", _check_flag_set(name, value, engine), value)


SWITCH_KINDS = frozenset({"flag", "negation", "bool"})
"""Catalog kinds of flags that take no value (``true`` = present, ``false`` = absent)."""


def _check_flag_set(name: str, value: Any, engine: str) -> str:
    """The ``--flag`` of an engine-flag ``--set`` after checking it against the catalog."""
    catalog = load_catalog(engine)
    flag = "--" + name.replace("_", "-")
    entry = catalog.flags().get(flag)
    if entry is None:
        removed = catalog.removed.get(flag)
        if removed is not None:
            raise UsageError(
                f"--set {name}: {flag} was removed from {engine} serve "
                f"(last seen in {removed['last_seen_in']})",
                hint=removed["hint"],
            )
        raise _unknown_set(
            name, engine, f"not a serve field nor a {engine} {catalog.version} serve flag"
        )
    kind = entry.get("kind")
    if kind in SWITCH_KINDS and not isinstance(value, (bool, type(None))):
        raise UsageError(f"--set {name}={value!r}: {flag} is a switch; give true or false")
    if kind not in SWITCH_KINDS and value == "":
        raise UsageError(f"--set {name}: empty value; give one, or {name}=false to drop {flag}")
    choices = entry.get("choices")
    if choices and value not in (None, False) and str(value) not in choices:
        raise UsageError(
            f"--set {name}={value!r}: not one of {', '.join(choices)}",
            hint=f"{engine} {catalog.version} flag catalog",
        )
    return flag


# --------------------------------------------------------------------------- text overrides


def check_text_overrides(
    engine: str,
    overrides: Mapping[str, Any],
    config: Mapping[str, Any] | None,
    where: str,
    known: Collection[str] = (),
) -> list[Finding]:
    """Findings about ``text_overrides`` for ``engine`` (engine-facts §4, §5).

    Args:
        engine: ``vllm`` or ``tokenspeed``.
        overrides: the recipe's ``text_overrides``.
        config: the target's config.json (None: skip the presence check).
        where: ``file:line`` of ``text_overrides``.
        known: the recipe's ``text_overrides_known_keys``: keys the model code reads although
            the public config lacks them (no ``override_absent`` warning for these).

    Returns:
        errors for engine flags among the keys; warnings for keys absent from the text config
        (unless declared in ``known``) and, on tokenspeed, for keys that also hit the draft.
    """
    from recipecli.checkpoint.textconfig import resolve_text_config

    out: list[Finding] = []
    text = resolve_text_config(config) if config is not None else None
    for key in overrides:
        if key in E.ENGINE_FLAG_KEYS:
            out.append(
                Finding(
                    "recipe.override_is_engine_flag",
                    "error",
                    engine,
                    f"text_overrides.{key} is an engine flag, not a model-config field: engines "
                    f"ignore it inside --hf-overrides; set serve.{key} or an engine arg instead",
                    evidence={"key": key},
                    source=f"{where}; engine-facts §4 (model-runner #912)",
                )
            )
            continue
        if text is not None and key not in text.config and key not in known:
            inside = f" ({text.path_str})" if text.wrapped else ""
            out.append(
                Finding(
                    "recipe.override_absent",
                    "warning",
                    engine,
                    f"text_overrides.{key} is not in the target's text config{inside} (the model code may "
                    f"still read it: if it does, list it in text_overrides_known_keys)",
                    evidence={"key": key},
                    source=where,
                )
            )
        if engine == "tokenspeed" and key in E.TOKENSPEED_DRAFT_SHARED_KEYS:
            out.append(
                Finding(
                    "recipe.override_hits_draft",
                    "warning",
                    engine,
                    f"tokenspeed applies --hf-overrides to the draft config too: overriding {key} "
                    f"breaks the EAGLE3 draft",
                    evidence={"key": key},
                    source=f"{where}; engine-facts §5",
                )
            )
    return out


def place_text_overrides(
    engine: str, overrides: Mapping[str, Any], config: Mapping[str, Any]
) -> dict[str, Any]:
    """The ``--hf-overrides`` value for ``engine``: nested under the wrapper path on vLLM when
    the text config sits under one (``{"text_config": {...}}``), flat on tokenspeed
    (engine-facts §4 vLLM PR #25727 / recipes PR #621; §5)."""
    from recipecli.checkpoint.textconfig import resolve_text_config

    _, nest = E.OVERRIDES_FLAG[engine]
    value: dict[str, Any] = dict(overrides)
    if nest:
        for key in reversed(resolve_text_config(config).path):
            value = {key: value}
    return value


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
    """Everything the serve/bench/eval commands of one (recipe, engine, hardware) need."""

    recipe: Recipe
    engine: str
    hardware: str | None
    vendor: str | None
    target: str
    draft: str
    env: dict[str, str]
    flags: dict[str, Any]
    warnings: tuple[Finding, ...]


def resolve(
    recipe: Recipe,
    engine: str,
    *,
    hardware: str | None = None,
    sets: Sequence[str] = (),
    target_config: str | None = None,
) -> Resolved:
    """Apply the layers and return the merged serve flags and env.

    Args:
        recipe: a loaded recipe.
        engine: ``vllm`` or ``tokenspeed``.
        hardware: hardware profile name (default: the recipe's ``default_hardware``).
        sets: ``NAME=VALUE`` strings, checked by :func:`check_set` (serve field,
            ``target``/``draft``, a speculative field, or a catalog flag's long name).
        target_config: ``--target-config SOURCE`` override.

    Returns:
        :class:`Resolved`.

    Raises:
        UsageError: unknown engine or hardware profile, bad ``--set`` (unknown name, wrong
            type, out of range).
        RecipeError: engine flags in ``text_overrides``, ``tensor_parallel_size`` in the
            speculative config, unreadable target config.
    """
    if engine not in E.ENGINES:
        raise UsageError(f"unknown engine {engine!r} (choose {', '.join(E.ENGINES)})")
    hw_name, hw = _hardware(recipe, hardware)
    eng: Mapping[str, Any] = (recipe.get("engines") or {}).get(engine) or {}
    serve: dict[str, Any] = dict(recipe.get("serve") or {})
    spec: dict[str, Any] = dict(recipe.get("speculative") or {})
    target = hw.get("target") or recipe.get("target")
    draft = hw.get("draft") or recipe.get("draft")

    set_layer: list[tuple[str, Any]] = []
    for text in sets:
        item = check_set(text, engine)
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
            flag = E.SERVE_FIELDS[item.key][1].get(engine)
            if flag is None:
                raise UsageError(f"--set {item.key}: serve field has no {engine} flag")
            set_layer.append((flag, item.value))
        else:
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

    overrides: Mapping[str, Any] = recipe.get("text_overrides") or {}
    if overrides:
        from recipecli.recipes.targets import load_target_config

        config, _ = load_target_config(
            target,
            override=target_config,
            recipe_config=hw.get("target_config") or recipe.get("target_config"),
            recipe_dir=Path(recipe.path).parent,
            where=recipe.where("text_overrides"),
        )
        found = check_text_overrides(
            engine,
            overrides,
            config,
            recipe.where("text_overrides"),
            recipe.get("text_overrides_known_keys") or (),
        )
        errors = [f for f in found if f.severity == "error"]
        if errors:
            raise RecipeError(errors[0].message, path=recipe.where("text_overrides"))
        warnings.extend(found)
        base.append((E.OVERRIDES_FLAG[engine][0], place_text_overrides(engine, overrides, config)))

    hw_args = (hw.get("args") or {}).get(engine)
    layers = [base, _arg_layer(eng.get("args")), _arg_layer(hw_args), set_layer]
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
        recipe, engine, hw_name, hw.get("vendor"), target, draft, env, flags, tuple(warnings)
    )


# --------------------------------------------------------------------------- commands


def _endpoint(flags: Mapping[str, Any]) -> tuple[str, str]:
    host = flags.get("--host")
    host = E.CLIENT_HOST if host is None or str(host) in E.WILDCARD_HOSTS else str(host)
    port = scalar_text(flags.get("--port", E.DEFAULT_PORT))
    return host, port


def served_model(res: Resolved) -> str:
    """The model name clients must send: ``--served-model-name`` (first) or the target."""
    name = res.flags.get("--served-model-name")
    if isinstance(name, list) and name:
        return str(name[0])
    return str(name) if name not in (None, True) else res.target


def serve_argv(res: Resolved) -> list[str]:
    """``<engine> serve TARGET`` + the merged flags."""
    argv = [*E.SERVE_COMMAND[res.engine], res.target]
    for flag, value in res.flags.items():
        argv.extend(flag_argv(flag, value))
    return argv


def bench_argv(res: Resolved) -> list[str]:
    """``vllm bench serve`` against the served endpoint (engine-facts §4 bench flags): backend
    first, then ``--base-url``/``--model``, then the recipe's ``bench`` keys in order."""
    bench: Mapping[str, Any] = res.recipe.get("bench")
    if bench is None:
        raise RecipeError("recipe has no bench section", path=res.recipe.path)
    host, port = _endpoint(res.flags)
    items = [(k, v) for k, v in bench.items() if k != "base_url"]
    computed = [
        ("base_url", bench.get("base_url") or f"http://{host}:{port}"),
        ("model", served_model(res)),
    ]
    first = [kv for kv in items if kv[0] == "backend"]
    rest = [kv for kv in items if kv[0] != "backend"]
    argv = ["vllm", "bench", "serve"]
    for key, value in [*first, *computed, *rest]:
        argv.extend(flag_argv("--" + key.replace("_", "-"), value))
    return argv


def _kv_list(mapping: Mapping[str, Any]) -> str:
    return ",".join(
        f"{k}={scalar_text(v).lower() if isinstance(v, bool) else scalar_text(v)}"
        for k, v in mapping.items()
    )


def eval_argv(res: Resolved) -> tuple[list[str], int]:
    """lm-eval against the endpoint: ``--model`` type matches the endpoint
    (``local-chat-completions`` with ``/v1/chat/completions``, engine-facts §4 / lm-eval #3125).

    Returns:
        (argv, number of launcher items).
    """
    ev: Mapping[str, Any] = res.recipe.get("eval")
    if ev is None:
        raise RecipeError("recipe has no eval section", path=res.recipe.path)
    launcher = list(ev.get("launcher") or ["lm_eval"])
    endpoint = ev.get("endpoint", "/v1/chat/completions")
    host, port = _endpoint(res.flags)
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


def lint_gate(recipe: Recipe, engine: str) -> None:
    """Refuse to render a recipe that ``recipecli lint`` rejects for ``engine``.

    Errors of :func:`recipecli.recipes.lint.lint_loaded` whose engine is ``engine`` or ``any``
    block rendering (unknown or removed flags, bad flag values, vendor env mistakes, tokenspeed
    TP/top-k rules, ...); warnings do not. About 20 ms for a bundled recipe.

    Raises:
        RecipeError: one line: ``file:line: <first error> (+N more) — run `recipecli lint FILE```.
    """
    from recipecli.recipes.lint import lint_loaded

    errors = [
        f for f in lint_loaded(recipe) if f.severity == "error" and f.engine in (engine, "any")
    ]
    if errors:
        where = errors[0].source.partition("; ")[0]
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        raise RecipeError(
            f"{errors[0].message}{more}",
            path=where,
            hint=f"run `recipecli lint {recipe.path}`",
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
) -> Rendered:
    """Render one command of a recipe.

    Args:
        recipe: a :class:`Recipe` or a recipe path / bundled name.
        engine: ``vllm`` or ``tokenspeed``.
        hardware: hardware profile (default: the recipe's ``default_hardware``).
        what: ``serve``, ``bench`` or ``eval``.
        sets: ``NAME=VALUE`` overrides (top layer).
        target_config: SOURCE of the target config (overrides snapshots and the recipe).
        lint: run :func:`lint_gate` first (False when the caller already did).

    Returns:
        :class:`Rendered` (env only on ``serve``).

    Raises:
        UsageError, RecipeError: see :func:`resolve`; unknown ``what``; lint errors
            (:func:`lint_gate`).
    """
    if isinstance(recipe, str):
        recipe = load_recipe(recipe)
    if what not in E.WHATS:
        raise UsageError(f"unknown --what {what!r} (choose {', '.join(E.WHATS)} or all)")
    if engine in E.ENGINES and lint:
        lint_gate(recipe, engine)
    res = resolve(recipe, engine, hardware=hardware, sets=sets, target_config=target_config)
    if what == "serve":
        return Rendered(
            "serve",
            engine,
            res.hardware,
            res.env,
            serve_argv(res),
            tuple(res.flags.items()),
            len(E.SERVE_COMMAND[engine]) + 1,
            res.warnings,
        )
    if what == "bench":
        return Rendered(
            "bench", engine, res.hardware, {}, bench_argv(res), head=3, warnings=res.warnings
        )
    argv, head = eval_argv(res)
    return Rendered("eval", engine, res.hardware, {}, argv, head=head, warnings=res.warnings)


def render_all(
    recipe: Recipe | str,
    engine: str,
    *,
    hardware: str | None = None,
    what: str = "all",
    sets: Sequence[str] = (),
    target_config: str | None = None,
) -> list[Rendered]:
    """Render ``what`` (or, for ``all``, serve plus the bench/eval sections the recipe has);
    lints the recipe once first (:func:`lint_gate`)."""
    if isinstance(recipe, str):
        recipe = load_recipe(recipe)
    if engine in E.ENGINES:
        lint_gate(recipe, engine)
    whats = [w for w in E.WHATS if w == "serve" or recipe.get(w) is not None]
    if what != "all":
        whats = [what]
    return [
        render_command(
            recipe,
            engine,
            hardware=hardware,
            what=w,
            sets=sets,
            target_config=target_config,
            lint=False,
        )
        for w in whats
    ]


def vllm_config_mapping(rendered: Rendered, target: str | None = None) -> dict[str, Any]:
    """The ``vllm serve --config FILE`` mapping of a rendered vLLM serve command: keys are long
    flag names without dashes, ``true`` for bare flags, ``x: false`` for ``--no-x``, nested
    mappings for JSON flags (vLLM's ``FlexibleArgumentParser.load_config_file``)."""
    catalog = load_catalog("vllm")
    out: dict[str, Any] = {"model": target or rendered.argv[2]}
    for flag, value in rendered.flags:
        entry = catalog.flags().get(flag) or {}
        if entry.get("kind") == "negation" and value is True:
            out[entry["negates"][2:]] = False
        else:
            out[flag[2:]] = value
    return out
