"""A stand-in for ``vllm bench serve`` that sends no request: it reads the argv recipecli renders
and writes the result JSON where, and as, vLLM v0.33.0 would (written for these tests from the
behaviour of vllm/benchmarks/serve.py, not copied from it).

What it models (vllm/benchmarks/serve.py at v0.33.0):

* ``main``: a result file is written only when ``--save-result`` or ``--append-result`` is given
  (``if args.save_result or args.append_result``); ``--append-result`` appends to the file.
* ``compute_result_filename``: the file is ``--result-filename`` when given, else
  ``{label}-{request_rate}qps[-concurrency{N}]-{model basename}-{date}.json``; with
  ``--result-dir`` it is written in that directory (created when missing).
* ``main``: the saved document starts with ``date``, ``endpoint_type``, ``backend``, ``label``,
  ``model_id``, ``tokenizer_id``, ``num_prompts``, then every ``--metadata KEY=VALUE`` as a
  top-level string, ``request_rate`` (``"inf"`` when unbounded), ``burstiness``,
  ``max_concurrency``, then the benchmark's figures.

The figures come from the ``STUB_BENCH_FIGURES`` environment variable (a JSON object:
``output_throughput``, ``mean_tpot_ms``, ... as vLLM saves them); the stub prints the path it
wrote, or nothing when the argv asks for no result.
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="vllm bench serve")
    p.add_argument("--backend", default="openai")
    p.add_argument("--base-url")
    p.add_argument("--model", required=True)
    p.add_argument("--tokenizer")
    p.add_argument("--num-prompts", type=int, default=1000)
    p.add_argument("--request-rate", type=float, default=float("inf"))
    p.add_argument("--burstiness", type=float, default=1.0)
    p.add_argument("--max-concurrency", type=int)
    p.add_argument("--label")
    p.add_argument("--save-result", action="store_true")
    p.add_argument("--append-result", action="store_true")
    p.add_argument("--metadata", nargs="*")
    p.add_argument("--result-dir")
    p.add_argument("--result-filename")
    return p


def result_path(args: argparse.Namespace, label: str, date: str) -> str | None:
    """Where vLLM writes the result (None: it writes none)."""
    if not (args.save_result or args.append_result):
        return None
    concurrency = f"-concurrency{args.max_concurrency}" if args.max_concurrency is not None else ""
    name = args.result_filename or (
        f"{label}-{args.request_rate}qps{concurrency}-{args.model.split('/')[-1]}-{date}.json"
    )
    if args.result_dir:
        os.makedirs(args.result_dir, exist_ok=True)
        name = os.path.join(args.result_dir, name)
    return name


def main(argv: list[str]) -> int:
    args, _ = _parser().parse_known_args(argv)
    date = "20260101-000000"
    label = args.label or args.backend
    doc: dict[str, object] = {
        "date": date,
        "endpoint_type": args.backend,
        "backend": args.backend,
        "label": label,
        "model_id": args.model,
        "tokenizer_id": args.tokenizer or args.model,
        "num_prompts": args.num_prompts,
    }
    for item in args.metadata or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit("Invalid metadata format. Please use KEY=VALUE format.")
        doc[key.strip()] = value.strip()
    rate = args.request_rate
    doc["request_rate"] = rate if rate < float("inf") else "inf"
    doc["burstiness"] = args.burstiness
    doc["max_concurrency"] = args.max_concurrency
    doc.update(json.loads(os.environ.get("STUB_BENCH_FIGURES", "{}")))
    path = result_path(args, label, date)
    if path is None:
        return 0
    with open(path, "a+" if args.append_result else "w", encoding="utf-8") as out:
        if args.append_result and out.tell() != 0:
            out.write("\n")
        json.dump(doc, out)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
