"""Benchmark the fused EAGLE3 norms on a CUDA GPU; write JSON, a markdown table and a PNG plot.

Run (on a GPU machine)::

    python -m recipecli.kernels.bench_rmsnorm --out docs/kernels

Compared in one run, bf16, for N in {1, 8, 64, 512, 4096, 32768} and H in {4096, 6144, 7168}:

* ``fused`` — recipecli's dual RMSNorm + concat kernel (one launch, output allocated per call);
* ``hf_eager`` — HF ``LlamaRMSNorm`` written out in eager torch, twice, then ``torch.cat``;
* ``f_rms_norm`` — ``torch.nn.functional.rms_norm`` twice, then ``torch.cat``;
* ``compile`` — ``torch.compile(hf_eager, dynamic=False)``, ``torch._dynamo.reset()`` per shape;
* ``copy`` — ``dst.copy_(src)`` of the same bytes (read N*2H, write N*2H): the bandwidth ceiling.

and for the grouped ``fc_norm`` (k = 4, H = 6144): ``fused`` (one launch), ``pairs`` (the dual
kernel on chunk pairs, tokenspeed's layout), ``hf_eager``, ``compile`` and ``copy``.

Timing: GPU time per call inside a CUDA graph (``--calls`` calls captured back to back, median
over replays) for N <= ``--graph-max-n``, and the median of ``triton.testing.do_bench`` (eager,
L2 flushed) for every N. Targets (issue 4) are evaluated and written with the results.
Imports torch, triton and matplotlib; the plot is skipped when matplotlib is missing.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F
import triton

from . import rmsnorm_triton as K

NS = (1, 8, 64, 512, 4096, 32768)
HS = (4096, 6144, 7168)
EPS = 1e-5


def hf_rmsnorm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    """HF LlamaRMSNorm.forward written out (engine-facts §7)."""
    xf = x.to(torch.float32)
    var = xf.pow(2).mean(-1, keepdim=True)
    return w * (xf * torch.rsqrt(var + eps)).to(x.dtype)


def graph_time_us(fn: Callable[[], object], calls: int, replays: int = 15) -> float:
    """Median GPU time per call (µs) of ``calls`` back-to-back calls captured in one CUDA graph."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / calls)
    del graph
    return statistics.median(times)


def bench_us(fn: Callable[[], object]) -> float:
    """Median eager time per call (µs) from ``triton.testing.do_bench``."""
    return float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")) * 1000.0


def _measure(methods: dict[str, Callable[[], object]], n: int, args) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for name, fn in methods.items():
        row = {"bench_us": bench_us(fn)}
        if n <= args.graph_max_n:
            row["graph_us"] = graph_time_us(fn, calls=args.calls if n <= 4096 else 4)
        out[name] = row
    return out


def _compiled(fn: Callable[[], torch.Tensor]) -> Callable[[], torch.Tensor]:
    torch._dynamo.reset()
    cfn = torch.compile(fn, dynamic=False)
    for _ in range(3):
        cfn()
    torch.cuda.synchronize()
    return cfn


SWEEP_VARIANTS: tuple[dict, ...] = (
    {"seg_major": False},
    {"num_warps": 4},
    {"num_warps": 16},
    {"rows_per_program": 2, "num_warps": 8},
    {"split": True},
)


def _sweep(fused: Callable[..., object], n: int, args) -> list[dict]:
    """Time launch variants of the fused kernel against its default when ``--sweep`` is given."""
    if not args.sweep:
        return []
    key = "graph_us" if n <= args.graph_max_n else "bench_us"
    res = []
    for variant in ({}, *SWEEP_VARIANTS):
        fn = functools.partial(fused, **variant)
        us = graph_time_us(fn, calls=args.calls) if key == "graph_us" else bench_us(fn)
        res.append({"variant": variant or "default", key: us})
    return res


def dual_case(n: int, h: int, args) -> dict:
    """Benchmark one (N, H) dual case; returns the row written to JSON."""
    dt = torch.bfloat16
    a, b = torch.randn(n, h, device="cuda", dtype=dt), torch.randn(n, h, device="cuda", dtype=dt)
    w1 = (1 + 0.1 * torch.randn(h, device="cuda")).to(dt)
    w2 = (1 + 0.1 * torch.randn(h, device="cuda")).to(dt)
    src = torch.randn(n, 2 * h, device="cuda", dtype=dt)
    dst = torch.empty_like(src)

    def fused(**kw):
        out = torch.empty(n, 2 * h, device="cuda", dtype=dt)
        K.dual_rmsnorm_launch(a, b, w1, w2, EPS, EPS, out[:, :h], out[:, h:], **kw)
        return out

    def hf():
        return torch.cat([hf_rmsnorm(a, w1, EPS), hf_rmsnorm(b, w2, EPS)], dim=-1)

    def frms():
        return torch.cat([F.rms_norm(a, (h,), w1, EPS), F.rms_norm(b, (h,), w2, EPS)], dim=-1)

    methods = {"fused": fused, "hf_eager": hf, "f_rms_norm": frms, "copy": lambda: dst.copy_(src)}
    if not args.no_compile:
        methods["compile"] = _compiled(hf)
    t = _measure(methods, n, args)
    sweep = _sweep(fused, n, args)
    ref = torch.cat([hf_rmsnorm(a, w1, EPS), hf_rmsnorm(b, w2, EPS)], dim=-1)
    got = fused()
    bytes_moved = 2 * n * 2 * h * a.element_size() + 2 * h * w1.element_size()
    return {"kind": "dual", "n": n, "h": h, "k": 2, "bytes": bytes_moved, "times": t, "sweep": sweep,
            "max_abs_err_vs_hf": float((got.float() - ref.float()).abs().max()) if n else 0.0,
            "config": dict(zip(("rows", "warps"), K.launch_config(n, sum(K.tiles(h, False)), 2), strict=True))}  # fmt: skip


def grouped_case(n: int, h: int, k: int, args) -> dict:
    """Benchmark one grouped ``fc_norm`` case ([N, k*H], k weights)."""
    dt = torch.bfloat16
    x = torch.randn(n, k * h, device="cuda", dtype=dt)
    ws = (1 + 0.1 * torch.randn(k, h, device="cuda")).to(dt)
    wl = list(ws)
    dst = torch.empty_like(x)

    def fused(**kw):
        out = torch.empty_like(x)
        K.grouped_rmsnorm_launch(x, ws, EPS, out, **kw)
        return out

    def pairs():
        out = torch.empty_like(x)
        i = 0
        while i + 1 < k:
            K.dual_rmsnorm_launch(x[:, i * h : (i + 1) * h], x[:, (i + 1) * h : (i + 2) * h], wl[i], wl[i + 1],
                                  EPS, EPS, out[:, i * h : (i + 1) * h], out[:, (i + 1) * h : (i + 2) * h],
                                  convention="fp32_weight")  # fmt: skip
            i += 2
        if i < k:
            K.grouped_rmsnorm_launch(
                x[:, i * h :], ws[i:], EPS, out[:, i * h :], convention="fp32_weight"
            )
        return out

    def hf():
        return torch.cat(
            [hf_rmsnorm(c, w, EPS) for c, w in zip(x.chunk(k, -1), wl, strict=True)], dim=-1
        )

    methods = {"fused": fused, "pairs": pairs, "hf_eager": hf, "copy": lambda: dst.copy_(x)}
    if not args.no_compile:
        methods["compile"] = _compiled(hf)
    t = _measure(methods, n, args)
    sweep = _sweep(fused, n, args)
    bytes_moved = 2 * n * k * h * x.element_size() + k * h * ws.element_size()
    return {"kind": "grouped", "n": n, "h": h, "k": k, "bytes": bytes_moved, "times": t, "sweep": sweep,
            "config": dict(zip(("rows", "warps"), K.launch_config(n, sum(K.tiles(h, False)), 2), strict=True))}  # fmt: skip


def _t(row: dict, method: str, graphed: bool) -> float | None:
    m = row["times"].get(method, {})
    return m.get("graph_us") if graphed else m.get("bench_us")


def evaluate_targets(rows: list[dict]) -> list[dict]:
    """Issue 4's targets, each with the measured figure and whether it is met."""
    res = []

    def add(name, value, limit, ok, unit):
        res.append({"target": name, "value": value, "limit": limit, "unit": unit, "met": bool(ok)})

    for r in rows:
        kind, n, h = r["kind"], r["n"], r["h"]
        graphed = "graph_us" in r["times"]["fused"]
        f = _t(r, "fused", graphed)
        c = _t(r, "copy", graphed)
        tag = f"{kind} N={n} H={h}" + (f" k={r['k']}" if kind == "grouped" else "")
        if n >= 4096 and (kind == "dual" or h == 6144):
            eff = c / f
            add(f"{tag}: >= 95% of copy bandwidth", round(100 * eff, 1), 95.0, eff >= 0.95, "%")
        if kind == "dual" and n == 64 and h == 4096:
            add(f"{tag}: graphed <= 2.2 us", round(f, 2), 2.2, f <= 2.2, "us")
        if kind == "grouped" and n == 64 and h == 6144:
            add(f"{tag}: graphed <= 2.5 us", round(f, 2), 2.5, f <= 2.5, "us")
        if kind == "dual":
            for other in ("compile", "f_rms_norm"):
                o = _t(r, other, graphed)
                if o is not None:
                    add(f"{tag}: faster than {other} ({'graphed' if graphed else 'do_bench'})",
                        round(f, 2), round(o, 2), f < o, "us")  # fmt: skip
    return res


def markdown(results: dict) -> str:
    """The results as markdown tables (µs per call; graph replay / do_bench median)."""
    lines = [
        "# Fused EAGLE3 norm kernels: H200 benchmark",
        "",
        f"Device: {results['device']}; torch {results['torch']}; triton {results['triton']}; bf16, eps={EPS}.",
        "Cells: GPU µs per call inside a CUDA graph / `do_bench` median (eager, L2 flushed); "
        "graph timing only for N <= 4096. `eff` = copy time / fused time (share of the bandwidth "
        "of a copy of the same bytes, measured in the same run). Generated by "
        "`python -m recipecli.kernels.bench_rmsnorm`.",
        "",
    ]
    for kind, title in (("dual", "Dual RMSNorm + concat (EAGLE3 layer 0), d1 = d2 = H"),
                        ("grouped", "Grouped fc_norm, k = 4")):  # fmt: skip
        rows = [r for r in results["rows"] if r["kind"] == kind]
        if not rows:
            continue
        methods = list(rows[0]["times"])
        lines += [f"## {title}", "", "| H | N | " + " | ".join(methods) + " | eff | TB/s fused |",
                  "|---|---|" + "---|" * (len(methods) + 2)]  # fmt: skip
        for r in rows:
            cells = []
            for m in methods:
                t = r["times"][m]
                g = f"{t['graph_us']:.2f}" if "graph_us" in t else "—"
                cells.append(f"{g} / {t['bench_us']:.2f}")
            graphed = "graph_us" in r["times"]["fused"]
            f, c = _t(r, "fused", graphed), _t(r, "copy", graphed)
            tbs = r["bytes"] / (f * 1e-6) / 1e12
            lines.append(
                f"| {r['h']} | {r['n']} | "
                + " | ".join(cells)
                + f" | {100 * c / f:.1f}% | {tbs:.2f} |"
            )
        lines.append("")
    lines += ["## Targets", "", "| target | measured | limit | met |", "|---|---|---|---|"]
    for t in results["targets"]:
        lines.append(
            f"| {t['target']} | {t['value']} {t['unit']} | {t['limit']} {t['unit']} | {'yes' if t['met'] else '**no**'} |"
        )
    return "\n".join(lines) + "\n"


def plot(results: dict, path: Path) -> bool:
    """Time vs N (log-log), one panel per H plus the grouped case; False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    panels = [("dual", h) for h in sorted({r["h"] for r in results["rows"] if r["kind"] == "dual"})]
    panels += [
        ("grouped", h) for h in sorted({r["h"] for r in results["rows"] if r["kind"] == "grouped"})
    ]
    cols = 2
    nrows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(12, 4.5 * nrows), squeeze=False)
    for ax, (kind, h) in zip(axes.flat, panels, strict=False):
        rows = sorted(
            (r for r in results["rows"] if r["kind"] == kind and r["h"] == h), key=lambda r: r["n"]
        )
        for m in rows[0]["times"]:
            xs, ys = [], []
            for r in rows:
                t = r["times"][m]
                xs.append(r["n"])
                ys.append(t.get("graph_us", t["bench_us"]))
            style = {"fused": "-o", "copy": "--k"}.get(m, "-.")
            ax.plot(xs, ys, style, label=m, linewidth=2 if m == "fused" else 1)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("N (tokens)")
        ax.set_ylabel("µs per call")
        k = rows[0]["k"]
        ax.set_title(f"{'dual norm+concat' if kind == 'dual' else f'grouped fc_norm k={k}'}, H={h}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    fig.suptitle(f"{results['device']}, bf16: CUDA-graph time for N<=4096, do_bench median above")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def _best(sweep: list[dict]) -> str:
    if not sweep:
        return ""
    best = min(sweep, key=lambda r: r.get("graph_us", r.get("bench_us")))
    t = best.get("graph_us", best.get("bench_us"))
    return f"  best {best['variant']} {t:.2f}"


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and write ``rmsnorm_bench.{json,md,png}`` into ``--out``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="docs/kernels", help="output folder")
    ap.add_argument("--ns", default=",".join(map(str, NS)))
    ap.add_argument("--hs", default=",".join(map(str, HS)))
    ap.add_argument("--grouped-h", type=int, default=6144)
    ap.add_argument("--grouped-k", type=int, default=4)
    ap.add_argument("--graph-max-n", type=int, default=4096)
    ap.add_argument("--calls", type=int, default=20, help="calls captured per graph")
    ap.add_argument(
        "--sweep", action="store_true", help="also time launch variants (SWEEP_VARIANTS)"
    )
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench_rmsnorm: needs a CUDA GPU", file=sys.stderr)
        return 2
    ns = [int(v) for v in args.ns.split(",")]
    hs = [int(v) for v in args.hs.split(",")]
    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
               "rows": []}  # fmt: skip
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    partial = out / "rmsnorm_bench.partial.json"  # rows so far, in case the run is cut short
    t0 = time.time()
    for h in hs:
        for n in ns:
            results["rows"].append(dual_case(n, h, args))
            r = results["rows"][-1]
            partial.write_text(json.dumps(results, indent=1))
            print(f"dual H={h} N={n}: " + ", ".join(f"{m}={v.get('graph_us', v['bench_us']):.2f}" for m, v in r["times"].items())
                  + _best(r["sweep"])
                + f"  [{time.time() - t0:.0f}s]", file=sys.stderr, flush=True)  # fmt: skip
    for n in ns:
        results["rows"].append(grouped_case(n, args.grouped_h, args.grouped_k, args))
        r = results["rows"][-1]
        partial.write_text(json.dumps(results, indent=1))
        print(f"grouped H={args.grouped_h} N={n}: " + ", ".join(f"{m}={v.get('graph_us', v['bench_us']):.2f}" for m, v in r["times"].items())
              + _best(r["sweep"])
                + f"  [{time.time() - t0:.0f}s]", file=sys.stderr, flush=True)  # fmt: skip
    results["targets"] = evaluate_targets(results["rows"])
    partial.unlink(missing_ok=True)
    (out / "rmsnorm_bench.json").write_text(json.dumps(results, indent=1))
    md = markdown(results)
    (out / "rmsnorm_bench.md").write_text(md)
    plot(results, out / "rmsnorm_bench.png")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
