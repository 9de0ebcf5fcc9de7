"""Time and measure ``recipecli check`` with and without the kernel verification; print figures.

Run (any machine; CPU-only boxes exercise the torch-free interpreter path)::

    python -m recipecli.kernels.bench_check                  # bundled llama3.1-8b-eagle3
    python -m recipecli.kernels.bench_check --runs 7 --example NAME

Each run is a fresh ``python -m recipecli check --example NAME`` process (so imports count, as a
user sees them), once with the default ``--kernel auto`` and once with ``--kernel skip``; the wall
time and the child's peak resident set size (``ru_maxrss`` of that child alone, from
``os.wait4``) are recorded, with the child's CPU time (user + system: what the run costs when
other processes compete for the cores, as on a shared 2-core box), and the median over ``--runs``
is printed with the targets (1.0 s and 200 MB with verification). ``--json`` prints one JSON document. Imports nothing heavy itself.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import TypedDict

TARGET_SECONDS = 1.0
TARGET_MB = 200.0


class ModeFigures(TypedDict):
    """One ``--kernel`` mode: medians over the runs, each run's wall time, the exit statuses."""

    wall_s: float
    cpu_s: float
    peak_mb: float
    wall_all: list[float]
    exit: list[int]


class _Figures(TypedDict):
    example: str
    runs: int
    cpus: int | None
    modes: dict[str, ModeFigures]


class Figures(_Figures, total=False):
    """What :func:`measure` returns (and ``--json`` prints): ``targets`` maps each target to met."""

    targets: dict[str, bool]


def one_run(args: list[str]) -> tuple[float, float, float, int]:
    """(wall s, CPU s (user + system), peak RSS MB, exit status) of ``python -m recipecli ARGS``."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "recipecli", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss / 1024.0, proc.returncode  # ru_maxrss: KiB on Linux


def measure(example: str, runs: int) -> Figures:
    """Median wall time and peak RSS of ``check --example`` with ``--kernel auto`` and ``skip``."""
    res: Figures = {"example": example, "runs": runs, "cpus": os.cpu_count(), "modes": {}}
    for mode in ("auto", "skip"):
        walls, cpus, rss, codes = [], [], [], set()
        for _ in range(runs):
            w, c, m, code = one_run(["check", "--example", example, "--kernel", mode])
            walls.append(w)
            cpus.append(c)
            rss.append(m)
            codes.add(code)
        res["modes"][mode] = {"wall_s": round(statistics.median(walls), 3),
                              "cpu_s": round(statistics.median(cpus), 3),
                              "peak_mb": round(statistics.median(rss), 1),
                              "wall_all": [round(w, 3) for w in walls], "exit": sorted(codes)}  # fmt: skip
    auto = res["modes"]["auto"]
    res["targets"] = {
        "wall_s <= 1.0": auto["wall_s"] <= TARGET_SECONDS,
        "cpu_s <= 1.0": auto["cpu_s"] <= TARGET_SECONDS,
        "peak_mb <= 200": auto["peak_mb"] <= TARGET_MB,
    }
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--example", default="llama3.1-8b-eagle3")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    res = measure(args.example, args.runs)
    if args.json:
        print(json.dumps(res, indent=1))
        return 0
    print(f"recipecli check --example {args.example}  ({res['cpus']} CPUs, median of {args.runs})")
    for mode, m in res["modes"].items():
        print(f"  --kernel {mode:5} wall {m['wall_s']:5.2f} s  cpu {m['cpu_s']:5.2f} s  "
              f"peak {m['peak_mb']:6.1f} MB   wall of each run {m['wall_all']}")  # fmt: skip
    for name, ok in res["targets"].items():
        print(f"  target {name}: {'met' if ok else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
