"""The finding-code catalog (recipecli/codes/): every code emitted anywhere is catalogued, findings
are built only through :func:`recipecli.codes.finding`, and the engines a code applies to are
derived from the engine models' steps.

Expected values are worked out by hand: which engine steps emit a code from reading the engine
models' ``codes=`` lists (and the engines' code they cite), the default severities from the
severity convention of docs/engines/README.md.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from recipecli import codes
from recipecli.codes import CATALOG, catalog_code, entry, finding

PKG = Path(__file__).resolve().parents[2] / "recipecli"

#: file-name suffixes that look like ``family.name`` but are tensor or file names, not codes
_NOT_CODES = re.compile(r".*\.(json|weight|bias|safetensors|bin|md)$")


def _literal_codes() -> dict[str, list[str]]:
    """Every string constant in recipecli/ shaped like a code of a catalogued family -> where."""
    families = sorted({c.split(".", 1)[0] for c in CATALOG})
    shaped = re.compile(rf"(?:{'|'.join(families)})\.[a-z0-9_<>*]+")
    out: dict[str, list[str]] = {}
    for path in sorted(PKG.rglob("*.py")):
        if path.relative_to(PKG).parts[0] == "codes":
            continue  # the catalog itself, not an emitter
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and shaped.fullmatch(node.value)
                and not _NOT_CODES.fullmatch(node.value)
            ):
                out.setdefault(node.value, []).append(f"{path.relative_to(PKG)}:{node.lineno}")
    return out


def test_every_code_written_in_the_source_is_catalogued():
    # the scan must see the codes it is about (it would pass on an empty scan otherwise)
    found = _literal_codes()
    for known in (
        "embed.share_error",
        "kernel.skipped",
        "recipe.flag_unknown",
        "report.single_runs",
    ):
        assert known in found
    missing = {
        c: w for c, w in found.items() if catalog_code(c.replace("*", "<role>")) not in CATALOG
    }
    assert missing == {}


def test_every_catalogued_code_is_emitted_somewhere():
    found = {catalog_code(c.replace("*", "<role>")) for c in _literal_codes()}
    # shape.<role> is built as f"shape.{role}" (engines/common.py)
    unused = sorted(c for c in CATALOG if c not in found and c != "shape.<role>")
    assert unused == []


def test_findings_are_built_only_through_the_catalog():
    # no module but recipecli.codes constructs Finding(...) itself (a copy with another severity
    # or engine is dataclasses.replace of a catalogued finding)
    offenders = []
    for path in sorted(PKG.rglob("*.py")):
        rel = str(path.relative_to(PKG))
        if rel in ("codes/__init__.py", "findings.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and "Finding" in (
                getattr(node.func, "id", None),
                getattr(node.func, "attr", None),
            ):
                offenders.append(f"{rel}:{node.lineno}")
    assert offenders == []


def test_finding_refuses_an_unknown_code():
    with pytest.raises(KeyError, match="vocab.nope"):
        finding("vocab.nope", "m", source="x")


def test_finding_fills_the_default_severity_and_source():
    f = finding("vocab.mismatch", "draft vocab differs", Vd=1)
    assert (f.severity, f.engine, f.tp, f.source, dict(f.evidence)) == (
        "error",
        "any",
        None,
        "docs/check.md#vocabulary-maps",
        {"Vd": 1},
    )
    g = finding("aux.default", "m", severity="info", engine="vllm", tp=2, source=("a", "b"))
    assert (g.severity, g.engine, g.tp, g.source) == ("info", "vllm", 2, "a | b")


def test_finding_refuses_a_bad_severity_or_no_source():
    with pytest.raises(ValueError, match="severity"):
        finding("vocab.mismatch", "m", severity="fatal")
    with pytest.raises(ValueError, match="no source"):
        finding("tp.vocab_indivisible", "m")  # an engine code: the step must cite its source


def test_shape_codes_and_aliases_resolve():
    assert catalog_code("shape.fc") == "shape.<role>"
    assert catalog_code("shape.d2t") == "shape.d2t"
    assert entry("shape.q_proj").code == "shape.<role>"
    assert all(catalog_code(old) == new for old, new in codes.ALIASES.items())


def test_families_and_severities():
    fam = {c.family for c in CATALOG.values()}
    assert fam == {"check", "kernel", "lint", "report"}
    assert entry("recipe.yaml").family == "lint"
    assert entry("report.failed_requests").family == "report"
    assert all(c.severity in ("error", "warning", "info") for c in CATALOG.values())
    # severity convention: an engine raising at load is an error, harm depending on training a
    # warning, a summary an info
    assert entry("tp.vocab_indivisible").severity == "error"
    assert entry("norm.residual_default").severity == "warning"
    assert entry("aux.convention").severity == "info"


def test_report_note_severities_match_the_catalog():
    report = pytest.importorskip("recipecli.report")
    assert {c: entry(c).severity for c in report.NOTE_CODES} == dict(report.NOTE_CODES)


def test_engines_of_a_code_are_derived_from_the_steps():
    from recipecli.engines import code_engines

    got = code_engines()
    # tokenspeed's set_embed_and_head (LlamaForCausalLMEagle3) is the only sharing that raises
    assert got["embed.share_error"] == ("tokenspeed",)
    # every engine has a positions step (vLLM max_model_len, tokenspeed context_length, SGLang)
    assert got["maxpos.short"] == ("vllm", "tokenspeed", "sglang")
    # draft_tensor_parallel_size is a vLLM SpeculativeConfig field
    assert got["draft_tp.invalid"] == ("vllm",)
    # shape.* of every engine's tensors step lands on the catalog entry
    assert got["shape.<role>"] == ("vllm", "tokenspeed", "sglang")
    # checkpoint rules belong to no engine
    assert "draft.format" not in got
    assert set(got) <= set(CATALOG)
