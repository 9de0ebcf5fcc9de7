"""Public entry points: fused dual RMSNorm + concat and grouped ``fc_norm``, guarded.

Each entry point runs recipecli's Triton kernel when :func:`~.rmsnorm_guards.recipecli_guard`
passes and the plain torch reference (:mod:`.rmsnorm_ref`) otherwise, writing into the same
outputs either way. ``N == 0`` returns at once and never launches (a zero-size grid is an
"invalid configuration argument" on CUDA).

Eager cost: the guard's verdict and the kernel's launch parameters are computed once per
(shapes, strides, dtypes, devices, convention) and cached (:data:`_PLANS`); a later call with the
same description costs a dict lookup, the output allocation and the direct launch of the compiled
kernel (:class:`~.rmsnorm_triton.Launch`). The grouped kernel takes up to eight separate weights
as pointers, so a list of ``fc_norm`` weights is never stacked.

torch.compile / CUDA graphs: the two ops are registered with ``torch.library`` as
``torch.ops.recipecli.dual_rmsnorm_concat`` and ``torch.ops.recipecli.grouped_rmsnorm`` (a
``triton_op`` on CUDA, so Inductor sees the Triton kernel; a ``custom_op`` with a fake
implementation under the CPU interpreter). While Dynamo traces, the Python entry points call
those ops, so a compiled function that calls :func:`dual_rmsnorm_concat` has no graph break.

Triton is imported only when the kernel actually runs, so this module works without it.

Example::

    out = dual_rmsnorm_concat(embeds, hidden, ln.weight, hn.weight, eps, eps)  # [N, 2H]
    buf = torch.empty(N, 2 * H, dtype=embeds.dtype, device=embeds.device)
    dual_rmsnorm_concat(embeds, hidden, w1, w2, eps, eps, out=(buf[:, :H], buf[:, H:]))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final, Literal, overload

import torch

from .rmsnorm_guards import recipecli_guard
from .rmsnorm_ref import CONVENTION_NAMES, _check_convention, rmsnorm_ref

if TYPE_CHECKING:
    from torch._library.custom_ops import CustomOpDef

    from .rmsnorm_triton import Launch

PATH_TRITON: Final = "triton"
PATH_REFERENCE: Final = "reference"
PATH_EMPTY: Final = "empty"

#: Which path ran: ``"triton"``, ``"reference"`` or ``"empty"`` (N == 0, nothing launched).
Path = Literal["triton", "reference", "empty"]
#: The two outputs of :func:`dual_rmsnorm_concat` given as a pair of [N, d1] / [N, d2] views.
DualOut = tuple[torch.Tensor, torch.Tensor]
#: A tensor's (shape, strides, dtype, device): what a cached plan is keyed by.
Desc = tuple[torch.Size, tuple[int, ...], torch.dtype, torch.device]

#: Cached (plan, reasons) per tensor description: plan is a Launch, or None = reference path.
_PLANS: dict[tuple[object, ...], tuple[Launch | None, list[str]]] = {}
_PLANS_MAX = 4096
#: The hot path of the common call (``out=None``, kernel eligible): flat description -> Launch.
_FAST_DUAL: dict[tuple[object, ...], Launch] = {}
_FAST_GROUPED: dict[tuple[object, ...], Launch] = {}

_compiling = torch.compiler.is_compiling


def _desc(t: torch.Tensor) -> Desc:
    return (t.shape, t.stride(), t.dtype, t.device)


def _remember(
    key: tuple[object, ...], value: tuple[Launch | None, list[str]]
) -> tuple[Launch | None, list[str]]:
    if len(_PLANS) >= _PLANS_MAX:
        clear_cache()
    _PLANS[key] = value
    return value


def clear_cache() -> None:
    """Forget every cached guard verdict and launch plan (e.g. after changing tuning tables)."""
    _PLANS.clear()
    _FAST_DUAL.clear()
    _FAST_GROUPED.clear()


def _flat(t: torch.Tensor) -> Desc:
    return (t.shape, t.stride(), t.dtype, t.device)


def _dual_plan(a: torch.Tensor, b: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor,
               out1: torch.Tensor, out2: torch.Tensor, o2_off: int, convention: str,
               key: tuple[object, ...]) -> tuple[Launch | None, list[str]]:  # fmt: skip
    ok, reasons = recipecli_guard([a, b], [w1, w2], [out1, out2])
    if ok and (not w1.is_contiguous() or not w2.is_contiguous()):
        ok, reasons = False, ["a weight is not contiguous"]
    plan = None
    if ok:
        from . import rmsnorm_triton as K

        n, d1, d2 = a.shape[0], a.shape[1], b.shape[1]
        strides = (a.stride(0), b.stride(0), out1.stride(0), out2.stride(0))
        plan = K.dual_plan(n, d1, d2, strides, o2_off, a.element_size(), a.get_device(),
                           convention=convention)  # fmt: skip
    return _remember(key, (plan, reasons))


def _dual_traced(a: torch.Tensor, b: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor,
                 eps1: float, eps2: float, out: torch.Tensor | DualOut | None,
                 convention: str) -> torch.Tensor | DualOut:  # fmt: skip
    """While Dynamo traces: the registered op (no graph break), copied into ``out`` if given."""
    res: torch.Tensor = torch.ops.recipecli.dual_rmsnorm_concat(
        a, b, w1, w2, eps1, eps2, convention
    )
    if out is None:
        return res
    d1 = a.shape[-1]
    if isinstance(out, torch.Tensor):
        return out.copy_(res)
    out[0].copy_(res[:, :d1])
    out[1].copy_(res[:, d1:])
    return out


def _dual_buffer_plan(a: torch.Tensor, b: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor,
                      out: torch.Tensor, okey: Desc | None,
                      convention: str) -> tuple[Launch | None, list[str]]:  # fmt: skip
    """The cached (plan, reasons) for one [N, d1+d2] output (``okey`` None: a new tensor)."""
    key = (_desc(a), _desc(b), _desc(w1), _desc(w2), okey, convention)
    hit = _PLANS.get(key)
    if hit is None:
        d1 = a.shape[-1]
        hit = _dual_plan(a, b, w1, w2, out[:, :d1], out[:, d1:], d1, convention, key)
    return hit


def _dual_pair_plan(a: torch.Tensor, b: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor,
                    out1: torch.Tensor, out2: torch.Tensor,
                    convention: str) -> tuple[Launch | None, list[str]]:  # fmt: skip
    """The cached (plan, reasons) for outputs given as a pair of [N, d1] / [N, d2] views."""
    key = (_desc(a), _desc(b), _desc(w1), _desc(w2), _desc(out1), _desc(out2), convention)
    return _PLANS.get(key) or _dual_plan(a, b, w1, w2, out1, out2, 0, convention, key)


def _dual_into_buffer(a: torch.Tensor, b: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor,
                      eps1: float, eps2: float, out: torch.Tensor | None, n: int, d1: int, d2: int,
                      convention: str) -> tuple[torch.Tensor, Path, list[str]]:  # fmt: skip
    """:func:`dual_rmsnorm_concat` into one [N, d1+d2] tensor (``out`` None: a new one)."""
    if out is None:
        out = a.new_empty((n, d1 + d2))
        okey = None
    elif tuple(out.shape) != (n, d1 + d2):
        raise ValueError(f"out must be [{n}, {d1 + d2}], got {tuple(out.shape)}")
    else:
        okey = _desc(out)
    if n == 0:
        return out, PATH_EMPTY, []
    plan, reasons = _dual_buffer_plan(a, b, w1, w2, out, okey, convention)
    if plan is not None:
        plan.dual(a, b, w1, w2, out, eps1, eps2)
        if okey is None:
            plan.out_shape = (n, d1 + d2)
            fast_key = (*_flat(a), *_flat(b), *_flat(w1), *_flat(w2), convention)
            _FAST_DUAL[fast_key] = plan
        return out, PATH_TRITON, reasons
    out[:, :d1].copy_(rmsnorm_ref(a, w1, eps1, convention))
    out[:, d1:].copy_(rmsnorm_ref(b, w2, eps2, convention))
    return out, PATH_REFERENCE, reasons


def _dual_into_pair(a: torch.Tensor, b: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor,
                    eps1: float, eps2: float, out: DualOut, n: int,
                    convention: str) -> tuple[DualOut, Path, list[str]]:  # fmt: skip
    """:func:`dual_rmsnorm_concat` into a pair of [N, d1] / [N, d2] views."""
    out1, out2 = out
    result = (out1, out2)
    if n == 0:
        return result, PATH_EMPTY, []
    plan, reasons = _dual_pair_plan(a, b, w1, w2, out1, out2, convention)
    if plan is not None:
        plan((a, b, w1, w2, out1, out2), (eps1, eps2))
        return result, PATH_TRITON, reasons
    out1.copy_(rmsnorm_ref(a, w1, eps1, convention))
    out2.copy_(rmsnorm_ref(b, w2, eps2, convention))
    return result, PATH_REFERENCE, reasons


@overload
def dual_rmsnorm_concat(
    a: torch.Tensor, b: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, eps1: float, eps2: float,
    *, out: torch.Tensor | None = None, convention: str = "hf", return_path: Literal[False] = False,
) -> torch.Tensor: ...  # fmt: skip
@overload
def dual_rmsnorm_concat(
    a: torch.Tensor, b: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, eps1: float, eps2: float,
    *, out: DualOut, convention: str = "hf", return_path: Literal[False] = False,
) -> DualOut: ...  # fmt: skip
@overload
def dual_rmsnorm_concat(
    a: torch.Tensor, b: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, eps1: float, eps2: float,
    *, out: torch.Tensor | DualOut | None = None, convention: str = "hf", return_path: Literal[True],
) -> tuple[torch.Tensor | DualOut, Path, list[str]]: ...  # fmt: skip
def dual_rmsnorm_concat(
    a: torch.Tensor,
    b: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    eps1: float,
    eps2: float,
    *,
    out: torch.Tensor | DualOut | None = None,
    convention: str = "hf",
    return_path: bool = False,
) -> torch.Tensor | DualOut | tuple[torch.Tensor | DualOut, Path, list[str]]:
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
    if out is None and not return_path:  # the hot path: a dict lookup and a direct launch
        plan = _FAST_DUAL.get((a.shape, a.stride(), a.dtype, a.device, b.shape, b.stride(), b.dtype,
                               b.device, w1.shape, w1.stride(), w1.dtype, w1.device, w2.shape,
                               w2.stride(), w2.dtype, w2.device, convention))  # fmt: skip
        if plan is not None and plan.out_shape is not None and not _compiling():
            res = a.new_empty(plan.out_shape)
            plan.dual(a, b, w1, w2, res, eps1, eps2)
            return res
    if convention not in CONVENTION_NAMES:
        _check_convention(convention)
    if _compiling() and not return_path:
        return _dual_traced(a, b, w1, w2, eps1, eps2, out, convention)
    n, d1, d2 = a.shape[0], a.shape[-1], b.shape[-1]
    ran: tuple[torch.Tensor | DualOut, Path, list[str]]
    if out is None or isinstance(out, torch.Tensor):
        ran = _dual_into_buffer(a, b, w1, w2, eps1, eps2, out, n, d1, d2, convention)
    else:
        ran = _dual_into_pair(a, b, w1, w2, eps1, eps2, out, n, convention)
    return ran if return_path else ran[0]


def _grouped_plan(x: torch.Tensor, ws: torch.Tensor | tuple[torch.Tensor, ...], out: torch.Tensor,
                  k: int, h: int, convention: str,
                  key: tuple[object, ...]) -> tuple[Launch | None, list[str]]:  # fmt: skip
    chunks = [x[:, i * h : (i + 1) * h] for i in range(k)]
    out_chunks = [out[:, i * h : (i + 1) * h] for i in range(k)]
    ok, reasons = recipecli_guard(chunks, list(ws), out_chunks)
    if ok:
        if isinstance(ws, torch.Tensor):
            if h > 1 and ws.stride(1) != 1:
                ok, reasons = False, ["the stacked weights' last dim is not contiguous"]
        else:
            from . import rmsnorm_triton as K

            if len(ws) > K.MAX_CHUNKS or any(
                not w.is_contiguous() or w.dtype != ws[0].dtype for w in ws
            ):
                reasons = ["separate weights must be contiguous, of one dtype, at most 8"]
                ok = False
    plan = None
    if ok:
        from . import rmsnorm_triton as K

        stacked = isinstance(ws, torch.Tensor)
        plan = K.grouped_plan(
            x.shape[0], k, h, (x.stride(0), out.stride(0)),
            ws.stride(0) if isinstance(ws, torch.Tensor) else h, stacked, x.element_size(),
            x.get_device(), convention=convention,
        )  # fmt: skip
    return _remember(key, (plan, reasons))


def _grouped_weights(
    x: torch.Tensor, weights: Sequence[torch.Tensor] | torch.Tensor
) -> tuple[torch.Tensor | tuple[torch.Tensor, ...], int, int]:
    """``(weights, k, H)``: a [k, H] tensor as is, separate [H] weights as a tuple, checked."""
    ws = weights if isinstance(weights, torch.Tensor) else tuple(weights)
    if isinstance(ws, torch.Tensor):
        if ws.dim() != 2 or ws.shape[0] < 1:
            raise ValueError(f"weights must be [k, H] or k tensors of [H], got {tuple(ws.shape)}")
        k, h = ws.shape
    else:
        k, h = len(ws), (ws[0].shape[-1] if ws else 0)
    if k < 1 or x.shape[-1] != k * h:
        raise ValueError(f"x {tuple(x.shape)} is not k={k} chunks of the weights' width {h}")
    return ws, k, h


def _grouped_run(x: torch.Tensor, ws: torch.Tensor | tuple[torch.Tensor, ...], k: int, h: int,
                 eps: float, out: torch.Tensor | None, fkey: tuple[object, ...] | None,
                 convention: str) -> tuple[torch.Tensor, Path, list[str]]:  # fmt: skip
    """:func:`grouped_rmsnorm` outside tracing: the cached plan's launch, or the reference."""
    if out is None:
        out = x.new_empty(x.shape)
        okey = None
    elif tuple(out.shape) != tuple(x.shape):
        raise ValueError(f"out must be {tuple(x.shape)}, got {tuple(out.shape)}")
    else:
        okey = _desc(out)
    if x.shape[0] == 0:
        return out, PATH_EMPTY, []
    wkey = _desc(ws) if isinstance(ws, torch.Tensor) else tuple(map(_desc, ws))
    key = (_desc(x), wkey, okey, convention)
    hit = _PLANS.get(key) or _grouped_plan(x, ws, out, k, h, convention, key)
    plan, reasons = hit
    if plan is not None:
        plan((x, out, ws) if isinstance(ws, torch.Tensor) else (x, out, *ws), (eps,))
        if okey is None and fkey is not None:
            _FAST_GROUPED[fkey] = plan
        return out, PATH_TRITON, reasons
    for i in range(k):
        out[:, i * h : (i + 1) * h].copy_(
            rmsnorm_ref(x[:, i * h : (i + 1) * h], ws[i], eps, convention)
        )
    return out, PATH_REFERENCE, reasons


@overload
def grouped_rmsnorm(
    x: torch.Tensor, weights: Sequence[torch.Tensor] | torch.Tensor, eps: float, *,
    out: torch.Tensor | None = None, convention: str = "hf", return_path: Literal[False] = False,
) -> torch.Tensor: ...  # fmt: skip
@overload
def grouped_rmsnorm(
    x: torch.Tensor, weights: Sequence[torch.Tensor] | torch.Tensor, eps: float, *,
    out: torch.Tensor | None = None, convention: str = "hf", return_path: Literal[True],
) -> tuple[torch.Tensor, Path, list[str]]: ...  # fmt: skip
def grouped_rmsnorm(
    x: torch.Tensor,
    weights: Sequence[torch.Tensor] | torch.Tensor,
    eps: float,
    *,
    out: torch.Tensor | None = None,
    convention: str = "hf",
    return_path: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, Path, list[str]]:
    """Normalise each of the k chunks of ``x`` with its own weight (Eagle 3.1 ``fc_norm``), one launch.

    lightseekorg/tokenspeed PR #837 fuses these in pairs (``FusedRMSNorm``) plus one lone launch
    for an odd k; this runs any k >= 1 in a single launch.

    Args:
        x: [N, k*H] fp16/bf16/fp32, last dim contiguous (rows may be strided).
        weights: a [k, H] tensor, or k tensors of [H] (up to 8 are passed to the kernel as
            separate pointers: nothing is stacked or copied).
        eps: shared epsilon (``rms_norm_eps``).
        out: optional [N, k*H] output (may be a view); a new tensor when None.
        convention: ``"hf"`` or ``"fp32_weight"``.
        return_path: also return which path ran and the guard's reasons.

    Returns:
        The [N, k*H] output; with ``return_path``, ``(out, path, reasons)``.

    Raises:
        ValueError: unknown convention, or widths that are not k chunks of H.
    """
    fkey: tuple[object, ...] | None = None
    if out is None and not return_path and type(weights) in (list, tuple):
        fkey = (x.shape, x.stride(), x.dtype, x.device, convention,
                *[d for w in weights for d in (w.shape, w.stride(), w.dtype, w.device)])  # fmt: skip
        plan = _FAST_GROUPED.get(fkey)
        if plan is not None and not _compiling():
            res = x.new_empty(x.shape)
            plan((x, res, *weights), (eps,))
            return res
    if convention not in CONVENTION_NAMES:
        _check_convention(convention)
    ws, k, h = _grouped_weights(x, weights)
    if _compiling() and not return_path:
        w = ws if isinstance(ws, torch.Tensor) else torch.stack(list(ws))
        traced: torch.Tensor = torch.ops.recipecli.grouped_rmsnorm(x, w, eps, convention)
        return traced if out is None else out.copy_(traced)
    ran = _grouped_run(x, ws, k, h, eps, out, fkey, convention)
    return ran if return_path else ran[0]


# ---------------------------------------------------------------- torch.library registration


def _dual_impl(
    a: torch.Tensor, b: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, eps1: float, eps2: float,
    convention: str,
) -> torch.Tensor:  # fmt: skip
    return dual_rmsnorm_concat(a, b, w1, w2, eps1, eps2, convention=convention)


def _grouped_impl(
    x: torch.Tensor, weights: torch.Tensor, eps: float, convention: str
) -> torch.Tensor:
    return grouped_rmsnorm(x, weights, eps, convention=convention)


def _eager_dispatch() -> bool:
    """True outside tracing: no torch dispatch mode (fake, proxy, functional) and not compiling."""
    return torch._C._len_torch_dispatch_stack() == 0 and not _compiling()


def _traceable_dual(
    a: torch.Tensor, b: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, eps1: float, eps2: float,
    convention: str,
) -> torch.Tensor:  # fmt: skip
    """Body of the ``triton_op``: the kernel through ``wrap_triton`` (Inductor traces it).

    Called eagerly (plain tensors, no dispatch mode, not compiling) it is the cached entry point
    :func:`dual_rmsnorm_concat` instead: one dict lookup and the direct launch.
    """
    if type(a) is torch.Tensor and _eager_dispatch():
        return dual_rmsnorm_concat(a, b, w1, w2, eps1, eps2, convention=convention)
    from torch.library import wrap_triton

    n, d1, d2 = a.shape[0], a.shape[-1], b.shape[-1]
    out = torch.empty((n, d1 + d2), dtype=a.dtype, device=a.device)
    ok, _ = recipecli_guard([a, b], [w1, w2]) if a.dim() == 2 and b.dim() == 2 else (False, [])
    if not ok or n == 0 or not w1.is_contiguous() or not w2.is_contiguous():
        if n:
            out[:, :d1].copy_(rmsnorm_ref(a, w1, eps1, convention))
            out[:, d1:].copy_(rmsnorm_ref(b, w2, eps2, convention))
        return out
    from . import rmsnorm_triton as K

    p = K.dual_plan(n, d1, d2, (a.stride(0), b.stride(0), d1 + d2, d1 + d2), d1,
                    a.element_size(), -1, convention=convention, pdl=False)  # fmt: skip
    # out2 is addressed from out1 (O2_IN_O1): passing one buffer twice would make Inductor's
    # functionalisation treat the two as separate mutations and keep only one of them
    consts = dict(p.consts, PDL=False, O2_IN_O1=True)
    # the two scratch pointers of the split reduction are unused (SPLIT == 1 on the host plan)
    wrap_triton(p.kernel)[(p.grid0,)](
        a, b, w1, w2, out, b, a, a, *p.static, float(eps1), float(eps2), **consts,
        num_warps=p.num_warps,
    )  # fmt: skip
    return out


def _traceable_grouped(
    x: torch.Tensor, weights: torch.Tensor, eps: float, convention: str
) -> torch.Tensor:
    """Body of the grouped ``triton_op`` (eagerly: :func:`grouped_rmsnorm`, as for the dual op)."""
    if type(x) is torch.Tensor and _eager_dispatch():
        return grouped_rmsnorm(x, weights, eps, convention=convention)
    from torch.library import wrap_triton

    k, h = weights.shape
    n = x.shape[0]
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    chunks = [x[:, i * h : (i + 1) * h] for i in range(k)]
    ok, _ = recipecli_guard(chunks, list(weights)) if x.dim() == 2 else (False, [])
    if not ok or n == 0 or (h > 1 and weights.stride(1) != 1):
        for i in range(k if n else 0):
            out[:, i * h : (i + 1) * h].copy_(rmsnorm_ref(chunks[i], weights[i], eps, convention))
        return out
    from . import rmsnorm_triton as K

    p = K.grouped_plan(n, k, h, (x.stride(0), k * h), weights.stride(0), True, x.element_size(),
                       -1, convention=convention, pdl=False)  # fmt: skip
    consts = dict(p.consts, PDL=False)
    wrap_triton(p.kernel)[(p.grid0,)](
        x, out, *(weights,) * (K.MAX_CHUNKS), x, x, *p.static, float(eps), **consts,
        num_warps=p.num_warps,
    )  # fmt: skip
    return out


def _dual_eager(a: torch.Tensor, b: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor,
                eps1: float, eps2: float, convention: str) -> torch.Tensor:  # fmt: skip
    return dual_rmsnorm_concat(a, b, w1, w2, eps1, eps2, convention=convention)


def _grouped_eager(x: torch.Tensor, weights: torch.Tensor, eps: float,
                   convention: str) -> torch.Tensor:  # fmt: skip
    return grouped_rmsnorm(x, weights, eps, convention=convention)


#: The Libraries holding the eager Autograd kernels (kept: a dropped Library unregisters).
_AUTOGRAD_LIBS: list[torch.library.Library] = []


def _eager_autograd(op_def: CustomOpDef, n_tensors: int,
                    eager: Callable[..., torch.Tensor]) -> None:  # fmt: skip
    """Replace the op's Python autograd wrapper by one that, when no gradient is needed, calls
    the entry point at once.

    ``torch.library.custom_op`` (and ``triton_op``, built on it) registers a Python Autograd
    kernel that redispatches below autograd (``torch/_library/autograd.py``
    ``make_autograd_impl``); outside inference mode (plain ``no_grad`` included) every eager
    call paid it, about 25 µs on an H200 host. This kernel, registered for the same key, runs
    the cached entry point directly when grad mode is off or no tensor argument requires grad,
    there is no dispatch mode and nothing is being compiled, and defers to custom_op's own
    wrapper otherwise (which raises on backward: the ops have no derivative). Best effort: a
    torch whose private hooks differ keeps custom_op's wrapper.
    """
    import warnings

    try:
        from torch._library.autograd import make_autograd_impl

        opoverload = op_def._opoverload
        wrapped = make_autograd_impl(opoverload, op_def)
        below = torch._C._after_autograd_keyset
    except (ImportError, AttributeError):
        return

    def kernel(keyset: torch._C.DispatchKeySet, *args: object) -> object:
        tensors = args[:n_tensors]
        if not torch.is_grad_enabled() or not any(
            t.requires_grad for t in tensors if isinstance(t, torch.Tensor)
        ):
            if type(args[0]) is torch.Tensor and _eager_dispatch():
                return eager(*args)
            with torch._C._AutoDispatchBelowAutograd():
                return opoverload.redispatch(keyset & below, *args)
        return wrapped(keyset, *args)

    lib = torch.library.Library("recipecli", "IMPL")  # type: ignore[no-untyped-call]
    with warnings.catch_warnings():  # "Overriding a previously registered kernel": intended
        warnings.simplefilter("ignore")
        try:  # torch 2.11 refuses an override unless asked (allow_override, default False)
            lib.impl(op_def._name, kernel, "Autograd", with_keyset=True,
                     allow_override=True)  # type: ignore[no-untyped-call]  # fmt: skip
        except (TypeError, RuntimeError):  # a torch without the keyword, or refusing: keep
            return
    _AUTOGRAD_LIBS.append(lib)


def _register() -> str:
    """Register ``recipecli::dual_rmsnorm_concat`` and ``recipecli::grouped_rmsnorm``.

    Returns ``"triton_op"`` (Inductor sees the kernel), ``"custom_op"`` (opaque op with a fake
    implementation: CPU interpreter, or a torch without ``triton_op``) or ``"none"``.
    """
    if hasattr(torch.ops, "recipecli") and hasattr(torch.ops.recipecli, "dual_rmsnorm_concat"):
        return "existing"
    lib = torch.library
    try:
        from .rmsnorm_guards import interpreter_enabled, triton_available

        if not triton_available() or interpreter_enabled() or not hasattr(lib, "triton_op"):
            raise ImportError
        d = lib.triton_op("recipecli::dual_rmsnorm_concat", mutates_args=())(_traceable_dual)
        g = lib.triton_op("recipecli::grouped_rmsnorm", mutates_args=())(_traceable_grouped)
        _eager_autograd(d, 4, _dual_eager)
        _eager_autograd(g, 2, _grouped_eager)
        return "triton_op"
    except ImportError:
        pass
    d = lib.custom_op("recipecli::dual_rmsnorm_concat", mutates_args=())(_dual_impl)
    g = lib.custom_op("recipecli::grouped_rmsnorm", mutates_args=())(_grouped_impl)
    _eager_autograd(d, 4, _dual_eager)
    _eager_autograd(g, 2, _grouped_eager)

    @d.register_fake
    def _(a: torch.Tensor, b: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, eps1: float,
          eps2: float, convention: str) -> torch.Tensor:  # fmt: skip
        return a.new_empty((a.shape[0], a.shape[-1] + b.shape[-1]))

    @g.register_fake
    def _(x: torch.Tensor, weights: torch.Tensor, eps: float, convention: str) -> torch.Tensor:
        return x.new_empty(x.shape)

    return "custom_op"


#: How the ops were registered: ``"triton_op"``, ``"custom_op"`` or ``"existing"``.
OP_REGISTRATION: str = _register()
