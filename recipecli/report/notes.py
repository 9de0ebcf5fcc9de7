"""The notes of a report: diagnostics that read the A/B the way a reviewer does.

:func:`diagnose` builds them all, errors first, then warnings, then info: failed requests and
allowed workload differences, the settings of the arms (speculative decoding, the recorded
``--metadata``), the acceptance notes (:mod:`recipecli.report.acceptance`), a TTFT/TPOT
trade-off, and what the number of runs lets the change column say. Their codes and sources are
in :mod:`recipecli.report.note_codes` (:data:`~recipecli.report.note_codes.NOTE_CODES`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from recipecli.findings import Finding
from recipecli.report.acceptance import _acceptance_notes, _speculative_notes, speculative_tokens
from recipecli.report.inputs import BenchRun
from recipecli.report.metrics import DEFAULT_LABELS
from recipecli.report.note_codes import SRC_BENCH, SRC_NOISE, _note
from recipecli.report.rows import Row
from recipecli.report.stats import EVAL_NORMAL
from recipecli.report.workload import (
    METADATA_WORKLOAD_KEYS,
    WorkloadDifference,
    _show,
    workload_of,
)

#: String-valued top-level keys that vLLM writes itself (not `--metadata`): never compared as
#: settings. `label` and `date` name the run and are expected to differ.
_NOT_METADATA = frozenset({"date", "label", "endpoint_type", "backend", "model_id", "request_rate"})


def _metadata(runs: Sequence[BenchRun]) -> dict[str, tuple[str, ...]]:
    """String-valued settings of a side (``--metadata`` keys, ``tokenizer_id``): key → values."""
    out: dict[str, list[str]] = {}
    for run in runs:
        for key, value in run.data.items():
            if isinstance(value, str) and key not in _NOT_METADATA:
                vals = out.setdefault(key, [])
                if value not in vals:
                    vals.append(value)
    return {k: tuple(v) for k, v in out.items()}


def _settings_notes(
    baseline: Sequence[BenchRun],
    candidate: Sequence[BenchRun],
    labels: tuple[str, str],
    ks: tuple[float | None, float | None],
) -> list[Finding]:
    """speculative_one_side, speculative_tokens_differ, metadata_differs."""
    notes = _speculative_notes(baseline, candidate, labels, ks)
    meta = _metadata_note(baseline, candidate, labels)
    return notes if meta is None else [*notes, meta]


def _metadata_note(
    baseline: Sequence[BenchRun], candidate: Sequence[BenchRun], labels: tuple[str, str]
) -> Finding | None:
    """metadata_differs: recorded string settings that differ (workload keys excepted)."""
    a, b = labels
    ma, mb = _metadata(baseline), _metadata(candidate)
    differing = []
    for key in dict.fromkeys([*ma, *mb]):
        if key in METADATA_WORKLOAD_KEYS and key in ma and key in mb:
            continue  # compared as workload (exit 2 unless allowed)
        va, vb = ma.get(key), mb.get(key)
        if va != vb:
            differing.append((key, va, vb))
    if not differing:
        return None

    def shown(values: tuple[str, ...] | None) -> str:
        return _show("/".join(values)) if values else "not recorded"

    parts = [f"{k}: {shown(va)} vs {shown(vb)}" for k, va, vb in differing]
    return _note(
        "report.metadata_differs",
        f"settings the bench recorded differ between {a} and {b} ({'; '.join(parts)}): "
        "make sure each is part of the change under test",
        {k: {"baseline": va and list(va), "candidate": vb and list(vb)} for k, va, vb in differing},
        SRC_BENCH,
    )


def _noise_qualifier(ttft: Row, tpot: Row) -> str:
    """How far the runs support the two changes of a trade-off (unknown, or both significant)."""
    pair = sorted((ttft, tpot), key=lambda r: abs(r.change.relative or 0.0))
    small = pair[0]
    what = f"the smaller change, {small.label} {small.change.text.split(' (')[0]}, may be noise"
    if "unknown" in (ttft.change.significance, tpot.change.significance):
        return f" (from single runs: the spread is unknown, so {what})"
    return " (both significant at 95%)"


def _tradeoff_note(
    rows: Mapping[str, Row], labels: tuple[str, str], out_tokens: float | None
) -> Finding | None:
    """ttft_tpot_tradeoff: TTFT and TPOT moved in opposite directions (better vs worse)."""
    ttft, tpot = rows.get("mean_ttft"), rows.get("mean_tpot")
    if ttft is None or tpot is None:
        return None
    ct, cp = ttft.change, tpot.change
    if ct.favourable is None or cp.favourable is None or ct.favourable == cp.favourable:
        return None
    if "not_significant" in (ct.significance, cp.significance):
        return None  # repeated runs showed one of the two moves is within the noise
    b = labels[1]
    d_ttft, d_tpot = ct.delta, cp.delta
    assert d_ttft is not None and d_tpot is not None
    msg = (
        f"trade-off: mean TPOT {cp.text.split(' (')[0]} but mean TTFT {ct.text.split(' (')[0]}"
        f" with {b}" + _noise_qualifier(ttft, tpot)
    )
    evidence: dict[str, Any] = {"ttft_delta_ms": d_ttft, "tpot_delta_ms": d_tpot}
    if out_tokens and out_tokens > 1:
        decode = d_tpot * (out_tokens - 1)
        net = d_ttft + decode
        cancel = abs(d_ttft / d_tpot) + 1
        shorter = "shorter" if cp.favourable else "longer"
        msg += (
            f". Per request at ~{out_tokens:.0f} output tokens: TTFT {d_ttft:+.1f} ms, decode "
            f"{decode:+.1f} ms (TPOT change x {out_tokens - 1:.0f} tokens), end to end "
            f"{net:+.1f} ms; the two cancel at {cancel:.1f} output tokens, so requests {shorter} "
            f"than that finish later with {b}"
        )
        evidence.update(
            {"output_tokens": out_tokens, "decode_delta_ms": decode, "e2e_delta_ms": net}
        )
        evidence["break_even_output_tokens"] = cancel
    return _note("report.ttft_tpot_tradeoff", msg, evidence, SRC_NOISE)


def _noise_note(labels: tuple[str, str], n_a: int, n_b: int, rows: Sequence[Row]) -> Finding:
    a, b = labels
    eval_iv = any(r.change.interval and r.change.interval.method == EVAL_NORMAL for r in rows)
    tail = (
        " lm-eval changes carry a 95% interval from the two stderrs "
        "(delta ± 1.96 x sqrt(se_a^2 + se_b^2), normal approximation)."
        if eval_iv
        else ""
    )
    evidence = {"baseline_runs": n_a, "candidate_runs": n_b}
    if n_a == n_b == 1:
        return _note(
            "report.single_runs",
            "one run per side: the run-to-run spread is unknown, so changes read higher / lower "
            "only, without a verdict; repeat each side (-a/-b are repeatable; 3-5 runs) for a "
            "95% confidence interval (Welch t)." + tail,
            evidence,
            SRC_NOISE,
        )
    if n_a == 1 or n_b == 1:
        single = a if n_a == 1 else b
        return _note(
            "report.spread_one_side",
            f"{single} has one run: its spread is unknown, so no interval is given and changes "
            "read higher / lower only; cells of the repeated side show the mean, then "
            "(min–max, n=runs); repeat that side too." + tail,
            evidence,
            SRC_NOISE,
        )
    return _note(
        "report.repeated_runs",
        f"several runs per side ({n_a} and {n_b}): cells show the mean, then (min–max, n=runs), "
        "or (n=runs) when every run shows the same figure; a change carries the 95% confidence "
        "interval of the difference of means (Welch t, df floored, shown relative to the "
        "baseline mean) and is called an improvement or a regression only when the interval "
        "excludes 0." + tail,
        evidence,
        SRC_NOISE,
    )


def diagnose(
    baseline: Sequence[BenchRun],
    candidate: Sequence[BenchRun],
    rows: Sequence[Row],
    *,
    labels: tuple[str, str] = DEFAULT_LABELS,
    differences: Sequence[WorkloadDifference] = (),
) -> list[Finding]:
    """Every note of a report, errors first, then warnings, then info (codes: :data:`NOTE_CODES`).

    Args:
        baseline, candidate: the validated runs of each side.
        rows: the report's rows (:func:`build_report`).
        labels: (baseline, candidate) names for the messages.
        differences: allowed workload differences (each becomes ``report.workload_differs``).

    Returns:
        The findings; see docs/report.md (Notes) for each code and its threshold.
    """
    by_key = {r.key: r for r in rows}
    notes: list[Finding] = [
        _note(
            "report.failed_requests",
            f"{r.path}: {r.data['failed']} of {r.data['completed'] + r.data['failed']} "
            "requests failed; throughput and latency cover only the completed ones — "
            "fix the failures (server log) and rerun",
            {"file": r.path, "completed": r.data["completed"], "failed": r.data["failed"]},
            SRC_BENCH,
        )
        for r in (*baseline, *candidate)
        if r.data["failed"] > 0
    ]
    notes += [
        _note(
            "report.workload_differs",
            d.message() + " (allowed by --allow-different-workloads)",
            {"key": d.key, "reference": d.reference_value, "other": d.other_value},
            SRC_BENCH,
        )
        for d in differences
    ]
    ks = (speculative_tokens(baseline[0].data)[0], speculative_tokens(candidate[0].data)[0])
    notes += _settings_notes(baseline, candidate, labels, ks)
    notes += _acceptance_notes(baseline, candidate, labels, by_key, ks)
    out_tokens = workload_of(baseline[0].data).get("mean_output_tokens")
    trade = _tradeoff_note(by_key, labels, out_tokens)
    if trade is not None:
        notes.append(trade)
    notes.append(_noise_note(labels, len(baseline), len(candidate), rows))
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(notes, key=lambda f: order[f.severity])
