"""Benchmark the fused EAGLE3 norms on a CUDA GPU; write JSON, a markdown table and a PNG plot.

Run (on a GPU machine)::

    python -m recipecli.kernels.bench_rmsnorm --out docs/kernels

Compared in one process, bf16, for N in {1, 64, 512, 4096, 32768} and H in
{2048, 4096, 5120, 6144, 7168, 8192}:

* dual RMSNorm + concat (EAGLE3 layer 0, vLLM PR #47391), d1 = d2 = H:
  ``fused`` — :func:`recipecli.kernels.rmsnorm.dual_rmsnorm_concat` (the public, guarded entry
  point, output allocated per call); ``f_rms_norm`` — ``torch.nn.functional.rms_norm`` twice then
  ``torch.cat``; ``compile`` — ``torch.compile`` of HF ``LlamaRMSNorm.forward`` twice then
  ``torch.cat`` (``dynamic=False``, recompiled per shape); ``liger`` — Liger-Kernel's
  ``LigerRMSNormFunction`` (``casting_mode="llama"``) twice then ``torch.cat``, when
  ``liger_kernel`` imports; ``copy`` — ``dst.copy_(src)`` of the same bytes (the ceiling);
* grouped ``fc_norm`` (Eagle 3.1), k in {3, 4, 5} chunks of H: ``fused`` —
  :func:`~recipecli.kernels.rmsnorm.grouped_rmsnorm` with the k weights as a list (no stack);
  ``pairs`` — the dual kernel on chunk pairs plus one lone launch for odd k (tokenspeed's layout,
  lightseekorg/tokenspeed PR #837); ``f_rms_norm``, ``compile``, ``liger`` per chunk then
  ``torch.cat``; ``copy``.

Timing: GPU time per call inside a CUDA graph (``--calls`` calls captured back to back, median
over replays) for N <= ``--graph-max-n``, and the median of ``triton.testing.do_bench`` (eager
calls, each after an L2 flush; the flush kernel hides a host cost shorter than itself) for every
N. The eager-overhead row times, at N = 1,
the host cost of one call (``--overhead-calls`` calls enqueued back to back, wall time per call)
for the fused calls, a bare Triton launch of a one-program kernel, ``F.rms_norm`` x2 + cat and a
copy. The targets (:func:`evaluate_targets`) are evaluated and written with the results.
Imports torch, triton and matplotlib; the plot is skipped when matplotlib is missing.
``--merge A.json B.json`` rebuilds the tables and plot from earlier (partial) runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from . import rmsnorm_triton as K
from .rmsnorm import dual_rmsnorm_concat, grouped_rmsnorm

NS = (1, 64, 512, 4096, 32768)
HS = (2048, 4096, 5120, 6144, 7168, 8192)
KS = (3, 4, 5)
EPS = 1e-5

#: The issue's targets: bandwidth share of copy at N >= 4096, graphed small-N slack over copy,
#: eager overhead at N = 1 over a bare Triton launch, and the absolute limit on the H200.
BANDWIDTH_MIN = 0.97
SMALL_N_MAX = 512
SMALL_N_SLACK = 1.10
OVERHEAD_SLACK_US = 5.0
OVERHEAD_LIMIT_US = 18.0


def hf_rmsnorm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    """HF transformers ``LlamaRMSNorm.forward`` written out (fp32 variance, cast, then weight)."""
    xf = x.to(torch.float32)
    var = xf.pow(2).mean(-1, keepdim=True)
    return w * (xf * torch.rsqrt(var + eps)).to(x.dtype)


def graph_time_us(fn: Callable[[], object], calls: int, replays: int = 10) -> float:
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


def bench_us(fn: Callable[[], object], warmup: int = 10, rep: int = 50) -> float:
    """Median eager time per call (µs) from ``triton.testing.do_bench``."""
    return float(triton.testing.do_bench(fn, warmup=warmup, rep=rep, return_mode="median")) * 1e3


def host_us(fn: Callable[[], object], calls: int = 2000, rounds: int = 5) -> float:
    """Host (CPU) cost of one call in µs: ``calls`` calls enqueued back to back, median of rounds.

    At N = 1 the GPU finishes each kernel long before the next is enqueued, so the wall time per
    call is what the Python caller pays.
    """
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    res = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        res.append((t1 - t0) * 1e6 / calls)
    return statistics.median(res)


def _liger():
    try:
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction
    except Exception:  # optional: not installed, or built for another torch/triton
        return None

    def norm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
        return LigerRMSNormFunction.apply(x, w, eps, 0.0, "llama", False)

    return norm


def _compiled(fn: Callable[[], torch.Tensor]) -> Callable[[], torch.Tensor]:
    torch._dynamo.reset()
    cfn = torch.compile(fn, dynamic=False)
    for _ in range(3):
        cfn()
    torch.cuda.synchronize()
    return cfn


def _measure(methods: dict[str, Callable[[], object]], n: int, args) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for name, fn in methods.items():
        try:
            row = {"bench_us": bench_us(fn)}
            if n <= args.graph_max_n:
                row["graph_us"] = graph_time_us(fn, calls=args.calls if n <= 4096 else 4)
        except Exception as exc:  # a baseline that fails here is reported, not fatal
            row = {"error": f"{type(exc).__name__}: {exc}"[:200]}
        out[name] = row
    return out


def dual_case(n: int, h: int, args, liger) -> dict:
    """Benchmark one (N, H) dual case; returns the row written to JSON."""
    dt = torch.bfloat16
    a, b = torch.randn(n, h, device="cuda", dtype=dt), torch.randn(n, h, device="cuda", dtype=dt)
    w1 = (1 + 0.1 * torch.randn(h, device="cuda")).to(dt)
    w2 = (1 + 0.1 * torch.randn(h, device="cuda")).to(dt)
    src = torch.randn(n, 2 * h, device="cuda", dtype=dt)
    dst = torch.empty_like(src)

    def fused():
        return dual_rmsnorm_concat(a, b, w1, w2, EPS, EPS)

    def hf():
        return torch.cat([hf_rmsnorm(a, w1, EPS), hf_rmsnorm(b, w2, EPS)], dim=-1)

    def frms():
        return torch.cat([F.rms_norm(a, (h,), w1, EPS), F.rms_norm(b, (h,), w2, EPS)], dim=-1)

    methods = {"fused": fused, "f_rms_norm": frms}
    if not args.no_compile:
        methods["compile"] = _compiled(hf)
    if liger is not None:
        methods["liger"] = lambda: torch.cat([liger(a, w1, EPS), liger(b, w2, EPS)], dim=-1)
    methods["copy"] = lambda: dst.copy_(src)
    with torch.inference_mode():
        t = _measure(methods, n, args)
        ref = hf()
        got = fused()
    cfg = K.dual_plan(n, h, h, (h, h, 2 * h, 2 * h), h, 2, 0) if n else None
    bytes_moved = 2 * n * 2 * h * a.element_size() + 2 * h * w1.element_size()
    return {"kind": "dual", "n": n, "h": h, "k": 2, "bytes": bytes_moved, "times": t,
            "max_abs_err_vs_hf": float((got.float() - ref.float()).abs().max()) if n else 0.0,
            "config": _cfg(cfg)}  # fmt: skip


def _cfg(plan) -> dict:
    if plan is None:
        return {}
    c = plan.consts
    return {"rows": c["ROWS"], "warps": plan.num_warps, "chunk": c["CHUNK"],
            "persistent": c["PERSISTENT"], "grid": plan.grid0}  # fmt: skip


def grouped_case(n: int, h: int, k: int, args, liger) -> dict:
    """Benchmark one grouped ``fc_norm`` case ([N, k*H], k weights)."""
    dt = torch.bfloat16
    x = torch.randn(n, k * h, device="cuda", dtype=dt)
    wl = [(1 + 0.1 * torch.randn(h, device="cuda")).to(dt) for _ in range(k)]
    dst = torch.empty_like(x)

    def fused():
        return grouped_rmsnorm(x, wl, EPS)

    def pairs():
        out = torch.empty_like(x)
        i = 0
        while i + 1 < k:
            dual_rmsnorm_concat(x[:, i * h : (i + 1) * h], x[:, (i + 1) * h : (i + 2) * h], wl[i],
                                wl[i + 1], EPS, EPS, out=out[:, i * h : (i + 2) * h],
                                convention="fp32_weight")  # fmt: skip
            i += 2
        if i < k:
            grouped_rmsnorm(
                x[:, i * h :], wl[i:], EPS, out=out[:, i * h :], convention="fp32_weight"
            )
        return out

    def chunks():
        return [x[:, i * h : (i + 1) * h] for i in range(k)]

    def hf():
        return torch.cat([hf_rmsnorm(c, w, EPS) for c, w in zip(chunks(), wl, strict=True)], dim=-1)

    def frms():
        return torch.cat(
            [F.rms_norm(c, (h,), w, EPS) for c, w in zip(chunks(), wl, strict=True)], dim=-1
        )

    methods = {"fused": fused, "pairs": pairs, "f_rms_norm": frms}
    if not args.no_compile:
        methods["compile"] = _compiled(hf)
    if liger is not None:
        methods["liger"] = lambda: torch.cat(
            [liger(c, w, EPS) for c, w in zip(chunks(), wl, strict=True)], dim=-1
        )
    methods["copy"] = lambda: dst.copy_(x)
    with torch.inference_mode():
        t = _measure(methods, n, args)
    cfg = K.grouped_plan(n, k, h, (k * h, k * h), h, False, 2, 0) if n else None
    bytes_moved = 2 * n * k * h * x.element_size() + k * h * wl[0].element_size()
    return {"kind": "grouped", "n": n, "h": h, "k": k, "bytes": bytes_moved, "times": t,
            "config": _cfg(cfg)}  # fmt: skip


@triton.jit
def _one_program(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr) + 1.0)


def overhead_row(h: int = 4096, k: int = 3, calls: int = 2000) -> dict:
    """Host µs per call at N = 1: the fused calls against a bare Triton launch and the unfused ops."""
    dt = torch.bfloat16
    a, b = torch.randn(1, h, device="cuda", dtype=dt), torch.randn(1, h, device="cuda", dtype=dt)
    w1, w2 = (
        (1 + 0.1 * torch.randn(h, device="cuda")).to(dt),
        torch.ones(h, device="cuda", dtype=dt),
    )
    x = torch.randn(1, k * h, device="cuda", dtype=dt)
    wl = [torch.ones(h, device="cuda", dtype=dt) for _ in range(k)]
    one = torch.zeros(1, device="cuda")
    src = torch.randn(1, 2 * h, device="cuda", dtype=dt)
    dst = torch.empty_like(src)
    fns = {
        "fused_dual": lambda: dual_rmsnorm_concat(a, b, w1, w2, EPS, EPS),
        "fused_grouped": lambda: grouped_rmsnorm(x, wl, EPS),
        "bare_triton_launch": lambda: _one_program[(1,)](one),
        "f_rms_norm_x2_cat": lambda: torch.cat(
            [F.rms_norm(a, (h,), w1, EPS), F.rms_norm(b, (h,), w2, EPS)], dim=-1
        ),
        "torch_op_dual": lambda: torch.ops.recipecli.dual_rmsnorm_concat(
            a, b, w1, w2, EPS, EPS, "hf"
        ),
        "copy": lambda: dst.copy_(src),
    }
    with torch.inference_mode():
        res = {name: host_us(fn, calls) for name, fn in fns.items()}
    return {"kind": "overhead", "n": 1, "h": h, "k": k, "host_us": res}


def _t(row: dict, method: str, graphed: bool) -> float | None:
    m = row["times"].get(method, {})
    return m.get("graph_us") if graphed else m.get("bench_us")


def evaluate_targets(rows: list[dict]) -> list[dict]:
    """The targets, each with the measured figure, the limit and whether it is met.

    * bandwidth: N >= 4096, fused >= 97 % of the copy of the same bytes (graphed where measured,
      else do_bench), dual and grouped, every H and k;
    * faster than ``compile``, ``liger``, ``f_rms_norm``: every row, graphed and do_bench;
    * small N, graphed: N <= 512, fused time <= 1.10 x the copy's;
    * eager overhead at N = 1: fused dual <= bare Triton launch + 5 µs, <= 18 µs, and below
      ``F.rms_norm`` x2 + cat.
    """
    res = []

    def add(family, name, value, limit, ok, unit):
        res.append({"family": family, "target": name, "value": value, "limit": limit,
                    "unit": unit, "met": bool(ok)})  # fmt: skip

    for r in rows:
        if r["kind"] == "overhead":
            t = r["host_us"]
            f, bare, frms = t["fused_dual"], t["bare_triton_launch"], t["f_rms_norm_x2_cat"]
            add("eager overhead", "N=1 fused dual <= bare Triton launch + 5 us", round(f, 2),
                round(bare + OVERHEAD_SLACK_US, 2), f <= bare + OVERHEAD_SLACK_US, "us")  # fmt: skip
            add("eager overhead", "N=1 fused dual <= 18 us", round(f, 2), OVERHEAD_LIMIT_US,
                f <= OVERHEAD_LIMIT_US, "us")  # fmt: skip
            add("eager overhead", "N=1 fused dual < F.rms_norm x2 + cat", round(f, 2),
                round(frms, 2), f < frms, "us")  # fmt: skip
            g = t["fused_grouped"]
            add("eager overhead", f"N=1 fused grouped k={r['k']} <= bare Triton launch + 5 us",
                round(g, 2), round(bare + OVERHEAD_SLACK_US, 2), g <= bare + OVERHEAD_SLACK_US, "us")  # fmt: skip
            continue
        kind, n, h = r["kind"], r["n"], r["h"]
        tag = f"{kind} N={n} H={h}" + (f" k={r['k']}" if kind == "grouped" else "")
        for graphed in (True, False):
            f, c = _t(r, "fused", graphed), _t(r, "copy", graphed)
            if f is None or c is None:
                continue
            mode = "graphed" if graphed else "do_bench"
            if n >= 4096 and (graphed or "graph_us" not in r["times"]["fused"]):
                eff = c / f
                add("bandwidth >= 97% of copy", f"{tag} ({mode})", round(100 * eff, 1),
                    100 * BANDWIDTH_MIN, eff >= BANDWIDTH_MIN, "%")  # fmt: skip
            if graphed and n <= SMALL_N_MAX:
                add("small N graphed <= 1.10 x copy", tag, round(f, 2), round(SMALL_N_SLACK * c, 2),
                    f <= SMALL_N_SLACK * c, "us")  # fmt: skip
            for other in ("compile", "liger", "f_rms_norm"):
                o = _t(r, other, graphed)
                if o is not None:
                    add(f"faster than {other} ({mode})", tag, round(f, 2), round(o, 2), f < o, "us")
    return res


def _cell(t: dict) -> str:
    if "error" in t:
        return "error"
    g = f"{t['graph_us']:.2f}" if "graph_us" in t else "—"
    return f"{g} / {t['bench_us']:.2f}"


def markdown(results: dict) -> str:
    """The results as markdown tables (µs per call; graph replay / do_bench median) and targets."""
    lines = [
        "# Fused EAGLE3 norm kernels: H200 benchmark",
        "",
        f"Device: {results['device']}; torch {results['torch']}; triton {results['triton']}; "
        f"liger {results.get('liger') or 'not installed'}; bf16, eps={EPS}.",
        "Cells: GPU µs per call inside a CUDA graph / `do_bench` median (eager calls, each after "
        "an L2 flush, which hides a host cost shorter than the flush; the host cost itself is the "
        "eager-overhead table); graph timing only for N <= 4096. `eff` = copy time / fused time "
        "(share of the bandwidth of a copy of the same bytes, same run; graphed where measured). "
        "Generated by `python -m recipecli.kernels.bench_rmsnorm`.",
        "",
    ]
    over = [r for r in results["rows"] if r["kind"] == "overhead"]
    for r in over:
        lines += [f"## Eager overhead at N = 1 (host µs per call, H = {r['h']}, grouped k = {r['k']})",
                  "", "| call | µs |", "|---|---|"]  # fmt: skip
        lines += [f"| {name} | {us:.2f} |" for name, us in r["host_us"].items()]
        lines.append("")
    groups = [("dual", 2, "Dual RMSNorm + concat (EAGLE3 layer 0), d1 = d2 = H")]
    groups += [("grouped", k, f"Grouped fc_norm, k = {k}") for k in
               sorted({r["k"] for r in results["rows"] if r["kind"] == "grouped"})]  # fmt: skip
    for kind, k, title in groups:
        rows = [r for r in results["rows"] if r["kind"] == kind and r["k"] == k]
        if not rows:
            continue
        methods = list(rows[0]["times"])
        lines += [f"## {title}", "", "| H | N | " + " | ".join(methods) + " | eff | TB/s fused |",
                  "|---|---|" + "---|" * (len(methods) + 2)]  # fmt: skip
        for r in rows:
            cells = [_cell(r["times"].get(m, {"error": 1})) for m in methods]
            graphed = "graph_us" in r["times"]["fused"]
            f, c = _t(r, "fused", graphed), _t(r, "copy", graphed)
            eff = f"{100 * c / f:.1f}%" if f and c else "—"
            tbs = f"{r['bytes'] / (f * 1e-6) / 1e12:.2f}" if f else "—"
            lines.append(f"| {r['h']} | {r['n']} | " + " | ".join(cells) + f" | {eff} | {tbs} |")
        lines.append("")
    targets = results["targets"]
    fams = list(dict.fromkeys(t["family"] for t in targets))
    lines += [
        "## Targets",
        "",
        "| target | met | worst case (measured vs limit) |",
        "|---|---|---|",
    ]
    for fam in fams:
        ts = [t for t in targets if t["family"] == fam]
        met = sum(t["met"] for t in ts)
        pct = fam.startswith("bandwidth")
        worst = (
            min(ts, key=lambda t: t["value"] - t["limit"])
            if pct
            else max(ts, key=lambda t: t["value"] / t["limit"] if t["limit"] else 0)
        )
        lines.append(f"| {fam} | {met}/{len(ts)} {'yes' if met == len(ts) else '**no**'} | "
                     f"{worst['target']}: {worst['value']} vs {worst['limit']} {worst['unit']} |")  # fmt: skip
    missed = [t for t in targets if not t["met"]]
    if missed:
        lines += ["", f"### Missed ({len(missed)})", "", "| family | case | measured | limit |",
                  "|---|---|---|---|"]  # fmt: skip
        lines += [f"| {t['family']} | {t['target']} | {t['value']} {t['unit']} | "
                  f"{t['limit']} {t['unit']} |" for t in missed]  # fmt: skip
    if results.get("notes"):
        lines += ["", "## Notes", ""] + [f"* {n}" for n in results["notes"]]
    return "\n".join(lines) + "\n"


def plot(results: dict, path: Path) -> bool:
    """Efficiency vs N per kind (one line per H) and two time panels; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = [r for r in results["rows"] if r["kind"] != "overhead"]
    kinds = [("dual", 2)] + sorted({("grouped", r["k"]) for r in rows if r["kind"] == "grouped"})
    time_panels = [
        h for h in (4096, 8192) if any(r["h"] == h and r["kind"] == "dual" for r in rows)
    ]
    panels = len(kinds) + len(time_panels)
    cols = 3
    nrows = (panels + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(16, 4.6 * nrows), squeeze=False)
    flat = list(axes.flat)
    for ax, (kind, k) in zip(flat, kinds, strict=False):
        for h in sorted({r["h"] for r in rows}):
            sel = sorted((r for r in rows if r["kind"] == kind and r["k"] == k and r["h"] == h),
                         key=lambda r: r["n"])  # fmt: skip
            xs, ys = [], []
            for r in sel:
                graphed = "graph_us" in r["times"]["fused"]
                f, c = _t(r, "fused", graphed), _t(r, "copy", graphed)
                if f and c:
                    xs.append(r["n"])
                    ys.append(100 * c / f)
            if xs:
                ax.plot(xs, ys, "-o", label=f"H={h}", markersize=3)
        ax.axhline(
            100 * BANDWIDTH_MIN,
            color="k",
            linestyle="--",
            linewidth=1,
            label="97 % target (N >= 4096)",
        )
        ax.set_xscale("log", base=2)
        ax.set_ylim(50, 110)
        ax.set_xlabel("N (tokens)")
        ax.set_ylabel("copy time / fused time (%)")
        ax.set_title("dual norm+concat" if kind == "dual" else f"grouped fc_norm k={k}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for ax, h in zip(flat[len(kinds) :], time_panels, strict=False):
        sel = sorted((r for r in rows if r["kind"] == "dual" and r["h"] == h), key=lambda r: r["n"])
        for m in sel[0]["times"]:
            xs, ys = [], []
            for r in sel:
                t = r["times"].get(m, {})
                if "bench_us" in t:
                    xs.append(r["n"])
                    ys.append(t.get("graph_us", t["bench_us"]))
            style = {"fused": "-o", "copy": "--k"}.get(m, "-.")
            ax.plot(xs, ys, style, label=m, linewidth=2 if m == "fused" else 1, markersize=3)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("N (tokens)")
        ax.set_ylabel("µs per call")
        ax.set_title(f"dual, H={h}: time per call")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for ax in flat[panels:]:
        ax.axis("off")
    fig.suptitle(f"{results['device']}, bf16: CUDA-graph time for N<=4096, do_bench median above")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return True


def _write(results: dict, out: Path) -> str:
    results["targets"] = evaluate_targets(results["rows"])
    (out / "rmsnorm_bench.json").write_text(json.dumps(results, indent=1))
    md = markdown(results)
    (out / "rmsnorm_bench.md").write_text(md)
    plot(results, out / "rmsnorm_bench.png")
    return md


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and write ``rmsnorm_bench.{json,md,png}`` into ``--out``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="docs/kernels", help="output folder")
    ap.add_argument("--ns", default=",".join(map(str, NS)))
    ap.add_argument("--hs", default=",".join(map(str, HS)))
    ap.add_argument("--ks", default=",".join(map(str, KS)), help="grouped chunk counts ('' = none)")
    ap.add_argument("--no-dual", action="store_true")
    ap.add_argument("--graph-max-n", type=int, default=4096)
    ap.add_argument("--calls", type=int, default=20, help="calls captured per graph")
    ap.add_argument("--overhead-calls", type=int, default=2000)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--merge", nargs="+", default=None, help="rebuild outputs from these JSONs")
    ap.add_argument("--note", action="append", default=[], help="a note for the markdown")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.merge:
        parts = [json.loads(Path(p).read_text()) for p in args.merge]
        results = {**parts[0], "rows": [r for p in parts for r in p["rows"]]}
        results["notes"] = [*parts[0].get("notes", []), *args.note]
        print(_write(results, out))
        return 0
    if not torch.cuda.is_available():
        print("bench_rmsnorm: needs a CUDA GPU", file=sys.stderr)
        return 2
    liger = _liger()
    try:
        import liger_kernel

        liger_version = getattr(liger_kernel, "__version__", "installed")
    except Exception:
        liger_version = None
    ns = [int(v) for v in args.ns.split(",")]
    hs = [int(v) for v in args.hs.split(",")]
    ks = [int(v) for v in args.ks.split(",") if v]
    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
               "triton": triton.__version__, "liger": liger_version if liger else None,
               "rows": [], "notes": args.note}  # fmt: skip
    partial = out / "rmsnorm_bench.partial.json"  # rows so far, in case the run is cut short
    t0 = time.time()
    results["rows"].append(overhead_row(calls=args.overhead_calls))
    print(f"overhead: {results['rows'][-1]['host_us']}", file=sys.stderr, flush=True)
    cases = [] if args.no_dual else [("dual", n, h, 2) for h in hs for n in ns]
    cases += [("grouped", n, h, k) for k in ks for h in hs for n in ns]
    for kind, n, h, k in cases:
        r = dual_case(n, h, args, liger) if kind == "dual" else grouped_case(n, h, k, args, liger)
        results["rows"].append(r)
        partial.write_text(json.dumps(results, indent=1))
        cells = ", ".join(f"{m}={v.get('graph_us', v.get('bench_us', float('nan'))):.2f}"
                          for m, v in r["times"].items())  # fmt: skip
        print(f"{kind} k={k} H={h} N={n}: {cells}  [{time.time() - t0:.0f}s]", file=sys.stderr,
              flush=True)  # fmt: skip
        torch.cuda.empty_cache()
    md = _write(results, out)
    partial.unlink(missing_ok=True)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
