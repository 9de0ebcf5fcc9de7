"""Shared helpers of the report tests: vLLM PR #47391's A/B figures as `vllm bench serve
--save-result` JSON, file writing, and running `recipecli report` in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recipecli.cli import main

GPUS = 4
# vLLM PR #47391's A/B table, per GPU (TP4): (output tok/s, total tok/s, TPOT ms, TTFT ms, acc %, acc len, s)
PR_BASELINE = (212.514, 2001.188, 69.584, 2173.242, 2.895, 1.087, 773.193)
PR_CANDIDATE = (348.736, 3283.959, 43.819, 2228.905, 56.467, 2.694, 471.170)


def bench_json(figures=PR_BASELINE, **overrides) -> dict:
    """A bench result carrying the PR's per-GPU figures as vLLM saves them (totals x 4 GPUs)."""
    out_gpu, tot_gpu, tpot, ttft, acc, acc_len, dur = figures
    data = {
        "date": "20260101-000000",
        "backend": "openai-chat",
        "model_id": "amd/MiniMax-M3-MXFP4",
        "num_prompts": 640,
        "request_rate": "inf",
        "burstiness": 1.0,
        "max_concurrency": 64,
        "duration": dur,
        "completed": 640,
        "failed": 0,
        # (total - output) tok/s x duration: (2001.188 - 212.514) x 4 x 773.193 ≈ 5531980
        "total_input_tokens": 5531972,
        "total_output_tokens": 657257,
        "output_throughput": out_gpu * GPUS,
        "total_token_throughput": tot_gpu * GPUS,
        "mean_tpot_ms": tpot,
        "mean_ttft_ms": ttft,
        "spec_decode_acceptance_rate": acc,
        "spec_decode_acceptance_length": acc_len,
    }
    data.update(overrides)
    return {k: v for k, v in data.items() if v is not _DROP}


_DROP = object()


def write(path: Path, data) -> str:
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    """Run `recipecli` in-process through main (which owns the exit-code mapping)."""
    with pytest.raises(SystemExit) as exc:
        main(["report", *args])
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


def rows_by_key(stdout: str) -> dict:
    return {r["key"]: r for r in json.loads(stdout)["rows"]}
