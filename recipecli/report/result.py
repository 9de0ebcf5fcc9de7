"""The report itself (:class:`Report`), its JSON form and its markdown table."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from recipecli.findings import Finding
from recipecli.report.rows import Row, format_cell
from recipecli.report.stats import CI_LEVEL, EVAL_NORMAL, WELCH
from recipecli.report.workload import WorkloadDifference, _normalise, _show


@dataclass(frozen=True)
class Report:
    """A complete A/B report.

    Attributes:
        labels: (baseline label, candidate label).
        gpus: GPUs per run (throughputs are divided by it), or None for totals.
        baseline_files / candidate_files: the bench files of each side.
        eval_files: (baseline eval files, candidate eval files).
        workload: the baseline's first file's workload values (key → value).
        rows: the table rows, in order.
        differences: workload differences (only non-empty with allow_different_workloads).
        findings: every note (diagnostic), in order: errors, then warnings, then info.
        speculative: per side, the speculative tokens per step and where the number came from.
    """

    labels: tuple[str, str]
    gpus: int | None
    baseline_files: tuple[str, ...]
    candidate_files: tuple[str, ...]
    eval_files: tuple[tuple[str, ...], tuple[str, ...]]
    workload: Mapping[str, Any]
    rows: tuple[Row, ...]
    differences: tuple[WorkloadDifference, ...] = ()
    findings: tuple[Finding, ...] = field(default_factory=tuple)
    speculative: Mapping[str, Any] = field(default_factory=dict)

    @property
    def runs(self) -> tuple[int, int]:
        """(baseline runs, candidate runs)."""
        return len(self.baseline_files), len(self.candidate_files)

    def row(self, key: str) -> Row | None:
        """The row with this key, or None."""
        return next((r for r in self.rows if r.key == key), None)

    def to_dict(self) -> dict[str, Any]:
        """JSON form of the whole report (what ``--format json`` prints).

        Keys: labels, gpus, files, workload, workload_differences, runs, noise, speculative,
        rows, findings (full: code, severity, engine, tp, message, evidence, source) and notes
        (the same diagnostics as ``{code, severity, message}``).
        """
        n_a, n_b = self.runs
        return {
            "labels": list(self.labels),
            "gpus": self.gpus,
            "files": {
                "baseline": list(self.baseline_files),
                "candidate": list(self.candidate_files),
                "eval_baseline": list(self.eval_files[0]),
                "eval_candidate": list(self.eval_files[1]),
            },
            "workload": dict(self.workload),
            "workload_differences": [
                {
                    "key": d.key,
                    "reference": {"file": d.reference_path, "value": d.reference_value},
                    "other": {"file": d.other_path, "value": d.other_value},
                }
                for d in self.differences
            ],
            "runs": {"baseline": n_a, "candidate": n_b},
            "noise": {
                "spread_known": n_a >= 2 and n_b >= 2,
                "method": WELCH if n_a >= 2 and n_b >= 2 else None,
                "level": CI_LEVEL,
                "eval_method": EVAL_NORMAL,
            },
            "speculative": dict(self.speculative),
            "rows": [r.to_dict() for r in self.rows],
            "findings": [f.to_dict() for f in self.findings],
            "notes": [
                {"code": f.code, "severity": f.severity, "message": f.message}
                for f in self.findings
            ],
        }


def _workload_line(report: Report) -> str:
    w = report.workload
    parts = [f"model `{w.get('model_id')}`", f"{_show(w.get('num_prompts'))} prompts"]
    parts.append(f"max concurrency {_show(w.get('max_concurrency'))}")
    parts.append(f"request rate {_show(_normalise(w.get('request_rate')))}")
    if w.get("dataset_name") is not None:
        parts.append(f"dataset {w['dataset_name']}")
    parts.append(
        f"~{_show(w.get('mean_input_tokens'))} input / ~{_show(w.get('mean_output_tokens'))} "
        "output tokens per request (observed)"
    )
    return "; ".join(parts)


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def _runs_noise(n_a: int, n_b: int) -> str:
    if n_a >= 2 and n_b >= 2:
        return " (changes with a 95% Welch t interval; significant only when it excludes 0)"
    return " (spread unknown: changes read higher / lower only)"


def render_markdown(report: Report) -> str:
    """Render the report as a GitHub-flavoured markdown table with a workload line and notes.

    Args:
        report: the report.

    Returns:
        Markdown text ending in a newline: a workload line, a runs line (with how far the runs
        support a verdict), the table (Metric, the two labels, Change) and a ``Notes:`` list,
        one ``- severity `code`: message`` per finding.
    """
    a, b = report.labels
    n_a, n_b = len(report.baseline_files), len(report.candidate_files)
    lines = [
        f"Workload: {_workload_line(report)}.",
        "",
        f"Runs: {a} {n_a}, {b} {n_b}"
        + _runs_noise(n_a, n_b)
        + (
            f"; {report.gpus} GPUs per run (throughput is per GPU)."
            if report.gpus
            else "; throughput is the total over all GPUs (pass --gpus N for per-GPU figures)."
        ),
        "",
        f"| Metric | {_md_escape(a)} | {_md_escape(b)} | Change |",
        "| --- | ---: | ---: | --- |",
    ]
    for row in report.rows:
        cells = [row.label, format_cell(row, 0), format_cell(row, 1), row.change.text]
        lines.append("| " + " | ".join(_md_escape(c) for c in cells) + " |")
    if report.findings:
        lines += ["", "Notes:", ""]
        lines += [f"- {f.severity} `{f.code}`: {_md_escape(f.message)}" for f in report.findings]
    return "\n".join(lines) + "\n"
