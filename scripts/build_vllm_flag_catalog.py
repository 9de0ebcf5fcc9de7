#!/usr/bin/env python3
"""Build recipecli's vLLM flag catalog from a pinned vLLM wheel, statically.

vLLM cannot be imported here (its CUDA dependencies are not installable on a CPU box), so this
script reads the argument definitions out of the wheel's Python source with :mod:`ast`:

* ``vllm/engine/arg_utils.py`` — ``EngineArgs.add_cli_args`` / ``AsyncEngineArgs.add_cli_args``:
  every ``group.add_argument("--flag", ..., **<cfg>_kwargs["field"])`` call. The kind of a flag
  (bare boolean with a ``--no-`` form, value, JSON value) is worked out the way vLLM's
  ``_compute_kwargs`` does it, from the annotation of ``field`` on the config dataclass that
  ``<cfg>_kwargs = get_kwargs(<Config>)`` names (parsed from ``vllm/config/*.py``).
* ``vllm/entrypoints/common/cli_args.py`` — ``make_arg_parser`` literals plus every field of
  ``BaseFrontendArgs`` / ``FrontendArgs`` (registered as ``--field-name``).
* ``vllm/benchmarks/serve.py`` and ``vllm/benchmarks/datasets/datasets.py`` — ``vllm bench serve``.

Every flag also gets its value ``type`` (``str``, ``int``, ``float``, ``json``, ``optional``,
``switch``) with ``choices`` and ``nargs`` where vLLM declares them: for config-dataclass flags in
the order ``_compute_kwargs`` decides it (:func:`value_type_of_annotation`), for literal
``add_argument`` calls from their ``type=``/``choices=``/``nargs=``/``action=`` keywords.
``recipecli render --set`` types values by it and ``recipecli lint`` checks engine args against it.

Boolean flags follow vLLM's ``FlexibleArgumentParser``: a ``BooleanOptionalAction`` flag ``--x``
also accepts ``--no-x``; ``--enable-x`` additionally pairs with ``--disable-x`` (and vice versa)
(``vllm/utils/argparse_utils.py``, ``EnableDisableAction``).

With ``--old-version`` the script also reads an older wheel and records, under ``removed``, the
serve flags that existed there but no longer exist in the pinned version (e.g. ``--rope-scaling``),
so ``recipecli lint`` can say "removed" instead of just "unknown".

Usage (the committed catalog was produced with exactly this)::

    python scripts/build_vllm_flag_catalog.py --old-version 0.10.0

(the version and the output file default to the pin, ``recipecli/engines/vllm/pin.py``)

Wheels are fetched with ``pip download vllm==VERSION --no-deps`` unless ``--wheel`` /
``--old-wheel`` give a local path. The output is deterministic (sorted keys).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/pins.py beside this file
import pins  # scripts/pins.py: the version and output default to the pin

# Hints for removed flags: what to write instead (vLLM release notes; docs/engines/vllm.md#removed-flags).
REMOVED_HINTS: dict[str, str] = {
    "--rope-scaling": "removed from vLLM; pass it as --hf-overrides '{\"rope_scaling\": {...}}'",
    "--rope-theta": "removed from vLLM; pass it as --hf-overrides '{\"rope_theta\": ...}'",
    "--disable-log-requests": "removed; request logging is off by default (--enable-log-requests)",
}

ENGINE_FILE = "vllm/engine/arg_utils.py"
ENVS_FILE = "vllm/envs.py"
FRONTEND_FILES = ("vllm/entrypoints/common/cli_args.py", "vllm/entrypoints/openai/cli_args.py")
BENCH_FILES = (
    "vllm/benchmarks/serve.py",
    "vllm/benchmarks/datasets/datasets.py",
    "vllm/benchmarks/datasets.py",
)
FRONTEND_CLASSES = ("BaseFrontendArgs", "FrontendArgs")


def fetch_wheel(version: str, dest: Path) -> Path:
    """Download ``vllm==version`` (no dependencies) into ``dest`` and return the wheel path."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", f"vllm=={version}", "--no-deps", "-d", str(dest)],
        check=True,
    )
    wheels = sorted(dest.glob(f"vllm-{version}-*.whl"))
    if not wheels:
        raise SystemExit(f"pip download produced no vllm-{version} wheel in {dest}")
    return wheels[0]


def read_sources(wheel: Path) -> dict[str, str]:
    """Return {member path: source text} for the wheel's ``.py`` files under ``vllm/``."""
    out: dict[str, str] = {}
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.endswith(".py") and (
                name.startswith("vllm/config")
                or name in (ENGINE_FILE, ENVS_FILE, *FRONTEND_FILES, *BENCH_FILES)
            ):
                out[name] = zf.read(name).decode("utf-8")
    return out


def type_aliases(sources: dict[str, str]) -> dict[str, str]:
    """{Name: source} of module-level ``Name = <type expr>`` / ``Name: TypeAlias = ...``."""
    out: dict[str, str] = {}
    for text in sources.values():
        for node in ast.parse(text).body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                out[node.targets[0].id] = ast.unparse(node.value)
            elif (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.value is not None
                and "TypeAlias" in ast.unparse(node.annotation)
            ):
                out[node.target.id] = ast.unparse(node.value)
    return out


def _expand(annotation: str, aliases: dict[str, str], depth: int = 3) -> str:
    """Replace alias names in ``annotation`` by their definitions (``depth`` rounds)."""
    for _ in range(depth):
        annotation = re.sub(
            r"[A-Za-z_][A-Za-z_0-9]*",
            lambda m: f"({aliases[m.group(0)]})" if m.group(0) in aliases else m.group(0),
            annotation,
        )
    return annotation


def class_annotations(sources: dict[str, str]) -> dict[str, dict[str, str]]:
    """{ClassName: {field: annotation source, aliases expanded}} for classes with annotated
    fields."""
    aliases = type_aliases(sources)
    out: dict[str, dict[str, str]] = {}
    for text in sources.values():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                fields = {
                    stmt.target.id: _expand(ast.unparse(stmt.annotation), aliases)
                    for stmt in node.body
                    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                }
                if fields:
                    out.setdefault(node.name, {}).update(fields)
    return out


def kind_of_annotation(annotation: str | None) -> str:
    """Mirror ``_compute_kwargs``: ``bool`` (--x/--no-x), ``optional`` (bare or value), ``json``,
    or ``value``."""
    if annotation is None:
        return "value"
    names = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", annotation))
    if "bool" in names:
        return "optional" if "str" in names else "bool"
    if "dict" in names or "Dict" in names or any(n.endswith("Config") for n in names):
        return "json"
    return "value"


_WRAPPERS = ("Annotated", "SkipValidation", "InitVar", "Optional", "Union", "ClassVar")
_BUILTINS = {"int", "float", "str", "bool", "bytes", "dict", "list", "tuple", "set", "None", "Any"}


def _union_members(node: ast.expr) -> list[ast.expr]:
    """Flatten ``A | B``, ``Optional[A]``, ``Union[A, B]``, ``Annotated[A, ...]`` and
    ``SkipValidation[A]`` into their member type expressions."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_members(node.left) + _union_members(node.right)
    if isinstance(node, ast.Subscript):
        base = ast.unparse(node.value).rsplit(".", 1)[-1]
        if base in _WRAPPERS:
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if base == "Annotated":
                items = items[:1]
            out: list[ast.expr] = []
            for item in items:
                out.extend(_union_members(item))
            return out
    return [node]


def _name(node: ast.expr) -> str:
    """Base name of a type expression (``list`` for ``list[str]``, ``None`` for None)."""
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    if isinstance(node, ast.Subscript):
        return ast.unparse(node.value).rsplit(".", 1)[-1]
    return ast.unparse(node).rsplit(".", 1)[-1]


def value_type_of_annotation(annotation: str | None) -> dict:
    """The value type of a config-dataclass field's flag, in the order vLLM's
    ``vllm/engine/arg_utils.py`` ``_compute_kwargs`` decides it: a dataclass -> ``json``;
    ``bool | str | None`` -> ``optional``; a bool -> ``bool``; ``Literal[...]`` -> ``str`` with
    ``choices``; ``list``/``tuple``/``set`` -> ``nargs: "+"`` with the element type; ``int``;
    ``float``; ``dict`` with ``str`` or a non-builtin -> ``json_or_str``; ``dict`` -> ``json``;
    anything else (``str``, enums, other classes) -> ``str``.

    Returns:
        ``{"type": ..., "choices"?: [...], "nargs"?: "+"}``.
    """
    if annotation is None:
        return {"type": "str"}
    try:
        tree = ast.parse(annotation, mode="eval").body
    except SyntaxError:
        return {"type": "str"}
    members = _union_members(tree)
    names = [_name(m) for m in members]
    non_none = [n for n in names if n != "None"]
    if any(n.endswith("Config") for n in non_none):
        return {"type": "json"}
    if set(names) == {"bool", "str", "None"} or set(names) == {"bool", "str"}:
        return {"type": "optional"}
    if "bool" in names:
        return {"type": "bool"}
    literals = [m for m in members if _name(m) == "Literal" and isinstance(m, ast.Subscript)]
    if literals:
        values: list = []
        for lit in literals:
            elts = lit.slice.elts if isinstance(lit.slice, ast.Tuple) else [lit.slice]
            values.extend(e.value for e in elts if isinstance(e, ast.Constant))
        if values and all(isinstance(v, str) for v in values) and "str" not in names:
            return {"type": "str", "choices": sorted(set(values), key=values.index)}
        if values and all(isinstance(v, int) for v in values):
            return {"type": "int", "choices": [str(v) for v in values]}
        return {"type": "str"}
    for coll in ("tuple", "list", "set"):
        found = [m for m in members if _name(m) == coll]
        if found:
            node = found[0]
            elem = "str"
            if isinstance(node, ast.Subscript):
                first = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
                elem = value_type_of_annotation(ast.unparse(first))["type"]
            return {"type": elem if elem in ("int", "float", "str") else "str", "nargs": "+"}
    if "int" in names:
        return {"type": "int"}
    if "float" in names:
        return {"type": "float"}
    if "dict" in names or "Dict" in names:
        others = [n for n in non_none if n not in ("dict", "Dict")]
        if "str" in others or any(n not in _BUILTINS for n in others):
            return {"type": "json_or_str"}
        return {"type": "json"}
    return {"type": "str"}


def _explicit_type(call: ast.Call) -> dict:
    """The value type of a literal ``add_argument`` call: its ``type=``, ``choices=`` and
    ``nargs=`` keywords (``type=int`` -> int, ``float`` -> float, ``json.loads`` -> json, any
    other -> str; ``action=store_true`` -> ``switch``); only the keys the call states."""
    out: dict = {}
    for kw in call.keywords:
        text = ast.unparse(kw.value)
        if kw.arg == "type":
            base = text.rsplit(".", 1)[-1]
            if "json" in text:
                out["type"] = "json"
            elif base in ("int", "float"):
                out["type"] = base
            elif "human_readable_int" in text:
                out["type"] = "int"
            else:
                out["type"] = "str"
        elif kw.arg == "choices" and isinstance(kw.value, (ast.List, ast.Tuple)):
            vals = [e.value for e in kw.value.elts if isinstance(e, ast.Constant)]
            if vals:
                out["choices"] = [str(v) for v in vals]
        elif kw.arg == "nargs":
            value = text.strip("'\"")
            if value in ("+", "*"):
                out["nargs"] = value
            elif value == "?":
                out["nargs"] = "?"
        elif kw.arg == "action":
            action = text.strip("'\"")
            if action in ("store_true", "store_false", "store_const", "count"):
                out["type"] = "switch"
            elif "BooleanOptionalAction" in text:
                out["type"] = "bool"
    return out


def _literal_options(call: ast.Call) -> list[str]:
    return [
        a.value
        for a in call.args
        if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("-")
    ]


def _explicit_action(call: ast.Call) -> str | None:
    for kw in call.keywords:
        if kw.arg == "action":
            text = ast.unparse(kw.value)
            if "BooleanOptionalAction" in text:
                return "bool"
            if text.strip("'\"") in ("store_true", "store_false", "store_const", "count"):
                return "flag"
            return "value"
        if kw.arg == "type" and "json" in ast.unparse(kw.value):
            return "json"
    return None


def _kwargs_field(call: ast.Call, aliases: dict[str, tuple[str, str]]) -> tuple[str, str] | None:
    """The (kwargs variable, field) a ``**X_kwargs["field"]`` (or ``**alias``) splat refers to."""
    for kw in call.keywords:
        if kw.arg is not None:
            continue
        v = kw.value
        if isinstance(v, ast.Dict):  # **{**X_kwargs["field"], "default": None}
            inner = [val for key, val in zip(v.keys, v.values, strict=True) if key is None]
            if inner:
                v = inner[0]
        if (
            isinstance(v, ast.Subscript)
            and isinstance(v.value, ast.Name)
            and isinstance(v.slice, ast.Constant)
        ):
            return v.value.id, v.slice.value
        if isinstance(v, ast.Name) and v.id in aliases:
            return aliases[v.id]
    return None


def _add(
    flags: dict[str, dict],
    options: list[str],
    kind: str,
    dest: str | None,
    vtype: dict | None = None,
) -> None:
    """Register ``options`` (and their negative forms for booleans) into ``flags``; ``vtype``
    (:func:`value_type_of_annotation` / :func:`_explicit_type`) adds ``type``, ``choices`` and
    ``nargs`` to value-taking flags (switches get ``type: switch``)."""
    long_opts = [o for o in options if o.startswith("--")]
    canonical = long_opts[0] if long_opts else options[0]
    typed: dict = {}
    if kind in ("bool", "flag"):
        typed = {"type": "switch"}
    elif kind == "json":
        typed = {"type": "json"}
    elif kind == "optional":
        typed = {"type": "optional"}
    elif vtype:
        typed = {k: v for k, v in vtype.items() if k in ("type", "choices", "nargs")}
        if typed.get("type") in ("switch", "bool", "optional"):
            typed["type"] = "str"
    for opt in options:
        entry = {"kind": kind, **typed}
        if opt != canonical:
            entry["alias_of"] = canonical
        if dest:
            entry["dest"] = dest
        flags[opt] = entry
    if kind == "bool":
        for opt in long_opts:
            negs = ["--no-" + opt[2:]]
            for prefix, inverse in (("--enable-", "--disable-"), ("--disable-", "--enable-")):
                if opt.startswith(prefix):
                    negs.append(inverse + opt[len(prefix) :])
            for neg in negs:
                flags.setdefault(neg, {"kind": "negation", "negates": opt, "type": "switch"})


def engine_flags(text: str, annotations: dict[str, dict[str, str]]) -> dict[str, dict]:
    """Flags registered in ``arg_utils.py`` (EngineArgs / AsyncEngineArgs)."""
    tree = ast.parse(text)
    engine_fields = annotations.get("EngineArgs", {})
    kwargs_class: dict[str, str] = {}
    aliases: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            tgt, val = node.targets[0], node.value
            if not isinstance(tgt, ast.Name):
                continue
            if (
                isinstance(val, ast.Call)
                and isinstance(val.func, ast.Name)
                and val.func.id == "get_kwargs"
                and val.args
                and isinstance(val.args[0], ast.Name)
            ):
                kwargs_class[tgt.id] = val.args[0].id
            elif (
                isinstance(val, ast.Subscript)
                and isinstance(val.value, ast.Name)
                and isinstance(val.slice, ast.Constant)
            ):
                aliases[tgt.id] = (val.value.id, val.slice.value)
    flags: dict[str, dict] = {}
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"
        ):
            continue
        options = _literal_options(node)
        if not options:
            continue
        kind = _explicit_action(node)
        ref = _kwargs_field(node, aliases)
        dest = ref[1] if ref else None
        vtype: dict = {"type": "str"}
        if ref is not None:
            cls = kwargs_class.get(ref[0])
            ann = annotations.get(cls, {}).get(ref[1]) if cls else None
            if ann is None:
                ann = engine_fields.get(ref[1])
            if kind is None:
                kind = kind_of_annotation(ann)
            vtype = value_type_of_annotation(ann)
        vtype.update(_explicit_type(node))
        _add(flags, options, kind or "value", dest, vtype)
    return flags


def frontend_flags(text: str, annotations: dict[str, dict[str, str]]) -> dict[str, dict]:
    """Flags of the OpenAI server frontend: ``make_arg_parser`` literals + FrontendArgs fields."""
    flags: dict[str, dict] = {}
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"
        ):
            options = _literal_options(node)
            if options:
                vtype = {"type": "str", **_explicit_type(node)}
                _add(flags, options, _explicit_action(node) or "value", None, vtype)
    for cls in FRONTEND_CLASSES:
        for name, ann in annotations.get(cls, {}).items():
            _add(
                flags,
                ["--" + name.replace("_", "-")],
                kind_of_annotation(ann),
                name,
                value_type_of_annotation(ann),
            )
    return flags


def bench_flags(texts: list[str]) -> dict[str, dict]:
    """Flags of ``vllm bench serve`` (every literal ``add_argument`` in its files)."""
    flags: dict[str, dict] = {}
    for text in texts:
        for node in ast.walk(ast.parse(text)):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"
            ):
                options = _literal_options(node)
                if options:
                    vtype = {"type": "str", **_explicit_type(node)}
                    _add(flags, options, _explicit_action(node) or "value", None, vtype)
    return flags


def env_vars(text: str) -> list[str]:
    """Names of the env vars vLLM reads: keys of ``environment_variables`` in ``vllm/envs.py``."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        target = None
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            target = node.target.id
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            target = node.targets[0].id
        if target == "environment_variables" and isinstance(node.value, ast.Dict):
            names.update(k.value for k in node.value.keys if isinstance(k, ast.Constant))
    return sorted(names)


def build(wheel: Path) -> dict[str, dict[str, dict]]:
    """Return {"serve": flags, "bench serve": flags} for one wheel."""
    sources = read_sources(wheel)
    annotations = class_annotations(sources)
    serve: dict[str, dict] = {}
    for f in FRONTEND_FILES:
        if f in sources:
            serve.update(frontend_flags(sources[f], annotations))
    serve.update(engine_flags(sources[ENGINE_FILE], annotations))
    bench = bench_flags([sources[f] for f in BENCH_FILES if f in sources])
    return {"serve": dict(sorted(serve.items())), "bench serve": dict(sorted(bench.items()))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--version", default=pins.pin("vllm").version, help="vLLM version (default: the pin)"
    )
    parser.add_argument("--wheel", type=Path, help="local wheel (else pip download)")
    parser.add_argument("--old-version", help="older vLLM version to diff for removed flags")
    parser.add_argument("--old-wheel", type=Path, help="local wheel of --old-version")
    parser.add_argument(
        "-o", "--output", type=Path, default=pins.catalog_path("vllm"), help="default: the pin's"
    )
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel or fetch_wheel(args.version, Path(tmp))
        commands = build(wheel)
        envs = env_vars(read_sources(wheel).get(ENVS_FILE, ""))
        removed: dict[str, dict] = {}
        if args.old_version:
            old_wheel = args.old_wheel or fetch_wheel(args.old_version, Path(tmp))
            old = build(old_wheel)
            for flag in old["serve"]:
                if flag not in commands["serve"] and flag.startswith("--"):
                    removed[flag] = {
                        "last_seen_in": args.old_version,
                        "hint": REMOVED_HINTS.get(
                            flag, f"not accepted by vLLM {args.version}; see its release notes"
                        ),
                    }
    catalog = {
        "engine": "vllm",
        "version": args.version,
        "generated_by": "scripts/build_vllm_flag_catalog.py",
        "source": (
            f"vllm=={args.version} wheel: {ENGINE_FILE}, {', '.join(FRONTEND_FILES)}, "
            f"{', '.join(BENCH_FILES)}, {ENVS_FILE} (ast, no import)"
        ),
        "env": envs,
        "commands": commands,
        "removed": dict(sorted(removed.items())),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(catalog, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(
        f"{args.output}: {len(commands['serve'])} serve flags, "
        f"{len(commands['bench serve'])} bench serve flags, {len(removed)} removed, "
        f"{len(envs)} env vars",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
