"""End to end: ``render --what bench`` -> a stub ``vllm bench serve`` -> ``report`` (issue #28 item 5).

The stub (tests/e2e/stub_vllm_bench.py) writes the result JSON only when the argv asks for one
and to the path it names, as vLLM v0.33.0 does (vllm/benchmarks/serve.py ``main``: ``if
args.save_result or args.append_result``; ``compute_result_filename``: ``--result-filename``,
under ``--result-dir`` when given). A recipe whose ``bench`` section says nothing about saving
therefore gets a result only because recipecli adds ``--save-result``.

Figures (chosen by hand): both arms produce 81,920 output tokens (160 prompts x 512); the
baseline takes 100 s and the candidate 80 s, so output throughput is 819.2 vs 1,024 tok/s,
+25.00% (1024 / 819.2 = 1.25), and mean TPOT 20 vs 16 ms, 20.00% lower.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

STUB = Path(__file__).with_name("stub_vllm_bench.py")

RECIPE = """\
name: my-llama
title: my Llama
target: meta-llama/Llama-3.1-8B-Instruct
draft: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B
speculative:
  method: eagle3
  num_speculative_tokens: 3
serve:
  tensor_parallel_size: 1
  port: 8000
bench:
  backend: openai-chat
  endpoint: /v1/chat/completions
  dataset_name: random
  random_input_len: 1024
  random_output_len: 512
  max_concurrency: 16
  num_prompts: 160
"""


def _figures(duration: float, tpot: float) -> dict[str, float | int]:
    out_tokens, in_tokens = 160 * 512, 160 * 1024
    return {
        "duration": duration,
        "completed": 160,
        "failed": 0,
        "total_input_tokens": in_tokens,
        "total_output_tokens": out_tokens,
        "output_throughput": out_tokens / duration,
        "total_token_throughput": (in_tokens + out_tokens) / duration,
        "mean_tpot_ms": tpot,
        "mean_ttft_ms": 150.0,
        "spec_decode_acceptance_rate": 50.0,
        "spec_decode_acceptance_length": 2.5,
    }


def _recipecli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "recipecli", *args], cwd=cwd, env=env, capture_output=True, text=True
    )


def _bench(cwd: Path, argv: list[str], figures: dict[str, float | int]) -> str:
    """Run the stub in place of ``vllm bench serve`` (the rendered argv's first three items)."""
    assert argv[:3] == ["vllm", "bench", "serve"]
    env = {**os.environ, "STUB_BENCH_FIGURES": json.dumps(figures)}
    proc = subprocess.run(
        [sys.executable, str(STUB), *argv[3:]], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def _render(cwd: Path, *sets: str) -> list[str]:
    args = ["render", "recipe.yaml", "--engine", "vllm", "--what", "bench", "--format"]
    proc = _recipecli(cwd, *args, "argv-json", *(a for s in sets for a in ("--set", s)))
    assert proc.returncode == 0, proc.stderr
    argv: list[str] = json.loads(proc.stdout)["argv"]
    return argv


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "recipe.yaml").write_text(RECIPE, encoding="utf-8")
    return tmp_path


def test_render_bench_report(work: Path):
    base = _render(work, "label=baseline", "result_dir=runs")
    cand = _render(work, "label=candidate", "result_dir=runs")
    assert "--save-result" in base and "--save-result" in cand
    assert _bench(work, base, _figures(100.0, 20.0)) == "runs/baseline-c16.json"
    assert _bench(work, cand, _figures(80.0, 16.0)) == "runs/candidate-c16.json"

    proc = _recipecli(work, "report", "runs/baseline-c16.json", "runs/candidate-c16.json", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    rows = {r["key"]: r for r in report["rows"]}
    assert rows["output_throughput"]["baseline"]["mean"] == pytest.approx(819.2)
    assert rows["output_throughput"]["candidate"]["mean"] == pytest.approx(1024.0)
    assert rows["output_throughput"]["change"] == "+25.00%"
    assert report["workload_differences"] == []
    # the workload the metadata recorded (vLLM does not save dataset settings itself)
    assert report["workload"]["dataset_name"] == "random"
    assert report["workload"]["random_input_len"] == "1024"


def test_default_file_name_lands_in_the_current_directory(work: Path):
    argv = _render(work)
    # --label my-llama-vllm (recipe-engine; no hardware profile), -c16 from max_concurrency
    assert _bench(work, argv, _figures(100.0, 20.0)) == "my-llama-vllm-c16.json"
    saved = json.loads((work / "my-llama-vllm-c16.json").read_text())
    assert saved["label"] == "my-llama-vllm" and saved["max_concurrency"] == 16
    assert saved["recipe"] == "my-llama" and saved["engine"] == "vllm"


def test_without_save_result_vllm_writes_nothing(work: Path):
    """What the rendered command was before: --result-filename alone saves no file."""
    argv = _render(work, "save_result=false")
    assert "--save-result" not in argv and "--result-filename" in argv
    assert _bench(work, argv, _figures(100.0, 20.0)) == ""
    assert list(work.glob("*.json")) == []


def test_append_result_is_kept_and_saves(work: Path):
    argv = _render(work, "append_result=true")
    assert "--append-result" in argv and "--save-result" not in argv
    assert _bench(work, argv, _figures(100.0, 20.0)) == "my-llama-vllm-c16.json"
