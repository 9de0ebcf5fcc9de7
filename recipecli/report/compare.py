"""The A/B comparison: runs → :class:`~recipecli.report.result.Report` (:func:`build_report`),
and files → runs → report (:func:`load_report`, the library entry of `recipecli report`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from recipecli.errors import ReportError, UsageError
from recipecli.report.acceptance import _fmt_k, speculative_tokens
from recipecli.report.inputs import (
    BenchRun,
    EvalRun,
    expand_paths,
    load_bench_run,
    load_eval_run,
)
from recipecli.report.metrics import DEFAULT_LABELS
from recipecli.report.notes import diagnose
from recipecli.report.result import Report
from recipecli.report.rows import Row, _eval_rows, _requests_row, metric_rows
from recipecli.report.workload import WorkloadDifference, compare_workloads, workload_of


def _speculative_summary(runs: Sequence[BenchRun]) -> dict[str, Any] | None:
    k, how = speculative_tokens(runs[0].data)
    if k is None:
        return None
    shown = _fmt_k(k)
    return {
        "num_speculative_tokens": int(shown) if shown.isdigit() else k,
        "estimate": k,
        "derived_from": how,
    }


def _refuse_different_workloads(diffs: Sequence[WorkloadDifference]) -> None:
    """Raise the one-line error for workloads that differ (the first difference, and a count).

    Raises:
        ReportError: always; its path is the file that differs from the first baseline run.
    """
    first = diffs[0]
    more = f" (+{len(diffs) - 1} more)" if len(diffs) > 1 else ""
    raise ReportError(
        f"workloads differ: {first.message()}{more}",
        path=first.other_path,
        hint="rerun with the same bench command, or pass --allow-different-workloads",
    )


def build_report(
    baseline: Sequence[BenchRun],
    candidate: Sequence[BenchRun],
    *,
    gpus: int | None = None,
    labels: tuple[str, str] = DEFAULT_LABELS,
    eval_baseline: Sequence[EvalRun] = (),
    eval_candidate: Sequence[EvalRun] = (),
    allow_different_workloads: bool = False,
) -> Report:
    """Build the A/B report (vLLM PR #47391's table, with intervals and notes) from runs.

    Args:
        baseline: one or more bench runs of A (repeated runs → mean, min-max, Welch interval).
        candidate: one or more bench runs of B.
        gpus: GPUs per run; throughput rows are divided by it ("/ GPU"). None keeps totals.
        labels: column labels for A and B.
        eval_baseline: lm-eval runs of A (may be empty).
        eval_candidate: lm-eval runs of B (may be empty).
        allow_different_workloads: report workload differences as warnings instead of failing.

    Returns:
        The report; its findings are :func:`diagnose`'s notes.

    Raises:
        UsageError: a side has no run, or gpus < 1 ("gpus must be >= 1, got 0").
        ReportError: workloads differ (without ``allow_different_workloads``) or a metric is
            present in only some runs of one side.
    """
    if not baseline or not candidate:
        raise UsageError("need at least one baseline and one candidate bench file")
    if gpus is not None and gpus < 1:
        raise UsageError(f"gpus must be >= 1, got {gpus}")
    runs = [*baseline, *candidate]
    diffs = compare_workloads(runs)
    if diffs and not allow_different_workloads:
        _refuse_different_workloads(diffs)
    rows: list[Row] = [_requests_row(baseline, candidate)]
    rows += metric_rows(baseline, candidate, gpus=gpus)
    rows += _eval_rows(eval_baseline, eval_candidate, labels)
    findings = diagnose(baseline, candidate, rows, labels=labels, differences=diffs)
    return Report(
        labels=labels,
        gpus=gpus,
        baseline_files=tuple(r.path for r in baseline),
        candidate_files=tuple(r.path for r in candidate),
        eval_files=(tuple(r.path for r in eval_baseline), tuple(r.path for r in eval_candidate)),
        workload=workload_of(baseline[0].data),
        rows=tuple(rows),
        differences=tuple(diffs),
        findings=tuple(findings),
        speculative={
            "baseline": _speculative_summary(baseline),
            "candidate": _speculative_summary(candidate),
        },
    )


def load_report(
    baseline_paths: Sequence[str],
    candidate_paths: Sequence[str],
    *,
    gpus: int | None = None,
    labels: tuple[str, str] = DEFAULT_LABELS,
    eval_baseline_paths: Sequence[str] = (),
    eval_candidate_paths: Sequence[str] = (),
    allow_different_workloads: bool = False,
) -> Report:
    """Load the files (globs expanded) and build the report: the library entry of `report`.

    Args:
        baseline_paths: bench files or glob patterns of A.
        candidate_paths: bench files or glob patterns of B.
        gpus, labels, allow_different_workloads: see :func:`build_report`.
        eval_baseline_paths: lm-eval files or globs of A.
        eval_candidate_paths: lm-eval files or globs of B.

    Returns:
        The report.

    Raises:
        UsageError: a pattern matches nothing, or a side is empty.
        ReportError: a file is unusable, or workloads differ (see :func:`build_report`).
    """
    a = [load_bench_run(p) for p in expand_paths(baseline_paths, what="baseline")]
    b = [load_bench_run(p) for p in expand_paths(candidate_paths, what="candidate")]
    ea = [load_eval_run(p) for p in expand_paths(eval_baseline_paths, what="--eval-a")]
    eb = [load_eval_run(p) for p in expand_paths(eval_candidate_paths, what="--eval-b")]
    return build_report(
        a,
        b,
        gpus=gpus,
        labels=labels,
        eval_baseline=ea,
        eval_candidate=eb,
        allow_different_workloads=allow_different_workloads,
    )
