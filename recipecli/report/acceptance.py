"""The speculative-decoding notes of a report: how many tokens each arm drafts per step, whether
its acceptance collapsed or differs between the arms more than the change under test explains,
and how much of the TPOT change the acceptance length accounts for.

The thresholds (:data:`ACCEPTANCE_COLLAPSE_RATE`, :data:`ACCEPTANCE_CONFOUND_PP`,
:data:`ACCEPTANCE_LENGTH_NOTE`) are explained in docs/report.md ("Notes").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from recipecli.findings import Finding
from recipecli.report.inputs import BenchRun, _is_number
from recipecli.report.note_codes import SRC_ACCEPT, SRC_BENCH, SRC_CONFOUND, _note, _side_of
from recipecli.report.rows import Row

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
