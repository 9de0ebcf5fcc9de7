#!/usr/bin/env python3
"""Build recipecli's SGLang flag catalog from SGLang's source, statically (no import).

SGLang 0.5.23 registers ``python -m sglang.launch_server`` / ``sglang serve`` flags in
``sglang/srt/server_args.py`` ``ServerArgs.add_cli_args``: first
``add_cli_args_from_dataclass(parser, ServerArgs)`` (``sglang/srt/arg_groups/arg_utils.py``) over
every field of the namespace classes listed in ``server_args.py`` ``_INPUT_NAMESPACES`` (defined in
``sglang/srt/arg_groups/fields/*.py`` as ``name: A[T, "help"]`` or ``name: A[T, Arg(...)]``), then
a few literal ``parser.add_argument`` calls (dynamic choices, ``--config``, deprecated spellings).

This script reads those definitions with :mod:`ast` and applies the rules of
``add_cli_args_from_dataclass``:

* the flag is ``Arg.cli_name`` or ``--`` + the field name with ``_`` -> ``-``; ``Arg.aliases`` are
  other names of the same argument (recorded with ``alias_of``); ``no_cli=True`` skips the field;
* ``Arg.action`` given: ``argparse.BooleanOptionalAction`` -> ``--x`` and ``--no-x``; other actions
  -> a value;
* ``Literal[...]`` -> choices (``Arg.choices`` wins); ``list[X]`` without ``type_parser`` ->
  ``nargs="+"``; ``bool`` -> ``store_true`` (a bare switch, no ``--no-x`` form, whatever the
  default); ``type_parser=json.loads`` -> a JSON value; other scalars by their type.

Choice lists named by a constant are resolved from ``sglang/srt/arg_groups/choices.py`` where
they are literal lists; otherwise the flag keeps no ``choices``.

Usage (the committed catalog was produced with exactly this)::

    python scripts/build_sglang_flag_catalog.py --source /path/to/unpacked/sglang \\
        -o recipecli/engines/sglang/data/sglang-<pin>-flags.json

(``--version`` defaults to the pin, ``recipecli/engines/sglang/pin.py``)

``--source`` is a folder holding the ``sglang`` package (an unpacked wheel, ``pip download
sglang==0.5.23 --no-deps``). Output is deterministic (sorted keys).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/pins.py beside this file
import pins  # scripts/pins.py: the version defaults to the pin

SERVER_ARGS = "sglang/srt/server_args.py"
FIELDS_DIR = "sglang/srt/arg_groups/fields"
CHOICES = "sglang/srt/arg_groups/choices.py"
SCALAR_TYPES = {"int": "int", "float": "float", "str": "str", "bool": "switch"}


def _literal(node: ast.AST | None) -> Any:
    try:
        return ast.literal_eval(node) if node is not None else None
    except (ValueError, TypeError, SyntaxError):
        return None


def choice_constants(root: Path) -> dict[str, list[str]]:
    """Module-level ``NAME = [literal, ...]`` lists of ``choices.py`` (strings)."""
    out: dict[str, list[str]] = {}
    tree = ast.parse((root / CHOICES).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            value = _literal(node.value)
            if isinstance(target, ast.Name) and isinstance(value, list):
                out[target.id] = [str(v) for v in value]
    return out


def input_namespaces(root: Path) -> list[str]:
    """Class names in ``server_args.py`` ``_INPUT_NAMESPACES``."""
    tree = ast.parse((root / SERVER_ARGS).read_text(encoding="utf-8"))
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "_INPUT_NAMESPACES" for t in node.targets)
            and isinstance(node.value, ast.List)
        ):
            return [e.id for e in node.value.elts if isinstance(e, ast.Name)]
    raise SystemExit(f"{SERVER_ARGS}: _INPUT_NAMESPACES not found")


def _unwrap(node: ast.AST) -> tuple[ast.AST, bool]:
    """(inner type, was Optional) of ``Optional[X]`` / ``X | None``."""
    if isinstance(node, ast.Subscript) and _name(node.value) == "Optional":
        return node.slice, True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        for a, b in ((node.left, node.right), (node.right, node.left)):
            if isinstance(b, ast.Constant) and b.value is None:
                return a, True
    return node, False


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return ""


def _entry(field: str, type_node: ast.AST, meta: ast.AST, consts: dict) -> list[tuple[str, dict]]:
    """Catalog rows (flag, entry) of one ``A[T, meta]`` field, following
    ``add_cli_args_from_dataclass``; empty when the field has no CLI flag."""
    kw: dict[str, ast.AST] = {}
    if isinstance(meta, ast.Call) and _name(meta.func) == "Arg":
        kw = {k.arg: k.value for k in meta.keywords if k.arg}
    elif not isinstance(meta, (ast.Constant, ast.JoinedStr, ast.BinOp)):
        return []  # not an Arg or a help string: add_cli_args_from_dataclass skips it
    if _literal(kw.get("no_cli")) is True:
        return []
    flag = _literal(kw.get("cli_name")) or "--" + field.replace("_", "-")
    aliases = _literal(kw.get("aliases")) or []
    choices = _literal(kw.get("choices"))
    if choices is None and isinstance(kw.get("choices"), ast.Name):
        choices = consts.get(kw["choices"].id)
    entry: dict[str, Any]
    rows: list[tuple[str, dict]] = []
    action = _name(kw["action"]) if "action" in kw else ""
    inner, _ = _unwrap(type_node)
    parser = _name(kw["type_parser"]) if "type_parser" in kw else ""
    if action:
        if action.endswith("BooleanOptionalAction"):
            entry = {"kind": "bool", "type": "switch"}
            neg = "--no-" + flag[2:]
            rows.append((neg, {"kind": "negation", "negates": flag, "type": "switch"}))
        else:
            entry = {"kind": "value", "type": "str", "nargs": "*"}
    elif isinstance(inner, ast.Subscript) and _name(inner.value) in ("Literal", "typing.Literal"):
        values = _literal(inner.slice)
        values = list(values) if isinstance(values, tuple) else [values]
        first = values[0] if values else ""
        entry = {
            "kind": "value",
            "type": "int" if isinstance(first, int) else "str",
            "choices": [str(v) for v in (choices or values)],
        }
    elif (
        isinstance(inner, ast.Subscript)
        and _name(inner.value) in ("list", "List", "typing.List")
        and not parser
    ):
        elem = _name(inner.slice)
        entry = {"kind": "value", "type": SCALAR_TYPES.get(elem, "str"), "nargs": "+"}
        if elem == "bool":
            entry["type"] = "str"
    elif _name(inner) == "bool" and not parser:
        entry = {"kind": "flag", "type": "switch"}
    else:
        if parser == "json.loads":
            kind, vtype = "json", "json"
        elif parser == "human_readable_int":
            kind, vtype = "value", "int"
        else:
            kind, vtype = "value", SCALAR_TYPES.get(_name(inner), "str")
            if vtype == "switch":
                vtype = "str"
        entry = {"kind": kind, "type": vtype}
        nargs = _literal(kw.get("nargs"))
        if nargs:
            entry["nargs"] = str(nargs)
    if choices and "choices" not in entry:
        entry["choices"] = [str(c) for c in choices]
    rows.insert(0, (flag, entry))
    for alias in aliases:
        rows.append((alias, {**entry, "alias_of": flag}))
    return rows


def field_flags(root: Path) -> dict[str, dict]:
    """Flags of every ``A[...]`` field of the ``_INPUT_NAMESPACES`` classes."""
    wanted = set(input_namespaces(root))
    consts = choice_constants(root)
    out: dict[str, dict] = {}
    found: set[str] = set()
    for path in sorted((root / FIELDS_DIR).glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for cls in tree.body:
            if not isinstance(cls, ast.ClassDef) or cls.name not in wanted:
                continue
            found.add(cls.name)
            for node in cls.body:
                if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
                    continue
                ann = node.annotation
                if not (isinstance(ann, ast.Subscript) and _name(ann.value) == "A"):
                    continue
                parts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
                if len(parts) < 2:
                    continue
                meta = next(
                    (
                        p
                        for p in parts[1:]
                        if isinstance(p, (ast.Constant, ast.JoinedStr, ast.BinOp))
                        or (isinstance(p, ast.Call) and _name(p.func) == "Arg")
                    ),
                    None,
                )
                if meta is None:
                    continue
                for flag, entry in _entry(node.target.id, parts[0], meta, consts):
                    out.setdefault(flag, entry)
    missing = wanted - found
    if missing:
        raise SystemExit(f"namespace classes not found in {FIELDS_DIR}: {sorted(missing)}")
    return out


def literal_flags(root: Path) -> dict[str, dict]:
    """``parser.add_argument`` calls in ``ServerArgs.add_cli_args`` (dynamic choices, --config,
    deprecated spellings)."""
    tree = ast.parse((root / SERVER_ARGS).read_text(encoding="utf-8"))
    consts = choice_constants(root)
    out: dict[str, dict] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.FunctionDef) and node.name == "add_cli_args"):
            continue
        for call in ast.walk(node):
            if not (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr == "add_argument"
            ):
                continue
            names = [a.value for a in call.args if isinstance(a, ast.Constant)]
            kw = {k.arg: k.value for k in call.keywords if k.arg}
            action = _literal(kw.get("action")) or _name(kw.get("action", ast.Constant(None)))
            if action in ("store_true", "DeprecatedStoreTrueAction"):
                entry: dict[str, Any] = {"kind": "flag", "type": "switch"}
            else:
                entry = {"kind": "value", "type": SCALAR_TYPES.get(_name(kw.get("type")), "str")}
                choices = _literal(kw.get("choices"))
                if choices is None and isinstance(kw.get("choices"), ast.Name):
                    choices = consts.get(kw["choices"].id)
                if isinstance(choices, list):
                    entry["choices"] = [str(c) for c in choices]
            if action and action.startswith("Deprecated"):
                entry["deprecated"] = True
            for name in names:
                if name.startswith("--"):
                    out[name] = entry
    return out


def build(root: Path, version: str) -> dict[str, Any]:
    """The catalog mapping for the SGLang source tree at ``root``."""
    flags = field_flags(root)
    for flag, entry in literal_flags(root).items():
        flags.setdefault(flag, entry)
    return {
        "engine": "sglang",
        "version": version,
        "generated_by": "scripts/build_sglang_flag_catalog.py",
        "source": (
            f"sgl-project/sglang {version} (PyPI wheel) python/sglang/srt/server_args.py "
            "ServerArgs.add_cli_args: add_cli_args_from_dataclass "
            "(sglang/srt/arg_groups/arg_utils.py) over the _INPUT_NAMESPACES fields of "
            "sglang/srt/arg_groups/fields/*.py, then its literal add_argument calls; "
            "--json-model-override-args is a JSON string parsed by json.loads "
            "(sglang/srt/configs/model_config.py ModelConfig.from_server_args)"
        ),
        "removed": {},
        "env": [],
        "commands": {"serve": dict(sorted(flags.items()))},
    }


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: write the catalog JSON (``-o``) or print it."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", required=True, help="folder holding the sglang package")
    ap.add_argument("--version", default=pins.pin("sglang").version, help="default: the pin")
    ap.add_argument("-o", "--output")
    args = ap.parse_args(argv)
    root = Path(args.source)
    if not (root / SERVER_ARGS).is_file():
        print(f"{root}: no {SERVER_ARGS} (give the unpacked wheel folder)", file=sys.stderr)
        return 2
    data = build(root, args.version)
    # --json-model-override-args is declared `str` in fields/model.py but holds JSON text.
    serve = data["commands"]["serve"]
    if "--json-model-override-args" in serve:
        serve["--json-model-override-args"] = {"kind": "json", "type": "json"}
    text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"{args.output}: {len(serve)} serve flags", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
