"""Size limits of the source (issue #23): modules, functions and the number of long functions.

    python scripts/sizes.py [ROOT ...]      (default: recipecli/ and kernels/ of this repo)

Prints the modules over :data:`MODULE_LIMIT` lines, the functions over :data:`FUNCTION_LIMIT` and
over :data:`LONG_FUNCTION` lines (each list with its count), then ``ok`` or what is over. Exit 1
when any module is over :data:`MODULE_LIMIT` lines, any function over :data:`FUNCTION_LIMIT`, or
more than :data:`MAX_LONG_FUNCTIONS` functions are over :data:`LONG_FUNCTION`; else 0.

A module's size is its number of lines; a function's (``def``/``async def``, methods and nested
functions alike, each on its own) runs from its ``def`` line to its last line, decorators left
out. The files are parsed with :mod:`ast`, never imported.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: the trees checked when no root is given
DEFAULT_ROOTS = (REPO / "recipecli", REPO / "kernels")
#: no module over this many lines
MODULE_LIMIT = 600
#: no function over this many lines
FUNCTION_LIMIT = 80
#: a function over this many lines is long ...
LONG_FUNCTION = 60
#: ... and at most this many may be
MAX_LONG_FUNCTIONS = 12


@dataclass(frozen=True)
class Module:
    """One ``.py`` file: its path as shown (relative to the repo when inside it) and its lines."""

    path: str
    lines: int


@dataclass(frozen=True)
class Function:
    """One function: its file, the line of its ``def``, its dotted name inside the module
    (``Class.method``, ``outer.inner``) and its length in lines (``def`` line to last line)."""

    path: str
    line: int
    name: str
    lines: int


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def _functions(tree: ast.AST, path: str, prefix: str = "") -> Iterable[Function]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = f"{prefix}{node.name}"
            if not isinstance(node, ast.ClassDef):
                end = node.end_lineno if node.end_lineno is not None else node.lineno
                yield Function(path, node.lineno, name, end - node.lineno + 1)
            yield from _functions(node, path, name + ".")
        else:
            yield from _functions(node, path, prefix)


def measure(roots: Iterable[Path]) -> tuple[list[Module], list[Function]]:
    """Every ``*.py`` module under ``roots`` (sorted by path) and every function in them.

    Raises:
        SyntaxError: a module does not parse.
    """
    modules: list[Module] = []
    functions: list[Function] = []
    for root in roots:
        for path in sorted(Path(root).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            shown = _shown(path)
            modules.append(Module(shown, len(text.splitlines())))
            functions.extend(_functions(ast.parse(text, filename=str(path)), shown))
    return modules, functions


def _longest_first(functions: Iterable[Function], limit: int) -> list[Function]:
    return sorted((f for f in functions if f.lines > limit), key=lambda f: (-f.lines, f.path))


def report(modules: Sequence[Module], functions: Sequence[Function]) -> tuple[list[str], bool]:
    """The lines :func:`main` prints, and whether the limits are kept."""
    big = sorted((m for m in modules if m.lines > MODULE_LIMIT), key=lambda m: (-m.lines, m.path))
    over = _longest_first(functions, FUNCTION_LIMIT)
    long_ = _longest_first(functions, LONG_FUNCTION)
    lines = [f"modules over {MODULE_LIMIT} lines: {len(big)}"]
    lines += [f"  {m.lines:5d}  {m.path}" for m in big]
    for title, found in ((f"over {FUNCTION_LIMIT}", over), (f"over {LONG_FUNCTION}", long_)):
        lines.append(f"functions {title} lines: {len(found)}")
        lines += [f"  {f.lines:5d}  {f.path}:{f.line} {f.name}" for f in found]
    problems = []
    if big:
        problems.append(f"{len(big)} module(s) over {MODULE_LIMIT} lines")
    if over:
        problems.append(f"{len(over)} function(s) over {FUNCTION_LIMIT} lines")
    if len(long_) > MAX_LONG_FUNCTIONS:
        problems.append(
            f"{len(long_)} functions over {LONG_FUNCTION} lines (at most {MAX_LONG_FUNCTIONS})"
        )
    lines.append("over the limits: " + "; ".join(problems) if problems else "ok")
    return lines, not problems


def main(argv: Sequence[str] | None = None) -> int:
    """Print the sizes of the trees in ``argv`` (default :data:`DEFAULT_ROOTS`); 1 when a limit
    is broken, else 0."""
    ap = argparse.ArgumentParser(description="Size limits of the source (issue #23).")
    ap.add_argument("roots", nargs="*", type=Path, help="trees to measure")
    args = ap.parse_args(argv)
    modules, functions = measure(args.roots or DEFAULT_ROOTS)
    lines, ok = report(modules, functions)
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
