"""The direction of imports of docs/architecture.md, enforced on the source (ast, no import).

Layers, lowest first: foundation (errors, findings, codes, safeio, safe_write, output's JSON) ->
checkpoint (sources -> one description) -> draft / target descriptions -> engines (the engine
models) -> check -> recipes / docsgen / report / convert -> cli (option types, terminal output,
completion -> the commands -> the lazy group). A module may import its own layer and the layers
below, never above; ``click`` is imported only under ``recipecli/cli/``. Imports inside functions
count too (they are how the CLI stays lazy, not a way around the direction), and no two modules
may import each other, directly or through others (no cycle); nor may two packages (the top-level
names under ``recipecli/``), whichever of their modules the imports run between. There are no
exceptions.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "recipecli"

#: package-relative module prefix -> layer number (the longest matching prefix wins)
LAYERS: dict[str, int] = {
    "errors": 0,
    "findings": 0,
    "codes": 0,
    "safeio": 0,
    "display": 0,
    "safe_write": 0,
    "hints": 0,
    "output": 0,
    "data": 0,
    "checkpoint": 1,
    "testing": 1,
    "draft": 2,
    "target": 2,
    "target_mtp": 2,
    "engines": 3,
    "check": 4,
    "kernelcheck": 4,
    "examples": 4,
    "recipes": 5,
    "recipecheck": 5,
    "docsgen": 5,
    "report": 5,
    "convert": 5,
    "diff": 5,
    "inspect": 5,
    # the CLI, the only importer of click: option types, terminal output, completion and the
    # --timeout option; one module per command; the lazy group, its entry point and the package
    "cli.params": 6,
    "cli.terminal": 6,
    "cli.completion": 6,
    "cli.hub_option": 6,
    "cli.commands": 7,
    "cli": 8,
    "__main__": 8,
}


def layer_of(module: str) -> int | None:
    best = None
    for prefix, layer in LAYERS.items():
        if module == prefix or module.startswith(prefix + "."):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, layer)
    return best[1] if best else None


def modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"]
        out.append((".".join(parts) or "__init__", path))
    return out


def imports(path: Path, module: str) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    pkg_parts = module.split(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg_parts[
                    : len(pkg_parts) - node.level + (1 if path.name == "__init__.py" else 0)
                ]
                name = ".".join([*base, node.module] if node.module else base)
                found.add(name)
            elif node.module and node.module.startswith("recipecli."):
                found.add(node.module[len("recipecli.") :])
            elif node.module == "recipecli":
                found.update(a.name for a in node.names)
            elif node.module and node.module.split(".")[0] == "click":
                found.add("<click>")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("recipecli."):
                    found.add(alias.name[len("recipecli.") :])
                elif alias.name.split(".")[0] == "click":
                    found.add("<click>")
    return found


def test_every_module_has_a_layer():
    missing = [m for m, _ in modules() if m != "__init__" and layer_of(m) is None]
    assert missing == []


@pytest.mark.parametrize(("module", "path"), modules(), ids=[m for m, _ in modules()])
def test_imports_point_down(module, path):
    mine = layer_of(module)
    if mine is None:
        return
    bad = []
    for target in imports(path, module):
        if target == "<click>":
            if module != "cli" and not module.startswith("cli."):
                bad.append("click")
            continue
        theirs = layer_of(target)
        if theirs is not None and theirs > mine:
            bad.append(target)
    assert bad == [], f"{module} (layer {mine}) imports upward: {bad}"


def test_engine_names_are_compared_only_in_the_engines_package():
    # "no `if engine == ...` elsewhere": a comparison with an engine-name literal outside
    # recipecli/engines/ is a rule that belongs in an engine model or in a table of per-engine
    # traits keyed by the registry's names (recipecli/recipes/engines.py). Data keyed by engine
    # name ({"vllm": ...}, .get("sglang")) is fine; ==, !=, in, not in, is and `case "vllm":`
    # against a name (or a tuple/list/set holding one) are not.
    from recipecli.engines import ENGINES

    names = set(ENGINES)
    assert names >= {"vllm", "tokenspeed", "sglang"}

    def compared(source: str) -> list[int]:
        """Lines of ``source`` comparing something with an engine-name literal."""

        def named(node: ast.AST) -> bool:
            if isinstance(node, ast.Constant):
                return node.value in names if isinstance(node.value, str) else False
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                return any(named(e) for e in node.elts)
            return False

        lines = []
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Compare) and any(
                named(c) for c in [node.left, *node.comparators]
            ):
                lines.append(node.lineno)
            elif isinstance(node, ast.MatchValue) and named(node.value):
                lines.append(node.lineno)
        return lines

    # the finder finds planted comparisons (and leaves tables and look-ups alone)
    planted = [
        'if engine == "vllm":\n    pass',
        'ok = "sglang" != engine',
        'x = "tokenspeed" in (recipe.get("unsupported") or {})',
        'x = engine not in ("vllm", "other")',
        'x = engine in {"sglang"}',
        'x = rendered.engine is "vllm"',
        'match engine:\n    case "tokenspeed":\n        pass',
    ]
    for text in planted:
        assert compared(text) != [], text
    for text in ['T = {"vllm": 1}', 'x = T.get("sglang")', 'f("tokenspeed")', 'x = e == "vllm-x"']:
        assert compared(text) == [], text

    offenders = [
        f"{module}:{line}"
        for module, path in modules()
        if module != "engines" and not module.startswith("engines.")
        for line in compared(path.read_text())
    ]
    assert offenders == []


def module_graph() -> dict[str, set[str]]:
    """Module -> the recipecli modules it imports (top-level and inside functions alike).

    ``from recipecli.x import y`` counts as an import of ``x.y`` when ``y`` is a module, else of
    ``x`` (its ``__init__``)."""
    known = {m for m, _ in modules()}
    graph: dict[str, set[str]] = {}
    for module, path in modules():
        is_init = path.name == "__init__.py"
        pkg = module.split(".")
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = pkg[: len(pkg) - node.level + (1 if is_init else 0)]
                    name = ".".join([*base, node.module] if node.module else base)
                elif node.module == "recipecli":
                    name = ""
                elif node.module and node.module.startswith("recipecli."):
                    name = node.module[len("recipecli.") :]
                else:
                    continue
                for alias in node.names:
                    sub = f"{name}.{alias.name}" if name else alias.name
                    edges.add(sub if sub in known else name)
            elif isinstance(node, ast.Import):
                edges.update(
                    a.name[len("recipecli.") :]
                    for a in node.names
                    if a.name.startswith("recipecli.")
                )
        graph[module] = {e for e in edges if e in known and e != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_cycle_finder_finds_a_cycle_through_three_modules():
    # a -> b -> c -> a is one cycle; d only points into it
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    # e.g. recipes.render <-> recipes.lint (a function-level import) was one; shared code goes
    # to a lower module instead (recipes.overrides)
    assert cycles(module_graph()) == []


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Top-level package (``check``, ``engines``, ``cli``; a top-level module is its own) -> the
    other top-level packages its modules import: ``graph`` with each module folded into its first
    name and the imports inside one package dropped."""
    out: dict[str, set[str]] = {}
    for module, targets in graph.items():
        package = module.split(".")[0]
        out.setdefault(package, set()).update(
            t.split(".")[0] for t in targets if t.split(".")[0] != package
        )
    return out


def test_package_cycle_finder_finds_a_cycle_no_module_cycle_shows():
    # engines.pages -> check.rules and check.run -> engines.base: no module imports itself back
    # (no module cycle), yet the packages check and engines import each other
    graph = {
        "engines.pages": {"check.rules", "engines.base"},
        "engines.base": {"draft"},
        "check.rules": {"draft"},
        "check.run": {"engines.base", "check.rules"},
        "draft": set(),
    }
    assert cycles(graph) == []
    assert package_graph(graph) == {
        "engines": {"check", "draft"},
        "check": {"draft", "engines"},
        "draft": set(),
    }
    assert cycles(package_graph(graph)) == [["check", "engines"]]
    # imports inside a package are no cycle between packages
    inside = {"cli.commands.completion": {"cli.app"}, "cli.app": {"cli.commands.completion"}}
    assert cycles(package_graph(inside)) == []


def test_no_package_cycles():
    # e.g. check <-> engines was one while the engine pages (which read the check rules) sat in
    # engines/; they are documentation, now recipecli/docsgen/engine_pages.py
    assert cycles(package_graph(module_graph())) == []


# ------------------------------------------------------------------------------------------
# Size limits (issue #23): scripts/sizes.py on a planted tree
# ------------------------------------------------------------------------------------------

SIZES = PKG.parent / "scripts" / "sizes.py"


def _sizes_module():
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("recipecli_scripts_sizes", SIZES)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _function_text(name: str, lines: int, indent: str = "") -> str:
    """A function of exactly ``lines`` lines, def line to last line."""
    body = [f"{indent}    x = {i}" for i in range(lines - 2)]
    return "\n".join([f"{indent}def {name}():", *body, f"{indent}    return x"]) + "\n"


def _plant(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _sizes(root: Path) -> tuple[int, str]:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, str(SIZES), str(root)], capture_output=True, text=True, check=False
    )
    assert proc.stderr == ""
    return proc.returncode, proc.stdout


def test_sizes_measures_def_line_to_last_line(tmp_path):
    sizes = _sizes_module()
    text = "@decorator\n" + _function_text("f", 5) + "\nclass C:\n" + _function_text("m", 3, "    ")
    _plant(tmp_path, {"a.py": text})
    modules, functions = sizes.measure([tmp_path])
    # a.py: decorator (1) + f (5) + blank (1) + class line (1) + m (3) = 11 lines
    assert [m.lines for m in modules] == [11]
    # f's def is on line 2 (the decorator is not counted); m's on line 9
    assert [(f.name, f.line, f.lines) for f in functions] == [("f", 2, 5), ("C.m", 9, 3)]


def test_sizes_passes_a_tree_inside_the_limits(tmp_path):
    # a 600-line module, an 80-line function and 11 more of 61 lines (12 over 60): every limit
    # reached, none broken
    files = {f"ok{i}.py": _function_text("f", 61) for i in range(11)}
    files["big.py"] = "\n" * 599 + "x = 1\n"
    files["pkg/long.py"] = _function_text("g", 80)
    code, out = _sizes(_plant(tmp_path, files))
    assert code == 0, out
    assert out.splitlines()[-1] == "ok"
    assert "functions over 80 lines: 0" in out
    assert "functions over 60 lines: 12" in out
    assert f"     80  {tmp_path / 'pkg' / 'long.py'}:1 g" in out.splitlines()


def test_sizes_fails_a_module_over_600_lines(tmp_path):
    code, out = _sizes(_plant(tmp_path, {"big.py": "x = 1\n" * 601}))
    assert code == 1
    assert "modules over 600 lines: 1" in out
    assert f"    601  {tmp_path / 'big.py'}" in out.splitlines()


def test_sizes_fails_a_function_over_80_lines(tmp_path):
    code, out = _sizes(_plant(tmp_path, {"m.py": "class C:\n" + _function_text("run", 81, "    ")}))
    assert code == 1
    assert "functions over 80 lines: 1" in out
    assert f"     81  {tmp_path / 'm.py'}:2 C.run" in out.splitlines()
    assert out.splitlines()[-1] == "over the limits: 1 function(s) over 80 lines"


def test_sizes_fails_more_than_12_functions_over_60_lines(tmp_path):
    # 13 functions of 61 lines, nested ones counted on their own (outer holds inner: 2 of them)
    files = {f"m{i}.py": _function_text("f", 61) for i in range(11)}
    inner = _function_text("inner", 61, "    ")
    files["nested.py"] = "def outer():\n" + inner + "    return inner\n"
    code, out = _sizes(_plant(tmp_path, files))
    assert code == 1
    assert "functions over 60 lines: 13" in out
    assert f"     63  {tmp_path / 'nested.py'}:1 outer" in out.splitlines()
    assert f"     61  {tmp_path / 'nested.py'}:2 outer.inner" in out.splitlines()
    assert out.splitlines()[-1] == "over the limits: 13 functions over 60 lines (at most 12)"
