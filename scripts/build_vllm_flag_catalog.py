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

Boolean flags follow vLLM's ``FlexibleArgumentParser``: a ``BooleanOptionalAction`` flag ``--x``
also accepts ``--no-x``; ``--enable-x`` additionally pairs with ``--disable-x`` (and vice versa)
(``vllm/utils/argparse_utils.py``, ``EnableDisableAction``).

With ``--old-version`` the script also reads an older wheel and records, under ``removed``, the
serve flags that existed there but no longer exist in the pinned version (e.g. ``--rope-scaling``),
so ``recipecli lint`` can say "removed" instead of just "unknown".

Usage (the committed catalog was produced with exactly this)::

    python scripts/build_vllm_flag_catalog.py --version 0.33.0 --old-version 0.10.0 \\
        -o recipecli/data/catalogs/vllm-0.33.0.json

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

# Hints for removed flags: what to write instead (from vLLM's release notes / engine-facts §4).
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


def _add(flags: dict[str, dict], options: list[str], kind: str, dest: str | None) -> None:
    """Register ``options`` (and their negative forms for booleans) into ``flags``."""
    long_opts = [o for o in options if o.startswith("--")]
    canonical = long_opts[0] if long_opts else options[0]
    for opt in options:
        entry = {"kind": kind}
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
                flags.setdefault(neg, {"kind": "negation", "negates": opt})


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
        if kind is None and ref is not None:
            cls = kwargs_class.get(ref[0])
            ann = annotations.get(cls, {}).get(ref[1]) if cls else None
            if ann is None:
                ann = engine_fields.get(ref[1])
            kind = kind_of_annotation(ann)
        _add(flags, options, kind or "value", dest)
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
                _add(flags, options, _explicit_action(node) or "value", None)
    for cls in FRONTEND_CLASSES:
        for name, ann in annotations.get(cls, {}).items():
            _add(flags, ["--" + name.replace("_", "-")], kind_of_annotation(ann), name)
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
                    _add(flags, options, _explicit_action(node) or "value", None)
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
    parser.add_argument("--version", required=True, help="pinned vLLM version, e.g. 0.33.0")
    parser.add_argument("--wheel", type=Path, help="local wheel (else pip download)")
    parser.add_argument("--old-version", help="older vLLM version to diff for removed flags")
    parser.add_argument("--old-wheel", type=Path, help="local wheel of --old-version")
    parser.add_argument("-o", "--output", type=Path, required=True)
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
