"""Running the fused kernels on a draft's norms against the references (numpy under Triton's
CPU interpreter, torch on CUDA), each case with the engines' guard verdicts, and the
``verify-kernel`` report built from the results."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from recipecli.errors import UsageError
from recipecli.kernelcheck.norms import DraftNorms, NormWeight

CONVENTIONS: tuple[str, ...] = ("hf", "fp32_weight")


@dataclass
class CaseResult:
    """One kernel-vs-reference comparison.

    Attributes:
        kind: ``layer0`` (dual norm + concat) or ``fc_norm`` (grouped).
        convention: ``hf`` or ``fp32_weight``.
        n: tokens (rows); widths: segment widths; dtype: torch dtype name.
        metrics: :func:`recipecli.kernels.rmsnorm_ref.compare` output (max_abs_err, max_ulp,
            frac_bit_identical, passed …).
        guards: engine -> {"eligible": bool | None, "reasons": [...], "note"?} for this case as
            served on CUDA in the draft's dtype (None = the engine has no fused path for it).
        launched: False when N == 0 (nothing launched, by design).
        path: the kernel's code path: ``tile`` (one register tile per row) or ``looped``
            (two-pass reduction over chunks; CUDA at large N, forced once per convention under
            the CPU interpreter), ``auto`` (CUDA: whichever the launch picks for N).
    """

    kind: str
    convention: str
    n: int
    widths: tuple[int, ...]
    dtype: str
    metrics: dict[str, Any]
    guards: dict[str, dict[str, Any]] = field(default_factory=dict)
    launched: bool = True
    path: str = "auto"

    @property
    def passed(self) -> bool:
        return bool(self.metrics["passed"])

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "convention": self.convention,
            "n": self.n,
            "widths": list(self.widths),
            "dtype": self.dtype,
            "launched": self.launched,
            "path": self.path,
            **self.metrics,
            "guards": self.guards,
        }


def _kernel_module(device: str) -> ModuleType:
    """Import the Triton module in the mode the device needs (interpreter on CPU)."""
    name = "recipecli.kernels.rmsnorm_triton"
    if device == "cpu":
        if "triton" in sys.modules and os.environ.get("TRITON_INTERPRET", "0") != "1":
            raise UsageError(
                "triton was imported in this process without TRITON_INTERPRET=1",
                hint="run the CPU check in a fresh process",
            )
        if name in sys.modules and not sys.modules[name].INTERPRETED:
            raise UsageError(
                "the kernel module was already compiled for the GPU in this process",
                hint="run the CPU check in a fresh process",
            )
        os.environ["TRITON_INTERPRET"] = "1"
    elif name in sys.modules and sys.modules[name].INTERPRETED:
        raise UsageError(
            "TRITON_INTERPRET=1 is set: the kernels would run interpreted",
            hint="unset TRITON_INTERPRET",
        )
    import importlib

    return importlib.import_module(name)


def _guards_layer0(d1: int, d2: int, n: int, dtype: str, eps: float) -> dict[str, dict[str, Any]]:
    from recipecli.kernels.rmsnorm_guards import (
        column_slice,
        dense,
        tokenspeed_fused_guard,
        vllm_layer0_guard,
    )

    a, b = dense((n, d1), dtype), dense((n, d2), dtype)
    out = dense((n, d1 + d2), dtype)
    ok_v, why_v = vllm_layer0_guard(a, b, eps, eps)
    ok_t, why_t = tokenspeed_fused_guard(
        a,
        b,
        dense((d1,), dtype),
        dense((d2,), dtype),
        eps,
        eps,
        column_slice(out, 0, d1),
        column_slice(out, d1, d2),
    )
    return {
        "vllm": {"eligible": ok_v, "reasons": why_v},
        "tokenspeed": {"eligible": ok_t, "reasons": why_t},
    }


def _guards_fc_norm(h: int, k: int, n: int, dtype: str, eps: float) -> dict[str, dict[str, Any]]:
    from recipecli.kernels.rmsnorm_guards import column_slice, dense, tokenspeed_fused_guard

    x, out, w = dense((n, k * h), dtype), dense((n, k * h), dtype), dense((h,), dtype)
    reasons: list[str] = []
    for i in range(0, k - 1, 2):
        ok, why = tokenspeed_fused_guard(
            column_slice(x, i * h, h), column_slice(x, (i + 1) * h, h), w, w, eps, eps,
            column_slice(out, i * h, h), column_slice(out, (i + 1) * h, h),
        )  # fmt: skip
        reasons += [f"pair ({i}, {i + 1}): {r}" for r in why]
    guards: dict[str, dict[str, Any]] = {
        "tokenspeed": {"eligible": not reasons, "reasons": sorted(set(reasons))}
    }
    if k < 2:
        guards["tokenspeed"] = {
            "eligible": None,
            "reasons": [],
            "note": "k = 1: no pair to fuse; normed unfused",
        }
    elif k % 2:
        guards["tokenspeed"]["note"] = f"odd k = {k}: the last chunk is a separate unfused launch"
    guards["vllm"] = {
        "eligible": None,
        "reasons": [],
        "note": "vLLM fuses only layer 0's norms (vLLM PR #47391), not fc_norm",
    }
    return guards


def run_cases(
    norms: DraftNorms,
    tokens: Sequence[int],
    device: str,
    *,
    seed: int = 0,
    conventions: Sequence[str] = CONVENTIONS,
    both_paths: bool = True,
    on_case: Callable[[CaseResult], None] | None = None,
) -> list[CaseResult]:
    """Run every (case, N, convention) through the kernel and compare with the reference (numpy under the
    CPU interpreter, torch on CUDA).

    Args:
        norms: what to test (:func:`draft_norms` or :func:`synthetic_norms`).
        tokens: the N values (0 is allowed: checks nothing is launched).
        device: ``cpu`` (Triton interpreter) or ``cuda``.
        seed: seeds the inputs and any synthesised weights.
        conventions: rounding conventions to test.
        both_paths: CPU only — run each (N, convention) as register tile and as looped
            reduction (True), or the first convention as tile and the rest looped (False, what
            ``check`` runs: each code path and each convention once).
        on_case: called with each result as soon as its case is done (progress bars;
            :func:`case_count` cases in all).

    Returns:
        One :class:`CaseResult` per case, N, convention (and code path on CPU).

    Raises:
        MissingDependencyError: torch/triton missing; UsageError: device not usable.
    """
    K = _kernel_module(device)
    tick = on_case or (lambda result: None)
    if device == "cpu":
        return _run_cases_host(K, norms, tokens, seed, conventions, both_paths, tick)
    import torch

    dt = getattr(torch, norms.dtype)
    gen = torch.Generator().manual_seed(seed)

    def tensor_of(w: NormWeight) -> torch.Tensor:
        if w.values is not None:
            return torch.tensor(w.values, dtype=torch.float32).to(dt)
        return (1 + 0.1 * torch.randn(w.width, generator=gen)).to(dt)

    results: list[CaseResult] = []
    if norms.layer0 is not None:
        w1, w2 = (tensor_of(w) for w in norms.layer0)
        results += _cuda_layer0(K, norms, w1, w2, tokens, device, gen, conventions, tick)
    if norms.fc_norm:
        ws = torch.stack([tensor_of(w) for w in norms.fc_norm])
        results += _cuda_fc_norm(K, norms, ws, tokens, device, gen, conventions, tick)
    return results


def case_count(
    norms: DraftNorms, tokens: Sequence[int], device: str, *, conventions: Sequence[str] = CONVENTIONS,
    both_paths: bool = True,
) -> int:  # fmt: skip
    """How many results :func:`run_cases` returns for these arguments: per kind the draft has
    (layer 0, fc_norm), per N and convention, twice on CPU with ``both_paths``."""
    kinds = (norms.layer0 is not None) + bool(norms.fc_norm)
    paths = 2 if device == "cpu" and both_paths else 1
    return kinds * len(tokens) * len(conventions) * paths


def _cuda_layer0(
    K: Any, norms: DraftNorms, w1: Any, w2: Any, tokens: Sequence[int], device: str, gen: Any,
    conventions: Sequence[str], tick: Callable[[CaseResult], None],
) -> list[CaseResult]:  # fmt: skip
    """Layer-0 cases on CUDA: dual RMSNorm + concat of [N, d1] and [N, d2] inputs (drawn from
    ``gen``) against the torch reference."""
    import torch

    from recipecli.kernels.rmsnorm_ref import compare, dual_rmsnorm_concat_ref

    dt, eps = getattr(torch, norms.dtype), norms.eps
    d1, d2 = w1.numel(), w2.numel()
    results = []
    for n in tokens:
        a = torch.randn(n, d1, generator=gen).to(dt)
        b = torch.randn(n, d2, generator=gen).to(dt)
        for conv in conventions:
            out = torch.empty(n, d1 + d2, dtype=dt, device=device)
            if n:
                K.dual_rmsnorm_launch(
                    a.to(device), b.to(device), w1.to(device), w2.to(device), eps, eps,
                    out[:, :d1], out[:, d1:], convention=conv,
                )  # fmt: skip
            ref = dual_rmsnorm_concat_ref(a, b, w1, w2, eps, eps, conv)
            metrics = compare(out.cpu(), ref, interpreted=False, convention=conv)
            results.append(CaseResult("layer0", conv, n, (d1, d2), norms.dtype, metrics,
                                      _guards_layer0(d1, d2, n, norms.dtype, eps), bool(n)))  # fmt: skip
            tick(results[-1])
    return results


def _cuda_fc_norm(
    K: Any, norms: DraftNorms, ws: Any, tokens: Sequence[int], device: str, gen: Any,
    conventions: Sequence[str], tick: Callable[[CaseResult], None],
) -> list[CaseResult]:  # fmt: skip
    """``fc_norm`` cases on CUDA: grouped RMSNorm of [N, k*h] inputs (drawn from ``gen``) with
    the k weights ``ws`` [k, h] against the torch reference."""
    import torch

    from recipecli.kernels.rmsnorm_ref import compare, grouped_rmsnorm_ref

    dt, eps = getattr(torch, norms.dtype), norms.eps
    k, h = ws.shape
    results = []
    for n in tokens:
        x = torch.randn(n, k * h, generator=gen).to(dt)
        for conv in conventions:
            out = torch.empty(n, k * h, dtype=dt, device=device)
            if n:
                K.grouped_rmsnorm_launch(x.to(device), ws.to(device), eps, out, convention=conv)
            ref = grouped_rmsnorm_ref(x, ws, eps, conv)
            metrics = compare(out.cpu(), ref, interpreted=False, convention=conv)
            results.append(CaseResult("fc_norm", conv, n, (h,) * k, norms.dtype, metrics,
                                      _guards_fc_norm(h, k, n, norms.dtype, eps), bool(n)))  # fmt: skip
            tick(results[-1])
    return results


def _host_paths(
    width: int, conv: str, conventions: Sequence[str], both_paths: bool
) -> tuple[tuple[str, dict[str, int]], ...]:
    """The code paths to force under the interpreter: the register tile, and the looped
    reduction with at least two chunks per row (both, or the first convention as tile and the
    others looped)."""
    chunk = max(16, 1 << max(0, (width // 2).bit_length() - 1))
    both = (("tile", {"chunk": 0}), ("looped", {"chunk": chunk}))
    if both_paths:
        return both
    return both[:1] if conv == conventions[0] else both[1:]


def _run_cases_host(
    K: Any,
    norms: DraftNorms,
    tokens: Sequence[int],
    seed: int,
    conventions: Sequence[str],
    both_paths: bool = True,
    tick: Callable[[CaseResult], None] = lambda result: None,
) -> list[CaseResult]:
    """:func:`run_cases` under Triton's CPU interpreter on numpy-backed tensors (no torch).

    ``both_paths``: every (N, convention) as register tile and as looped reduction; False: the
    first convention as tile, the others looped (each code path and each convention once).
    """
    import numpy as np

    from recipecli.kernels.host_tensor import HostTensor

    dt = norms.dtype
    rng = np.random.default_rng(seed)

    def tensor_of(w: NormWeight) -> HostTensor:
        if w.values is not None:
            return HostTensor.from_values(np.asarray(w.values, dtype=np.float32), dt)
        return HostTensor.from_values(1 + 0.1 * rng.standard_normal(w.width), dt)

    results: list[CaseResult] = []
    if norms.layer0 is not None:
        w1, w2 = (tensor_of(w) for w in norms.layer0)
        results += _host_layer0(K, norms, w1, w2, tokens, rng, conventions, both_paths, tick)
    if norms.fc_norm:
        ws = [tensor_of(w) for w in norms.fc_norm]
        results += _host_fc_norm(K, norms, ws, tokens, rng, conventions, both_paths, tick)
    return results


def _host_layer0(
    K: Any, norms: DraftNorms, w1: Any, w2: Any, tokens: Sequence[int], rng: Any,
    conventions: Sequence[str], both_paths: bool, tick: Callable[[CaseResult], None],
) -> list[CaseResult]:  # fmt: skip
    """Layer-0 cases under the interpreter against the numpy reference."""
    import numpy as np

    from recipecli.kernels.host_tensor import HostTensor, compare_np, rmsnorm_np

    dt, eps = norms.dtype, norms.eps
    d1, d2 = w1.shape[0], w2.shape[0]
    results = []
    for n in tokens:
        a = HostTensor.from_values(rng.standard_normal((n, d1)), dt)
        b = HostTensor.from_values(rng.standard_normal((n, d2)), dt)
        for conv in conventions:
            ref = np.concatenate([rmsnorm_np(a.numpy(), w1.numpy(), eps, dt, conv),
                                  rmsnorm_np(b.numpy(), w2.numpy(), eps, dt, conv)], axis=1)  # fmt: skip
            for path, kw in _host_paths(min(d1, d2), conv, conventions, both_paths):
                out = HostTensor.empty((n, d1 + d2), dt)
                if n:
                    K.dual_rmsnorm_launch(a, b, w1, w2, eps, eps, out.columns(0, d1),
                                          out.columns(d1, d2), convention=conv, **kw)  # fmt: skip
                metrics = compare_np(out.storage_numpy(), ref, dt, interpreted=True,
                                     convention=conv)  # fmt: skip
                results.append(CaseResult("layer0", conv, n, (d1, d2), dt, metrics,
                                          _guards_layer0(d1, d2, n, dt, eps), bool(n), path))  # fmt: skip
                tick(results[-1])
    return results


def _host_fc_norm(
    K: Any, norms: DraftNorms, ws: list[Any], tokens: Sequence[int], rng: Any,
    conventions: Sequence[str], both_paths: bool, tick: Callable[[CaseResult], None],
) -> list[CaseResult]:  # fmt: skip
    """``fc_norm`` cases under the interpreter against the numpy reference."""
    import numpy as np

    from recipecli.kernels.host_tensor import HostTensor, compare_np, rmsnorm_np

    dt, eps = norms.dtype, norms.eps
    k, h = len(ws), ws[0].shape[0]
    if k > K.MAX_CHUNKS:  # the kernel takes up to MAX_CHUNKS pointers; more: one [k, H]
        weights: Any = HostTensor(np.concatenate([w.buf for w in ws]), dt, (k, h))
    else:
        weights = ws
    results = []
    for n in tokens:
        x = HostTensor.from_values(rng.standard_normal((n, k * h)), dt)
        xv = x.numpy()
        for conv in conventions:
            ref = np.concatenate([rmsnorm_np(xv[:, i * h : (i + 1) * h], ws[i].numpy(), eps,
                                             dt, conv) for i in range(k)], axis=1)  # fmt: skip
            for path, kw in _host_paths(h, conv, conventions, both_paths):
                out = HostTensor.empty((n, k * h), dt)
                if n:
                    K.grouped_rmsnorm_launch(x, weights, eps, out, convention=conv, **kw)
                metrics = compare_np(out.storage_numpy(), ref, dt, interpreted=True,
                                     convention=conv)  # fmt: skip
                results.append(CaseResult("fc_norm", conv, n, (h,) * k, dt, metrics,
                                          _guards_fc_norm(h, k, n, dt, eps), bool(n), path))  # fmt: skip
                tick(results[-1])
    return results


@dataclass(frozen=True)
class KernelReport:
    """The result of ``recipecli verify-kernel``: the draft's norms and every case run.

    Fields:
        norms: the draft's RMSNorm weights, eps and dtype the cases were built from.
        device: ``cpu`` (Triton's interpreter) or ``cuda``.
        cases: one :class:`CaseResult` per (kind, convention, N, code path).
    """

    norms: DraftNorms
    device: str
    cases: tuple[CaseResult, ...]

    @property
    def interpreted(self) -> bool:
        """True when the kernels ran under Triton's CPU interpreter."""
        return self.device == "cpu"

    @property
    def passed(self) -> bool:
        """True when every case is within its tolerances."""
        return all(r.passed for r in self.cases)

    def to_dict(self) -> dict[str, Any]:
        """The ``verify-kernel --json`` document: draft, device, interpreted, passed, cases."""
        return {
            "draft": self.norms.to_dict(),
            "device": self.device,
            "interpreted": self.interpreted,
            "passed": self.passed,
            "cases": [r.to_dict() for r in self.cases],
        }


def report(norms: DraftNorms, results: Sequence[CaseResult], device: str) -> KernelReport:
    """The :class:`KernelReport` of ``results`` run on ``device`` for ``norms``."""
    return KernelReport(norms, device, tuple(results))


def format_report(result: KernelReport) -> str:
    """``recipecli verify-kernel``'s text of a :class:`KernelReport`: the draft's norms, the
    device, one row per case (max abs error, max ulp, fraction bit-identical, verdict with its
    tolerances), each engine's fused-path guard per kind, and the overall verdict."""
    rep = result.to_dict()
    d = rep["draft"]
    lines = [f"draft: {d['source']}  dtype {d['dtype']}  eps {d['eps']:g} ({d['eps_origin']})"]
    lines += [f"  {w['name']}: [{w['width']}] {w['origin']}" for w in d["layer0"] + d["fc_norm"]]
    lines += [f"  note: {note}" for note in d["notes"]]
    mode = "Triton interpreter (CPU)" if rep["interpreted"] else "CUDA"
    lines.append(f"device: {rep['device']} — {mode}")
    lines.append(
        f"{'case':8} {'conv':11} {'path':6} {'N':>5} {'max abs':>10} {'ulp':>4} {'identical':>10}  result"
    )
    for c in rep["cases"]:
        verdict = "pass" if c["passed"] else "FAIL"
        limit = "" if c["ulp_limit"] is None else f"<= {c['ulp_limit']} ulp, "
        lines.append(
            f"{c['kind']:8} {c['convention']:11} {c.get('path', 'auto'):6} {c['n']:>5} {c['max_abs_err']:>10.3g} {c['max_ulp']:>4} "
            f"{c['frac_bit_identical']:>10.6f}  {verdict} ({limit}atol {c['atol']:g}, rtol {c['rtol']:g})"
        )
    shown: set[tuple[str, str]] = set()
    states = {True: "fused path taken", False: "NOT eligible", None: "no fused path"}
    for c in rep["cases"]:
        for engine, v in c["guards"].items():
            if (c["kind"], engine) in shown or c["n"] == 0:
                continue
            shown.add((c["kind"], engine))
            extra = "; ".join(v["reasons"] + ([v["note"]] if v.get("note") else []))
            lines.append(
                f"guard {engine:10} {c['kind']:8}: {states[v['eligible']]}"
                + (f" — {extra}" if extra else "")
            )
    lines.append("all cases pass" if rep["passed"] else "SOME CASES FAIL")
    return "\n".join(lines)
