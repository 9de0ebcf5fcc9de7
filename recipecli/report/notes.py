"""The notes of a report: diagnostics that read the A/B the way a reviewer does.

- :data:`NOTE_CODES`: the stable codes of the notes, with their severity.
- The thresholds (:data:`ACCEPTANCE_COLLAPSE_RATE`, :data:`ACCEPTANCE_CONFOUND_PP`,
  :data:`ACCEPTANCE_LENGTH_NOTE`); docs/report.md ("Notes") explains each.

:func:`diagnose` builds them all, errors first, then warnings, then info.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from recipecli import codes
from recipecli.findings import Finding, Severity
from recipecli.report.inputs import BenchRun, _is_number
from recipecli.report.metrics import DEFAULT_LABELS
from recipecli.report.rows import Row
from recipecli.report.stats import EVAL_NORMAL
from recipecli.report.workload import (
    METADATA_WORKLOAD_KEYS,
    WorkloadDifference,
    _show,
    workload_of,
)

#: Below this fraction of drafted tokens accepted, speculative decoding has collapsed. With k
#: drafted tokens per step the acceptance length is 1 + rate * k, so 10 % with k = 3 is a length
#: of 1.3: each step gains 0.3 tokens for k draft passes plus a verify pass over k + 1 positions,
#: about the break-even of an EAGLE3 draft; a loaded, working draft accepts 40-80 %.
ACCEPTANCE_COLLAPSE_RATE = 0.10

#: Acceptance rates (percentage points) further apart than this between the arms mean the arms
#: drafted differently: a change that leaves the draft's and target's math alone (a fused
#: kernel equal up to rounding, a scheduler change) flips only near-tie tokens and moves
#: acceptance by about a point.
ACCEPTANCE_CONFOUND_PP = 5.0

#: Acceptance lengths that differ by more than this fraction get the tokens-per-step note.
ACCEPTANCE_LENGTH_NOTE = 0.05

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

SRC_BENCH = (
    "vllm v0.33.0 vllm/benchmarks/serve.py main_async (setup keys) and benchmark (result keys)"
)

SRC_ACCEPT = (
    "vllm v0.33.0 vllm/benchmarks/serve.py benchmark: acceptance_rate = accepted / draft "
    "tokens x 100, acceptance_length = 1 + accepted / drafts; docs/report.md (Notes)"
)

SRC_CONFOUND = "vLLM PR #47391 (its A/B table); docs/report.md (Notes)"

SRC_NOISE = "docs/report.md (Noise)"

#: String-valued top-level keys that vLLM writes itself (not `--metadata`): never compared as
#: settings. `label` and `date` name the run and are expected to differ.
_NOT_METADATA = frozenset({"date", "label", "endpoint_type", "backend", "model_id", "request_rate"})

_ACCEPT_KEYS = ("spec_decode_acceptance_rate", "spec_decode_acceptance_length")

#: What a collapsed acceptance usually means, and the recipecli command and codes that test it.
COLLAPSE_CAUSES = (
    "a missing or wrong vocab map (`recipecli check TARGET DRAFT`: vocab.d2t_missing, "
    "vocab.d2t_identity, vocab.d2t_absolute, lm_head.missing); aux hidden-state layers other "
    "than the ones the draft was trained on (check: aux.default, aux.convention, aux.count); "
    "a text-model override that did not reach the nested text config (`recipecli lint "
    "RECIPE`: recipe.override_absent, recipe.override_is_engine_flag); a draft served with the "
    "wrong speculative method (check: draft.not_eagle3)"
)


def speculative_tokens(data: Mapping[str, Any]) -> tuple[float | None, str | None]:
    """Speculative tokens drafted per step (k) of one run, and where the figure came from.

    In order: ``spec_decode_draft_tokens / spec_decode_num_drafts`` (vLLM's counters);
    ``--metadata num_speculative_tokens=K``; ``(acceptance length - 1) / (acceptance rate /
    100)``, since vLLM computes rate = accepted / (k * drafts) and length = 1 + accepted / drafts
    (vllm v0.33.0 `vllm/benchmarks/serve.py` `benchmark`).

    Args:
        data: a validated bench JSON object.

    Returns:
        (k, how), or (None, None) without speculative-decoding metrics (or a zero rate).
    """
    drafts, tokens = data.get("spec_decode_num_drafts"), data.get("spec_decode_draft_tokens")
    if _is_number(drafts) and _is_number(tokens) and drafts > 0 and tokens > 0:
        return tokens / drafts, "spec_decode_draft_tokens / spec_decode_num_drafts"
    meta = data.get("num_speculative_tokens")
    if isinstance(meta, str):
        try:
            k = float(meta)
        except ValueError:
            k = math.nan
        if math.isfinite(k) and k > 0:
            return k, "--metadata num_speculative_tokens"
    rate = data.get("spec_decode_acceptance_rate")
    length = data.get("spec_decode_acceptance_length")
    if _is_number(rate) and _is_number(length) and rate > 0 and length > 1:
        return (length - 1) / (rate / 100), "(acceptance length - 1) / acceptance rate"
    return None, None


def _fmt_k(k: float) -> str:
    """3.0052 → "3" (the saved figures are rounded); 2.5 → "2.50"."""
    return str(round(k)) if abs(k - round(k)) < 0.1 else f"{k:.2f}"


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


def _note(code: str, message: str, evidence: Mapping[str, Any], source: str) -> Finding:
    # through the code catalog (it refuses an uncatalogued code); evidence is a mapping here
    note = codes.finding(code, message, severity=NOTE_CODES[code], engine="vllm", source=source)
    return replace(note, evidence=dict(evidence))


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


def _speculative_notes(
    baseline: Sequence[BenchRun],
    candidate: Sequence[BenchRun],
    labels: tuple[str, str],
    ks: tuple[float | None, float | None],
) -> list[Finding]:
    """speculative_one_side (only one first run has spec_decode_* keys), then
    speculative_tokens_differ (k differs by 0.1 or more)."""
    a, b = labels
    notes: list[Finding] = []
    drafts = [
        any(_is_number(r.data.get(m)) for m in _ACCEPT_KEYS)
        for r in (*baseline[:1], *candidate[:1])
    ]
    if drafts[0] != drafts[1]:
        who = a if drafts[0] else b
        notes.append(
            _note(
                "report.speculative_one_side",
                f"only {who} reports speculative decoding (spec_decode_* keys): the A/B "
                "measures speculative decoding itself as well as the change under test",
                {"baseline": drafts[0], "candidate": drafts[1]},
                SRC_BENCH,
            )
        )
    ka, kb = ks
    if ka is not None and kb is not None and abs(ka - kb) >= 0.1:
        notes.append(
            _note(
                "report.speculative_tokens_differ",
                f"speculative tokens per step differ: {_fmt_k(ka)} ({a}) vs {_fmt_k(kb)} ({b}); "
                "acceptance rates are not comparable across k (a longer draft accepts a smaller "
                "share) and throughput moves with k, so this is part of what the A/B measures",
                {"baseline": ka, "candidate": kb},
                SRC_ACCEPT,
            )
        )
    return notes


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


def _acceptance_notes(
    baseline: Sequence[BenchRun],
    candidate: Sequence[BenchRun],
    labels: tuple[str, str],
    rows: Mapping[str, Row],
    ks: tuple[float | None, float | None],
) -> list[Finding]:
    """acceptance_collapsed (per side), acceptance_confounded, acceptance_vs_tpot."""
    notes: list[Finding] = []
    rate_row, len_row = rows.get("acceptance_rate"), rows.get("acceptance_length")
    fractions: list[float | None] = []
    for side, (label, runs, k) in enumerate(zip(labels, (baseline, candidate), ks, strict=True)):
        length = _side_of(len_row, side)
        frac = _accepted_fraction(_side_of(rate_row, side), length, k)
        fractions.append(frac)
        if frac is not None and frac < ACCEPTANCE_COLLAPSE_RATE:
            notes.append(_collapsed_note(label, side, runs, frac, length, k))
    fa, fb = fractions
    if fa is not None and fb is not None and abs(fb - fa) * 100 > ACCEPTANCE_CONFOUND_PP:
        collapsed = any(n.code == "report.acceptance_collapsed" for n in notes)
        notes.append(_confounded_note(labels, fa, fb, collapsed=collapsed))
    la, lb = _side_of(len_row, 0), _side_of(len_row, 1)
    tpot = rows.get("mean_tpot")
    ta, tb = _side_of(tpot, 0), _side_of(tpot, 1)
    if la and lb and ta and tb and abs(lb / la - 1) > ACCEPTANCE_LENGTH_NOTE:
        notes.append(_acceptance_vs_tpot(la, lb, ta, tb))
    return notes


def _accepted_fraction(rate: float | None, length: float | None, k: float | None) -> float | None:
    """The fraction of drafted tokens accepted: the acceptance rate (percent) / 100, else
    (acceptance length - 1) / k; None when neither is known."""
    if rate is not None:
        return rate / 100
    if length is not None and k:
        return (length - 1) / k
    return None


def _collapsed_note(
    label: str,
    side: int,
    runs: Sequence[BenchRun],
    frac: float,
    length: float | None,
    k: float | None,
) -> Finding:
    """acceptance_collapsed of one side (``frac`` under :data:`ACCEPTANCE_COLLAPSE_RATE`)."""
    shown_rate = f"{frac * 100:.1f}%"
    detail = ""
    if length is not None and k:
        detail = (
            f", acceptance length {length:.3f} with {_fmt_k(k)} speculative tokens: "
            f"{length - 1:.3f} of {_fmt_k(k)} drafted tokens accepted per step"
        )
    return _note(
        "report.acceptance_collapsed",
        f"{label} acceptance collapsed: {shown_rate} of drafted "
        f"tokens accepted{detail}; under {ACCEPTANCE_COLLAPSE_RATE:.0%} a draft costs "
        "about as much as it gains, so its proposals are effectively never accepted. "
        f"Usual causes: {COLLAPSE_CAUSES}",
        {
            "side": ("baseline", "candidate")[side],
            "files": [r.path for r in runs],
            "acceptance_rate": frac * 100,
            "acceptance_length": length,
            "num_speculative_tokens": k,
            "threshold_rate": ACCEPTANCE_COLLAPSE_RATE * 100,
        },
        SRC_ACCEPT,
    )


def _confounded_note(labels: tuple[str, str], fa: float, fb: float, *, collapsed: bool) -> Finding:
    """acceptance_confounded: accepted fractions ``fa`` (A) and ``fb`` (B) further apart than
    :data:`ACCEPTANCE_CONFOUND_PP`; ``collapsed``: an acceptance_collapsed note precedes it."""
    a, b = labels
    low = a if fa < fb else b
    return _note(
        "report.acceptance_confounded",
        f"acceptance differs between the arms by more than the change under test can "
        f"explain: {fa * 100:.1f}% ({a}) vs {fb * 100:.1f}% ({b}), "
        f"{(fb - fa) * 100:+.1f} pp. A change that leaves what the draft proposes alone "
        "(a numerically equivalent kernel such as a fused layer-0 RMSNorm, a scheduler "
        "or server change) moves acceptance by about a point; more than "
        f"{ACCEPTANCE_CONFOUND_PP:g} pp means the arms drafted differently, so the "
        "throughput and TPOT changes measure that difference, not only the change. "
        f"Unless the change is meant to alter drafting, fix {low}"
        + (" (see report.acceptance_collapsed)" if collapsed else "")
        + " and rerun both arms",
        {
            "baseline_rate": fa * 100,
            "candidate_rate": fb * 100,
            "difference_pp": (fb - fa) * 100,
            "threshold_pp": ACCEPTANCE_CONFOUND_PP,
        },
        SRC_CONFOUND,
    )


def _acceptance_vs_tpot(la: float, lb: float, ta: float, tb: float) -> Finding:
    """How much of the TPOT change the tokens per target step (acceptance length) explain.

    Each target step emits `acceptance length` tokens per request, so at an unchanged time per
    step TPOT scales by la / lb; TPOT x acceptance length is the time per target step.
    """
    ratio = lb / la
    expected = 1 / ratio - 1
    measured = tb / ta - 1
    step_a, step_b = ta * la, tb * lb
    step = step_b / step_a - 1

    def pct(x: float) -> str:
        return f"{abs(x) * 100:.2f}% {'lower' if x < 0 else 'higher'}"

    if (expected < 0) == (measured < 0) and abs(expected) >= abs(measured):
        verdict = (
            "the acceptance change alone accounts for all of the TPOT change (the target steps "
            "themselves got " + ("slower" if step > 0 else "faster") + ")"
        )
        share = 1.0
    elif (expected < 0) == (measured < 0):
        share = math.log(ratio) / math.log(ta / tb)
        verdict = (
            f"the acceptance change accounts for {share:.0%} of the TPOT change (in log terms); "
            "the rest is a " + ("faster" if step < 0 else "slower") + " target step"
        )
    else:
        share = 0.0
        verdict = "the acceptance change moves TPOT the other way: the step time dominates"
    return _note(
        "report.acceptance_vs_tpot",
        f"tokens per target step (acceptance length) {la:.3f} → {lb:.3f} (x{ratio:.3f}): at an "
        f"unchanged time per target step TPOT would be {pct(expected)}; measured {pct(measured)}. "
        f"Time per target step (TPOT x acceptance length) {step_a:.2f} → {step_b:.2f} ms "
        f"({step * 100:+.2f}%): {verdict}",
        {
            "tokens_per_step": {"baseline": la, "candidate": lb, "ratio": ratio},
            "expected_tpot_change": expected,
            "measured_tpot_change": measured,
            "step_ms": {"baseline": step_a, "candidate": step_b, "change": step},
            "explained_share": share,
        },
        SRC_ACCEPT,
    )


def _side_of(row: Row | None, side: int) -> float | None:
    if row is None:
        return None
    stat = row.baseline if side == 0 else row.candidate
    return stat.mean if stat is not None else None


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
