"""A/B reports from `vllm bench serve --save-result` JSON files and lm-eval result files.

The report is the table of seed 000 (vLLM's fused EAGLE3 layer-0 RMSNorm PR): completed / failed,
output and total throughput per GPU, mean TPOT, mean TTFT, acceptance rate and length, duration,
and eval scores, with a change column that knows which direction is better.

Everything the report knows about a metric lives in data tables, not in code paths:

- :data:`METRICS`: bench JSON key, row label, unit, better direction, change kind and wording.
- :data:`WORDINGS`: how a rise and a fall read ("+64.10%", "37.03% lower", "39.06% faster").
- :data:`WORKLOAD_KEYS`: what must match between A and B (and between repeated runs of one side).
- :data:`REQUIRED_BENCH_KEYS`: keys without which a bench file is refused.

Bench JSON layout (engine-facts §4; `vllm/benchmarks/serve.py`, `main`): the file is one object
that merges the run's setup (`date`, `backend`/`endpoint_type`, `label`, `model_id`,
`tokenizer_id`, `num_prompts`, every `--metadata KEY=VALUE` as a top-level string,
`request_rate` (a number, or the string ``"inf"``), `burstiness`, `max_concurrency` (null when
unset)) with the measured result (`duration` s, `completed`, `failed`, `total_input_tokens`,
`total_output_tokens`, `request_throughput`, `output_throughput` and `total_token_throughput`
in tok/s summed over all GPUs, `mean_ttft_ms`, `mean_tpot_ms`, …, and with spec decode
`spec_decode_acceptance_rate` (percent) and `spec_decode_acceptance_length`). The dataset name
and `--random-input-len` / `--random-output-len` are NOT saved unless passed via `--metadata`;
the report therefore compares the observed mean input and output tokens per completed request
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
from recipecli.findings import Finding

Better = Literal["higher", "lower"]
ChangeKind = Literal["relative", "points"]
Verdict = Literal["improvement", "regression", "same", "n/a"]

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
        source: the `vllm bench serve` result key (engine-facts §4).
        label: the row label; ``per_gpu`` rows get " / GPU" appended when ``--gpus`` is given.
        short: the name used in a regression label, e.g. "TTFT" → "(TTFT regression)".
        unit: display unit ("tok/s", "ms", "s", "%", or "").
        better: which direction is an improvement.
        wording: a key of :data:`WORDINGS`.
        change: "relative" (percent of the baseline) or "points" (difference of two percents).
        per_gpu: divide by the GPU count (throughputs are summed over all GPUs by vLLM).
        required: a bench file without this key is refused (else the row shows "—").
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


#: The metric rows of seed 000's table, in its order (completed / failed is its own row first).
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
    MetricSpec("mean_tpot", "mean_tpot_ms", "Mean TPOT", "TPOT", "ms", "lower", "higher_lower"),
    MetricSpec("mean_ttft", "mean_ttft_ms", "Mean TTFT", "TTFT", "ms", "lower", "higher_lower"),
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

#: Keys that must hold a finite number (bool is not a number here).
NUMERIC_BENCH_KEYS: tuple[str, ...] = (
    "num_prompts",
    "completed",
    "failed",
    "total_input_tokens",
    "total_output_tokens",
    *(m.source for m in METRICS),
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


#: What "the same workload" means. `dataset_name`, `random_input_len` & co. are not saved by
#: `vllm bench serve` (engine-facts §4); they are compared when both files carry them via
#: `--metadata KEY=VALUE`, and the observed token means stand in for them otherwise.
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
        for k in (
            "dataset_name",
            "random_input_len",
            "random_output_len",
            "random_range_ratio",
            "input_len",
            "output_len",
        )
    ),
)

#: Optional metric keys: absent or null means "not measured" (e.g. no speculative decoding).
_OPTIONAL_KEYS = frozenset(m.source for m in METRICS if not m.required)

DEFAULT_LABELS: tuple[str, str] = ("Baseline", "Candidate")
_GLOB_CHARS = set("*?[")

# ------------------------------------------------------------------------------------------
# Loaded inputs
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
    """Mean and min-max of one metric over the repeated runs of one side.

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

    def to_dict(self) -> dict[str, Any]:
        """JSON form: mean, min, max, n and the per-run values."""
        return {
            "mean": self.mean,
            "min": self.min,
            "max": self.max,
            "n": self.n,
            "values": list(self.values),
        }


@dataclass(frozen=True)
class Change:
    """The change from baseline to candidate of one row.

    Attributes:
        delta: candidate mean - baseline mean (in the row's unit), or None.
        relative: delta / baseline mean (a fraction; 0.641 = +64.10 %), or None.
        verdict: improvement, regression, same, or n/a (a side is missing).
        text: the change column, e.g. "2.56% higher (TTFT regression)".
    """

    delta: float | None
    relative: float | None
    verdict: Verdict
    text: str


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
        """JSON form of the row (plus ``failed`` on the requests row, ``stderr`` on eval rows)."""
        out = {
            "key": self.key,
            "label": self.label,
            "unit": self.unit,
            "better": self.better,
            "baseline": self.baseline.to_dict() if self.baseline else None,
            "candidate": self.candidate.to_dict() if self.candidate else None,
            "delta": self.change.delta,
            "relative": self.change.relative,
            "verdict": self.change.verdict,
            "change": self.change.text,
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
        findings: failed requests (error) and allowed workload differences (warning).
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

    def to_dict(self) -> dict[str, Any]:
        """JSON form of the whole report (what ``--format json`` prints)."""
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
            "rows": [r.to_dict() for r in self.rows],
            "findings": [f.to_dict() for f in self.findings],
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


def _load_json_object(path: str, kind: str) -> dict[str, Any]:
    p = Path(path)
    if p.is_dir():
        raise ReportError(
            "is a directory, not a file", path=path, hint=f"pass the {kind} .json file inside it"
        )
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportError("no such file", path=path, hint=f"pass a {kind} JSON file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"cannot read {kind} file ({exc})", path=path) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(
            f"not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg})",
            path=path,
            hint=f"pass the file written by {kind}; a truncated file means the run did not finish",
        ) from None
    if not isinstance(data, dict):
        raise ReportError(f"expected a JSON object, got {type(data).__name__}", path=path)
    return data


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def load_bench_run(path: str) -> BenchRun:
    """Load and validate one `vllm bench serve --save-result` JSON file (engine-facts §4).

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
        f"{k}={data[k]!r}"
        for k in NUMERIC_BENCH_KEYS
        if k in data and not _is_number(data[k]) and not (data[k] is None and k in _OPTIONAL_KEYS)
    ]
    rate = data["request_rate"]
    if not (_is_number(rate) or rate == "inf" or (isinstance(rate, float) and rate == math.inf)):
        bad.append(f"request_rate={rate!r}")
    mc = data["max_concurrency"]
    if mc is not None and not _is_number(mc):
        bad.append(f"max_concurrency={mc!r}")
    if bad:
        raise ReportError(
            f"non-numeric value(s) {', '.join(bad)}",
            path=path,
            hint="regenerate the file with `vllm bench serve --save-result`",
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
#: request completed in a positive time (engine-facts §4, ``vllm/benchmarks/serve.py``).
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
                    f"results.{task}.{key} is not a number ({value!r})",
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


def describe_change(
    baseline: float | None,
    candidate: float | None,
    *,
    better: Better,
    wording: str,
    kind: ChangeKind,
    short: str,
) -> Change:
    """Word the change from ``baseline`` to ``candidate``.

    Args:
        baseline: baseline mean, or None when the baseline lacks the metric.
        candidate: candidate mean, or None.
        better: "higher" or "lower" is the improvement.
        wording: a key of :data:`WORDINGS`.
        kind: "relative" (percent of baseline) or "points" (difference of two percents).
        short: the metric's name in a regression label.

    Returns:
        The change. The text is "same" when the shown figure rounds to zero, "n/a" when a side
        is missing or a relative change has a zero baseline; a worse value gets
        " (<short> regression)" appended. Percentages have two decimals.

    Example:
        ``describe_change(2173.242, 2228.905, better="lower", wording="higher_lower",
        kind="relative", short="TTFT").text == "2.56% higher (TTFT regression)"``.
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
        return Change(delta, relative, "same", "same")
    rose_text, fell_text = WORDINGS[wording]
    text = (rose_text if delta > 0 else fell_text).format(pct=shown, pts=shown, abs=shown)
    improved = (delta > 0) == (better == "higher")
    if not improved:
        text += f" ({short} regression)"
    return Change(delta, relative, "improvement" if improved else "regression", text)


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
    """Build the A/B report of seed 000 from validated runs.

    Args:
        baseline: one or more bench runs of A (repeated runs → mean and min-max).
        candidate: one or more bench runs of B.
        gpus: GPUs per run; throughput rows are divided by it ("/ GPU"). None keeps totals.
        labels: column labels for A and B.
        eval_baseline: lm-eval runs of A (may be empty).
        eval_candidate: lm-eval runs of B (may be empty).
        allow_different_workloads: report workload differences as warnings instead of failing.

    Returns:
        The report. Findings: ``report.failed_requests`` (error) per file with failed > 0,
        ``report.workload_differs`` (warning) per allowed difference.

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
    findings: list[Finding] = [
        Finding(
            code="report.failed_requests",
            severity="error",
            engine="vllm",
            message=(
                f"{r.path}: {r.data['failed']} of {r.data['completed'] + r.data['failed']} "
                "requests failed; throughput and latency cover only the completed ones — "
                "fix the failures (server log) and rerun"
            ),
            evidence={"file": r.path, "completed": r.data["completed"], "failed": r.data["failed"]},
            source="engine-facts §4 (vllm bench serve result keys)",
        )
        for r in runs
        if r.data["failed"] > 0
    ]
    findings += [
        Finding(
            code="report.workload_differs",
            severity="warning",
            engine="vllm",
            message=d.message() + " (allowed by --allow-different-workloads)",
            evidence={"key": d.key, "reference": d.reference_value, "other": d.other_value},
            source="engine-facts §4 (vllm bench serve result keys)",
        )
        for d in diffs
    ]
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
        )
        label = f"{spec.label} / GPU" if (spec.per_gpu and gpus) else spec.label
        rows.append(Row(spec.key, label, spec.unit, spec.better, sa, sb, change, plot=spec.plot))
    rows += _eval_rows(eval_baseline, eval_candidate, labels)
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
    )


# ------------------------------------------------------------------------------------------
# Rendering
# ------------------------------------------------------------------------------------------


def _show(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.1f}" if not math.isinf(value) else "inf"
    return "unset" if value is None else str(value)


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


def render_markdown(report: Report) -> str:
    """Render the report as a GitHub-flavoured markdown table with a workload line and notes.

    Args:
        report: the report.

    Returns:
        Markdown text ending in a newline. Columns: Metric, the two labels, Change.
    """
    a, b = report.labels
    n_a, n_b = len(report.baseline_files), len(report.candidate_files)
    lines = [
        f"Workload: {_workload_line(report)}.",
        "",
        f"Runs: {a} {n_a}, {b} {n_b}"
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
    notes = [f.message for f in report.findings]
    if n_a > 1 or n_b > 1:
        notes.append(
            "several runs per side: cells show the mean, then (min–max, n=runs), or (n=runs) "
            "when every run shows the same figure."
        )
    if notes:
        lines += ["", "Notes:", ""]
        lines += [f"- {_md_escape(n)}" for n in notes]
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

    check_output_file(path, "--plot")
    atomic_write_bytes(path, plot_png(report, name=str(path)))


def plot_png(report: Report, *, name: str = "--plot") -> bytes:
    """A PNG bar chart of the relative changes (candidate vs baseline).

    Bars are the signed relative change in percent; green is an improvement, red a regression,
    grey unchanged; each bar is annotated with the change text of the table.

    Args:
        report: the report.
        name: what the error message names when there is nothing to plot.

    Returns:
        The PNG file's bytes (deterministic for the same report).

    Raises:
        MissingDependencyError: matplotlib is not installed (``pip install 'recipecli[plot]'``).
        ReportError: no row has a relative change to draw.
    """
    try:
        import matplotlib

        matplotlib.use("Agg", force=True)
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError(
            "--plot needs matplotlib", hint="pip install 'recipecli[plot]'"
        ) from None
    from io import BytesIO

    rows = plot_rows(report)
    if not rows:
        raise ReportError("nothing to plot: no metric has a relative change", path=name)
    colours = {
        "improvement": "#2e7d32",
        "regression": "#c62828",
        "same": "#9e9e9e",
        "n/a": "#9e9e9e",
    }
    labels = [r.label for r in rows][::-1]
    values = [r.change.relative * 100 for r in rows][::-1]  # type: ignore[operator]
    texts = [r.change.text for r in rows][::-1]
    cols = [colours[r.change.verdict] for r in rows][::-1]
    fig, ax = plt.subplots(figsize=(10, 0.55 * len(rows) + 1.7), dpi=120)
    try:
        ax.barh(labels, values, color=cols, height=0.6)
        lo, hi = min(0.0, *values), max(0.0, *values)
        pad = 0.08 * ((hi - lo) or 1.0)
        ax.set_xlim(lo - pad, hi + pad)
        ax.xaxis.set_major_formatter(lambda x, _pos: f"{x:+.0f}%" if x else "0")
        ax.axvline(0, color="#424242", linewidth=0.8)
        # The change text of the table, in a column right of the bars (never over a bar).
        text_at = ax.get_yaxis_transform()  # x in axes fraction, y in data
        for y, (text, colour) in enumerate(zip(texts, cols, strict=True)):
            ax.text(
                1.02, y, text, transform=text_at, va="center", ha="left", fontsize=9, color=colour
            )
        a, b = report.labels
        ax.set_xlabel(f"relative change of {b} vs {a}")
        ax.set_title(f"{b} vs {a} (green = better, red = worse)", fontsize=11)
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        fig.tight_layout()
        buf = BytesIO()
        fig.savefig(buf, format="png")
    finally:
        plt.close(fig)
    return buf.getvalue()


def check_output_file(path: str | os.PathLike[str], option: str) -> None:
    """Refuse an output file that cannot be written, before any work is done or written.

    Args:
        path: the file ``option`` names (``-o`` or ``--plot``).
        option: the option, for the message.

    Raises:
        UsageError: one line naming ``path``: it is a directory, its directory does not exist
            or is a file, or the directory is not writable. Other failures (a read-only or
            virtual file system) surface from :func:`recipecli.output.atomic_write_bytes` as
            the same error type.
    """
    p = Path(path)
    parent = p.parent
    if p.is_dir():
        why = "it is a directory"
    elif parent.exists() and not parent.is_dir():
        why = f"{parent} is a file, not a directory"
    elif not parent.exists():
        why = f"directory {parent} does not exist"
    elif not os.access(parent, os.W_OK | os.X_OK):
        why = f"directory {parent} is not writable"
    else:
        return
    more = f" or create {parent} first" if why.endswith("does not exist") else ""
    raise UsageError(
        f"cannot write {option} file: {why}", path=str(p), hint=f"give another {option} path{more}"
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
