"""Every command's ``--json`` document against the published schema (docs/json.schema.json,
docs/json.md): the envelope (``schema_version`` 1, ``ok`` true iff the exit code is 0), the
payload keys each command documents, and nothing undocumented at the top level.

Commands run in-process through ``recipecli.cli.main`` (which owns the exit-code mapping),
offline, on bundled data and checkpoints built here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers.convert import tiny, write_draft
from helpers.report import PR_CANDIDATE, bench_json

from recipecli.cli import main
from recipecli.cli.app import COMMANDS
from recipecli.testing.specs import valid_vocab_map

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((REPO / "docs" / "json.schema.json").read_text(encoding="utf-8"))

#: Commands with no --json (completion prints a shell script).
NO_JSON = {"completion"}


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out = capsys.readouterr().out
    code = exc.value.code
    assert isinstance(code, int)
    return code, json.loads(out)


def _validate(doc: Any, name: str) -> None:
    """``doc`` against ``$defs/name`` and against the whole schema."""
    jsonschema.Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": f"#/$defs/{name}"}).validate(
        doc
    )
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)


def _documented(name: str) -> set[str]:
    d = SCHEMA["$defs"]
    keys = set(d["envelope"]["properties"])
    if name == "render":
        return keys | set(d["render_command"]["properties"])
    return keys | set(d[name]["properties"])


def _objects(doc: Any) -> list[dict[str, Any]]:
    return doc if isinstance(doc, list) else [doc]


@pytest.fixture
def draft(tmp_path: Path, fixture_config: Callable[[str], dict[str, Any]]) -> Path:
    cfg = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"))
    d2t, t2d = valid_vocab_map(1000, 100, seed=21)
    return write_draft(tmp_path / "draft", cfg, d2t=d2t, t2d=t2d)


BAD_RECIPE = "name: bad\nserve:\n  engine_args:\n    no-such-flag-anywhere: 1\n"
EX = "--example llama3.1-8b-eagle3 --kernel skip --json"
DOCS = "docs --bundled -o {tmp}/pages --checkpoints bundled --json"

#: (id, schema name, argv ({tmp}, {draft}: this test's directory and tiny draft; {a}, {b}: bench
#: files; {bad}: a recipe with an unknown engine flag), the exit code worked out from the inputs).
CASES: list[tuple[str, str, str, int]] = [
    # the published draft loads on vLLM only (tokenspeed and SGLang refuse it: README)
    ("check-all-engines", "check", f"check {EX}", 1),
    ("check-vllm", "check", f"check {EX} --engine vllm", 0),
    ("check-recipe", "check_recipe", "check --recipe llama3.1-8b-eagle3 --kernel skip --json", 0),
    ("inspect-snapshot", "inspect", "inspect meta-llama/Llama-3.1-8B-Instruct --json", 0),
    ("inspect-draft", "inspect", "inspect {draft} --json", 0),
    ("render-one", "render", "render llama3.1-8b-eagle3 --engine vllm --format argv-json", 0),
    (
        "render-all",
        "render",
        "render llama3.1-8b-eagle3 --engine vllm --what all --format argv-json",
        0,
    ),
    ("lint-ok", "lint", "lint llama3.1-8b-eagle3 --json", 0),
    ("lint-error", "lint", "lint {bad} --json", 1),
    ("convert", "convert", "convert {draft} {tmp}/out --to eagle3 --json", 0),
    ("report-json", "report", "report {a} {b} --gpus 4 --json", 0),
    ("report-format-json", "report", "report {a} {b} --gpus 4 --format json", 0),
    ("diff-same", "diff", "diff llama3.1-8b-eagle3 --json", 0),
    ("diff-engines", "diff", "diff minimax-m3-eagle3 --vs-engine tokenspeed --json", 1),
    ("diff-all", "diff_all", "diff minimax-m3-eagle3 --vs-engine tokenspeed --what all --json", 1),
    # a new directory: every page is missing under --check
    ("docs-check-missing", "docs", f"{DOCS} --check", 1),
    ("docs-write", "docs", DOCS, 0),
]


def _inputs(tmp_path: Path, draft: Path) -> dict[str, str]:
    a, b, bad = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "bad.yaml"
    a.write_text(json.dumps(bench_json()), encoding="utf-8")
    b.write_text(json.dumps(bench_json(PR_CANDIDATE)), encoding="utf-8")
    bad.write_text(BAD_RECIPE, encoding="utf-8")
    return {"tmp": str(tmp_path), "draft": str(draft), "a": str(a), "b": str(b), "bad": str(bad)}


def test_every_command_with_json_is_covered():
    covered = {"check", "inspect", "render", "lint", "convert", "report", "diff", "docs"}
    covered |= {"verify-kernel"}  # test_verify_kernel_json below
    assert set(COMMANDS) - NO_JSON == covered


@pytest.mark.parametrize(
    ("name", "argv", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_every_json_document_validates_and_ok_is_the_exit_verdict(
    capsys, tmp_path, draft, name, argv, expected
):
    code, doc = _run(capsys, *argv.format(**_inputs(tmp_path, draft)).split())
    assert code == expected
    _check_document(doc, name, code)


def _check_document(doc: Any, name: str, code: int) -> None:
    _validate(doc, name)
    for obj in _objects(doc):
        assert obj["schema_version"] == 1
        assert obj["ok"] is (code == 0)
        undocumented = set(obj) - _documented(name)
        assert not undocumented, f"add {sorted(undocumented)} to docs/json.schema.json"


def test_docs_check_of_fresh_pages_is_ok(capsys, tmp_path):
    argv = DOCS.format(tmp=tmp_path).split()
    assert _run(capsys, *argv)[0] == 0  # written
    code, doc = _run(capsys, *argv, "--check")
    assert code == 0 and doc["stale"] == doc["missing"] == []
    _check_document(doc, "docs", code)


def test_render_several_commands_stay_a_list_of_envelopes(capsys):
    argv = ["render", "llama3.1-8b-eagle3", "--engine", "vllm", "--what", "all"]
    code, doc = _run(capsys, *argv, "--format", "argv-json")
    assert code == 0 and isinstance(doc, list)
    assert [d["what"] for d in doc] == ["serve", "bench", "eval"]
    # the payload of each stays where it was: the argv starts with vLLM's serve command
    assert doc[0]["argv"][:2] == ["vllm", "serve"]


def test_inspect_compact_path_carries_the_envelope(capsys, monkeypatch, draft):
    from recipecli.cli.commands import inspect as inspect_cmd

    monkeypatch.setattr(inspect_cmd, "COMPACT_JSON_TENSORS", 0)  # every table is "large"
    with pytest.raises(SystemExit) as exc:
        main(["inspect", str(draft), "--json"])
    out = capsys.readouterr().out
    assert exc.value.code == 0 and "\n" not in out.strip()  # one compact line
    doc = json.loads(out)
    _validate(doc, "inspect")
    assert list(doc)[:2] == ["schema_version", "ok"] and doc["ok"] is True


def test_payload_ok_and_passed_follow_the_verdict():
    from recipecli.output import envelope

    # lint's and docs' own ``ok`` keep their place; ``passed`` stays an alias
    assert list(envelope({"a": 1, "ok": True}, ok=True)) == ["schema_version", "ok", "a"]
    assert envelope({"passed": False}, ok=False) == {
        "schema_version": 1,
        "ok": False,
        "passed": False,
    }
    assert envelope([{"x": 1}, {"x": 2}], ok=True)[1] == {"schema_version": 1, "ok": True, "x": 2}
    with pytest.raises(TypeError):
        envelope("text", ok=True)


def test_verify_kernel_json():
    """In a child process: Triton's CPU interpreter must be chosen before triton is imported,
    which another test of this process may have done."""
    pytest.importorskip("triton")
    pytest.importorskip("numpy")
    args = ["verify-kernel", "--widths", "64,64", "--tokens", "1", "--device", "cpu", "--json"]
    proc = subprocess.run(
        [sys.executable, "-m", "recipecli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, TRITON_INTERPRET="1"),
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    _validate(doc, "verify_kernel")
    assert doc["ok"] is True and doc["passed"] is True
    assert not set(doc) - _documented("verify_kernel")
