"""What the report knows about a metric: the rows of the A/B table, as data.

- :data:`METRICS`: bench JSON key, row label, unit, better direction, change kind and wording.
- :data:`WORDINGS`: how a rise and a fall read ("+64.10%", "37.03% lower", "39.06% faster").
- :data:`DEFAULT_LABELS`: the column names of A and B.

A new metric is one :class:`MetricSpec` in :data:`METRICS` (docs/report.md, "Metrics").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Better = Literal["higher", "lower"]

ChangeKind = Literal["relative", "points"]

#: improvement / regression only for a significant change; "unknown" when the spread is unknown
#: (one run on a side, no lm-eval stderr); "not_significant" when the interval contains 0.
Verdict = Literal["improvement", "regression", "same", "n/a", "unknown", "not_significant"]

Significance = Literal["significant", "not_significant", "unknown"]

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

DEFAULT_LABELS: tuple[str, str] = ("Baseline", "Candidate")
