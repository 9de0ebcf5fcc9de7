"""Verify the fused EAGLE3 norm kernels on a draft's own norms, and predict each engine's fused path.

For a draft checkpoint this reads ``input_layernorm`` / ``hidden_norm`` (layer 0 of the draft,
``midlayer.*`` or ``layers.0.*``), the Eagle 3.1 ``fc_norm.{i}`` weights when present, and
``rms_norm_eps`` (under ``transformer_layer_config`` for speculators-format drafts), runs
recipecli's Triton kernels (:mod:`recipecli.kernels.rmsnorm_triton`) against plain references in
both rounding conventions (HF ``LlamaRMSNorm`` order and fp32-weight order), and reports max abs
error, max ulps, the fraction bit-identical and pass/fail per case, plus each engine's guard
verdict for the draft as it would be served on CUDA in its dtype (vLLM's EAGLE3 layer-0 fusion
guard of vLLM PR #47391; tokenspeed's ``FusedRMSNorm`` of lightseekorg/tokenspeed PR #837).
When only metadata is available (a snapshot or a Hub header read), weights of the right shape are
synthesised and the report says so.

On CPU the kernels run under Triton's interpreter (``TRITON_INTERPRET=1`` is set for the process
before the kernel module is imported) on numpy-backed tensors
(:mod:`recipecli.kernels.host_tensor`) against numpy references: torch is never imported, so
``recipecli check`` stays fast. On CUDA the kernels run on torch tensors against the torch
references of :mod:`recipecli.kernels.rmsnorm_ref`. :func:`kernel_findings` is what
``recipecli check --kernel`` calls.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from recipecli.codes import finding
from recipecli.draft import DraftModel
from recipecli.errors import CheckpointFormatError, MissingDependencyError, UsageError
from recipecli.findings import Finding
from recipecli.hints import install_hint

INSTALL_HINT = install_hint("kernels")
SOURCE_FACTS = (
    "vLLM PR #47391 (EAGLE3 layer-0 fused RMSNorm + concat and its guard); "
    "lightseekorg/tokenspeed PR #837 (FusedRMSNorm in the EAGLE3 draft)"
)
#: Where the two rounding conventions come from (cited by kernel.pass / kernel.mismatch).
SOURCE_CONVENTIONS = (
    "transformers LlamaRMSNorm.forward (round to the input dtype, then weight); "
    "FlashInfer rmsnorm / tokenspeed FusedRMSNorm (weight in fp32, one rounding)"
)

DTYPE_NAMES: dict[str, str] = {
    "bf16": "bfloat16",
    "bfloat16": "bfloat16",
    "BF16": "bfloat16",
    "fp16": "float16",
    "float16": "float16",
    "half": "float16",
    "F16": "float16",
    "fp32": "float32",
    "float32": "float32",
    "float": "float32",
    "F32": "float32",
}
DEFAULT_EPS = 1e-6  # HF LlamaConfig default, used when the config names none
#: N under the CPU interpreter: one N of 3 rows (ROWS = 4, one masked row) covers every code
#: path the interpreter can reach (both segments, both conventions, row masking); the kernels'
#: arithmetic does not depend on N.
CPU_TOKENS: tuple[int, ...] = (3,)
#: N on CUDA: small N take the register tile, 2500 the looped two-pass reduction for rows of
#: 4096 bf16 lanes or more (``rmsnorm_triton.LOOP_MIN_ROWS``).
CUDA_TOKENS: tuple[int, ...] = (1, 7, 64, 512, 2500)
CONVENTIONS: tuple[str, ...] = ("hf", "fp32_weight")


@dataclass(frozen=True)
class NormWeight:
    """One RMSNorm weight to test with.

    Attributes:
        name: tensor name in the checkpoint, or a label for a synthesised weight.
        width: its length.
        values: float32 values (list) read from the checkpoint, or None = synthesise (seeded).
    """

    name: str
    width: int
    values: Any = None

    @property
    def origin(self) -> str:
        return "checkpoint" if self.values is not None else "synthesised"


@dataclass(frozen=True)
class DraftNorms:
    """The norms of an EAGLE3 draft that the fused kernels replace.

    Attributes:
        source: where they came from (checkpoint display name, or ``--widths``).
        dtype: serving dtype as a torch dtype name (``bfloat16``…).
        eps: ``rms_norm_eps`` used by every draft norm (vLLM's and tokenspeed's EAGLE3
            drafts build all their RMSNorms with ``config.rms_norm_eps``).
        eps_origin: the config key it came from, or why the default was used.
        layer0: (input_layernorm, hidden_norm) weights, or None.
        fc_norm: the k ``fc_norm`` weights (empty when the draft has none).
        notes: what was synthesised or assumed.
    """

    source: str
    dtype: str
    eps: float
    eps_origin: str
    layer0: tuple[NormWeight, NormWeight] | None
    fc_norm: tuple[NormWeight, ...] = ()
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "dtype": self.dtype,
            "eps": self.eps,
            "eps_origin": self.eps_origin,
            "layer0": [
                {"name": w.name, "width": w.width, "origin": w.origin} for w in self.layer0 or ()
            ],
            "fc_norm": [
                {"name": w.name, "width": w.width, "origin": w.origin} for w in self.fc_norm
            ],
            "notes": list(self.notes),
        }


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


# ---------------------------------------------------------------- reading the draft


def normalise_dtype(name: str | None) -> str | None:
    """``bf16``/``bfloat16``/``BF16``/``torch.bfloat16`` -> ``bfloat16``; None/unknown -> None."""
    if not name:
        return None
    return DTYPE_NAMES.get(str(name).removeprefix("torch."))


def _norm_weight(ck: Any, name: str, notes: list[str], note: str) -> NormWeight:
    """The weight ``name`` of ``ck``: its values when the source has them, else marked for
    synthesis (``note`` says so)."""
    width = int(ck.tensors[name].shape[-1])
    if ck.has_values(name):
        return NormWeight(name, width, ck.read_tensor(name).astype("float32").reshape(-1).tolist())
    notes.append(note.format(name=name, width=width))
    return NormWeight(name, width)


def _layer0_norms(ck: Any, d: DraftModel, notes: list[str]) -> tuple[NormWeight, NormWeight]:
    """``input_layernorm`` and ``hidden_norm`` of layer 0 (named as the draft names them),
    synthesised at width H when absent.

    Raises:
        CheckpointFormatError: one is absent and H is unknown (not an EAGLE3 draft).
    """
    found = []
    for role in ("input_layernorm", "hidden_norm"):
        name = d.tensor(role)
        if name in ck.tensors:
            note = "{name}: values not available, synthesised [{width}]"
            found.append(_norm_weight(ck, name, notes, note))
        elif d.H:
            notes.append(f"{role}: not in the checkpoint, synthesised [{d.H}]")
            found.append(NormWeight(f"{role} (synthesised)", int(d.H)))
        else:
            raise CheckpointFormatError(
                "no input_layernorm/hidden_norm weights and no hidden_size: not an EAGLE3 draft",
                path=ck.display_name,
                hint="give the draft checkpoint (midlayer.* or layers.0.* tensors)",
            )
    return found[0], found[1]


def _fc_norms(ck: Any, d: DraftModel, notes: list[str]) -> list[NormWeight]:
    """The Eagle 3.1 ``fc_norm.{i}`` weights, or k x [Ht] synthesised ones when the config says
    ``fc_norm`` but the checkpoint has none."""
    fc = []
    while (name := d.tensor(f"fc_norm.{len(fc)}")) in ck.tensors:
        fc.append(_norm_weight(ck, name, notes, "{name}: values not available, synthesised"))
    if not fc and d.fc_norm and d.Ht:
        fc = [NormWeight(f"fc_norm.{j}.weight (synthesised)", int(d.Ht)) for j in range(d.k)]
        notes.append(f"config says fc_norm but no fc_norm.* tensors: synthesised {d.k} x [{d.Ht}]")
    return fc


def draft_norms(ck: Any, dtype: str | None = None) -> DraftNorms:
    """Collect a draft's layer-0 and ``fc_norm`` weights and eps from an opened checkpoint.

    Tensor names, eps (``rms_norm_eps``, under ``transformer_layer_config`` for speculators
    drafts), H, Ht, k and the config dtype come from the canonical draft
    (:func:`recipecli.draft.canonical_draft`).

    Args:
        ck: a :class:`recipecli.checkpoint.Checkpoint`.
        dtype: override of the serving dtype (``bf16``, ``fp16``, ``fp32``); default: config
            ``torch_dtype``/``dtype``, else the weight's dtype, else bfloat16.

    Returns:
        :class:`DraftNorms`; weights whose values are unavailable are marked for synthesis.

    Raises:
        CheckpointFormatError: no layer-0 norm weights and no ``hidden_size`` to synthesise them
            (not an EAGLE3 draft), or a malformed config value (:func:`canonical_draft`).
    """
    from recipecli.draft import canonical_draft

    d = canonical_draft(ck)
    notes: list[str] = []
    if d.eps is None:
        eps, eps_origin = DEFAULT_EPS, f"default {DEFAULT_EPS:g} (config names no rms_norm_eps)"
        notes.append(eps_origin)
    else:
        eps, eps_origin = d.eps, d.sources["eps"]
    ln, hn = _layer0_norms(ck, d, notes)
    fc = _fc_norms(ck, d, notes)
    wdtype = normalise_dtype(ck.tensors[ln.name].dtype) if ln.name in ck.tensors else None
    chosen = normalise_dtype(dtype) or normalise_dtype(d.dtype) or wdtype
    if chosen is None:
        chosen = "bfloat16"
        notes.append("dtype not recorded: tested as bfloat16")
    return DraftNorms(
        ck.display_name, chosen, float(eps), eps_origin, (ln, hn), tuple(fc), tuple(notes)
    )


def synthetic_norms(
    d1: int, d2: int, k: int | None, dtype: str, eps: float = DEFAULT_EPS
) -> DraftNorms:
    """Norms of the given widths with synthesised weights (``--widths`` without ``--draft``).

    Args:
        d1, d2: widths of the two layer-0 norms; k: fc_norm chunks of width d2 (None = none).
        dtype: torch dtype name; eps: epsilon.
    """
    fc = tuple(NormWeight(f"fc_norm.{i} (synthesised)", d2) for i in range(k or 0))
    return DraftNorms(
        f"--widths {d1},{d2}",
        dtype,
        eps,
        "default",
        (
            NormWeight("input_layernorm (synthesised)", d1),
            NormWeight("hidden_norm (synthesised)", d2),
        ),
        fc,
        ("all weights synthesised",),
    )


# ---------------------------------------------------------------- running


def dependencies_missing(device: str = "any") -> list[str]:
    """Names of the missing optional dependencies for ``device`` (nothing imported).

    ``cpu`` (Triton's interpreter on numpy-backed tensors) needs numpy and triton; ``cuda``
    and ``any`` need torch and triton.
    """
    names = ("numpy", "triton") if device == "cpu" else ("torch", "triton")
    return [m for m in names if importlib.util.find_spec(m) is None]


def cuda_driver_present() -> bool:
    """True when an NVIDIA driver is visible (``/proc/driver/nvidia`` or ``/dev/nvidia0``).

    Looked up without importing torch: when it is False, ``auto`` means the CPU interpreter and
    torch is never imported.
    """
    return os.path.exists("/proc/driver/nvidia/version") or os.path.exists("/dev/nvidia0")


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when torch sees a GPU, else ``cpu``; checks ``cuda`` is present.

    ``auto`` imports torch only when an NVIDIA driver is present (:func:`cuda_driver_present`)
    and torch is installed.

    Raises:
        MissingDependencyError: triton (or, for ``cuda``, torch) not installed.
        UsageError: ``cuda`` asked for but no GPU, or an unknown device.
    """
    if device not in ("auto", "cpu", "cuda"):
        raise UsageError(f"unknown device {device!r}", hint="use auto, cpu or cuda")
    if device == "auto":
        use_cuda = cuda_driver_present() and not dependencies_missing("cuda")
        if use_cuda:
            import torch

            use_cuda = torch.cuda.is_available()
        device = "cuda" if use_cuda else "cpu"
        missing = dependencies_missing(device)
    else:
        missing = dependencies_missing(device)
    if missing:
        raise MissingDependencyError(
            f"{' and '.join(missing)} not installed: cannot run the kernel", hint=INSTALL_HINT
        )
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise UsageError(
                "--device cuda: torch sees no CUDA GPU",
                hint="use --device cpu (Triton interpreter)",
            )
    return device


def _kernel_module(device: str):
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

    Returns:
        One :class:`CaseResult` per case, N, convention (and code path on CPU).

    Raises:
        MissingDependencyError: torch/triton missing; UsageError: device not usable.
    """
    K = _kernel_module(device)
    if device == "cpu":
        return _run_cases_host(K, norms, tokens, seed, conventions, both_paths)
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
        results += _cuda_layer0(K, norms, w1, w2, tokens, device, gen, conventions)
    if norms.fc_norm:
        ws = torch.stack([tensor_of(w) for w in norms.fc_norm])
        results += _cuda_fc_norm(K, norms, ws, tokens, device, gen, conventions)
    return results


def _cuda_layer0(
    K: Any, norms: DraftNorms, w1: Any, w2: Any, tokens: Sequence[int], device: str, gen: Any,
    conventions: Sequence[str],
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
    return results


def _cuda_fc_norm(
    K: Any, norms: DraftNorms, ws: Any, tokens: Sequence[int], device: str, gen: Any,
    conventions: Sequence[str],
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
        results += _host_layer0(K, norms, w1, w2, tokens, rng, conventions, both_paths)
    if norms.fc_norm:
        ws = [tensor_of(w) for w in norms.fc_norm]
        results += _host_fc_norm(K, norms, ws, tokens, rng, conventions, both_paths)
    return results


def _host_layer0(
    K: Any, norms: DraftNorms, w1: Any, w2: Any, tokens: Sequence[int], rng: Any,
    conventions: Sequence[str], both_paths: bool,
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
    return results


def _host_fc_norm(
    K: Any, norms: DraftNorms, ws: list[Any], tokens: Sequence[int], rng: Any,
    conventions: Sequence[str], both_paths: bool,
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
    return results


def report(norms: DraftNorms, results: Sequence[CaseResult], device: str) -> dict[str, Any]:
    """The ``verify-kernel --json`` document."""
    return {
        "draft": norms.to_dict(),
        "device": device,
        "interpreted": device == "cpu",
        "passed": all(r.passed for r in results),
        "cases": [r.to_dict() for r in results],
    }


def format_report(rep: Mapping[str, Any]) -> str:
    """``recipecli verify-kernel``'s text of a :func:`report` document: the draft's norms, the
    device, one row per case (max abs error, max ulp, fraction bit-identical, verdict with its
    tolerances), each engine's fused-path guard per kind, and the overall verdict."""
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


# ---------------------------------------------------------------- check wiring


def _skipped(message: str, **evidence: Any) -> list[Finding]:
    return [finding("kernel.skipped", message, source=SOURCE_FACTS, **evidence)]


def _mismatches(results: Sequence[CaseResult], device: str) -> list[Finding]:
    """``kernel.mismatch`` (error) per failing case."""
    out = []
    for r in results:
        if not r.passed:
            m = r.metrics
            out.append(finding(
                "kernel.mismatch",
                f"fused {r.kind} kernel differs from the reference ({r.convention}, {r.path}, N={r.n}, {r.dtype}): "
                f"max {m['max_ulp']} ulp, max abs {m['max_abs_err']:.3g}",
                source=SOURCE_CONVENTIONS, device=device, **r.to_dict(),
            ))  # fmt: skip
    return out


def _ineligible(results: Sequence[CaseResult]) -> list[Finding]:
    """``kernel.ineligible`` (warning) once per (kind, engine) whose fused path is not taken."""
    out = []
    seen: set[tuple[str, str]] = set()
    for r in results:
        for engine, verdict in r.guards.items():
            if verdict["eligible"] is not False or (r.kind, engine) in seen:
                continue
            reasons = [x for x in verdict["reasons"] if "N == 0" not in x]
            if not reasons:
                continue
            seen.add((r.kind, engine))
            out.append(finding(
                "kernel.ineligible",
                f"{engine} will not take its fused {r.kind} RMSNorm path for this draft: {'; '.join(reasons)}",
                engine=engine, source=SOURCE_FACTS,
                kind=r.kind, dtype=r.dtype, widths=list(r.widths), reasons=reasons,
            ))  # fmt: skip
    return out


def _passed(
    results: Sequence[CaseResult], norms: DraftNorms, device: str, tokens: Sequence[int]
) -> Finding:
    """``kernel.pass`` (info): every case matched."""
    worst = max((r.metrics["max_ulp"] for r in results), default=0)
    return finding(
        "kernel.pass",
        f"fused norm kernels match the reference on this draft's norms ({len(results)} cases on {device}, "
        f"max {worst} ulp)",
        source=SOURCE_CONVENTIONS, device=device, tokens=list(tokens), dtype=norms.dtype, eps=norms.eps,
        weights={w.name: w.origin for w in (*(norms.layer0 or ()), *norms.fc_norm)},
        notes=list(norms.notes),
    )  # fmt: skip


def kernel_findings(draft_ckpt: Any, mode: str = "auto") -> list[Finding]:
    """Findings for ``recipecli check --kernel MODE``, built through the code catalog
    (:func:`recipecli.codes.finding`).

    Args:
        draft_ckpt: an opened draft :class:`~recipecli.checkpoint.Checkpoint`, or its SOURCE string.
        mode: ``auto`` (CUDA when present, else CPU interpreter), ``cpu``, ``cuda`` or ``skip``
            (imports nothing heavy).

    Returns:
        ``kernel.pass`` (info) when every case matches, ``kernel.mismatch`` (error) per failing
        case, ``kernel.ineligible`` (warning) per engine whose fused path will not be taken for
        this draft (with the guard's reasons), or ``kernel.skipped`` (info) with the reason.

    Raises:
        UsageError: unknown mode. Checkpoint errors of a SOURCE string propagate (exit 2).
    """
    if mode not in ("auto", "cpu", "cuda", "skip"):
        raise UsageError(f"--kernel {mode!r}: expected auto, cpu, cuda or skip")
    if mode == "skip":
        return _skipped("kernel verification skipped (--kernel skip)")
    gpu = cuda_driver_present() and not dependencies_missing("cuda")
    target = "cuda" if mode == "cuda" or (mode == "auto" and gpu) else "cpu"
    missing = dependencies_missing(target)
    if missing:
        return _skipped(
            f"{' and '.join(missing)} not installed: kernel not verified; to verify it: {INSTALL_HINT}",
            missing=missing,
        )
    if isinstance(draft_ckpt, str):
        from recipecli.checkpoint import open_checkpoint

        draft_ckpt = open_checkpoint(draft_ckpt)
    try:
        norms = draft_norms(draft_ckpt)
        device = resolve_device(mode)
        tokens = CPU_TOKENS if device == "cpu" else CUDA_TOKENS
        results = run_cases(norms, tokens, device, both_paths=False)
    except (CheckpointFormatError, UsageError, MissingDependencyError) as exc:
        return _skipped(f"kernel not verified: {exc.one_line()}")
    findings = _mismatches(results, device) + _ineligible(results)
    if all(r.passed for r in results):
        findings.insert(0, _passed(results, norms, device, tokens))
    return findings
