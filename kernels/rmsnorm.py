"""Public entry points: fused dual RMSNorm + concat and grouped ``fc_norm``, guarded.

Each entry point runs recipecli's Triton kernel when :func:`~.rmsnorm_guards.recipecli_guard`
passes and the plain torch reference (:mod:`.rmsnorm_ref`) otherwise, writing into the same
outputs either way. ``N == 0`` returns at once and never launches (engine-facts §6/§7: zero-row
launches fail with "invalid configuration argument").

Triton is imported only when the kernel actually runs, so this module works without it.

Example::

    out = dual_rmsnorm_concat(embeds, hidden, ln.weight, hn.weight, eps, eps)  # [N, 2H]
    buf = torch.empty(N, 2 * H, dtype=embeds.dtype, device=embeds.device)
    dual_rmsnorm_concat(embeds, hidden, w1, w2, eps, eps, out=(buf[:, :H], buf[:, H:]))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from .rmsnorm_guards import recipecli_guard
from .rmsnorm_ref import _check_convention, rmsnorm_ref

PATH_TRITON = "triton"
PATH_REFERENCE = "reference"
PATH_EMPTY = "empty"


def _kernels():
    from . import rmsnorm_triton

    return rmsnorm_triton


def dual_rmsnorm_concat(
    a: torch.Tensor,
    b: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    eps1: float,
    eps2: float,
    *,
    out: torch.Tensor | tuple[torch.Tensor, torch.Tensor] | None = None,
    convention: str = "hf",
    return_path: bool = False,
) -> Any:
    """``cat([rmsnorm(a, w1, eps1), rmsnorm(b, w2, eps2)], -1)`` in one launch when possible.

    Args:
        a: [N, d1] fp16/bf16/fp32 (EAGLE3: the token embeddings), last dim contiguous.
        b: [N, d2] same dtype (EAGLE3: the ``fc`` output), last dim contiguous.
        w1: [d1] weight of the first norm (``input_layernorm``); w2: [d2] (``hidden_norm``).
        eps1, eps2: the two epsilons (may differ; recipecli's kernel honours both).
        out: None (a new [N, d1+d2] tensor), an [N, d1+d2] tensor, or a pair of [N, d1] / [N, d2]
            views (e.g. column slices of one buffer) to write into.
        convention: ``"hf"`` (default) or ``"fp32_weight"`` (see :mod:`.rmsnorm_ref`).
        return_path: also return which path ran and the guard's reasons.

    Returns:
        The [N, d1+d2] output (or the pair of views when ``out`` was a pair); with
        ``return_path``, ``(result, path, reasons)`` where path is ``"triton"``, ``"reference"``
        or ``"empty"`` (N == 0, nothing launched).

    Raises:
        ValueError: unknown convention, or ``out`` of the wrong shape.
    """
    _check_convention(convention)
    n, d1, d2 = a.shape[0], a.shape[-1], b.shape[-1]
    if out is None:
        out = torch.empty((n, d1 + d2), dtype=a.dtype, device=a.device)
    if isinstance(out, torch.Tensor):
        if tuple(out.shape) != (n, d1 + d2):
            raise ValueError(f"out must be [{n}, {d1 + d2}], got {tuple(out.shape)}")
        result: Any = out
        out1, out2 = out[:, :d1], out[:, d1:]
    else:
        out1, out2 = out
        result = (out1, out2)
    if n == 0:
        return (result, PATH_EMPTY, []) if return_path else result
    ok, reasons = recipecli_guard([a, b], [w1, w2], [out1, out2])
    if ok:
        _kernels().dual_rmsnorm_launch(a, b, w1, w2, eps1, eps2, out1, out2, convention=convention)
        path = PATH_TRITON
    else:
        out1.copy_(rmsnorm_ref(a, w1, eps1, convention))
        out2.copy_(rmsnorm_ref(b, w2, eps2, convention))
        path = PATH_REFERENCE
    return (result, path, reasons) if return_path else result


def grouped_rmsnorm(
    x: torch.Tensor,
    weights: Sequence[torch.Tensor] | torch.Tensor,
    eps: float,
    *,
    out: torch.Tensor | None = None,
    convention: str = "hf",
    return_path: bool = False,
) -> Any:
    """Normalise each of the k chunks of ``x`` with its own weight (Eagle 3.1 ``fc_norm``), one launch.

    tokenspeed fuses these in pairs plus one lone launch for an odd k (seed 004); this runs any
    k >= 1 in a single launch.

    Args:
        x: [N, k*H] fp16/bf16/fp32, last dim contiguous (rows may be strided).
        weights: a [k, H] tensor or k tensors of [H] (stacked here: one small copy; pass a
            pre-stacked tensor on hot paths).
        eps: shared epsilon (``rms_norm_eps``).
        out: optional [N, k*H] output (may be a view); a new tensor when None.
        convention: ``"hf"`` or ``"fp32_weight"``.
        return_path: also return which path ran and the guard's reasons.

    Returns:
        The [N, k*H] output; with ``return_path``, ``(out, path, reasons)``.

    Raises:
        ValueError: unknown convention, or widths that are not k chunks of H.
    """
    _check_convention(convention)
    w = weights if isinstance(weights, torch.Tensor) else torch.stack(list(weights))
    if w.dim() != 2 or w.shape[0] < 1 or x.shape[-1] != w.shape[0] * w.shape[1]:
        raise ValueError(
            f"x {tuple(x.shape)} is not k={w.shape[0]} chunks of the weights' width {w.shape[-1]}"
        )
    k, h = w.shape
    if out is None:
        out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    elif tuple(out.shape) != tuple(x.shape):
        raise ValueError(f"out must be {tuple(x.shape)}, got {tuple(out.shape)}")
    if x.shape[0] == 0:
        return (out, PATH_EMPTY, []) if return_path else out
    chunks = [x[:, i * h : (i + 1) * h] for i in range(k)]
    out_chunks = [out[:, i * h : (i + 1) * h] for i in range(k)]
    ok, reasons = recipecli_guard(chunks, list(w), out_chunks)
    if ok:
        _kernels().grouped_rmsnorm_launch(x, w, eps, out, convention=convention)
        path = PATH_TRITON
    else:
        for c, wi, o in zip(chunks, w, out_chunks, strict=True):
            o.copy_(rmsnorm_ref(c, wi, eps, convention))
        path = PATH_REFERENCE
    return (out, path, reasons) if return_path else out
