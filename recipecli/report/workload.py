"""What "the same workload" means, and the comparison of A's and B's workloads.

- :data:`WORKLOAD_KEYS`: what must match between A and B (and between repeated runs of one side).

The dataset name and `--random-input-len` / `--random-output-len` are NOT saved by `vllm bench
serve` unless passed via `--metadata`; the report therefore compares the observed mean input
and output tokens per completed request (`total_*_tokens / completed`) and any declared
metadata keys present on both sides.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recipecli.report.inputs import BenchRun, _is_number


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


@dataclass(frozen=True)
class WorkloadDifference:
    """A workload property that differs between two bench files.

    Attributes:
        key: the :data:`WORKLOAD_KEYS` id, e.g. "num_prompts".
        label: its human wording, e.g. "num prompts".
        reference_path: the file compared against (the first baseline run).
        reference_value: the value there (as in the JSON; observed token means are floats).
        other_path: the file that differs.
        other_value: the value there.
    """

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
        elif wk.source is not None and wk.source in data:
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
    differ: bool = a != b  # JSON values (str, number, bool, None, list, dict)
    return differ


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


def _show(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.1f}" if not math.isinf(value) else "inf"
    text = "unset" if value is None else str(value)
    return text if len(text) <= 80 else text[:79] + "…"
