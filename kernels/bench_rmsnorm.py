"""Benchmark the fused EAGLE3 norms on a CUDA GPU against a same-bytes copy; exit 1 on a miss.

Run (on a GPU machine; the defaults are the published sweep, docs/kernels/README.md)::

    python -m recipecli.kernels.bench_rmsnorm --out docs/kernels

Compared in one process, for N in :data:`NS`, H in :data:`HS` (every hidden size of a public
target with EAGLE3 drafts) and bf16 and fp16:

* dual RMSNorm + concat (EAGLE3 layer 0, vLLM PR #47391), d1 = d2 = H:
  ``fused`` — :func:`recipecli.kernels.rmsnorm.dual_rmsnorm_concat` (the public, guarded entry
  point, output allocated per call); ``f_rms_norm`` — ``torch.nn.functional.rms_norm`` twice then
  ``torch.cat``; ``compile`` — ``torch.compile`` of HF ``LlamaRMSNorm.forward`` twice then
  ``torch.cat`` (one compiled function per (H, dtype), N marked dynamic from N = 64 on: N = 1 is
  its own specialisation); ``liger`` — Liger-Kernel's ``LigerRMSNormFunction``
  (``casting_mode="llama"``) twice then ``torch.cat``, when ``liger_kernel`` imports; ``copy`` —
  ``dst.copy_(src)`` of the same bytes (the ceiling);
* grouped ``fc_norm`` (Eagle 3.1), k chunks of H (``--ks``): ``fused`` —
  :func:`~recipecli.kernels.rmsnorm.grouped_rmsnorm` with the k weights as a list (no stack);
  ``pairs`` — the dual kernel on chunk pairs plus one lone launch for odd k (tokenspeed's layout,
  lightseekorg/tokenspeed PR #837); ``f_rms_norm``, ``compile``, ``liger`` per chunk then
  ``torch.cat``; ``copy``.

Timing: the median of ``triton.testing.do_bench`` (eager calls, each after an L2 flush: a 256 MB
write) for every N, and GPU time per call inside a CUDA graph (``--calls`` calls captured back to
back, median over replays) for N <= ``--graph-max-n``. The eager host-cost row times, at N = 1,
the wall time per call of ``--overhead-calls`` calls enqueued back to back, for the fused entry
points, the registered ``torch.ops.recipecli.dual_rmsnorm_concat`` (under inference mode and under
plain no-grad), a bare Triton launch of a one-program kernel, ``F.rms_norm`` x2 + cat and a copy.
The targets (:mod:`.bench_report`) are evaluated and written with the results; the exit status is
1 when any is missed, 2 without CUDA. ``--merge A.json B.json`` rebuilds the outputs from
earlier (partial) runs. Imports torch, triton and (for the plot) matplotlib.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from . import rmsnorm_triton as K
from .bench_report import Results, Row, Timing, evaluate_targets, markdown, plot
from .rmsnorm import dual_rmsnorm_concat, grouped_rmsnorm
from .triton_jit import jit

NS = (1, 64, 512, 4096, 32768, 65536)
HS = (2048, 2560, 2880, 3072, 3584, 4096, 5120, 5376, 6144, 7168, 8192, 12288, 16384)
KS = (2, 3, 4, 5)
DTYPES: dict[str, torch.dtype] = {"bf16": torch.bfloat16, "fp16": torch.float16}
EPS = 1e-5

Norm = Callable[[torch.Tensor, torch.Tensor, float], torch.Tensor]

#: ``torch.cuda.Stream`` / ``torch.cuda.Event``, typed (torch leaves their constructors unannotated).
_new_stream: Callable[[], torch.cuda.Stream] = torch.cuda.Stream
_new_event: Callable[..., torch.cuda.Event] = torch.cuda.Event


def hf_rmsnorm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    """HF transformers ``LlamaRMSNorm.forward`` written out (fp32 variance, cast, then weight)."""
    xf = x.to(torch.float32)
    var = xf.pow(2).mean(-1, keepdim=True)
    return w * (xf * torch.rsqrt(var + eps)).to(x.dtype)


def graph_time_us(fn: Callable[[], object], calls: int, replays: int = 10) -> float:
    """Median GPU time per call (µs) of ``calls`` back-to-back calls captured in one CUDA graph."""
    stream = _new_stream()
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
    times: list[float] = []
    for _ in range(replays):
        start, end = _new_event(enable_timing=True), _new_event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0 / calls)
    del graph
    return statistics.median(times)


def bench_us(fn: Callable[[], object], warmup: int = 10, rep: int = 50) -> float:
    """Median eager time per call (µs) from ``triton.testing.do_bench`` (L2 flushed per call)."""
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


def _liger() -> Norm | None:
    try:
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction
    except Exception:  # optional: not installed, or built for another torch/triton
        return None

    def norm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
        out: torch.Tensor = LigerRMSNormFunction.apply(x, w, eps, 0.0, "llama", False)
        return out

    return norm


def _compiled(fn: Callable[[], torch.Tensor]) -> Callable[[], torch.Tensor]:
    """``torch.compile(fn, dynamic=False)``, warmed up (used by :mod:`.sweep_rmsnorm`)."""
    torch._dynamo.reset()
    cfn = torch.compile(fn, dynamic=False)
    for _ in range(3):
        cfn()
    torch.cuda.synchronize()
    return cfn


#: One compiled reference per (kind, k, H, dtype, N == 1): tensors are arguments, N dynamic.
_COMPILED: dict[tuple[str, int, int, str, bool], Callable[..., torch.Tensor]] = {}


def _compiled_ref(key: tuple[str, int, int, str, bool], h: int) -> Callable[..., torch.Tensor]:
    """The compiled HF reference for ``key``: chunks of width ``h`` of its tensor arguments."""
    hit = _COMPILED.get(key)
    if hit is None:

        def ref(xs: list[torch.Tensor], ws: list[torch.Tensor]) -> torch.Tensor:
            return torch.cat([hf_rmsnorm(x, w, EPS) for x, w in zip(xs, ws, strict=True)], dim=-1)

        hit = _COMPILED[key] = torch.compile(ref, dynamic=None)
    return hit


def _compile_method(kind: str, k: int, h: int, dt: str, xs: list[torch.Tensor],
                    ws: list[torch.Tensor]) -> Callable[[], torch.Tensor]:  # fmt: skip
    n = xs[0].shape[0]
    if n > 1:
        for x in xs:
            torch._dynamo.maybe_mark_dynamic(x, 0)
    cfn = _compiled_ref((kind, k, h, dt, n == 1), h)
    for _ in range(3):
        cfn(xs, ws)
    torch.cuda.synchronize()
    return lambda: cfn(xs, ws)


def _measure(methods: dict[str, Callable[[], object]], n: int,
             args: argparse.Namespace) -> dict[str, Timing]:  # fmt: skip
    out: dict[str, Timing] = {}
    for name, fn in methods.items():
        try:
            row: Timing = {"bench_us": bench_us(fn)}
            if n <= args.graph_max_n:
                row["graph_us"] = graph_time_us(fn, calls=args.calls)
        except Exception as exc:  # a baseline that fails here is reported, not fatal
            row = {"error": f"{type(exc).__name__}: {exc}"[:200]}
        out[name] = row
    return out


def _weights(h: int, count: int, dt: torch.dtype) -> list[torch.Tensor]:
    return [(1 + 0.1 * torch.randn(h, device="cuda")).to(dt) for _ in range(count)]


def dual_case(n: int, h: int, dt: str, args: argparse.Namespace, liger: Norm | None) -> Row:
    """Benchmark one (N, H, dtype) dual case; returns the row written to JSON."""
    dtype = DTYPES[dt]
    a, b = (
        torch.randn(n, h, device="cuda", dtype=dtype),
        torch.randn(n, h, device="cuda", dtype=dtype),
    )
    w1, w2 = _weights(h, 2, dtype)
    src = torch.randn(n, 2 * h, device="cuda", dtype=dtype)
    dst = torch.empty_like(src)
    methods: dict[str, Callable[[], object]] = {
        "fused": lambda: dual_rmsnorm_concat(a, b, w1, w2, EPS, EPS),
        "f_rms_norm": lambda: torch.cat(
            [F.rms_norm(a, (h,), w1, EPS), F.rms_norm(b, (h,), w2, EPS)], dim=-1
        ),
    }
    if not args.no_compile:
        methods["compile"] = _compile_method("dual", 2, h, dt, [a, b], [w1, w2])
    if liger is not None:
        methods["liger"] = lambda: torch.cat([liger(a, w1, EPS), liger(b, w2, EPS)], dim=-1)
    methods["copy"] = lambda: dst.copy_(src)
    with torch.inference_mode():
        t = _measure(methods, n, args)
        ref = torch.cat([hf_rmsnorm(a, w1, EPS), hf_rmsnorm(b, w2, EPS)], dim=-1)
        got = dual_rmsnorm_concat(a, b, w1, w2, EPS, EPS)
    plan = K.dual_plan(n, h, h, (h, h, 2 * h, 2 * h), h, a.element_size(), 0)
    return {"kind": "dual", "n": n, "h": h, "k": 2, "dtype": dt,
            "bytes": 2 * n * 2 * h * a.element_size() + 2 * h * w1.element_size(), "times": t,
            "max_abs_err_vs_hf": float((got.float() - ref.float()).abs().max()),
            "config": _cfg(plan)}  # fmt: skip


def _cfg(plan: K.Launch) -> dict[str, int | bool | str]:
    c = plan.consts
    return {"rows": c["ROWS"], "warps": plan.num_warps, "chunk": c["CHUNK"],
            "evict": c["X_EVICT"], "store_cs": c["STORE_CS"], "grid": plan.grid0}  # fmt: skip


def _pairs(x: torch.Tensor, wl: list[torch.Tensor], h: int) -> torch.Tensor:
    """tokenspeed's layout: the dual kernel on chunk pairs, one lone launch for an odd k."""
    k = len(wl)
    out = torch.empty_like(x)
    i = 0
    while i + 1 < k:
        dual_rmsnorm_concat(x[:, i * h : (i + 1) * h], x[:, (i + 1) * h : (i + 2) * h], wl[i],
                            wl[i + 1], EPS, EPS, out=out[:, i * h : (i + 2) * h],
                            convention="fp32_weight")  # fmt: skip
        i += 2
    if i < k:
        grouped_rmsnorm(x[:, i * h :], wl[i:], EPS, out=out[:, i * h :], convention="fp32_weight")
    return out


def grouped_case(n: int, h: int, k: int, dt: str, args: argparse.Namespace,
                 liger: Norm | None) -> Row:  # fmt: skip
    """Benchmark one grouped ``fc_norm`` case ([N, k*H], k weights)."""
    dtype = DTYPES[dt]
    x = torch.randn(n, k * h, device="cuda", dtype=dtype)
    wl = _weights(h, k, dtype)
    dst = torch.empty_like(x)
    chunks = [x[:, i * h : (i + 1) * h] for i in range(k)]
    methods: dict[str, Callable[[], object]] = {
        "fused": lambda: grouped_rmsnorm(x, wl, EPS),
        "pairs": lambda: _pairs(x, wl, h),
        "f_rms_norm": lambda: torch.cat(
            [F.rms_norm(c, (h,), w, EPS) for c, w in zip(chunks, wl, strict=True)], dim=-1
        ),
    }
    if not args.no_compile:
        methods["compile"] = _compile_method("grouped", k, h, dt, chunks, wl)
    if liger is not None:
        methods["liger"] = lambda: torch.cat(
            [liger(c, w, EPS) for c, w in zip(chunks, wl, strict=True)], dim=-1
        )
    methods["copy"] = lambda: dst.copy_(x)
    with torch.inference_mode():
        t = _measure(methods, n, args)
    plan = K.grouped_plan(n, k, h, (k * h, k * h), h, False, x.element_size(), 0)
    return {"kind": "grouped", "n": n, "h": h, "k": k, "dtype": dt,
            "bytes": 2 * n * k * h * x.element_size() + k * h * wl[0].element_size(), "times": t,
            "config": _cfg(plan)}  # fmt: skip


@jit
def _one_program(x_ptr: tl.tensor) -> None:
    tl.store(x_ptr, tl.load(x_ptr) + 1.0)


def overhead_row(h: int = 4096, k: int = 3, calls: int = 2000) -> Row:
    """Host µs per call at N = 1: the fused calls and the registered op against a bare launch."""
    dt = torch.bfloat16
    a, b = torch.randn(1, h, device="cuda", dtype=dt), torch.randn(1, h, device="cuda", dtype=dt)
    w1, w2 = _weights(h, 2, dt)
    x = torch.randn(1, k * h, device="cuda", dtype=dt)
    wl = _weights(h, k, dt)
    one = torch.zeros(1, device="cuda")
    src = torch.randn(1, 2 * h, device="cuda", dtype=dt)
    dst = torch.empty_like(src)
    op = torch.ops.recipecli.dual_rmsnorm_concat
    fns: dict[str, Callable[[], object]] = {
        "fused_dual": lambda: dual_rmsnorm_concat(a, b, w1, w2, EPS, EPS),
        "fused_grouped": lambda: grouped_rmsnorm(x, wl, EPS),
        "bare_triton_launch": lambda: _one_program[(1,)](one),
        "f_rms_norm_x2_cat": lambda: torch.cat(
            [F.rms_norm(a, (h,), w1, EPS), F.rms_norm(b, (h,), w2, EPS)], dim=-1
        ),
        "torch_op_dual": lambda: op(a, b, w1, w2, EPS, EPS, "hf"),
        "copy": lambda: dst.copy_(src),
    }
    with torch.inference_mode():
        res = {name: host_us(fn, calls) for name, fn in fns.items()}
    with torch.no_grad():  # what an engine's eager mode outside inference_mode pays
        res["torch_op_dual_grad_mode"] = host_us(fns["torch_op_dual"], calls)
    return {"kind": "overhead", "n": 1, "h": h, "k": k, "host_us": res}


def _write(results: Results, out: Path) -> str:
    results["targets"] = evaluate_targets(results["rows"])
    (out / "rmsnorm_bench.json").write_text(json.dumps(results, indent=1))
    md = markdown(results)
    (out / "rmsnorm_bench.md").write_text(md)
    plot(results, out / "rmsnorm_bench.png")
    return md


def _ints(text: str) -> list[int]:
    return [int(v) for v in text.split(",") if v]


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--out", default="docs/kernels", help="output folder")
    ap.add_argument("--ns", default=",".join(map(str, NS)))
    ap.add_argument("--hs", default=",".join(map(str, HS)))
    ap.add_argument("--ks", default="", help="grouped chunk counts, e.g. 2,3,4,5 ('' = none)")
    ap.add_argument("--grouped-ns", default="", help="N values of the grouped cases (default --ns)")
    ap.add_argument("--grouped-hs", default="", help="H values of the grouped cases (default --hs)")
    ap.add_argument("--dtypes", default="bf16,fp16", help="of bf16, fp16")
    ap.add_argument("--grouped-dtypes", default="bf16", help="dtypes of the grouped cases")
    ap.add_argument("--no-dual", action="store_true")
    ap.add_argument("--graph-max-n", type=int, default=512)
    ap.add_argument("--calls", type=int, default=20, help="calls captured per graph")
    ap.add_argument("--overhead-calls", type=int, default=2000)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--merge", nargs="+", default=None, help="rebuild outputs from these JSONs")
    ap.add_argument("--note", action="append", default=[], help="a note for the markdown")
    return ap


def _environment(argv: list[str] | None) -> Results:
    def sh(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return "?"

    driver = sh(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    liger = _liger()
    return {"device": torch.cuda.get_device_name(), "driver": driver.splitlines()[0] if driver
            else "?", "cuda": str(torch.version.cuda), "torch": torch.__version__,
            "triton": triton.__version__, "liger": "installed" if liger else None,
            "command": " ".join(["python -m recipecli.kernels.bench_rmsnorm", *(argv or sys.argv[1:])]),
            "commit": sh(["git", "rev-parse", "--short", "HEAD"]), "rows": [], "notes": []}  # fmt: skip


def _cases(args: argparse.Namespace) -> list[tuple[str, int, int, int, str]]:
    ns, hs = _ints(args.ns), _ints(args.hs)
    gns, ghs = _ints(args.grouped_ns) or ns, _ints(args.grouped_hs) or hs
    cases = [] if args.no_dual else [("dual", n, h, 2, dt) for dt in args.dtypes.split(",")
                                     for h in hs for n in ns]  # fmt: skip
    cases += [("grouped", n, h, k, dt) for dt in args.grouped_dtypes.split(",")
              for k in _ints(args.ks) for h in ghs for n in gns]  # fmt: skip
    return cases


def run(args: argparse.Namespace, results: Results, out: Path) -> None:
    """Measure the host-cost row and every case into ``results['rows']`` (a partial JSON kept)."""
    liger = _liger()
    partial = out / "rmsnorm_bench.partial.json"  # rows so far, in case the run is cut short
    t0 = time.time()
    results["rows"].append(overhead_row(calls=args.overhead_calls))
    print(f"overhead: {results['rows'][-1]['host_us']}", file=sys.stderr, flush=True)
    for kind, n, h, k, dt in _cases(args):
        if kind == "dual":
            r = dual_case(n, h, dt, args, liger)
        else:
            r = grouped_case(n, h, k, dt, args, liger)
        results["rows"].append(r)
        partial.write_text(json.dumps(results, indent=1))
        cells = ", ".join(f"{m}={v.get('graph_us', v.get('bench_us', float('nan'))):.2f}"
                          for m, v in r["times"].items())  # fmt: skip
        print(f"{kind} {dt} k={k} H={h} N={n}: {cells}  [{time.time() - t0:.0f}s]",
              file=sys.stderr, flush=True)  # fmt: skip
        torch.cuda.empty_cache()
    partial.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, write ``rmsnorm_bench.{json,md,png}`` into ``--out``; 1 on a miss."""
    args = _parser().parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.merge:
        parts: list[Results] = [json.loads(Path(p).read_text()) for p in args.merge]
        results: Results = {**parts[0], "rows": [r for p in parts for r in p["rows"]]}
        results["notes"] = [*parts[0].get("notes", []), *args.note]
    else:
        if not torch.cuda.is_available():
            print("bench_rmsnorm: needs a CUDA GPU", file=sys.stderr)
            return 2
        results = _environment(argv)
        results["notes"] = list(args.note)
        run(args, results, out)
    print(_write(results, out))
    missed = [t for t in results.get("targets", []) if not t["met"]]
    print(f"bench_rmsnorm: {len(missed)} of {len(results.get('targets', []))} targets missed",
          file=sys.stderr)  # fmt: skip
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
