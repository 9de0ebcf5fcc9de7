"""A/B reports from `vllm bench serve --save-result` JSON files and lm-eval result files.

The report is the A/B table of vLLM PR #47391 (fused EAGLE3 layer-0 RMSNorm + concat):
completed / failed, output and total throughput per GPU, TPOT, TTFT, ITL and E2EL (mean,
median, p99 when the files carry them), acceptance rate and length, duration and eval scores,
with a change column that knows which direction is better and how much of a change the runs
can support, and notes that read the A/B the way a reviewer does (docs/report.md).

Everything the report knows about a metric lives in data tables, not in code paths:

- :data:`METRICS`: bench JSON key, row label, unit, better direction, change kind and wording.
- :data:`WORDINGS`: how a rise and a fall read ("+64.10%", "37.03% lower", "39.06% faster").
- :data:`WORKLOAD_KEYS`: what must match between A and B (and between repeated runs of one side).
- :data:`REQUIRED_BENCH_KEYS`: keys without which a bench file is refused.
- :data:`NOTE_CODES`: the stable codes of the notes (diagnostics), with their severity.

Bench JSON layout (vllm v0.33.0 `vllm/benchmarks/serve.py`: `main_async` writes the setup,
`benchmark` the results): the file is one object that merges the run's setup (`date`,
`backend`/`endpoint_type`, `label`, `model_id`, `tokenizer_id`, `num_prompts`, every
`--metadata KEY=VALUE` as a top-level string, `request_rate` (a number, or the string
``"inf"``), `burstiness`, `max_concurrency` (null when unset)) with the measured result
(`duration` s, `completed`, `failed`, `total_input_tokens`, `total_output_tokens`,
`request_throughput`, `output_throughput` and `total_token_throughput` in tok/s summed over all
GPUs, `mean_/median_/std_/p99_{ttft,tpot,itl}_ms` by default (`e2el` with
`--percentile-metrics`; other percentiles with `--metric-percentiles`), and with speculative
decoding `spec_decode_acceptance_rate` (percent of drafted tokens accepted),
`spec_decode_acceptance_length` (1 + accepted / drafts), `spec_decode_num_drafts`,
`spec_decode_draft_tokens` and `spec_decode_accepted_tokens`). The dataset name and
`--random-input-len` / `--random-output-len` are NOT saved unless passed via `--metadata`; the
report therefore compares the observed mean input and output tokens per completed request
(`total_*_tokens / completed`) and any declared metadata keys present on both sides.

lm-eval layout: ``{"results": {TASK: {"METRIC,FILTER": value, "METRIC_stderr,FILTER": value
or "N/A", "alias": ..., ...}}, "higher_is_better": {TASK: {METRIC: bool}}, ...}``.
"""

from __future__ import annotations

import glob
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from recipecli.errors import MissingDependencyError, ReportError, UsageError
from recipecli.findings import Finding, Severity
from recipecli.hints import install_hint
from recipecli.safeio import json_loads

Better = Literal["higher", "lower"]
ChangeKind = Literal["relative", "points"]
#: improvement / regression only for a significant change; "unknown" when the spread is unknown
#: (one run on a side, no lm-eval stderr); "not_significant" when the interval contains 0.
Verdict = Literal["improvement", "regression", "same", "n/a", "unknown", "not_significant"]
Significance = Literal["significant", "not_significant", "unknown"]

# ------------------------------------------------------------------------------------------
# Data tables
# ------------------------------------------------------------------------------------------

#: How a change reads, per wording: (text when the value rose, text when it fell).
#: ``{pct}`` is the absolute relative change in percent, two decimals; ``{pts}`` the absolute
#: difference in percentage points, two decimals; ``{abs}`` the absolute difference, 4 decimals.
WORDINGS: dict[str, tuple[str, str]] = {
    "signed": ("+{pct}%", "-{pct}%"),
    "higher_lower": ("{pct}% higher", "{pct}% lower"),
    "slower_faster": ("{pct}% slower", "{pct}% faster"),
    "points": ("+{pts} pp", "-{pts} pp"),
    "absolute": ("+{abs}", "-{abs}"),
}


@dataclass(frozen=True)
class MetricSpec:
    """One row of the A/B table, taken from one bench JSON key.

    Attributes:
        key: the row id in the JSON report.
        source: the `vllm bench serve` result key (vllm v0.33.0 `vllm/benchmarks/serve.py`).
        label: the row label; ``per_gpu`` rows get " / GPU" appended when ``--gpus`` is given.
        short: the metric's name in a verdict label, e.g. "TTFT" → "(TTFT regression; …)".
        unit: display unit ("tok/s", "ms", "s", "%", or "").
        better: which direction is an improvement.
        wording: a key of :data:`WORDINGS`.
        change: "relative" (percent of the baseline) or "points" (difference of two percents).
        per_gpu: divide by the GPU count (throughputs are summed over all GPUs by vLLM).
        required: a bench file without this key is refused (else the row shows "—", and a row
            that neither side has is left out).
        plot: draw this row in the ``--plot`` bar chart of relative changes.
    """

    key: str
    source: str
    label: str
    short: str
    unit: str
    better: Better
    wording: str
    change: ChangeKind = "relative"
    per_gpu: bool = False
    required: bool = True
    plot: bool = True


def _latency_rows(name: str, short: str, *, mean_required: bool) -> tuple[MetricSpec, ...]:
    """Mean (plotted), median and p99 rows of one `vllm bench serve` latency (ms)."""
    return (
        MetricSpec(
            f"mean_{name}",
            f"mean_{name}_ms",
            f"Mean {short}",
            short,
            "ms",
            "lower",
            "higher_lower",
            required=mean_required,
        ),
        MetricSpec(
            f"median_{name}",
            f"median_{name}_ms",
            f"Median {short}",
            f"median {short}",
            "ms",
            "lower",
            "higher_lower",
            required=False,
            plot=False,
        ),
        MetricSpec(
            f"p99_{name}",
            f"p99_{name}_ms",
            f"P99 {short}",
            f"p99 {short}",
            "ms",
            "lower",
            "higher_lower",
            required=False,
            plot=False,
        ),
    )


#: The metric rows, in table order (completed / failed is its own row first). Mean TPOT and
#: TTFT are required (vLLM PR #47391's table); ITL and E2EL rows and every median / p99 row
#: appear when a file carries them (vLLM saves TTFT, TPOT and ITL percentiles by default, E2EL
#: with `--percentile-metrics ttft,tpot,itl,e2el`).
METRICS: tuple[MetricSpec, ...] = (
    MetricSpec(
        "output_throughput",
        "output_throughput",
        "Output throughput",
        "output throughput",
        "tok/s",
        "higher",
        "signed",
        per_gpu=True,
    ),
    MetricSpec(
        "total_throughput",
        "total_token_throughput",
        "Total throughput",
        "total throughput",
        "tok/s",
        "higher",
        "signed",
        per_gpu=True,
    ),
    *_latency_rows("tpot", "TPOT", mean_required=True),
    *_latency_rows("ttft", "TTFT", mean_required=True),
    *_latency_rows("itl", "ITL", mean_required=False),
    *_latency_rows("e2el", "E2EL", mean_required=False),
    MetricSpec(
        "acceptance_rate",
        "spec_decode_acceptance_rate",
        "Acceptance rate",
        "acceptance rate",
        "%",
        "higher",
        "points",
        change="points",
        required=False,
        plot=False,
    ),
    MetricSpec(
        "acceptance_length",
        "spec_decode_acceptance_length",
        "Acceptance length",
        "acceptance length",
        "",
        "higher",
        "signed",
        required=False,
    ),
    MetricSpec("duration", "duration", "Duration", "duration", "s", "lower", "slower_faster"),
)

#: Keys a bench file must carry, with the reason shown when one is missing.
REQUIRED_BENCH_KEYS: tuple[str, ...] = (
    "model_id",
    "num_prompts",
    "request_rate",
    "max_concurrency",
    "completed",
    "failed",
    "total_input_tokens",
    "total_output_tokens",
    *(m.source for m in METRICS if m.required),
)

#: Speculative-decoding counters vLLM saves next to the acceptance rate and length (optional).
SPEC_COUNT_KEYS: tuple[str, ...] = (
    "spec_decode_num_drafts",
    "spec_decode_draft_tokens",
    "spec_decode_accepted_tokens",
)

#: Keys that must hold a finite number (bool is not a number here); optional ones may be null.
NUMERIC_BENCH_KEYS: tuple[str, ...] = (
    "num_prompts",
    "completed",
    "failed",
    "total_input_tokens",
    "total_output_tokens",
    *(m.source for m in METRICS),
    *SPEC_COUNT_KEYS,
)


def _mean_tokens(total_key: str) -> Callable[[Mapping[str, Any]], float | None]:
    def derive(data: Mapping[str, Any]) -> float | None:
        completed = data.get("completed")
        return data[total_key] / completed if completed else None

    return derive


@dataclass(frozen=True)
class WorkloadKey:
    """One workload property that must agree between A and B.

    Attributes:
        key: the id in the report and in error messages.
        label: human wording.
        source: the bench JSON key, or None when ``derive`` computes it.
        derive: computes the value from a bench JSON object (for observed values).
        rel_tol: relative tolerance (0 = exact). Observed token means get 10 %: the random
            dataset with `--random-range-ratio 0.8` draws lengths uniformly in [0.2 L, 1.8 L], so
            the mean over 640 prompts wanders by ~1.8 % (1 sigma) between seeds, while a changed
            `--random-input-len` moves it by 2x or more.
        optional: compared only when both files carry it (the `--metadata` keys).
    """

    key: str
    label: str
    source: str | None = None
    derive: Callable[[Mapping[str, Any]], float | None] | None = None
    rel_tol: float = 0.0
    optional: bool = False


#: Workload lengths that `vllm bench serve` saves only when given as `--metadata KEY=VALUE`.
METADATA_WORKLOAD_KEYS: tuple[str, ...] = (
    "dataset_name",
    "random_input_len",
    "random_output_len",
    "random_range_ratio",
    "input_len",
    "output_len",
)

#: What "the same workload" means. `dataset_name`, `random_input_len` & co. are not saved by
#: `vllm bench serve` (vllm v0.33.0 `vllm/benchmarks/serve.py` `main_async`); they are compared
#: when both files carry them via `--metadata KEY=VALUE`, and the observed token means stand in
#: for them otherwise.
WORKLOAD_KEYS: tuple[WorkloadKey, ...] = (
    WorkloadKey("model_id", "model", "model_id"),
    WorkloadKey("num_prompts", "num prompts", "num_prompts"),
    WorkloadKey("max_concurrency", "max concurrency", "max_concurrency"),
    WorkloadKey("request_rate", "request rate", "request_rate"),
    WorkloadKey("burstiness", "burstiness", "burstiness", optional=True),
    WorkloadKey("backend", "backend", "backend", optional=True),
    WorkloadKey(
        "mean_input_tokens",
        "mean input tokens per request (observed)",
        derive=_mean_tokens("total_input_tokens"),
        rel_tol=0.10,
    ),
    WorkloadKey(
        "mean_output_tokens",
        "mean output tokens per request (observed)",
        derive=_mean_tokens("total_output_tokens"),
        rel_tol=0.10,
    ),
    *(
        WorkloadKey(k, k.replace("_", " ") + " (metadata)", k, optional=True)
        for k in METADATA_WORKLOAD_KEYS
    ),
)

#: String-valued top-level keys that vLLM writes itself (not `--metadata`): never compared as
#: settings. `label` and `date` name the run and are expected to differ.
_NOT_METADATA = frozenset({"date", "label", "endpoint_type", "backend", "model_id", "request_rate"})

#: Optional metric keys: absent or null means "not measured" (e.g. no speculative decoding).
_OPTIONAL_KEYS = frozenset([*(m.source for m in METRICS if not m.required), *SPEC_COUNT_KEYS])

DEFAULT_LABELS: tuple[str, str] = ("Baseline", "Candidate")
_GLOB_CHARS = set("*?[")

# ------------------------------------------------------------------------------------------
# Diagnostics: thresholds and codes (docs/report.md, "Notes" explains each threshold)
# ------------------------------------------------------------------------------------------

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

#: Two-sided 95 % quantiles of Student's t, t(0.975; df), from the standard table (NIST/SEMATECH
#: e-Handbook of Statistical Methods, section 1.3.6.7.2). A fractional Welch df is floored and
#: looked up at the largest tabulated df not above it, which widens the interval (conservative).
T_975: dict[int, float] = {
    1: 12.706,
    2: 4.303,
    3: 3.182,
    4: 2.776,
    5: 2.571,
    6: 2.447,
    7: 2.365,
    8: 2.306,
    9: 2.262,
    10: 2.228,
    11: 2.201,
    12: 2.179,
    13: 2.160,
    14: 2.145,
    15: 2.131,
    16: 2.120,
    17: 2.110,
    18: 2.101,
    19: 2.093,
    20: 2.086,
    21: 2.080,
    22: 2.074,
    23: 2.069,
    24: 2.064,
    25: 2.060,
    26: 2.056,
    27: 2.052,
    28: 2.048,
    29: 2.045,
    30: 2.042,
    40: 2.021,
    60: 2.000,
    120: 1.980,
}
#: The normal distribution's 97.5 % quantile (lm-eval stderr intervals).
Z_975 = 1.960
CI_LEVEL = 0.95
WELCH = "Welch t"
EVAL_NORMAL = "normal approximation from lm-eval stderr"

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

# ------------------------------------------------------------------------------------------
# Loaded inputs and results
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BenchRun:
    """One validated `vllm bench serve --save-result` file.

    Attributes:
        path: the file as given.
        data: the parsed JSON object (validated: required keys present, numbers finite).
    """

    path: str
    data: Mapping[str, Any]


@dataclass(frozen=True)
class EvalScore:
    """One lm-eval score: ``results.<task>.<metric>,<filter>``.

    Attributes:
        task: lm-eval task name, e.g. "gsm8k".
        metric: metric with filter, e.g. "exact_match,strict-match".
        value: the score (unitless; accuracies are fractions 0..1).
        stderr: its standard error, or None when absent or "N/A".
        higher_is_better: from the file's ``higher_is_better`` table (default True).
    """

    task: str
    metric: str
    value: float
    stderr: float | None
    higher_is_better: bool = True


@dataclass(frozen=True)
class EvalRun:
    """One validated lm-eval result file: its path and its scores keyed by (task, metric)."""

    path: str
    scores: Mapping[tuple[str, str], EvalScore]


@dataclass(frozen=True)
class Stat:
    """Mean, min-max and sample standard deviation of one metric over one side's runs.

    Attributes:
        values: one value per run, in file order.
    """

    values: tuple[float, ...]

    @property
    def n(self) -> int:
        """Number of runs."""
        return len(self.values)

    @property
    def mean(self) -> float:
        """Arithmetic mean over the runs."""
        return math.fsum(self.values) / len(self.values)

    @property
    def min(self) -> float:
        """Smallest run value."""
        return min(self.values)

    @property
    def max(self) -> float:
        """Largest run value."""
        return max(self.values)

    @property
    def variance(self) -> float | None:
        """Sample variance (divisor n - 1), or None for one run (the spread is unknown)."""
        if self.n < 2:
            return None
        if len(set(self.values)) == 1:
            return 0.0  # exactly: the mean of equal floats may be off by an ulp
        m = self.mean
        return math.fsum((v - m) ** 2 for v in self.values) / (self.n - 1)

    @property
    def std(self) -> float | None:
        """Sample standard deviation (divisor n - 1), or None for one run."""
        var = self.variance
        return math.sqrt(var) if var is not None else None

    def to_dict(self) -> dict[str, Any]:
        """JSON form: mean, min, max, n, std (null for one run) and the per-run values."""
        return {
            "mean": self.mean,
            "min": self.min,
            "max": self.max,
            "n": self.n,
            "std": self.std,
            "values": list(self.values),
        }


@dataclass(frozen=True)
class Spread:
    """A confidence interval of the difference candidate - baseline, in the row's unit.

    Attributes:
        method: :data:`WELCH` (repeated runs on both sides) or :data:`EVAL_NORMAL`.
        level: the confidence level (0.95).
        low, high: the interval's ends (same unit as the row's delta).
        df: the Welch degrees of freedom (before flooring), or None.
    """

    method: str
    level: float
    low: float
    high: float
    df: float | None = None

    @property
    def significant(self) -> bool:
        """True when the interval excludes 0 (a degenerate interval at a non-zero delta too)."""
        return self.low > 0 or self.high < 0

    def to_dict(self) -> dict[str, Any]:
        """JSON form: method, level, low, high, df, significant."""
        return {
            "method": self.method,
            "level": self.level,
            "low": self.low,
            "high": self.high,
            "df": self.df,
            "significant": self.significant,
        }


def t_quantile_975(df: float) -> float:
    """t(0.975; df) from :data:`T_975`: df floored, then the largest tabulated df not above it.

    Args:
        df: degrees of freedom (> 0; values below 1 use df = 1).

    Returns:
        The quantile (12.706 for df 1, 4.303 for df 2, …, 1.980 from df 120 on).
    """
    d = max(1, int(math.floor(df)))
    return T_975[max(k for k in T_975 if k <= d)]


def welch_interval(a: Stat, b: Stat) -> Spread | None:
    """95 % Welch t interval of mean(b) - mean(a) (unequal variances), or None.

    se = sqrt(s_a^2/n_a + s_b^2/n_b); df = se^4 / ((s_a^2/n_a)^2/(n_a-1) + (s_b^2/n_b)^2/(n_b-1))
    (Welch-Satterthwaite); interval = delta ± t(0.975; df) * se with :func:`t_quantile_975`.

    Args:
        a: baseline runs; b: candidate runs.

    Returns:
        None when a side has fewer than 2 runs (its spread is unknown). When both sides show no
        spread at all (se = 0) the interval is the point delta itself.
    """
    va, vb = a.variance, b.variance
    if va is None or vb is None:
        return None
    delta = b.mean - a.mean
    qa, qb = va / a.n, vb / b.n
    se2 = qa + qb
    if se2 == 0:
        return Spread(WELCH, CI_LEVEL, delta, delta, None)
    df = se2**2 / (qa**2 / (a.n - 1) + qb**2 / (b.n - 1))
    half = t_quantile_975(df) * math.sqrt(se2)
    return Spread(WELCH, CI_LEVEL, delta - half, delta + half, df)


def stderr_interval(delta: float, se_a: float, se_b: float) -> Spread:
    """95 % normal interval of an lm-eval score difference from the two reported stderrs.

    delta ± 1.96 * sqrt(se_a^2 + se_b^2). The two scores are treated as independent; two runs
    on the same samples are positively correlated, so the true interval is narrower: this
    errs on the side of "not significant".
    """
    half = Z_975 * math.sqrt(se_a**2 + se_b**2)
    return Spread(EVAL_NORMAL, CI_LEVEL, delta - half, delta + half, None)


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


@dataclass(frozen=True)
class WorkloadDifference:
    """A workload property that differs between two bench files."""

    key: str
    label: str
    reference_path: str
    reference_value: Any
    other_path: str
    other_value: Any

    def message(self) -> str:
        """One line: what differs, in which files, with both values."""
        return (
            f"{self.label} differs: {_show(self.reference_value)} in {self.reference_path} "
            f"vs {_show(self.other_value)} in {self.other_path}"
        )


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


# ------------------------------------------------------------------------------------------
# Loading and validation
# ------------------------------------------------------------------------------------------


def expand_paths(patterns: Sequence[str], *, what: str) -> list[str]:
    """Expand quoted glob patterns; plain paths pass through in order.

    Args:
        patterns: paths or glob patterns (``*``, ``?``, ``[...]``), as given on the command line.
        what: which input this is, for the error message (e.g. "baseline").

    Returns:
        The paths, globs expanded in sorted order, duplicates dropped (first kept).

    Raises:
        UsageError: a pattern matches no file.
    """
    out: list[str] = []
    for pattern in patterns:
        if _GLOB_CHARS & set(pattern) and not os.path.exists(pattern):
            matches = sorted(glob.glob(pattern))
            if not matches:
                raise UsageError(
                    f"{what} pattern {pattern!r} matches no file", hint="check the path or quoting"
                )
            out.extend(matches)
        else:
            out.append(pattern)
    return list(dict.fromkeys(out))


#: Largest bench or eval file read (bench results without --save-detailed are a few KiB; with
#: it, per-request lists of a 10 000-prompt run stay far under this).
MAX_INPUT_BYTES = 64 * 1024 * 1024

#: Largest magnitude a bench or eval number may have: counts and rates are far below it, and
#: every figure stays exact in a float and far from overflow in the report's arithmetic.
MAX_ABS_NUMBER = 1e15


def _load_json_object(path: str, kind: str) -> dict[str, Any]:
    """Read one input through :mod:`recipecli.safeio` (regular files only, never blocking, size
    capped) and parse it with bounded nesting and integer length; one line on every failure."""
    from recipecli.safeio import MAX_JSON_DEPTH, _int_digit_limit, json_too_deep, read_regular

    p = Path(path)
    if p.is_dir():
        raise ReportError(
            "is a directory, not a file", path=path, hint=f"pass the {kind} .json file inside it"
        )
    if not os.path.lexists(path):
        raise ReportError("no such file", path=path, hint=f"pass a {kind} JSON file")
    raw = read_regular(path, what=f"{kind} file", error=ReportError, max_bytes=MAX_INPUT_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReportError(
            f"not UTF-8 text ({exc.reason} at byte {exc.start})",
            path=path,
            hint=f"pass the JSON file written by {kind}",
        ) from None
    try:
        data = json_loads(text, where=path, what=f"{kind} file", error=ReportError)
    except json.JSONDecodeError as exc:
        raise ReportError(
            f"not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg})",
            path=path,
            hint=f"pass the file written by {kind}; a truncated file means the run did not finish",
        ) from None
    except RecursionError:
        raise ReportError(
            f"not a {kind} file: nested more than {MAX_JSON_DEPTH} levels deep", path=path
        ) from None
    except ValueError:  # int() refusing a number over Python's integer-string limit
        raise ReportError(
            f"not a {kind} file: holds an integer of more than {_int_digit_limit()} digits",
            path=path,
        ) from None
    if not isinstance(data, dict):
        raise ReportError(f"expected a JSON object, got {type(data).__name__}", path=path)
    if json_too_deep(data, MAX_JSON_DEPTH):
        raise ReportError(
            f"not a {kind} file: nested more than {MAX_JSON_DEPTH} levels deep", path=path
        )
    return data


def _is_number(value: Any) -> bool:
    """A finite int or float (not bool) of magnitude at most :data:`MAX_ABS_NUMBER`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, int):
        return abs(value) <= MAX_ABS_NUMBER
    return math.isfinite(value) and abs(value) <= MAX_ABS_NUMBER


def _short_repr(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def load_bench_run(path: str) -> BenchRun:
    """Load and validate one `vllm bench serve --save-result` JSON file.

    Keys and types as vllm v0.33.0 `vllm/benchmarks/serve.py` writes them (module docstring).

    Args:
        path: the result file.

    Returns:
        The validated run.

    Raises:
        ReportError: unreadable or invalid JSON, missing keys (all listed), a metric that is not
            a finite number, or an unusable run (:func:`unusable_reasons`: duration <= 0, no
            completed request, a non-positive throughput, a negative count or latency).
    """
    data = _load_json_object(path, "`vllm bench serve --save-result`")
    missing = [k for k in REQUIRED_BENCH_KEYS if k not in data]
    if missing:
        raise ReportError(
            f"missing key(s) {', '.join(missing)}",
            path=path,
            hint="pass the JSON written by `vllm bench serve --save-result` (complete run)",
        )
    bad = [
        f"{k}={_short_repr(data[k])}"
        for k in NUMERIC_BENCH_KEYS
        if k in data and not _is_number(data[k]) and not (data[k] is None and k in _OPTIONAL_KEYS)
    ]
    rate = data["request_rate"]
    if not (_is_number(rate) or rate == "inf" or (isinstance(rate, float) and rate == math.inf)):
        bad.append(f"request_rate={_short_repr(rate)}")
    mc = data["max_concurrency"]
    if mc is not None and not _is_number(mc):
        bad.append(f"max_concurrency={_short_repr(mc)}")
    if bad:
        raise ReportError(
            f"non-numeric value(s) {', '.join(bad)}",
            path=path,
            hint="regenerate the file with `vllm bench serve --save-result` (numbers must be "
            "finite, within ±1e15)",
        )
    problems = unusable_reasons(data)
    if problems:
        raise ReportError(
            f"unusable run: {'; '.join(problems)}",
            path=path,
            hint="the run measured nothing; check the server log and rerun "
            "`vllm bench serve --save-result`",
        )
    return BenchRun(path=path, data=data)


#: Figures a run that measured anything has: (bench key, lowest usable value, exclusive?).
#: Throughputs are completed tokens (requests) over ``duration``, so they are > 0 whenever one
#: request completed in a positive time (vllm v0.33.0
#: ``vllm/benchmarks/serve.py`` ``calculate_metrics``).
USABLE_RUN_BOUNDS: tuple[tuple[str, float, bool], ...] = (
    ("duration", 0.0, True),
    ("completed", 0.0, True),
    ("failed", 0.0, False),
    ("request_throughput", 0.0, True),
    ("output_throughput", 0.0, True),
    ("total_token_throughput", 0.0, True),
    ("mean_ttft_ms", 0.0, False),
    ("mean_tpot_ms", 0.0, False),
)


def unusable_reasons(data: Mapping[str, Any]) -> list[str]:
    """Why a bench result cannot be compared: figures outside :data:`USABLE_RUN_BOUNDS`.

    A run with ``duration: 0``, no completed request or zero throughput would otherwise turn
    into a "-100.00%" regression or a "100.00% faster" duration.

    Args:
        data: a bench JSON object whose numeric keys were validated (optional keys may be
            absent or null and are then skipped).

    Returns:
        ``["duration=0 (must be > 0)", …]`` in table order; empty for a usable run.
    """
    out = []
    for key, low, exclusive in USABLE_RUN_BOUNDS:
        value = data.get(key)
        if not _is_number(value):
            continue
        if value < low or (exclusive and value == low):
            bound = f"> {low:g}" if exclusive else f">= {low:g}"
            extra = f", failed={data.get('failed')}" if key == "completed" else ""
            out.append(f"{key}={value:g} (must be {bound}{extra})")
    return out


def load_eval_run(path: str) -> EvalRun:
    """Load one lm-eval result JSON (``results.<task>."<metric>,<filter>"``).

    Args:
        path: the ``results_*.json`` file lm-eval wrote under ``--output_path``.

    Returns:
        The run with every numeric ``<metric>,<filter>`` score of every task; ``*_stderr``
        companions become :attr:`EvalScore.stderr` ("N/A" → None); ``alias`` and keys without a
        comma (``sample_len``) are skipped.

    Raises:
        ReportError: invalid JSON, no ``results`` object, a score that is not a finite number,
            or no score at all.
    """
    data = _load_json_object(path, "lm-eval result")
    results = data.get("results")
    if not isinstance(results, dict) or not results:
        raise ReportError(
            "no `results` object with task scores",
            path=path,
            hint="pass the results_*.json that lm-eval writes under --output_path",
        )
    hib = data.get("higher_is_better") if isinstance(data.get("higher_is_better"), dict) else {}
    scores: dict[tuple[str, str], EvalScore] = {}
    for task, metrics in results.items():
        if not isinstance(metrics, dict):
            raise ReportError(f"results.{task} is not an object", path=path)
        for key, value in metrics.items():
            if "," not in key:
                continue
            name, filt = key.split(",", 1)
            if name.endswith("_stderr"):
                continue
            if not _is_number(value):
                raise ReportError(
                    f"results.{task}.{key} is not a number ({_short_repr(value)})",
                    path=path,
                    hint="regenerate the file with lm-eval",
                )
            stderr = metrics.get(f"{name}_stderr,{filt}")
            task_hib = hib.get(task) if isinstance(hib.get(task), dict) else {}
            scores[(task, key)] = EvalScore(
                task=task,
                metric=key,
                value=float(value),
                stderr=float(stderr) if _is_number(stderr) else None,
                higher_is_better=bool(task_hib.get(name, True)),
            )
    if not scores:
        raise ReportError(
            "no `<metric>,<filter>` score under results",
            path=path,
            hint="pass the results_*.json that lm-eval writes under --output_path",
        )
    return EvalRun(path=path, scores=scores)


# ------------------------------------------------------------------------------------------
# Workloads
# ------------------------------------------------------------------------------------------


def workload_of(data: Mapping[str, Any]) -> dict[str, Any]:
    """The workload values of one bench JSON object, per :data:`WORKLOAD_KEYS`.

    Args:
        data: a validated bench JSON object.

    Returns:
        key → value for every workload key the file carries (optional keys only when present);
        observed token means are floats (tokens per completed request).
    """
    out: dict[str, Any] = {}
    for wk in WORKLOAD_KEYS:
        if wk.derive is not None:
            out[wk.key] = wk.derive(data)
        elif wk.source in data:
            out[wk.key] = data[wk.source]
    # vLLM writes an unlimited rate as the string "inf"; a float infinity (``Infinity`` in a
    # hand-made file) would not be JSON on output, so it is shown the way vLLM writes it.
    if isinstance(out.get("request_rate"), float) and math.isinf(out["request_rate"]):
        out["request_rate"] = "inf"
    return out


def _normalise(value: Any) -> Any:
    """Make "inf", 8192 and "8192" comparable (metadata values are strings)."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    if _is_number(value) or value == math.inf:
        return float(value)
    return value


def _values_differ(a: Any, b: Any, rel_tol: float) -> bool:
    a, b = _normalise(a), _normalise(b)
    if isinstance(a, float) and isinstance(b, float):
        if math.isinf(a) or math.isinf(b):
            return a != b
        return not math.isclose(a, b, rel_tol=rel_tol, abs_tol=0.0) if rel_tol else a != b
    return a != b


def compare_workloads(runs: Sequence[BenchRun]) -> list[WorkloadDifference]:
    """Compare every run's workload with the first run's.

    Args:
        runs: all bench runs, baseline first (A's runs, then B's).

    Returns:
        One difference per (run, key) that does not match the first run, per
        :data:`WORKLOAD_KEYS` (optional keys only when both files carry them).
    """
    ref = runs[0]
    ref_w = workload_of(ref.data)
    diffs: list[WorkloadDifference] = []
    for run in runs[1:]:
        w = workload_of(run.data)
        for wk in WORKLOAD_KEYS:
            if wk.optional and (wk.key not in ref_w or wk.key not in w):
                continue
            if _values_differ(ref_w.get(wk.key), w.get(wk.key), wk.rel_tol):
                diffs.append(
                    WorkloadDifference(
                        wk.key, wk.label, ref.path, ref_w.get(wk.key), run.path, w.get(wk.key)
                    )
                )
    return diffs


# ------------------------------------------------------------------------------------------
# Changes and rows
# ------------------------------------------------------------------------------------------


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
    ci = _format_interval(spread, baseline, kind, wording)
    if spread.significant:
        verdict: Verdict = "improvement" if favourable else "regression"
        return Change(
            delta,
            relative,
            verdict,
            f"{text} ({short} {verdict}; {ci})",
            direction,
            favourable,
            "significant",
            spread,
        )
    return Change(
        delta,
        relative,
        "not_significant",
        f"{text} (not significant; {ci})",
        direction,
        favourable,
        "not_significant",
        spread,
    )


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


# ------------------------------------------------------------------------------------------
# Diagnostics (notes)
# ------------------------------------------------------------------------------------------


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
    return Finding(
        code=code,
        severity=NOTE_CODES[code],
        engine="vllm",
        message=message,
        evidence=dict(evidence),
        source=source,
    )


def _settings_notes(
    baseline: Sequence[BenchRun],
    candidate: Sequence[BenchRun],
    labels: tuple[str, str],
    ks: tuple[float | None, float | None],
) -> list[Finding]:
    """speculative_one_side, speculative_tokens_differ, metadata_differs."""
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
    ma, mb = _metadata(baseline), _metadata(candidate)
    differing = []
    for key in dict.fromkeys([*ma, *mb]):
        if key in METADATA_WORKLOAD_KEYS and key in ma and key in mb:
            continue  # compared as workload (exit 2 unless allowed)
        va, vb = ma.get(key), mb.get(key)
        if va != vb:
            differing.append((key, va, vb))
    if differing:

        def shown(values: tuple[str, ...] | None) -> str:
            return _show("/".join(values)) if values else "not recorded"

        parts = [f"{k}: {shown(va)} vs {shown(vb)}" for k, va, vb in differing]
        notes.append(
            _note(
                "report.metadata_differs",
                f"settings the bench recorded differ between {a} and {b} ({'; '.join(parts)}): "
                "make sure each is part of the change under test",
                {
                    k: {"baseline": va and list(va), "candidate": vb and list(vb)}
                    for k, va, vb in differing
                },
                SRC_BENCH,
            )
        )
    return notes


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
        rate = _side_of(rate_row, side)
        length = _side_of(len_row, side)
        if rate is not None:
            frac = rate / 100
        elif length is not None and k:
            frac = (length - 1) / k
        else:
            frac = None
        fractions.append(frac)
        if frac is None or frac >= ACCEPTANCE_COLLAPSE_RATE:
            continue
        shown_rate = f"{frac * 100:.1f}%"
        detail = ""
        if length is not None and k:
            detail = (
                f", acceptance length {length:.3f} with {_fmt_k(k)} speculative tokens: "
                f"{length - 1:.3f} of {_fmt_k(k)} drafted tokens accepted per step"
            )
        notes.append(
            _note(
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
        )
    a, b = labels
    fa, fb = fractions
    if fa is not None and fb is not None and abs(fb - fa) * 100 > ACCEPTANCE_CONFOUND_PP:
        low = a if fa < fb else b
        collapsed = any(n.code == "report.acceptance_collapsed" for n in notes)
        notes.append(
            _note(
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
        )
    la, lb = _side_of(len_row, 0), _side_of(len_row, 1)
    tpot = rows.get("mean_tpot")
    ta, tb = _side_of(tpot, 0), _side_of(tpot, 1)
    if la and lb and ta and tb and abs(lb / la - 1) > ACCEPTANCE_LENGTH_NOTE:
        notes.append(_acceptance_vs_tpot(la, lb, ta, tb))
    return notes


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
        UsageError: a side has no run, or gpus < 1.
        ReportError: workloads differ (without ``allow_different_workloads``) or a metric is
            present in only some runs of one side.
    """
    if not baseline or not candidate:
        raise UsageError("need at least one baseline and one candidate bench file")
    if gpus is not None and gpus < 1:
        raise UsageError(f"--gpus must be >= 1, got {gpus}")
    runs = [*baseline, *candidate]
    diffs = compare_workloads(runs)
    if diffs and not allow_different_workloads:
        first = diffs[0]
        more = f" (+{len(diffs) - 1} more)" if len(diffs) > 1 else ""
        raise ReportError(
            f"workloads differ: {first.message()}{more}",
            path=first.other_path,
            hint="rerun with the same bench command, or pass --allow-different-workloads",
        )
    rows: list[Row] = [_requests_row(baseline, candidate)]
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


# ------------------------------------------------------------------------------------------
# Rendering
# ------------------------------------------------------------------------------------------


def _show(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.1f}" if not math.isinf(value) else "inf"
    text = "unset" if value is None else str(value)
    return text if len(text) <= 80 else text[:79] + "…"


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


def plot_rows(report: Report) -> list[Row]:
    """The rows drawn by :func:`render_plot`: plotted metrics with a relative change."""
    return [r for r in report.rows if r.plot and r.change.relative is not None]


def render_plot(report: Report, path: str | os.PathLike[str]) -> None:
    """Write :func:`plot_png` of ``report`` to ``path``, atomically.

    Args:
        report: the report.
        path: the PNG to write (its directory must exist).

    Raises:
        MissingDependencyError, ReportError: from :func:`plot_png`.
        UsageError: ``path`` cannot be written (:func:`check_output_file`).
    """
    from recipecli.output import atomic_write_bytes
    from recipecli.safe_write import PLOT

    check_output_file(path, "--plot")
    read = (*report.baseline_files, *report.candidate_files, *sum(report.eval_files, ()))
    inputs = [(f"the input file {p}", p) for p in read]
    png = plot_png(report, name=str(path))
    where = {"what": "--plot file", "noun": "--plot path"}
    atomic_write_bytes(path, png, kind=PLOT, inputs=inputs, **where)


def _plot_title(report: Report) -> str:
    """Model, workload and how far the runs go, for the chart's title (three lines)."""
    w = report.workload
    a, b = report.labels
    n_a, n_b = report.runs
    bits = []
    if w.get("dataset_name") is not None:
        bits.append(f"dataset {w['dataset_name']}")
    bits += [
        f"{_show(w.get('num_prompts'))} prompts",
        f"concurrency {_show(w.get('max_concurrency'))}",
        f"rate {_show(_normalise(w.get('request_rate')))}",
        f"~{_show(w.get('mean_input_tokens'))} in / ~{_show(w.get('mean_output_tokens'))} out "
        "tokens per request",
    ]
    if report.gpus:
        bits.append(f"{report.gpus} GPUs")
    if n_a >= 2 and n_b >= 2:
        noise = (
            f"{n_a} vs {n_b} runs: bar = change of the means, whisker = 95% CI (Welch t); "
            "pale = not significant"
        )
    elif n_a == n_b == 1:
        noise = "1 run per side: spread unknown, so no bar is a verdict (pale bars)"
    else:
        noise = f"{n_a} vs {n_b} runs: spread of one side unknown, so no bar is a verdict (pale)"
    lines = [f"{w.get('model_id')}: {b} vs {a}", ", ".join(bits), noise]
    warned = [f.code for f in report.findings if f.severity in ("error", "warning")]
    if warned:
        lines.append("read the notes first: " + ", ".join(dict.fromkeys(warned)))
    return "\n".join(lines)


def _plot_label(row: Row) -> str:
    """The change without its interval, plus the verdict when one is supported."""
    text = row.change.text.split(" (", 1)[0]
    if row.change.verdict in ("improvement", "regression"):
        return f"{text} · {row.change.verdict}"
    if row.change.verdict == "not_significant":
        return f"{text} · not significant"
    return text


#: Bar colours: (favourable, significant) → colour. Pale = the runs do not support a verdict.
PLOT_COLOURS: dict[tuple[bool | None, bool], str] = {
    (True, True): "#2e7d32",
    (False, True): "#c62828",
    (True, False): "#a5d6a7",
    (False, False): "#ef9a9a",
    (None, True): "#9e9e9e",
    (None, False): "#9e9e9e",
}


def plot_png(report: Report, *, name: str = "--plot") -> bytes:
    """A PNG bar chart of the relative changes (candidate vs baseline).

    Bars are the signed relative change of the means in percent: green where the change is in
    the better direction, red where worse; saturated only when the change is significant, pale
    when the runs cannot support a verdict (one run per side, or an interval containing 0).
    With repeated runs each bar has a whisker: the 95 % Welch t interval relative to the
    baseline mean. The title names the model, the workload and the run counts; each bar is
    annotated with its change (and verdict, when there is one).

    Args:
        report: the report.
        name: what the error message names when there is nothing to plot.

    Returns:
        The PNG file's bytes (deterministic for the same report).

    Raises:
        MissingDependencyError: matplotlib is not installed (``pip install -e ".[plot]"``).
        ReportError: no row has a relative change to draw.
    """
    try:
        import matplotlib

        matplotlib.use("Agg", force=True)
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError("--plot needs matplotlib", hint=install_hint("plot")) from None
    from io import BytesIO

    rows = plot_rows(report)
    if not rows:
        raise ReportError("nothing to plot: no metric has a relative change", path=name)
    rows = rows[::-1]  # first row on top
    labels = [r.label for r in rows]
    values = [r.change.relative * 100 for r in rows]  # type: ignore[operator]
    cols = [
        PLOT_COLOURS[(r.change.favourable, r.change.significance == "significant")] for r in rows
    ]
    texts = [_plot_label(r) for r in rows]
    lows, highs, whisker = [], [], []
    for y, (r, v) in enumerate(zip(rows, values, strict=True)):
        iv, base = r.change.interval, r.baseline
        if iv is not None and base is not None and base.mean and iv.high > iv.low:
            lows.append(v - iv.low / base.mean * 100)
            highs.append(iv.high / base.mean * 100 - v)
            whisker.append(y)
        else:
            lows.append(0.0)
            highs.append(0.0)
    title = _plot_title(report)
    width_in, dpi = 11.0, 120
    # Room right of the axes for the change column: ~7.5 px per character at 9 pt and 120 dpi.
    text_px = 7.5 * max(len(t) for t in texts) + 30
    right = min(0.86, 1 - text_px / (width_in * dpi))
    fig, ax = plt.subplots(
        figsize=(width_in, 0.55 * len(rows) + 0.3 * title.count("\n") + 1.8), dpi=dpi
    )
    try:
        edges = ["#616161" if v else "none" for v in values]
        ax.barh(labels, values, color=cols, height=0.6, edgecolor=edges, linewidth=0.5)
        if whisker:
            ax.errorbar(
                [values[y] for y in whisker],
                whisker,
                xerr=[[lows[y] for y in whisker], [highs[y] for y in whisker]],
                fmt="none",
                ecolor="#212121",
                elinewidth=1.0,
                capsize=4,
            )
        ends = [v - lo for v, lo in zip(values, lows, strict=True)]
        ends += [v + hi for v, hi in zip(values, highs, strict=True)]
        lo, hi = min(0.0, *ends), max(0.0, *ends)
        pad = 0.08 * ((hi - lo) or 1.0)
        ax.set_xlim(lo - pad, hi + pad)
        ax.xaxis.set_major_formatter(lambda x, _pos: f"{x:+.0f}%" if x else "0")
        ax.axvline(0, color="#424242", linewidth=0.8)
        # The change of the table, in a column right of the bars (never over a bar).
        text_at = ax.get_yaxis_transform()  # x in axes fraction, y in data
        for y, (text, colour) in enumerate(zip(texts, cols, strict=True)):
            shade = {"#a5d6a7": "#2e7d32", "#ef9a9a": "#c62828"}.get(colour, colour)
            ax.text(
                1.02, y, text, transform=text_at, va="center", ha="left", fontsize=9, color=shade
            )
        a, b = report.labels
        ax.set_xlabel(f"relative change of {b} vs {a} (green = better, red = worse)")
        ax.set_title(title, fontsize=10, loc="left")
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        fig.tight_layout()
        fig.subplots_adjust(right=right)
        buf = BytesIO()
        # The Software tag marks the PNG as a previous --plot output (recipecli.safe_write PLOT
        # kind, which --plot may replace); it is also what makes the bytes reproducible.
        fig.savefig(buf, format="png", metadata={"Software": "recipecli report --plot"})
    finally:
        plt.close(fig)
    return buf.getvalue()


def check_output_file(path: str | os.PathLike[str], option: str) -> None:
    """Refuse an output file that cannot be written, before any work is done or written.

    The checks of :func:`recipecli.safe_write.prepare_file` without inputs: the folder rule,
    special files, folders, existing files that are not a previous output of ``option``.

    Args:
        path: the file ``option`` names (``-o`` or ``--plot``).
        option: the option, for the message.

    Raises:
        UsageError: one line naming ``path``, e.g. ``cannot write --plot file: it is a
            directory`` or ``cannot write -o file: directory D does not exist — give another
            -o path or create D first``.
    """
    from recipecli.safe_write import PLOT, REPORT, prepare_file

    kind = PLOT if option == "--plot" else REPORT
    prepare_file(path, what=f"{option} file", noun=f"{option} path", kind=kind)


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
