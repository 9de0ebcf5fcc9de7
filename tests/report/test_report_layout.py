"""The modules of recipecli/report/ import one another in one direction (ast, no import).

metrics -> stats -> inputs -> workload -> change -> rows -> note_codes -> acceptance -> notes ->
result -> compare -> plot:
a module imports only modules before it; none imports click or recipecli.output (the report
library is used by commands and by docsgen alike, and must stay click-free).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "recipecli" / "report"

ORDER = [
    "metrics",
    "stats",
    "inputs",
    "workload",
    "change",
    "rows",
    "note_codes",
    "acceptance",
    "notes",
    "result",
    "compare",
    "plot",
]


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_every_module_is_in_the_order():
    assert sorted(p.stem for p in PKG.glob("*.py") if p.stem != "__init__") == sorted(ORDER)


@pytest.mark.parametrize("module", ORDER)
def test_imports_point_back_only(module):
    mine = ORDER.index(module)
    bad = []
    for name in _imports(PKG / f"{module}.py"):
        if name.split(".")[0] == "click" or name == "recipecli.output":
            bad.append(name)
        elif name.startswith("recipecli.report"):
            other = name.split(".")[2] if name.count(".") >= 2 else "__init__"
            if other == "__init__" or ORDER.index(other) >= mine:
                bad.append(name)
    assert bad == [], f"recipecli.report.{module} imports {bad}"


def test_the_package_imports_no_click_or_output():
    assert not {
        n for n in _imports(PKG / "__init__.py") if n == "recipecli.output" or n.startswith("click")
    }
