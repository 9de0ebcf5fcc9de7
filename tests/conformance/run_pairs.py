"""Run every draft pair through vLLM and recipecli and write the comparison (conformance env).

    python tests/conformance/run_pairs.py OUT_DIR [CASE ...]

Writes ``OUT_DIR/draft_pairs.json`` (per case: vLLM's probe, recipecli's side, the
disagreements) and ``OUT_DIR/draft_disagreements.md`` (one row per disagreement). The pytest
suite (``test_drafts.py``) does the same through :func:`run_case`.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import compare  # noqa: E402
import pairs  # noqa: E402


def run_case(case: pairs.Case, root: Path) -> dict[str, Any]:
    """Write ``case`` under ``root``, probe it with vLLM and recipecli, compare."""
    import vllm_probe

    target, draft = case.write(root)
    t0 = time.perf_counter()
    probe = vllm_probe.probe_pair(target, draft)
    t1 = time.perf_counter()
    rc = compare.recipecli_side(target, draft)
    t2 = time.perf_counter()
    probe.pop("params", None)
    return {
        "case": case.name,
        "what": case.what,
        "vllm": probe,
        "recipecli": rc,
        "disagreements": {k: list(v) for k, v in compare.compare(probe, rc).items()},
        "seconds": {"vllm": round(t1 - t0, 2), "recipecli": round(t2 - t1, 2)},
    }


def markdown(results: list[dict[str, Any]]) -> str:
    """The disagreement table: pair, field, vLLM value/verdict, recipecli value/verdict."""
    lines = [
        "| pair | field | vLLM 0.33.0 (its own code) | recipecli check --engine vllm |",
        "| --- | --- | --- | --- |",
    ]
    for r in results:
        for field, (v, rc) in r["disagreements"].items():
            cell = lambda x: str(x).replace("|", "\\|").replace("\n", " ")  # noqa: E731
            lines.append(f"| {r['case']} | {field} | {cell(v)} | {cell(rc)} |")
    if len(lines) == 2:
        lines.append("| (none) | | | |")
    lines += [
        "",
        "All pairs compared (vLLM's verdict from its real draft model and load_weights on the meta",
        "device; recipecli's READY at TP 1 and its error codes):",
        "",
        "| pair | what | vLLM verdict | vLLM detail | recipecli | disagreements |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        v = r["vllm"]
        if v.get("error"):
            detail = f"{v['error']['stage']}: {v['error']['type']}: {v['error']['message']}"
        elif v.get("missing"):
            detail = "missing " + ", ".join(v["missing"])
        else:
            detail = "; ".join(v.get("ignored") or []) or "-"
        rc = r["recipecli"]
        rcs = "READY" if rc["ok"] else "not ready (" + ", ".join(rc["errors"]) + ")"
        lines.append(
            f"| {r['case']} | {_cell(r['what'])} | {v['verdict']} | {_cell(detail)} | {rcs} "
            f"| {', '.join(r['disagreements']) or '-'} |"
        )
    return "\n".join(lines) + "\n"


def _cell(x: object) -> str:
    return str(x).replace("|", "\\|").replace("\n", " ")


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    names = argv[1:] or list(pairs.CASES)
    results = []
    with tempfile.TemporaryDirectory(prefix="conformance-pairs-") as tmp:
        for name in names:
            r = run_case(pairs.CASES[name], Path(tmp) / name)
            results.append(r)
            print(
                name,
                r["vllm"]["verdict"],
                "recipecli ok" if r["recipecli"]["ok"] else "recipecli not ok",
                sorted(r["disagreements"]),
                flush=True,
            )
    (out / "draft_pairs.json").write_text(json.dumps(results, indent=1, default=str))
    (out / "draft_disagreements.md").write_text(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
