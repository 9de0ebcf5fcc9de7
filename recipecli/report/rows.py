"""The rows of the A/B table: one :class:`Row` per metric, its cells as text, and how rows are
built from the runs (per-GPU throughput, completed / failed, lm-eval scores)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from recipecli.errors import ReportError
from recipecli.report.change import Change, describe_change
from recipecli.report.inputs import BenchRun, EvalRun
from recipecli.report.metrics import METRICS, Better
from recipecli.report.stats import Spread, Stat, stderr_interval, welch_interval


@dataclass(frozen=True)
class Row:
    """One row of the A/B table.

    Attributes:
        key: row id ("requests", a :class:`MetricSpec` key, or "eval:<task>:<metric>").
        label: row label as shown.
        unit: display unit.
        better: "higher", "lower", or None (completed / failed).
        baseline: the baseline's statistics, or None when the baseline lacks the metric.
        candidate: the candidate's statistics, or None.
        change: the change column.
        plot: include in the bar chart of relative changes.
        decimals: digits shown after the decimal point.
        stderr: (baseline, candidate) lm-eval standard errors for single-run eval rows.
        failed: (baseline, candidate) failed-request counts; only on the completed / failed row.
    """

    key: str
    label: str
    unit: str
    better: Better | None
    baseline: Stat | None
    candidate: Stat | None
    change: Change
    plot: bool = False
    decimals: int = 3
    stderr: tuple[float | None, float | None] = (None, None)
    failed: tuple[Stat, Stat] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form of the row (plus ``failed`` on the requests row, ``stderr`` on eval rows).

        ``interval`` is the confidence interval of ``delta`` (null when the spread is unknown),
        ``relative_interval`` the same divided by the baseline mean.
        """
        c = self.change
        base = self.baseline.mean if self.baseline else None
        rel_iv = None
        if c.interval is not None and base:
            rel_iv = {"low": c.interval.low / base, "high": c.interval.high / base}
        out = {
            "key": self.key,
            "label": self.label,
            "unit": self.unit,
            "better": self.better,
            "baseline": self.baseline.to_dict() if self.baseline else None,
            "candidate": self.candidate.to_dict() if self.candidate else None,
            "delta": c.delta,
            "relative": c.relative,
            "verdict": c.verdict,
            "change": c.text,
            "direction": c.direction,
            "favourable": c.favourable,
            "significance": c.significance,
            "interval": c.interval.to_dict() if c.interval else None,
            "relative_interval": rel_iv,
        }
        if self.stderr != (None, None):
            out["stderr"] = {"baseline": self.stderr[0], "candidate": self.stderr[1]}
        if self.failed is not None:
            out["failed"] = {
                "baseline": self.failed[0].to_dict(),
                "candidate": self.failed[1].to_dict(),
            }
        return out


def _fmt_number(x: float, decimals: int, unit: str) -> str:
    text = f"{x:.{decimals}f}"
    if unit == "%":
        return text + "%"
    return f"{text} {unit}" if unit else text


def format_cell(row: Row, side: int) -> str:
    """The table cell of one side of a row.

    Args:
        row: the row.
        side: 0 for the baseline, 1 for the candidate.

    Returns:
        "—" when missing; one run: the value with its unit ("212.514 tok/s", "2.895%",
        "0.9450 ± 0.0162" for lm-eval with a stderr); several runs: the mean with its unit,
        then "(min–max, n=N)", e.g. "210.000 tok/s (200.000–220.000, n=3)", or "(n=N)" when all
        runs show the same figure. Completed / failed reads "640 / 0", or one pair per run
        ("640 / 0; 637 / 3") when the runs differ.
    """
    stat = row.baseline if side == 0 else row.candidate
    if stat is None:
        return "—"
    if row.failed is not None:
        pairs = [
            f"{c:g} / {f:g}" for c, f in zip(stat.values, row.failed[side].values, strict=True)
        ]
        return pairs[0] if len(set(pairs)) == 1 else "; ".join(pairs)
    text = _fmt_number(stat.mean, row.decimals, row.unit)
    err = row.stderr[side]
    if stat.n == 1 and err is not None:
        text += f" ± {err:.{row.decimals}f}"
    if stat.n > 1:
        lo, hi = f"{stat.min:.{row.decimals}f}", f"{stat.max:.{row.decimals}f}"
        text += f" ({lo}–{hi}, n={stat.n})" if lo != hi else f" (n={stat.n})"
    return text


def _side_stat(runs: Sequence[BenchRun], source: str, scale: float) -> Stat | None:
    """Collect one metric over a side's runs; None when no run has it.

    Raises:
        ReportError: some runs of the side carry the metric and others do not.
    """
    have = [r for r in runs if r.data.get(source) is not None]
    if not have:
        return None
    if len(have) != len(runs):
        lacking = next(r for r in runs if r.data.get(source) is None)
        raise ReportError(
            f"no {source} while {have[0].path} of the same side has it",
            path=lacking.path,
            hint="repeated runs of one side must use the same configuration",
        )
    return Stat(tuple(r.data[source] / scale for r in have))


def _requests_row(a: Sequence[BenchRun], b: Sequence[BenchRun]) -> Row:
    """The "Completed / failed" row: "same" when every run of both sides has the same counts."""
    ca, cb = (Stat(tuple(float(r.data["completed"]) for r in runs)) for runs in (a, b))
    fa, fb = (Stat(tuple(float(r.data["failed"]) for r in runs)) for runs in (a, b))
    same = len(set(ca.values + cb.values)) == 1 and len(set(fa.values + fb.values)) == 1
    delta = cb.mean - ca.mean
    if same:
        text = "same"
    elif ca.n == cb.n == 1:
        text = f"{delta:+g} completed, {fb.mean - fa.mean:+g} failed"
    else:
        text = "differs"
    return Row(
        key="requests",
        label="Completed / failed",
        unit="",
        better=None,
        baseline=ca,
        candidate=cb,
        change=Change(delta, None, "same" if same else "n/a", text),
        decimals=0,
        failed=(fa, fb),
    )


def _eval_spread(stats: Sequence[Stat | None], errs: Sequence[float | None]) -> Spread | None:
    """lm-eval interval: from the two stderrs (one run each), else Welch over repeated runs."""
    a, b = stats
    if a is None or b is None:
        return None
    if a.n == b.n == 1:
        if errs[0] is None or errs[1] is None:
            return None
        return stderr_interval(b.mean - a.mean, errs[0], errs[1])
    return welch_interval(a, b)


def _eval_rows(
    eval_a: Sequence[EvalRun], eval_b: Sequence[EvalRun], labels: tuple[str, str]
) -> list[Row]:
    keys: list[tuple[str, str]] = []
    for run in (*eval_a, *eval_b):
        keys.extend(k for k in run.scores if k not in keys)
    rows = []
    for task, metric in keys:
        stats: list[Stat | None] = []
        errs: list[float | None] = []
        hib = True
        for side, runs in zip(labels, (eval_a, eval_b), strict=True):
            have = [r for r in runs if (task, metric) in r.scores]
            if have and len(have) != len(runs):
                lacking = next(r for r in runs if (task, metric) not in r.scores)
                raise ReportError(
                    f"no results.{task}.{metric} while {have[0].path} ({side}) has it",
                    path=lacking.path,
                    hint="repeated eval runs of one side must use the same tasks",
                )
            scores = [r.scores[(task, metric)] for r in have]
            stats.append(Stat(tuple(s.value for s in scores)) if scores else None)
            errs.append(scores[0].stderr if len(scores) == 1 else None)
            hib = hib and all(s.higher_is_better for s in scores)
        better: Better = "higher" if hib else "lower"
        change = describe_change(
            stats[0].mean if stats[0] else None,
            stats[1].mean if stats[1] else None,
            better=better,
            wording="absolute",
            kind="points",
            short=f"{task} {metric}",
            spread=_eval_spread(stats, errs),
        )
        rows.append(
            Row(
                key=f"eval:{task}:{metric}",
                label=f"{task} {metric.split(',', 1)[0]} ({metric.split(',', 1)[1]})",
                unit="",
                better=better,
                baseline=stats[0],
                candidate=stats[1],
                change=change,
                decimals=4,
                stderr=(errs[0], errs[1]),
            )
        )
    return rows


def metric_rows(
    baseline: Sequence[BenchRun], candidate: Sequence[BenchRun], *, gpus: int | None = None
) -> list[Row]:
    """The :data:`~recipecli.report.metrics.METRICS` rows of the table, per GPU where asked.

    vLLM saves throughput summed over all GPUs of a run; with ``gpus`` the ``per_gpu`` rows
    (output and total throughput) are divided by it and labelled " / GPU".

    Args:
        baseline, candidate: the validated runs of each side.
        gpus: GPUs per run, or None to keep the totals.

    Returns:
        One row per metric that at least one side carries, in table order.

    Raises:
        ReportError: a metric is present in only some runs of one side.
    """
    rows = []
    for spec in METRICS:
        scale = float(gpus) if (spec.per_gpu and gpus) else 1.0
        sa = _side_stat(baseline, spec.source, scale)
        sb = _side_stat(candidate, spec.source, scale)
        if sa is None and sb is None:
            continue
        change = describe_change(
            sa.mean if sa else None,
            sb.mean if sb else None,
            better=spec.better,
            wording=spec.wording,
            kind=spec.change,
            short=spec.short,
            spread=welch_interval(sa, sb) if sa and sb else None,
        )
        label = f"{spec.label} / GPU" if (spec.per_gpu and gpus) else spec.label
        rows.append(Row(spec.key, label, spec.unit, spec.better, sa, sb, change, plot=spec.plot))
    return rows
