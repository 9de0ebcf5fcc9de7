"""Sweep launch configurations of the fused norm kernels where they miss the copy bandwidth (H200).

Run (on a GPU machine)::

    python -m recipecli.kernels.sweep_rmsnorm --out "$OUT"

Cases (bf16, :data:`CASES`): wide rows (H = 5120 .. 8192) and large N, where the register tile
fell short of a same-bytes copy; N <= 4096 timed as CUDA-graph time per call (20 calls captured
back to back, median of replays), as :mod:`recipecli.kernels.bench_rmsnorm` times them, larger N
with ``triton.testing.do_bench`` (eager, L2 flushed).

Every candidate is timed once; then the default, the copy baseline of the same bytes and the best
few candidates are timed again ``--rounds`` times interleaved, and the median of those rounds is
reported, so run-to-run drift hits them alike. Each candidate's output is compared bit for bit
with the default configuration's (looped and persistent variants sum in another order: ``equal``
may be False; ``max_ulp`` against the register tile is recorded too). Prints a table per case to stderr and writes
``sweep_rmsnorm.json`` into ``--out``. Imports torch and triton.
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
from typing import TYPE_CHECKING, Protocol, TypedDict

import torch

from . import rmsnorm_triton as K
from .bench_rmsnorm import EPS, _compiled, bench_us, graph_time_us, hf_rmsnorm
from .rmsnorm_ref import ulp_distance
from .rmsnorm_types import Tuning

if TYPE_CHECKING:
    from typing_extensions import Unpack

#: A case: (kind ``"dual"`` or ``"grouped"``, N, H, k).
Case = tuple[str, int, int, int]


class Fused(Protocol):
    """The fused launch of one case with a candidate's launch keywords; returns its output."""

    def __call__(self, **kw: Unpack[Tuning]) -> torch.Tensor: ...


class Row(TypedDict, total=False):
    """One candidate: ``variant`` (its keywords, ``"default"`` for none) and either ``error`` or
    ``first_us``, ``equal``, ``max_ulp`` (against the default launch), ``rounds`` and their
    median ``us`` (µs) when re-timed; ``_fn`` (the timed call) is dropped before writing."""

    variant: Tuning | str
    error: str
    first_us: float
    equal: bool
    max_ulp: int
    _fn: Callable[[], object]
    rounds: list[float]
    us: float


class Baseline(TypedDict):
    """A baseline (same-bytes copy, ``torch.compile`` of HF) timed in every round."""

    _fn: Callable[[], object]
    rounds: list[float]


class _Result(TypedDict):
    case: str
    key: str
    rows: list[Row]
    config: tuple[int, int]
    copy_us: float
    copy_rounds: list[float]


class Result(_Result, total=False):
    """One case swept (``key``: ``"graph_us"`` or ``"bench_us"``; ``compile_*`` with --compile)."""

    compile_us: float
    compile_rounds: list[float]


class Results(TypedDict):
    """``sweep_rmsnorm.json``."""

    device: str
    torch: str
    cases: list[Result]


def _variants(graphed: bool, h: int) -> list[Tuning]:
    """Candidate launch keyword sets for one case (empty dict = the default launch).

    Register tile: rows x warps, program order, streaming stores; looped two-pass reduction:
    chunk x warps (x rows); persistent programs (per SM) over the register tile or the loop.
    """
    out: list[Tuning] = [{}]
    for rows, w in ((1, 4), (1, 16), (2, 8), (2, 16), (4, 8), (4, 16)):
        out.append({"chunk": 0, "rows_per_program": rows, "num_warps": w})
    out += [{"chunk": 0, "num_warps": 32}, {"chunk": 0, "seg_major": False},
            {"chunk": 0, "store_cs": True}]  # fmt: skip
    for c, w in ((1024, 4), (1024, 8), (2048, 4), (2048, 8), (2048, 16), (4096, 8), (4096, 16)):
        if c <= h:
            out.append({"chunk": c, "num_warps": w})
    out += [{"chunk": 2048, "num_warps": 8, "rows_per_program": 2},
            {"chunk": 1024, "num_warps": 4, "store_cs": True},
            {"chunk": 2048, "num_warps": 8, "store_cs": True}]  # fmt: skip
    for p in (2, 4, 8):
        out.append({"chunk": 0, "persistent": p})
    out += [{"chunk": 2048, "num_warps": 8, "persistent": 4},
            {"chunk": 1024, "num_warps": 4, "persistent": 8}]  # fmt: skip
    return out


def _case_fns(
    kind: str, n: int, h: int, k: int, dtype: str = "bf16"
) -> tuple[Fused, Callable[[], torch.Tensor], Callable[[], torch.Tensor]]:
    """(fused(**launch_kw), copy of the same bytes, HF eager reference) for one case."""
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    if kind == "dual":
        a, b = (torch.randn(n, h, device="cuda", dtype=dt) for _ in range(2))
        w1, w2 = ((1 + 0.1 * torch.randn(h, device="cuda")).to(dt) for _ in range(2))
        src = torch.randn(n, 2 * h, device="cuda", dtype=dt)

        def fused(**kw: Unpack[Tuning]) -> torch.Tensor:
            out = torch.empty(n, 2 * h, device="cuda", dtype=dt)
            K.dual_rmsnorm_launch(a, b, w1, w2, EPS, EPS, out[:, :h], out[:, h:], **kw)
            return out

        def hf() -> torch.Tensor:
            return torch.cat([hf_rmsnorm(a, w1, EPS), hf_rmsnorm(b, w2, EPS)], dim=-1)

    else:
        src = torch.randn(n, k * h, device="cuda", dtype=dt)
        ws = (1 + 0.1 * torch.randn(k, h, device="cuda")).to(dt)

        def fused(**kw: Unpack[Tuning]) -> torch.Tensor:
            out = torch.empty_like(src)
            K.grouped_rmsnorm_launch(src, ws, EPS, out, **kw)
            return out

        def hf() -> torch.Tensor:
            return torch.cat(
                [hf_rmsnorm(c, w, EPS) for c, w in zip(src.chunk(k, -1), ws, strict=True)], -1
            )

    dst = torch.empty_like(src)
    return fused, (lambda: dst.copy_(src)), hf


def _pick_variants(args: argparse.Namespace, graphed: bool, h: int) -> list[Tuning]:
    """The candidates of one case: ``--wide``/``--small``/``--quick``'s list, else all."""
    if args.wide:
        return [v for v in WIDE_VARIANTS if (v.get("chunk") or 0) <= h]
    if args.small:
        return list(SMALL_VARIANTS) + [
            v for v in SPLIT_VARIANTS if (v.get("row_split") or 1) * 32 <= h
        ]
    if args.quick:
        return [v for v in QUICK_VARIANTS if (v.get("chunk") or 0) <= h]
    return _variants(graphed, h)


def _first_pass(fused: Fused, variants: list[Tuning],
                timer: Callable[[Callable[[], object]], float]) -> list[Row]:  # fmt: skip
    """Run and time every candidate once against the first (default) candidate's output."""
    ref = fused()
    rows: list[Row] = []
    for v in variants:
        fn = functools.partial(fused, **v)
        try:
            got = fn()
            equal = bool(torch.equal(got, ref))
            ulp = int(ulp_distance(got, ref).max()) if got.numel() else 0
            us = timer(fn)
        except Exception as exc:  # a variant the toolchain rejects is reported, not fatal
            rows.append({"variant": v or "default", "error": f"{type(exc).__name__}: {exc}"[:300]})
            continue
        rows.append({"variant": v or "default", "first_us": us, "equal": equal, "max_ulp": ulp,
                     "_fn": fn})  # fmt: skip
    return rows


def run_case(kind: str, n: int, h: int, k: int, args: argparse.Namespace,
             dtype: str = "bf16") -> Result:  # fmt: skip
    """Sweep one case; returns ``{case, key, rows: [{variant, us, rounds, equal}], copy_us, ...}``."""
    graphed = n <= args.graph_max_n
    key = "graph_us" if graphed else "bench_us"

    def timer(fn: Callable[[], object]) -> float:
        return graph_time_us(fn, calls=args.calls) if graphed else bench_us(fn)

    fused, copy, hf = _case_fns(kind, n, h, k, dtype)
    rows = _first_pass(fused, _pick_variants(args, graphed, h), timer)
    timed = [r for r in rows if "_fn" in r]
    best = sorted(timed[1:], key=lambda r: r["first_us"])[: args.top]
    again = [timed[0], *best]
    base: dict[str, Baseline] = {"copy": {"_fn": copy, "rounds": []}}
    if args.compile and not graphed:
        base["compile"] = {"_fn": _compiled(hf), "rounds": []}
    for r in again:
        r["rounds"] = []
    for _ in range(args.rounds):
        for t in [*again, *base.values()]:
            t["rounds"].append(timer(t["_fn"]))
    for r in rows:
        r.pop("_fn", None)
        if r.get("rounds"):
            r["us"] = statistics.median(r["rounds"])
    res: Result = {"case": f"{kind} N={n} H={h}" + (f" k={k}" if kind == "grouped" else "")
                   + ("" if dtype == "bf16" else f" {dtype}"),
                   "key": key, "rows": rows,
                   "config": K.launch_config(n, sum(K.tiles(h, False)), 2),
                   "copy_us": statistics.median(base["copy"]["rounds"]),
                   "copy_rounds": base["copy"]["rounds"]}  # fmt: skip
    if "compile" in base:
        res["compile_us"] = statistics.median(base["compile"]["rounds"])
        res["compile_rounds"] = base["compile"]["rounds"]
    return res


def table(res: Result) -> str:
    """One case as a text table: variant, first time, median of rounds, % of copy, bit-equal."""
    copy = res["copy_us"]
    lines = [f"== {res['case']} ({res['key']}); copy {copy:.2f} us"
             + (f"; compile {res['compile_us']:.2f} us" if "compile_us" in res else "")]  # fmt: skip
    for r in sorted(res["rows"], key=lambda r: r.get("us", r.get("first_us", 1e9))):
        if "error" in r:
            lines.append(f"  {r['variant']!s:60} ERROR {r['error'][:120]}")
            continue
        us = r.get("us")
        eff = f"{100 * copy / us:5.1f}%" if us else "      "
        lines.append(f"  {r['variant']!s:60} first {r['first_us']:8.2f}  median {us or float('nan'):8.2f} "
                     f"{eff} equal={r['equal']} ulp={r.get('max_ulp')}")  # fmt: skip
    return "\n".join(lines)


CASES: tuple[Case, ...] = (("dual", 4096, 8192, 2), ("dual", 65536, 8192, 2), ("dual", 32768, 7168, 2),
         ("dual", 32768, 5120, 2), ("dual", 32768, 4096, 2), ("grouped", 16384, 8192, 4),
         ("grouped", 32768, 2048, 3), ("dual", 4096, 6144, 2), ("dual", 512, 4096, 2),
         ("dual", 512, 8192, 2), ("dual", 2048, 8192, 2), ("dual", 1024, 4096, 2),
         ("dual", 32768, 6144, 2), ("grouped", 32768, 2048, 3), ("dual", 1, 8192, 2),
         ("dual", 64, 5120, 2), ("grouped", 64, 8192, 4), ("grouped", 1, 7168, 5),
         ("dual", 32768, 2048, 2), ("grouped", 4096, 5120, 4))  # fmt: skip

#: ``--small``: what could shorten a latency-bound launch (small N, graphed).
SMALL_VARIANTS: tuple[Tuning, ...] = (
    {}, {"num_warps": 4}, {"num_warps": 16}, {"num_warps": 32}, {"pdl": False},
    {"split": True}, {"chunk": 2048, "num_warps": 8}, {"store_cs": True},
    {"rows_per_program": 2, "num_warps": 8}, {"rows_per_program": 4, "num_warps": 8},
    {"rows_per_program": 1, "num_warps": 8, "split": True},
    {"evict": ""}, {"evict": "", "num_warps": 16}, {"evict": "evict_last"},
    {"evict": "", "split": True}, {"evict": "", "pdl": False},
)  # fmt: skip

#: Added to ``--small``: a row split over several programs (partial sums, then normalise), and
#: more warps for one program per row.
SPLIT_VARIANTS: tuple[Tuning, ...] = tuple(
    Tuning(row_split=s, num_warps=w) for s in (2, 4, 8, 16) for w in (2, 4, 8)
) + ({"row_split": 1, "num_warps": 16}, {"row_split": 1, "num_warps": 32},
     {"row_split": 1})  # fmt: skip

#: ``--wide``: widths that are not a power of two (2560, 2880, 3584, 5376, 12288): split tiles,
#: narrow loop chunks, rows x warps, the loads' eviction hint.
WIDE_VARIANTS: tuple[Tuning, ...] = (
    {}, {"chunk": 0}, {"chunk": 0, "split": True}, {"chunk": 0, "num_warps": 4},
    {"chunk": 0, "num_warps": 16}, {"chunk": 0, "rows_per_program": 2, "num_warps": 8},
    {"chunk": 0, "split": True, "rows_per_program": 2, "num_warps": 8},
    {"chunk": 0, "split": True, "num_warps": 4}, {"chunk": 0, "evict": ""},
    {"chunk": 0, "split": True, "evict": ""}, {"chunk": 0, "store_cs": True},
    {"chunk": 0, "rows_per_program": 4, "num_warps": 16}, {"chunk": 512, "num_warps": 2},
    {"chunk": 512, "num_warps": 4}, {"chunk": 1024, "num_warps": 4},
    {"chunk": 1024, "num_warps": 8}, {"chunk": 2048, "num_warps": 4},
    {"chunk": 2048, "num_warps": 8}, {"chunk": 1024, "num_warps": 4, "rows_per_program": 2},
    {"chunk": 1024, "num_warps": 4, "evict": ""}, {"chunk": 2048, "num_warps": 8, "evict": ""},
    {"chunk": 4096, "num_warps": 16},
)  # fmt: skip

#: ``--quick``: the default launch, the register tile and a few looped configurations.
QUICK_VARIANTS: tuple[Tuning, ...] = (
    {}, {"chunk": 0}, {"chunk": 0, "rows_per_program": 2, "num_warps": 8},
    {"chunk": 1024, "num_warps": 4}, {"chunk": 2048, "num_warps": 4},
    {"chunk": 2048, "num_warps": 8}, {"chunk": 4096, "num_warps": 8},
    {"chunk": 4096, "num_warps": 16},
)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Run the sweep; write ``sweep_rmsnorm.json`` into ``--out`` after every case."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=".", help="output folder")
    ap.add_argument("--calls", type=int, default=20, help="calls captured per graph")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved re-timings of the best")
    ap.add_argument("--top", type=int, default=4, help="candidates re-timed besides the default")
    ap.add_argument("--no-compile", dest="compile", action="store_false")
    ap.add_argument("--quick", action="store_true", help="only QUICK_VARIANTS")
    ap.add_argument("--small", action="store_true", help="only SMALL_VARIANTS")
    ap.add_argument("--cases", default="", help="indices into CASES, comma separated (default all)")
    ap.add_argument("--spec", default="", help="cases as kind:N:H:k[:dtype];... (not --cases)")
    ap.add_argument("--wide", action="store_true", help="only WIDE_VARIANTS")
    ap.add_argument("--graph-max-n", type=int, default=4096, help="graph-time cases up to this N")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("sweep_rmsnorm: needs a CUDA GPU", file=sys.stderr)
        return 2
    picks = [CASES[int(i)] for i in args.cases.split(",")] if args.cases else list(CASES)
    dtypes = ["bf16"] * len(picks)
    if args.spec:
        specs = [c.split(":") for c in args.spec.split(";")]
        picks = [(c[0], int(c[1]), int(c[2]), int(c[3])) for c in specs]
        dtypes = [c[4] if len(c) > 4 else "bf16" for c in specs]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results: Results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                        "cases": []}  # fmt: skip
    t0 = time.time()
    for case, dtype in zip(picks, dtypes, strict=True):
        results["cases"].append(run_case(*case, args, dtype))
        print(
            table(results["cases"][-1]) + f"\n  [{time.time() - t0:.0f}s]",
            file=sys.stderr,
            flush=True,
        )
        (out / "sweep_rmsnorm.json").write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
