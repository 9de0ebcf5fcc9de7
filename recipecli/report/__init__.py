"""A/B reports from `vllm bench serve --save-result` JSON files and lm-eval result files.

The report is the A/B table of vLLM PR #47391 (fused EAGLE3 layer-0 RMSNorm + concat):
completed / failed, output and total throughput per GPU, TPOT, TTFT, ITL and E2EL (mean,
median, p99 when the files carry them), acceptance rate and length, duration and eval scores,
with a change column that knows which direction is better and how much of a change the runs
can support, and notes that read the A/B the way a reviewer does (docs/report.md).

Everything the report knows about a metric lives in data tables, not in code paths. The
modules, in the direction of their imports:

- :mod:`~recipecli.report.metrics`: :data:`METRICS` (bench JSON key, row label, unit, better
  direction, change kind and wording) and :data:`WORDINGS`.
- :mod:`~recipecli.report.stats`: per-side statistics and 95 % intervals (Welch t, lm-eval
  stderr), :data:`T_975`.
- :mod:`~recipecli.report.inputs`: reading and validating the saved bench and lm-eval files
  (:data:`REQUIRED_BENCH_KEYS`, :data:`USABLE_RUN_BOUNDS`; the bench JSON layout).
- :mod:`~recipecli.report.workload`: :data:`WORKLOAD_KEYS`, what must match between A and B.
- :mod:`~recipecli.report.change`: the change column (:func:`describe_change`).
- :mod:`~recipecli.report.rows`: the table rows and their cells (per-GPU throughput,
  completed / failed, lm-eval scores).
- :mod:`~recipecli.report.note_codes`: the notes' codes (:data:`NOTE_CODES`) and sources;
  :mod:`~recipecli.report.acceptance`: the speculative-decoding notes and their thresholds;
  :mod:`~recipecli.report.notes`: every note of a report (:func:`diagnose`).
- :mod:`~recipecli.report.result`: :class:`Report`, its JSON form and its markdown table.
- :mod:`~recipecli.report.compare`: :func:`build_report` (runs → report) and
  :func:`load_report` (files → report, the library entry of `recipecli report`).
- :mod:`~recipecli.report.plot`: the ``--plot`` bar chart (matplotlib, imported lazily).

Every name below is importable from ``recipecli.report`` as before the split.
"""

from __future__ import annotations

from recipecli.report.acceptance import (
    ACCEPTANCE_COLLAPSE_RATE,
    ACCEPTANCE_CONFOUND_PP,
    ACCEPTANCE_LENGTH_NOTE,
    COLLAPSE_CAUSES,
    speculative_tokens,
)
from recipecli.report.change import Change, describe_change
from recipecli.report.compare import build_report, load_report
from recipecli.report.inputs import (
    MAX_ABS_NUMBER,
    MAX_INPUT_BYTES,
    NUMERIC_BENCH_KEYS,
    REQUIRED_BENCH_KEYS,
    SPEC_COUNT_KEYS,
    USABLE_RUN_BOUNDS,
    BenchRun,
    EvalRun,
    EvalScore,
    expand_paths,
    load_bench_run,
    load_eval_run,
    unusable_reasons,
)
from recipecli.report.metrics import (
    DEFAULT_LABELS,
    METRICS,
    WORDINGS,
    Better,
    ChangeKind,
    MetricSpec,
    Significance,
    Verdict,
)
from recipecli.report.note_codes import NOTE_CODES, SRC_ACCEPT, SRC_BENCH, SRC_CONFOUND, SRC_NOISE
from recipecli.report.notes import diagnose
from recipecli.report.plot import (
    PLOT_COLOURS,
    _plot_title,  # noqa: F401 (private; tests/report/test_report_plot.py imports it from here)
    check_output_file,
    plot_png,
    plot_rows,
    render_plot,
)
from recipecli.report.result import Report, render_markdown
from recipecli.report.rows import Row, format_cell, metric_rows
from recipecli.report.stats import (
    CI_LEVEL,
    EVAL_NORMAL,
    T_975,
    WELCH,
    Z_975,
    Spread,
    Stat,
    stderr_interval,
    t_quantile_975,
    welch_interval,
)
from recipecli.report.workload import (
    METADATA_WORKLOAD_KEYS,
    WORKLOAD_KEYS,
    WorkloadDifference,
    WorkloadKey,
    compare_workloads,
    workload_of,
)

__all__ = [
    "ACCEPTANCE_COLLAPSE_RATE",
    "ACCEPTANCE_CONFOUND_PP",
    "ACCEPTANCE_LENGTH_NOTE",
    "CI_LEVEL",
    "COLLAPSE_CAUSES",
    "DEFAULT_LABELS",
    "EVAL_NORMAL",
    "MAX_ABS_NUMBER",
    "MAX_INPUT_BYTES",
    "METADATA_WORKLOAD_KEYS",
    "METRICS",
    "NOTE_CODES",
    "NUMERIC_BENCH_KEYS",
    "PLOT_COLOURS",
    "REQUIRED_BENCH_KEYS",
    "SPEC_COUNT_KEYS",
    "SRC_ACCEPT",
    "SRC_BENCH",
    "SRC_CONFOUND",
    "SRC_NOISE",
    "T_975",
    "USABLE_RUN_BOUNDS",
    "WELCH",
    "WORDINGS",
    "WORKLOAD_KEYS",
    "Z_975",
    "BenchRun",
    "Better",
    "Change",
    "ChangeKind",
    "EvalRun",
    "EvalScore",
    "MetricSpec",
    "Report",
    "Row",
    "Significance",
    "Spread",
    "Stat",
    "Verdict",
    "WorkloadDifference",
    "WorkloadKey",
    "build_report",
    "check_output_file",
    "compare_workloads",
    "describe_change",
    "diagnose",
    "expand_paths",
    "format_cell",
    "load_bench_run",
    "load_eval_run",
    "load_report",
    "metric_rows",
    "plot_png",
    "plot_rows",
    "render_markdown",
    "render_plot",
    "speculative_tokens",
    "stderr_interval",
    "t_quantile_975",
    "unusable_reasons",
    "welch_interval",
    "workload_of",
]
