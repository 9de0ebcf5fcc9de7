"""Targets, markdown tables and the PNG plot of a fused-norm benchmark run (:mod:`.bench_rmsnorm`).

Pure functions over the JSON document the benchmark writes (torch-free; matplotlib only for the
plot, skipped when it is missing), so ``--merge`` can rebuild a page from earlier runs anywhere.

Targets (issue #30): at N >= 4096 the fused kernel moves its bytes at >= 97 % of the bandwidth
of a copy of the same bytes timed in the same process; at N <= 512 inside a CUDA graph it takes
at most 1.10 x the copy's time; it is faster than ``F.rms_norm`` x2 + cat and ``torch.compile``
of the reference (and Liger-Kernel when installed), eager and graphed; the registered
``torch.library`` op called eagerly costs at most 2 x a bare Triton launch of a trivial kernel.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, TypedDict

BANDWIDTH_MIN = 0.97
SMALL_N_MAX = 512
SMALL_N_SLACK = 1.10
OVERHEAD_SLACK_US = 5.0
OVERHEAD_LIMIT_US = 18.0
OP_OVER_BARE_MAX = 2.0

Kind = Literal["dual", "grouped", "overhead"]


class Timing(TypedDict, total=False):
    """One method's figures in µs: ``bench_us`` (do_bench median), ``graph_us`` (graph replay)."""

    bench_us: float
    graph_us: float
    error: str


class Row(TypedDict, total=False):
    """One benchmark case: ``times`` per method, or ``host_us`` per call for the overhead row."""

    kind: Kind
    n: int
    h: int
    k: int
    dtype: str
    bytes: int
    times: dict[str, Timing]
    host_us: dict[str, float]
    config: dict[str, int | bool | str]
    max_abs_err_vs_hf: float
    rerun: str


class Target(TypedDict):
    """One evaluated target: the measured figure against its limit."""

    family: str
    target: str
    value: float
    limit: float
    unit: str
    met: bool


class Results(TypedDict, total=False):
    """The benchmark's JSON document."""

    device: str
    driver: str
    torch: str
    triton: str
    cuda: str
    liger: str | None
    command: str
    commit: str
    rows: list[Row]
    notes: list[str]
    targets: list[Target]


def timing(row: Row, method: str, graphed: bool) -> float | None:
    """``method``'s graph-replay (``graphed``) or do_bench time in µs, None when not measured."""
    m = row.get("times", {}).get(method, {})
    return m.get("graph_us") if graphed else m.get("bench_us")


def case_tag(row: Row) -> str:
    """``"dual bf16 N=512 H=2880"`` / ``"grouped fp16 N=1 H=4096 k=3"``."""
    tag = f"{row['kind']} {row.get('dtype', 'bf16')} N={row['n']} H={row['h']}"
    return tag + (f" k={row['k']}" if row["kind"] == "grouped" else "")


def _target(family: str, name: str, value: float, limit: float, ok: bool, unit: str) -> Target:
    return {"family": family, "target": name, "value": round(value, 2), "limit": round(limit, 2),
            "unit": unit, "met": bool(ok)}  # fmt: skip


def overhead_targets(row: Row) -> list[Target]:
    """Eager host cost at N = 1: the fused entry points and the registered op vs a bare launch."""
    t = row["host_us"]
    bare, frms = t["bare_triton_launch"], t["f_rms_norm_x2_cat"]
    fam = "eager overhead"
    res = []
    for name in ("fused_dual", "fused_grouped"):
        f = t[name]
        res.append(_target(fam, f"N=1 {name} <= bare Triton launch + 5 us", f,
                           bare + OVERHEAD_SLACK_US, f <= bare + OVERHEAD_SLACK_US, "us"))  # fmt: skip
    f = t["fused_dual"]
    res.append(_target(fam, "N=1 fused_dual <= 18 us", f, OVERHEAD_LIMIT_US,
                       f <= OVERHEAD_LIMIT_US, "us"))  # fmt: skip
    res.append(_target(fam, "N=1 fused_dual < F.rms_norm x2 + cat", f, frms, f < frms, "us"))
    for name in ("torch_op_dual", "torch_op_dual_grad_mode"):
        if name in t:
            op = t[name]
            res.append(_target("torch.library op <= 2 x bare launch", f"N=1 {name}", op,
                               OP_OVER_BARE_MAX * bare, op <= OP_OVER_BARE_MAX * bare, "us"))  # fmt: skip
    return res


def case_targets(
    row: Row, baselines: tuple[str, ...] = ("compile", "liger", "f_rms_norm")
) -> list[Target]:
    """Bandwidth, small-N and faster-than targets of one dual or grouped case."""
    res: list[Target] = []
    n, tag = row["n"], case_tag(row)
    for graphed in (True, False):
        f, c = timing(row, "fused", graphed), timing(row, "copy", graphed)
        if f is None or c is None:
            continue
        mode = "graphed" if graphed else "do_bench"
        if n >= 4096:
            eff = c / f
            res.append(_target("bandwidth >= 97% of copy", f"{tag} ({mode})", 100 * eff,
                               100 * BANDWIDTH_MIN, eff >= BANDWIDTH_MIN, "%"))  # fmt: skip
        if graphed and n <= SMALL_N_MAX:
            res.append(_target("small N graphed <= 1.10 x copy", tag, f, SMALL_N_SLACK * c,
                               f <= SMALL_N_SLACK * c, "us"))  # fmt: skip
        for other in baselines:
            o = timing(row, other, graphed)
            if o is not None:
                res.append(_target(f"faster than {other} ({mode})", tag, f, o, f < o, "us"))
    return res


def evaluate_targets(rows: list[Row]) -> list[Target]:
    """Every target of every row (:func:`overhead_targets`, :func:`case_targets`)."""
    res: list[Target] = []
    for r in rows:
        res += overhead_targets(r) if r["kind"] == "overhead" else case_targets(r)
    return res


def _cell(t: Timing) -> str:
    if "error" in t or "bench_us" not in t:
        return "error"
    g = f"{t['graph_us']:.2f}" if "graph_us" in t else "—"
    return f"{g} / {t['bench_us']:.2f}"


def _eff(row: Row, graphed: bool) -> str:
    f, c = timing(row, "fused", graphed), timing(row, "copy", graphed)
    return f"{100 * c / f:.1f}%" if f and c else "—"


def _header(results: Results) -> list[str]:
    return [
        "# Fused EAGLE3 norm kernels: H200 benchmark",
        "",
        f"Device: {results.get('device')}; driver {results.get('driver', '?')}; "
        f"CUDA {results.get('cuda', '?')}; torch {results.get('torch')}; "
        f"triton {results.get('triton')}; liger {results.get('liger') or 'not installed'}; "
        "eps=1e-05. "
        + (f"Command: `{results['command']}`" if results.get("command") else "")
        + (f" at commit {results['commit']}." if results.get("commit") else ""),
        "",
        "Cells: GPU µs per call, CUDA-graph replay / `do_bench` median (eager, L2 flushed before "
        "each call); graph replay only for small N. `eff graph` and `eff eager` = copy time / "
        "fused time (the share of the bandwidth of a copy of the same bytes, timed in the same "
        "process).",
        "",
    ]


def _overhead_lines(rows: list[Row]) -> list[str]:
    lines: list[str] = []
    for r in rows:
        lines += [f"## Eager host cost at N = 1 (µs per call, H = {r['h']}, grouped k = {r['k']})",
                  "", "| call | µs |", "|---|---|"]  # fmt: skip
        lines += [f"| {name} | {us:.2f} |" for name, us in r["host_us"].items()]
        lines.append("")
    return lines


def _case_lines(rows: list[Row], title: str) -> list[str]:
    methods = list(rows[0]["times"])
    lines = [f"## {title}", "", "| H | N | " + " | ".join(methods) + " | eff graph | eff eager |"
             " TB/s eager |", "|---|---|" + "---|" * (len(methods) + 3)]  # fmt: skip
    for r in sorted(rows, key=lambda r: (r["h"], r["n"])):
        cells = [_cell(r["times"].get(m, {"error": "missing"})) for m in methods]
        f = timing(r, "fused", False)
        tbs = f"{r['bytes'] / (f * 1e-6) / 1e12:.2f}" if f else "—"
        lines.append(f"| {r['h']} | {r['n']} | " + " | ".join(cells)
                     + f" | {_eff(r, True)} | {_eff(r, False)} | {tbs} |")  # fmt: skip
    return lines + [""]


def _groups(rows: list[Row]) -> list[tuple[str, int, str, str]]:
    keys = sorted({(r["kind"], r["k"], r.get("dtype", "bf16")) for r in rows},
                  key=lambda t: (t[0] != "dual", t[1], t[2]))  # fmt: skip
    return [(kind, k, dt, "Dual RMSNorm + concat (EAGLE3 layer 0), d1 = d2 = H, " + dt
             if kind == "dual" else f"Grouped fc_norm, k = {k}, {dt}") for kind, k, dt in keys]  # fmt: skip


def _target_lines(targets: list[Target]) -> list[str]:
    lines = ["## Targets", "", "| target | met | worst case (measured vs limit) |", "|---|---|---|"]
    for fam in dict.fromkeys(t["family"] for t in targets):
        ts = [t for t in targets if t["family"] == fam]
        met = sum(t["met"] for t in ts)
        if fam.startswith("bandwidth"):
            worst = min(ts, key=lambda t: t["value"] - t["limit"])
        else:
            worst = max(ts, key=lambda t: t["value"] / t["limit"] if t["limit"] else 0.0)
        lines.append(f"| {fam} | {met}/{len(ts)} {'yes' if met == len(ts) else '**no**'} | "
                     f"{worst['target']}: {worst['value']} vs {worst['limit']} {worst['unit']} |")  # fmt: skip
    missed = [t for t in targets if not t["met"]]
    if missed:
        lines += ["", f"### Missed ({len(missed)})", "", "| family | case | measured | limit |",
                  "|---|---|---|---|"]  # fmt: skip
        lines += [f"| {t['family']} | {t['target']} | {t['value']} {t['unit']} | "
                  f"{t['limit']} {t['unit']} |" for t in missed]  # fmt: skip
    return lines


def markdown(results: Results) -> str:
    """The results as markdown: header, eager host cost, one table per kind/k/dtype, targets."""
    rows = results["rows"]
    lines = _header(results) + _overhead_lines([r for r in rows if r["kind"] == "overhead"])
    for kind, k, dt, title in _groups([r for r in rows if r["kind"] != "overhead"]):
        sel = [
            r for r in rows if r["kind"] == kind and r["k"] == k and r.get("dtype", "bf16") == dt
        ]
        lines += _case_lines(sel, title)
    lines += _target_lines(results.get("targets", []))
    if results.get("notes"):
        lines += ["", "## Notes", ""] + [f"* {n}" for n in results["notes"]]
    return "\n".join(lines) + "\n"


def _series(rows: list[Row], graphed: bool) -> tuple[list[int], list[float]]:
    xs, ys = [], []
    for r in sorted(rows, key=lambda r: r["h"]):
        f, c = timing(r, "fused", graphed), timing(r, "copy", graphed)
        if f and c:
            xs.append(r["h"])
            ys.append(100 * c / f)
    return xs, ys


def plot(results: Results, path: Path) -> bool:
    """% of copy against H, one line per N (eager, and graphed for small N), one panel per group.

    Returns False (and writes nothing) without matplotlib.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = [r for r in results["rows"] if r["kind"] != "overhead"]
    groups = _groups(rows)
    cols = min(2, len(groups)) or 1
    nrows = (len(groups) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(8 * cols, 4.8 * nrows), squeeze=False)
    for ax, (kind, k, dt, title) in zip(axes.flat, groups, strict=False):
        sel = [
            r for r in rows if r["kind"] == kind and r["k"] == k and r.get("dtype", "bf16") == dt
        ]
        for n in sorted({r["n"] for r in sel}):
            at_n = [r for r in sel if r["n"] == n]
            xs, ys = _series(at_n, graphed=False)
            ax.plot(xs, ys, "-o", markersize=3, label=f"N={n} eager")
            xs, ys = _series(at_n, graphed=True)
            if xs:
                ax.plot(xs, ys, ":s", markersize=3, label=f"N={n} graph")
        ax.axhline(100 * BANDWIDTH_MIN, color="k", linestyle="--", linewidth=1,
                   label="97 % (N >= 4096)")  # fmt: skip
        ax.axhline(100 / SMALL_N_SLACK, color="r", linestyle="--", linewidth=1,
                   label="1/1.10 (graphed N <= 512)")  # fmt: skip
        ax.set_xscale("log", base=2)
        ax.set_ylim(40, 125)
        ax.set_xlabel("H (hidden size)")
        ax.set_ylabel("copy time / fused time (%)")
        ax.set_title(title, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6, ncol=2)
    for ax in list(axes.flat)[len(groups) :]:
        ax.axis("off")
    fig.suptitle(f"{results.get('device')}: fused norm vs a same-bytes copy (same process)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True
