"""The change column: how a change from baseline to candidate reads, as far as the runs
support it (higher / lower, or an improvement / regression with its 95 % interval)."""

from __future__ import annotations

from dataclasses import dataclass

from recipecli.report.metrics import WORDINGS, Better, ChangeKind, Significance, Verdict
from recipecli.report.stats import Spread


@dataclass(frozen=True)
class Change:
    """The change from baseline to candidate of one row.

    Attributes:
        delta: candidate mean - baseline mean (in the row's unit), or None.
        relative: delta / baseline mean (a fraction; 0.641 = +64.10 %), or None.
        verdict: improvement or regression (significant only), same, n/a (a side is missing),
            unknown (spread unknown: a single run, no stderr), not_significant.
        text: the change column, e.g. "2.56% higher" or
            "25.00% higher (TPOT regression; 95% CI +10.00% to +40.00%)".
        direction: "higher", "lower", "same", or None (n/a).
        favourable: the direction is the better one (None for same / n/a).
        significance: "significant", "not_significant", "unknown", or None (same / n/a).
        interval: the confidence interval of ``delta``, or None.
    """

    delta: float | None
    relative: float | None
    verdict: Verdict
    text: str
    direction: str | None = None
    favourable: bool | None = None
    significance: Significance | None = None
    interval: Spread | None = None


def _format_interval(spread: Spread, baseline: float, kind: ChangeKind, wording: str) -> str:
    """ "95% CI +10.00% to +40.00%" (relative), "… pp" (points), "…" absolute (4 decimals)."""
    level = f"{spread.level * 100:g}% CI"
    if kind == "relative":
        lo, hi = spread.low / baseline * 100, spread.high / baseline * 100
        return f"{level} {lo:+.2f}% to {hi:+.2f}%"
    if wording == "absolute":
        return f"{level} {spread.low:+.4f} to {spread.high:+.4f}"
    return f"{level} {spread.low:+.2f} to {spread.high:+.2f} pp"


def describe_change(
    baseline: float | None,
    candidate: float | None,
    *,
    better: Better,
    wording: str,
    kind: ChangeKind,
    short: str,
    spread: Spread | None = None,
) -> Change:
    """Word the change from ``baseline`` to ``candidate``, as far as the runs support it.

    Args:
        baseline: baseline mean, or None when the baseline lacks the metric.
        candidate: candidate mean, or None.
        better: "higher" or "lower" is the improvement.
        wording: a key of :data:`WORDINGS`.
        kind: "relative" (percent of baseline) or "points" (difference of two percents).
        short: the metric's name in a verdict label.
        spread: the confidence interval of ``candidate - baseline`` (:func:`welch_interval`,
            :func:`stderr_interval`), or None when the spread is unknown (one run on a side).

    Returns:
        The change. The text is "same" when the shown figure rounds to zero, "n/a" when a side
        is missing or a relative change has a zero baseline. Without ``spread`` it only says
        higher / lower (verdict "unknown"); with one it appends the interval and, only when
        the interval excludes 0, names the improvement or regression. Percentages have two
        decimals.

    Example:
        ``describe_change(2173.242, 2228.905, better="lower", wording="higher_lower",
        kind="relative", short="TTFT").text == "2.56% higher"`` (verdict "unknown");
        with ``spread=Spread("Welch t", 0.95, 20.0, 90.0)`` it reads
        "2.56% higher (TTFT regression; 95% CI +0.92% to +4.14%)".
    """
    if baseline is None or candidate is None:
        return Change(None, None, "n/a", "n/a")
    delta = candidate - baseline
    relative = delta / baseline if baseline else None
    if kind == "relative":
        if relative is None:
            return Change(delta, None, "n/a", "n/a (baseline is 0)")
        shown = f"{abs(relative) * 100:.2f}"
    elif wording == "absolute":
        shown = f"{abs(delta):.4f}"
    else:
        shown = f"{abs(delta):.2f}"
    if float(shown) == 0.0:
        return Change(delta, relative, "same", "same", direction="same", interval=spread)
    rose_text, fell_text = WORDINGS[wording]
    text = (rose_text if delta > 0 else fell_text).format(pct=shown, pts=shown, abs=shown)
    direction = "higher" if delta > 0 else "lower"
    favourable = (delta > 0) == (better == "higher")
    if spread is None:
        return Change(delta, relative, "unknown", text, direction, favourable, "unknown")
    verdict, said, significance = _judged(spread, favourable, short)
    text = f"{text} ({said}; {_format_interval(spread, baseline, kind, wording)})"
    return Change(delta, relative, verdict, text, direction, favourable, significance, spread)


def _judged(spread: Spread, favourable: bool, short: str) -> tuple[Verdict, str, Significance]:
    """(verdict, what the column says of it, significance) of a change with a known spread: an
    improvement or regression of ``short`` only when the interval excludes 0."""
    if spread.significant:
        verdict: Verdict = "improvement" if favourable else "regression"
        return verdict, f"{short} {verdict}", "significant"
    return "not_significant", "not significant", "not_significant"
