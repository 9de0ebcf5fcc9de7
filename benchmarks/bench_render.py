#!/usr/bin/env python3
"""Wall time of `recipecli render` on the bundled recipes (target: < 0.5 s per render).

Prints, per (recipe, engine): the in-process time of the first render (cold: imports, YAML,
catalog and snapshot loading) and the median of warm renders, plus the wall time of a whole
`python -m recipecli render` process.

    python benchmarks/bench_render.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time


def main() -> int:
    t0 = time.perf_counter()
    from recipecli.recipes import format_shell, render_all

    import_s = time.perf_counter() - t0
    print(f"import recipecli.recipes: {import_s * 1000:.1f} ms")
    cases = [
        ("minimax-m3-eagle3", "vllm", "mi355x"),
        ("minimax-m3-eagle3", "tokenspeed", None),
        ("llama3.1-8b-eagle3", "vllm", None),
        ("gpt-oss-120b-eagle3", "tokenspeed", None),
    ]
    worst = 0.0
    for recipe, engine, hw in cases:
        times = []
        for _ in range(20):
            t = time.perf_counter()
            for r in render_all(recipe, engine, hardware=hw):
                format_shell(r.env, r.argv, head=r.head)
            times.append(time.perf_counter() - t)
        print(
            f"{recipe:22s} {engine:10s} first {times[0] * 1000:7.1f} ms  "
            f"median {statistics.median(times) * 1000:6.1f} ms"
        )
        worst = max(worst, times[0])
    walls = []
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "recipecli",
                "render",
                "minimax-m3-eagle3",
                "--engine",
                "vllm",
                "--hardware",
                "mi355x",
                "--what",
                "all",
            ],
            check=True,
            capture_output=True,
        )
        walls.append(time.perf_counter() - t)
    wall = min(walls)
    print(f"process `recipecli render minimax-m3-eagle3 --what all`: best of 3 {wall:.3f} s")
    ok = worst + import_s < 0.5
    print(
        f"in-process render incl. imports: {(worst + import_s):.3f} s "
        f"({'OK' if ok else 'OVER'} the 0.5 s target)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
