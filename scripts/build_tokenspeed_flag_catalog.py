#!/usr/bin/env python3
"""Build recipecli's tokenspeed flag catalog from tokenspeed's own parser, statically (no import).

tokenspeed's server arguments cannot be imported on a CPU box (``server_args.py`` imports
``tokenspeed_kernel`` at module level), so this script reads, at the pinned commit, the parser
``tokenspeed serve`` hands to the engine with :mod:`ast`:

* ``python/tokenspeed/runtime/utils/server_args.py`` ``ServerArgs.add_cli_args``: every
  ``parser.add_argument`` / ``<group>.add_argument`` call (``prefix_cache_group`` is a mutually
  exclusive group of the same parser). Long option strings only: the first one names the
  argument, the others are aliases (``alias_of``), as argparse registers them on one action.
* ``ServerArgs.from_cli_args``: an argument whose value it copies onto another argument's dest
  (``x = getattr(args, "tensor_parallel_size", None)`` ... ``args.attn_tp_size = x``) is an alias
  of that argument (``--tensor-parallel-size`` / ``--tp`` -> ``--attn-tp-size``).
* ``python/tokenspeed/cli/__main__.py`` ``main``: the flags the ``serve`` subparser adds itself
  (``--headless``).

Kinds and types follow argparse: ``action="store_true"``/``"store_false"`` -> a bare switch
(``store_false`` onto another argument's dest: its ``negation``);
``argparse.BooleanOptionalAction`` -> ``--x`` and ``--no-x``; ``nargs="?"`` -> ``optional``;
``nargs="+"`` and ``action="append"`` -> several values; ``type=int|float|_uint16`` -> ``int`` /
``float``, other types (``str``, ``str_to_bool``, ``nullable_str``, ``_nonempty_str``) -> ``str``;
``choices`` literal lists, or a list bound to a name earlier in ``add_cli_args``.
``--hf-overrides`` and ``--speculative-config`` are ``type=str`` there and parsed with
``json.loads`` (``runtime/configs/model_config.py`` ``ModelConfig.__init__``;
``ServerArgs.resolve_config_aliases``): JSON values.

Usage (the committed catalog was produced with exactly this)::

    python scripts/build_tokenspeed_flag_catalog.py \\
        --git-dir /work/.mirror/lightseekorg+tokenspeed/repo \\
        -o recipecli/engines/tokenspeed/data/tokenspeed-<pin>-flags.json

(``--commit`` defaults to the pin, ``recipecli/engines/tokenspeed/pin.py``; ``--source DIR``
reads a checkout instead of a git directory). Output is deterministic (sorted keys).
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/pins.py beside this file
import pins  # scripts/pins.py: the commit defaults to the pin

SERVER_ARGS = "python/tokenspeed/runtime/utils/server_args.py"
CLI_MAIN = "python/tokenspeed/cli/__main__.py"
#: type=str flags tokenspeed parses as JSON (runtime/configs/model_config.py ModelConfig.__init__,
#: server_args.py ServerArgs.resolve_config_aliases)
JSON_FLAGS = ("--hf-overrides", "--speculative-config")
INT_TYPES = {"int", "_uint16"}
FLOAT_TYPES = {"float"}


def _literal(node: ast.AST | None) -> Any:
    try:
        return ast.literal_eval(node) if node is not None else None
    except (ValueError, TypeError, SyntaxError):
        return None


def _name(node: ast.AST | None) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return ""


def _function(tree: ast.AST, name: str) -> ast.FunctionDef:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise SystemExit(f"no function {name} in the source")


def _named_lists(fn: ast.FunctionDef) -> dict[str, list[Any]]:
    """``name = [literal, ...]`` assignments in ``fn`` (choice lists named before use)."""
    out: dict[str, list[Any]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            value = _literal(node.value)
            if isinstance(node.targets[0], ast.Name) and isinstance(value, list):
                out[node.targets[0].id] = value
    return out


def _add_argument_calls(fn: ast.FunctionDef) -> list[ast.Call]:
    return [
        c
        for c in ast.walk(fn)
        if isinstance(c, ast.Call)
        and isinstance(c.func, ast.Attribute)
        and c.func.attr == "add_argument"
    ]


def _value_entry(kw: dict[str, ast.AST], lists: dict[str, list[Any]]) -> dict[str, Any]:
    """The entry of a flag that takes a value: its type, choices and nargs."""
    tname = _name(kw.get("type"))
    vtype = "int" if tname in INT_TYPES else "float" if tname in FLOAT_TYPES else "str"
    entry: dict[str, Any] = {"kind": "value", "type": vtype}
    choices = _literal(kw.get("choices"))
    if choices is None and isinstance(kw.get("choices"), ast.Name):
        choices = lists.get(_name(kw["choices"]))
    if isinstance(choices, list):
        entry["choices"] = [str(c) for c in choices]
    nargs = _literal(kw.get("nargs"))
    if nargs == "?":
        entry["kind"] = "optional"
    elif nargs is not None:
        entry["nargs"] = str(nargs)
    if _literal(kw.get("action")) == "append":
        entry["nargs"] = "*"
    return entry


def _arguments(fn: ast.FunctionDef) -> list[tuple[list[str], str, dict[str, ast.AST]]]:
    """(long option strings, dest, keywords) of each ``add_argument`` call with a long option."""
    out = []
    for call in _add_argument_calls(fn):
        names = [a.value for a in call.args if isinstance(a, ast.Constant)]
        longs = [n for n in names if isinstance(n, str) and n.startswith("--")]
        if not longs:
            continue  # the positional model_path
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        dest = _literal(kw.get("dest")) or longs[0][2:].replace("-", "_")
        out.append((longs, str(dest), kw))
    return out


def _entries(fn: ast.FunctionDef) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The catalog rows of one parser-building function, and dest -> its first flag."""
    lists = _named_lists(fn)
    flags: dict[str, dict[str, Any]] = {}
    first_of: dict[str, str] = {}
    for longs, dest, kw in _arguments(fn):
        action = _literal(kw.get("action")) or _name(kw.get("action"))
        if action in ("store_true", "store_false") and dest in first_of and action == "store_false":
            entry: dict[str, Any] = {
                "kind": "negation",
                "negates": first_of[dest],
                "type": "switch",
            }
        elif action in ("store_true", "store_false"):
            entry = {"kind": "flag", "type": "switch"}
        elif action.endswith("BooleanOptionalAction"):
            entry = {"kind": "bool", "type": "switch"}
            for name in longs:
                flags["--no-" + name[2:]] = {"kind": "negation", "negates": name, "type": "switch"}
        else:
            entry = _value_entry(kw, lists)
        first_of.setdefault(dest, longs[0])
        flags[longs[0]] = entry
        for alias in longs[1:]:
            flags[alias] = {**entry, "alias_of": longs[0]}
    return flags, first_of


def _copied_dests(fn: ast.FunctionDef) -> dict[str, str]:
    """``from_cli_args``' copies of one argument onto another: {source dest: target dest}."""
    bound: dict[str, str] = {}  # local name -> the dest read with getattr(args, "dest", ...)
    copies: dict[str, str] = {}
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target, value = node.targets[0], node.value
        if (
            isinstance(target, ast.Name)
            and isinstance(value, ast.Call)
            and _name(value.func) == "getattr"
            and len(value.args) >= 2
            and isinstance(value.args[1], ast.Constant)
        ):
            bound[target.id] = str(value.args[1].value)
        elif (
            isinstance(target, ast.Attribute)
            and _name(target.value) == "args"
            and isinstance(value, ast.Name)
            and value.id in bound
        ):
            copies[bound[value.id]] = target.attr
    return copies


def _apply_copies(
    flags: dict[str, dict[str, Any]], first_of: dict[str, str], copies: dict[str, str]
) -> None:
    """Make every flag of a copied dest an alias of the flag of the dest it is copied onto."""
    for src, dst in copies.items():
        if src not in first_of or dst not in first_of:
            continue
        canonical = first_of[dst]
        for flag, entry in list(flags.items()):
            if flag == first_of[src] or entry.get("alias_of") == first_of[src]:
                flags[flag] = {k: v for k, v in entry.items() if k != "alias_of"}
                flags[flag]["alias_of"] = canonical


def build(read: Callable[[str], str], commit: str) -> dict[str, Any]:
    """The catalog mapping of tokenspeed at ``commit``; ``read(path)`` returns a source file."""
    server = ast.parse(read(SERVER_ARGS))
    flags, first_of = _entries(_function(server, "add_cli_args"))
    _apply_copies(flags, first_of, _copied_dests(_function(server, "from_cli_args")))
    serve_cli, _ = _entries(_function(ast.parse(read(CLI_MAIN)), "main"))
    for flag, entry in serve_cli.items():
        flags.setdefault(flag, entry)
    for flag in JSON_FLAGS:
        if flag in flags:
            flags[flag] = {"kind": "json", "type": "json"}
    return {
        "engine": "tokenspeed",
        "version": commit[:8],
        "generated_by": "scripts/build_tokenspeed_flag_catalog.py",
        "source": (
            f"lightseekorg/tokenspeed commit {commit} {SERVER_ARGS} ServerArgs.add_cli_args "
            "(every add_argument call; aliases: the other option strings of one call, and the "
            f"arguments ServerArgs.from_cli_args copies onto another) and {CLI_MAIN} main (the "
            "serve subparser's own flags); --hf-overrides and --speculative-config are type=str "
            "there and parsed with json.loads (runtime/configs/model_config.py "
            "ModelConfig.__init__)"
        ),
        "removed": {},
        "env": [],
        "commands": {"serve": dict(sorted(flags.items()))},
    }


def _reader(args: argparse.Namespace) -> Callable[[str], str]:
    if args.source:
        root = Path(args.source)
        return lambda path: (root / path).read_text(encoding="utf-8")

    def show(path: str) -> str:
        cmd = ["git", "-C", args.git_dir, "show", f"{args.commit}:{path}"]
        return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout

    return show


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: write the catalog JSON (``-o``) or print it."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--git-dir", help="a git directory of lightseekorg/tokenspeed")
    where.add_argument("--source", help="a checkout of tokenspeed at the pinned commit")
    ap.add_argument("--commit", default=pins.pin("tokenspeed").version, help="default: the pin")
    ap.add_argument("-o", "--output")
    args = ap.parse_args(argv)
    try:
        data = build(_reader(args), args.commit)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"cannot read tokenspeed's source: {exc}", file=sys.stderr)
        return 2
    text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"{args.output}: {len(data['commands']['serve'])} serve flags", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
