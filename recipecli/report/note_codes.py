"""The codes, sources and constructor of a report's notes (:mod:`recipecli.report.notes` and
:mod:`recipecli.report.acceptance` build them).

- :data:`NOTE_CODES`: the stable codes of the notes, with their severity;
- ``SRC_*``: what each note cites (vLLM's bench code, vLLM PR #47391, docs/report.md);
- :func:`_note`: one note, through the code catalog (:func:`recipecli.codes.finding`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from recipecli import codes
from recipecli.engines import BENCH_CLIENT, engine_spec
from recipecli.findings import Finding, Severity
from recipecli.report.rows import Row

#: Stable note codes → severity. Codes are a public interface (keep, alias a rename).
NOTE_CODES: dict[str, Severity] = {
    "report.failed_requests": "error",
    "report.workload_differs": "warning",
    "report.acceptance_collapsed": "warning",
    "report.acceptance_confounded": "warning",
    "report.speculative_tokens_differ": "warning",
    "report.speculative_one_side": "info",
    "report.metadata_differs": "info",
    "report.acceptance_vs_tpot": "info",
    "report.ttft_tpot_tradeoff": "info",
    "report.single_runs": "info",
    "report.spread_one_side": "info",
    "report.repeated_runs": "info",
}

#: the benchmark client whose result files report reads, as its rules cite it (``vllm v0.33.0``)
_BENCH = f"{BENCH_CLIENT} {engine_spec(BENCH_CLIENT).pin.ref}"

SRC_BENCH = f"{_BENCH} vllm/benchmarks/serve.py main_async (setup keys) and benchmark (result keys)"


SRC_ACCEPT = (
    f"{_BENCH} vllm/benchmarks/serve.py benchmark: acceptance_rate = accepted / draft "
    "tokens x 100, acceptance_length = 1 + accepted / drafts; docs/report.md (Notes)"
)


SRC_CONFOUND = "vLLM PR #47391 (its A/B table); docs/report.md (Notes)"


SRC_NOISE = "docs/report.md (Noise)"


def _note(code: str, message: str, evidence: Mapping[str, Any], source: str) -> Finding:
    # through the code catalog (it refuses an uncatalogued code); evidence is a mapping here
    note = codes.finding(
        code, message, severity=NOTE_CODES[code], engine=BENCH_CLIENT, source=source
    )
    return replace(note, evidence=dict(evidence))


def _side_of(row: Row | None, side: int) -> float | None:
    if row is None:
        return None
    stat = row.baseline if side == 0 else row.candidate
    return stat.mean if stat is not None else None
