"""Reading and validating the saved results: `vllm bench serve --save-result` and lm-eval files.

- :data:`REQUIRED_BENCH_KEYS`: keys without which a bench file is refused.
- :data:`USABLE_RUN_BOUNDS`: figures a run that measured anything has.

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
`spec_decode_draft_tokens` and `spec_decode_accepted_tokens`).

lm-eval layout: ``{"results": {TASK: {"METRIC,FILTER": value, "METRIC_stderr,FILTER": value
or "N/A", "alias": ..., ...}}, "higher_is_better": {TASK: {METRIC: bool}}, ...}``.

Every file is read through :mod:`recipecli.safeio` (regular files only, size and nesting
capped); every failure is one :class:`~recipecli.errors.ReportError` line naming the file.
"""

from __future__ import annotations

import glob
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from recipecli.errors import ReportError, UsageError
from recipecli.report.metrics import METRICS
from recipecli.safeio import json_loads

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

#: Optional metric keys: absent or null means "not measured" (e.g. no speculative decoding).
_OPTIONAL_KEYS = frozenset([*(m.source for m in METRICS if not m.required), *SPEC_COUNT_KEYS])

_GLOB_CHARS = set("*?[")

#: Largest bench or eval file read (bench results without --save-detailed are a few KiB; with
#: it, per-request lists of a 10 000-prompt run stay far under this).
MAX_INPUT_BYTES = 64 * 1024 * 1024

#: Largest magnitude a bench or eval number may have: counts and rates are far below it, and
#: every figure stays exact in a float and far from overflow in the report's arithmetic.
MAX_ABS_NUMBER = 1e15


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
    """One validated lm-eval result file.

    Attributes:
        path: the file as given.
        scores: its scores keyed by (task, metric with filter), e.g.
            ``("gsm8k", "exact_match,strict-match")``.
    """

    path: str
    scores: Mapping[tuple[str, str], EvalScore]


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


def _is_number(value: object) -> TypeGuard[float]:
    """A finite int or float (not bool) of magnitude at most :data:`MAX_ABS_NUMBER` (for the
    type checker: a number, ``int`` included)."""
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
            a finite number, an acceptance rate outside 0..100 %, or an unusable run
            (:func:`unusable_reasons`: duration <= 0, no completed request, a non-positive
            throughput, a negative count or latency).
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
    _check_acceptance_rate(data, path)
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


#: ``spec_decode_acceptance_rate`` is a percent of drafted tokens accepted (accepted / drafted
#: x 100, vllm v0.33.0 ``vllm/benchmarks/serve.py``), so it lies in [0, 100].
ACCEPTANCE_RATE_KEY = "spec_decode_acceptance_rate"


def _check_acceptance_rate(data: Mapping[str, Any], path: str) -> None:
    """Refuse an acceptance rate outside 0..100 % (absent or null: not measured, accepted).

    Raises:
        ReportError: the rate is below 0 or above 100.
    """
    rate = data.get(ACCEPTANCE_RATE_KEY)
    if _is_number(rate) and not 0 <= rate <= 100:
        raise ReportError(
            f"{ACCEPTANCE_RATE_KEY}={rate:g} is not a percent (accepted / drafted tokens x 100 "
            "lies in 0..100)",
            path=path,
            hint="the file was edited or is not from `vllm bench serve --save-result`; "
            "regenerate it",
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
    given = data.get("higher_is_better")
    hib: dict[str, Any] = given if isinstance(given, dict) else {}
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
            of_task = hib.get(task)
            task_hib: dict[str, Any] = of_task if isinstance(of_task, dict) else {}
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
