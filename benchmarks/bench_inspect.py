"""Benchmark `recipecli inspect` on a full-size sparse DeepSeek-V3 checkpoint.

Builds once (cached in ``--workdir``) a 163-shard, ~688.6 GB apparent checkpoint from
``tests/fixtures/configs/deepseek-ai__DeepSeek-V3/config.json`` with
:func:`recipecli.testing.specs.target_specs` (large tensors are holes of sparse files, so it
costs a few MB of disk), then prints:

* wall time of ``recipecli --help`` (subprocess, best of N);
* wall time of ``recipecli inspect DIR --json`` (subprocess, best of N);
* bytes read: ``IO_STATS`` of an in-process inspect, and ``rchar`` from ``/proc/self/io`` of the
  subprocess (which also counts reading Python modules; ``--help``'s figure is the baseline),
  against the apparent checkpoint size;
* whether torch got imported (in-process and in the subprocess).

Targets: inspect < 1.5 s on a 2-core machine, bytes read < 0.01 % of the checkpoint,
no torch. Exit status 1 when a target is missed.

Usage::

    python benchmarks/bench_inspect.py [--workdir DIR] [--shards 163] [--repeat 3] [--rebuild]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "tests" / "fixtures" / "configs" / "deepseek-ai__DeepSeek-V3" / "config.json"

INSPECT_TARGET_S = 1.5
READ_FRACTION_TARGET = 1e-4  # 0.01 %

# Runs the CLI in a child and reports, at exit, /proc/self/io's rchar and whether torch loaded.
_WRAPPER = """
import atexit, json, sys
def _report():
    io = {}
    try:
        for line in open('/proc/self/io'):
            k, v = line.split(':')
            io[k.strip()] = int(v)
    except OSError:
        pass
    with open(sys.argv[1], 'w') as fh:
        json.dump({'rchar': io.get('rchar'), 'torch': 'torch' in sys.modules}, fh)
atexit.register(_report)
from recipecli.cli import main
main(sys.argv[2:])
"""


def build(workdir: Path, shards: int, rebuild: bool) -> Path:
    """Build (or reuse) the sparse checkpoint; returns its directory."""
    from recipecli.testing.builder import write_checkpoint
    from recipecli.testing.specs import target_specs

    root = workdir / f"deepseek-v3-{shards}-shards"
    marker = workdir / f"deepseek-v3-{shards}-shards.built.json"
    if marker.is_file() and root.is_dir() and not rebuild:
        return root
    if root.exists():
        shutil.rmtree(root)
    config = json.loads(CONFIG.read_text())
    t0 = time.perf_counter()
    specs = target_specs(config)
    write_checkpoint(root, config, specs, num_shards=shards)
    marker.write_text(json.dumps({"tensors": len(specs), "seconds": time.perf_counter() - t0}))
    print(
        f"built {root} ({len(specs)} tensors) in {time.perf_counter() - t0:.1f} s", file=sys.stderr
    )
    return root


def best_of(cmd: list[str], repeat: int) -> tuple[float, subprocess.CompletedProcess[str]]:
    best, proc = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        best = min(best, time.perf_counter() - t0)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()}")
    assert proc is not None
    return best, proc


def child_stats(args: list[str]) -> dict:
    with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
        proc = subprocess.run(
            [sys.executable, "-c", _WRAPPER, out.name, *args], capture_output=True, text=True
        )
        if proc.returncode != 0:
            raise SystemExit(f"child failed: {proc.stderr.strip()}")
        return json.load(open(out.name))


def in_process(root: Path) -> dict:
    """Inspect in this process, timing each stage of ``recipecli inspect --json``."""
    import contextlib
    import io

    from recipecli.checkpoint import IO_STATS, open_checkpoint
    from recipecli.inspect import summarize, tensor_table
    from recipecli.output import emit_json, to_jsonable

    IO_STATS.bytes_read = IO_STATS.files_opened = 0
    stages: dict[str, float] = {}
    t0 = time.perf_counter()
    ck = open_checkpoint(str(root))
    stages["open_checkpoint"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    summary = summarize(ck)
    stages["summarize"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    table = tensor_table(ck)
    stages["tensor_table"] = time.perf_counter() - t0
    doc = {**to_jsonable(summary), "tensors": table}
    with contextlib.redirect_stdout(io.StringIO()):
        t0 = time.perf_counter()
        emit_json(doc)
        stages["emit_json"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    jsonable = to_jsonable(doc)
    stages["  of which to_jsonable"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    json.dumps(jsonable, ensure_ascii=False)
    stages["  (what-if) json.dumps without indent"] = time.perf_counter() - t0
    return {
        "stages": stages,
        "bytes_read": IO_STATS.bytes_read,
        "files_opened": IO_STATS.files_opened,
        "apparent_bytes": ck.total_bytes,
        "tensors": len(ck.tensors),
        "shards": len(ck.shards),
        "torch_imported": "torch" in sys.modules,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "recipecli-bench")
    ap.add_argument("--shards", type=int, default=163)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rebuild", action="store_true")
    ns = ap.parse_args()
    ns.workdir.mkdir(parents=True, exist_ok=True)
    root = build(ns.workdir, ns.shards, ns.rebuild)
    disk = sum(f.stat().st_blocks * 512 for f in root.iterdir())
    cli = [sys.executable, "-m", "recipecli"]

    help_s, _ = best_of([*cli, "--help"], ns.repeat)
    inspect_s, proc = best_of([*cli, "inspect", str(root), "--json"], ns.repeat)
    doc = json.loads(proc.stdout)
    human_s, _ = best_of([*cli, "inspect", str(root)], ns.repeat)
    help_child = child_stats(["--help"])
    inspect_child = child_stats(["inspect", str(root), "--json"])
    ip = in_process(root)

    apparent = ip["apparent_bytes"]
    frac = ip["bytes_read"] / apparent
    child_ck = inspect_child["rchar"] - help_child["rchar"] if inspect_child["rchar"] else None
    print(f"checkpoint: {root}")
    print(f"  shards {ip['shards']}, tensors {ip['tensors']} (JSON table: {len(doc['tensors'])})")
    print(f"  apparent size {apparent:,} bytes ({apparent / 1e9:.1f} GB); on disk {disk:,} bytes")
    print(f"recipecli --help: {help_s:.3f} s (best of {ns.repeat})")
    print(f"recipecli inspect --json: {inspect_s:.3f} s (best of {ns.repeat})")
    print(f"recipecli inspect (human summary): {human_s:.3f} s (best of {ns.repeat})")
    print("  in-process stages of inspect --json:")
    for stage, seconds in ip["stages"].items():
        print(f"    {stage:40s} {seconds:.3f} s")
    print(
        f"bytes read (IO_STATS, in-process): {ip['bytes_read']:,} = {100 * frac:.5f} % of the "
        f"checkpoint, {ip['files_opened']} files opened"
    )
    if child_ck is not None:
        print(
            f"bytes read (subprocess /proc/self/io rchar): inspect {inspect_child['rchar']:,}, "
            f"--help {help_child['rchar']:,}, difference {child_ck:,} "
            f"= {100 * child_ck / apparent:.5f} %"
        )
    torch_any = ip["torch_imported"] or help_child["torch"] or inspect_child["torch"]
    print(
        f"torch imported: in-process {ip['torch_imported']}, --help {help_child['torch']}, "
        f"inspect {inspect_child['torch']}"
    )
    checks = {
        f"inspect < {INSPECT_TARGET_S} s": inspect_s < INSPECT_TARGET_S,
        "bytes read < 0.01 %": frac < READ_FRACTION_TARGET,
        "no torch": not torch_any,
    }
    for name, met in checks.items():
        print(f"target {name}: {'met' if met else 'MISSED'}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
