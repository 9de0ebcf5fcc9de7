"""One pinned version per engine: written once (``recipecli/engines/<engine>/pin.py``), derived
everywhere else — data and catalog file names, conformance pins, rule citations, docs.

The version spellings searched for are the pins' own (``ref``, ``version``, ``short``,
``transformers``); a literal copy of one anywhere in the package's strings or in a hand-written page
outside a pin span is what a version bump would leave stale.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import shutil
from pathlib import Path

import pytest

from recipecli.engines import engine_specs

REPO = Path(__file__).resolve().parents[1]


def _pins_module():
    spec = importlib.util.spec_from_file_location("pins", REPO / "scripts" / "pins.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def spellings() -> set[str]:
    out: set[str] = set()
    for spec in engine_specs():
        p = spec.pin
        out |= {p.ref, p.version, p.short, p.transformers}
    return out


def test_the_pins_are_the_three_engines_versions():
    # by hand: the releases and the commit each engine folder documents
    pins = {s.name: s.pin for s in engine_specs()}
    assert (pins["vllm"].ref, pins["vllm"].data_file) == ("v0.33.0", "vllm-0.33.0.json")
    assert pins["sglang"].catalog_file == "sglang-0.5.23-flags.json"
    assert pins["tokenspeed"].ref == "f4d8ec6e039c" and pins["tokenspeed"].short == "f4d8ec6e"
    assert pins["vllm"].requirements_file == "requirements-vllm-0.33.0.txt"
    for name in ("vllm", "sglang"):
        assert (REPO / "scripts" / "conformance" / pins[name].requirements_file).is_file()


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = body[0] if body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def literal_versions(source: str, tokens: set[str]) -> list[int]:
    """Lines of ``source`` whose string literals (docstrings aside) hold a pinned spelling."""
    rx = re.compile("|".join(re.escape(t) for t in sorted(tokens, key=len, reverse=True)))
    tree = ast.parse(source)
    docs = _docstrings(tree)
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docs
        and rx.search(node.value)
    ]


def test_no_string_in_the_package_copies_a_pinned_version():
    tokens = spellings()
    # the finder finds a planted copy and leaves derived text and docstrings alone
    assert literal_versions('RULE = "vllm v0.33.0 vllm/config.py"', tokens) == [1]
    assert literal_versions('def f():\n    """read at 0.33.0"""\n    return PIN.ref', tokens) == []
    offenders = [
        f"{path.relative_to(REPO)}:{line}"
        for path in sorted((REPO / "recipecli").rglob("*.py"))
        if path.name != "pin.py"
        for line in literal_versions(path.read_text(encoding="utf-8"), tokens)
    ]
    assert offenders == []


def test_hand_written_pages_name_versions_only_in_pin_spans():
    pins = _pins_module()
    assert pins.sync_docs(check=True) == []
    tokens = spellings() - {"0.10.0"}
    rx = re.compile("|".join(re.escape(t) for t in sorted(tokens, key=len, reverse=True)))
    offenders = []
    for pattern in pins.HAND_WRITTEN:
        for path in sorted(REPO.glob(pattern)):
            text = pins.PIN_SPAN.sub("", path.read_text(encoding="utf-8"))
            offenders += [f"{path.name}: {m.group(0)}" for m in rx.finditer(text)]
    assert offenders == []


def test_sync_rewrites_a_stale_span(tmp_path, monkeypatch):
    pins = _pins_module()
    (tmp_path / "docs").mkdir()
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    page = tmp_path / "docs" / "x.md"
    page.write_text("vLLM <!--pin:vllm:ref-->v0.1.0<!--/pin--> here\n", encoding="utf-8")
    monkeypatch.setattr(pins, "ROOT", tmp_path)
    assert pins.sync_docs(check=True) == ["docs/x.md:1: v0.1.0 -> v0.33.0"]
    assert page.read_text(encoding="utf-8").count("v0.1.0") == 1  # --check writes nothing
    assert pins.sync_docs(check=False) != []
    assert page.read_text(encoding="utf-8") == "vLLM <!--pin:vllm:ref-->v0.33.0<!--/pin--> here\n"
    assert pins.sync_docs(check=True) == []


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_a_source_of_another_version_is_refused(engine):
    pins = _pins_module()
    pins.check_version(engine, pins.pin(engine).version)
    with pytest.raises(SystemExit, match=f"edit recipecli/engines/{engine}/pin.py first"):
        pins.check_version(engine, "9.9.9")
