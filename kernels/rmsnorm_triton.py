"""Triton kernels: fused dual RMSNorm + concat, and grouped (per-chunk) RMSNorm.

These are the raw launchers: they check nothing beyond what they need to compute addresses. Call
them through :mod:`recipecli.kernels.rmsnorm` (guarded, with the torch reference as fallback)
unless you have already checked :func:`recipecli.kernels.rmsnorm_guards.recipecli_guard`.

What the kernels compute (engine-facts §7): per row, ``rstd = 1 / sqrt(sum(x^2) / W + eps)``
accumulated in fp32 over the true width ``W`` (masked lanes load 0), then either

* ``"hf"`` (HF ``LlamaRMSNorm``, vLLM native): ``y = cast(cast(x * rstd, x.dtype) * w, out.dtype)``
* ``"fp32_weight"`` (FlashInfer / tokenspeed ``FusedRMSNorm``): ``y = cast(x * rstd * w, out.dtype)``

``rstd`` uses IEEE round-to-nearest sqrt and division (``sqrt_rn``/``div_rn``), like torch's CPU
``rsqrt``. Under Triton's CPU interpreter (``TRITON_INTERPRET=1``, read when this module is
imported) the fp32 -> bf16 cast truncates (§7), so the kernels then round to nearest-even by hand.

Layout: one program normalises ``ROWS`` rows of one segment (one of the two inputs, or one of the
``k`` chunks); a 1-D grid of ``cdiv(N, ROWS) * segments`` programs, segment index fastest by default
(``SEG_MAJOR``) so consecutive programs stream consecutive memory. Rows may be strided; the last dimension must
be contiguous. ``N == 0`` never launches. On GPUs of compute capability >= 9 the kernels are
launched with programmatic dependent launch (:data:`USE_PDL`): each waits (``gdc_wait``) for the
previous grid before touching memory, so only launch latency overlaps.

Raises nothing itself; shape errors surface as ``ValueError`` from the launchers.
"""

from __future__ import annotations

import functools
import os

import torch
import triton
import triton.language as tl

#: True when this module was imported under Triton's CPU interpreter.
INTERPRETED: bool = os.environ.get("TRITON_INTERPRET", "0") == "1"

#: Rounding conventions: name -> HF_ORDER constexpr.
CONVENTIONS: dict[str, bool] = {"hf": True, "fp32_weight": False}


@triton.jit
def _to_out(y, dtype: tl.constexpr, RNE_BF16: tl.constexpr):
    """Cast fp32 ``y`` to ``dtype``; round-to-nearest-even by hand for bf16 when asked."""
    if RNE_BF16 and dtype == tl.bfloat16:
        bits = y.to(tl.uint32, bitcast=True)
        bits = bits + 0x7FFF + ((bits >> 16) & 1)
        return (bits >> 16).to(tl.uint16).to(tl.bfloat16, bitcast=True)
    else:
        return y.to(dtype)


@triton.jit
def _rms_tile(
    x_ptr,
    w_ptr,
    o_ptr,
    row0,
    n_rows,
    stride_x,
    stride_o,
    width,
    width_f,
    eps,
    ROWS: tl.constexpr,
    BLOCK: tl.constexpr,
    TAIL: tl.constexpr,
    HF_ORDER: tl.constexpr,
    RNE_BF16: tl.constexpr,
    STORE_CS: tl.constexpr,
):
    """Normalise rows ``row0 .. row0+ROWS-1`` (masked by ``n_rows``) of one segment.

    ``TAIL == 0``: one tile of BLOCK columns (masked by ``width``). ``TAIL > 0``: a full tile of
    BLOCK columns (BLOCK <= width) plus a tail tile of TAIL columns masked by ``width`` — e.g.
    6144 = 4096 + 2048 with no idle lanes instead of one 8192 tile with a quarter idle.
    ``STORE_CS``: store with the streaming cache hint (``.cs``) instead of the default (``.wb``).
    """
    rows = row0 + tl.arange(0, ROWS)
    rmask = rows < n_rows
    rows64 = rows.to(tl.int64)
    cols = tl.arange(0, BLOCK)
    if TAIL == 0:
        cmask = cols < width
    else:
        cmask = cols < BLOCK
    mask = rmask[:, None] & cmask[None, :]
    x = tl.load(x_ptr + rows64[:, None] * stride_x + cols[None, :], mask=mask, other=0.0,
                eviction_policy="evict_first").to(tl.float32)  # fmt: skip
    w = tl.load(w_ptr + cols, mask=cmask, other=0.0, eviction_policy="evict_last").to(tl.float32)
    ssq = tl.sum(x * x, axis=1)
    if TAIL > 0:
        cols_t = BLOCK + tl.arange(0, TAIL)
        cmask_t = cols_t < width
        mask_t = rmask[:, None] & cmask_t[None, :]
        xt = tl.load(x_ptr + rows64[:, None] * stride_x + cols_t[None, :], mask=mask_t, other=0.0,
                     eviction_policy="evict_first").to(tl.float32)  # fmt: skip
        wt = tl.load(w_ptr + cols_t, mask=cmask_t, other=0.0, eviction_policy="evict_last").to(
            tl.float32
        )
        ssq += tl.sum(xt * xt, axis=1)
    var = tl.math.div_rn(ssq, width_f)
    rstd = tl.math.div_rn(1.0, tl.math.sqrt_rn(var + eps))
    y = x * rstd[:, None]
    if HF_ORDER:
        y = _to_out(y, x_ptr.dtype.element_ty, RNE_BF16).to(tl.float32) * w[None, :]
    else:
        y = y * w[None, :]
    y = _to_out(y, o_ptr.dtype.element_ty, RNE_BF16)
    tl.store(o_ptr + rows64[:, None] * stride_o + cols[None, :], y, mask=mask,
             cache_modifier=".cs" if STORE_CS else "")  # fmt: skip
    if TAIL > 0:
        yt = xt * rstd[:, None]
        if HF_ORDER:
            yt = _to_out(yt, x_ptr.dtype.element_ty, RNE_BF16).to(tl.float32) * wt[None, :]
        else:
            yt = yt * wt[None, :]
        yt = _to_out(yt, o_ptr.dtype.element_ty, RNE_BF16)
        tl.store(o_ptr + rows64[:, None] * stride_o + cols_t[None, :], yt, mask=mask_t,
                 cache_modifier=".cs" if STORE_CS else "")  # fmt: skip


@triton.jit
def _dual_rmsnorm_kernel(
    a_ptr,
    b_ptr,
    w1_ptr,
    w2_ptr,
    o1_ptr,
    o2_ptr,
    n_rows,
    stride_a,
    stride_b,
    stride_o1,
    stride_o2,
    d1,
    d2,
    d1_f,
    d2_f,
    eps1,
    eps2,
    ROWS: tl.constexpr,
    BLOCK1: tl.constexpr,
    TAIL1: tl.constexpr,
    BLOCK2: tl.constexpr,
    TAIL2: tl.constexpr,
    HF_ORDER: tl.constexpr,
    RNE_BF16: tl.constexpr,
    SEG_MAJOR: tl.constexpr,
    STORE_CS: tl.constexpr,
    PDL: tl.constexpr,
):
    if PDL:  # programmatic dependent launch: wait for the previous grid, let the next one start
        tl.extra.cuda.gdc_wait()
        tl.extra.cuda.gdc_launch_dependents()
    pid = tl.program_id(0)
    if SEG_MAJOR:
        seg = pid % 2
        row0 = (pid // 2) * ROWS
    else:
        n_blocks = tl.cdiv(n_rows, ROWS)
        seg = pid // n_blocks
        row0 = (pid % n_blocks) * ROWS
    if seg == 0:
        _rms_tile(a_ptr, w1_ptr, o1_ptr, row0, n_rows, stride_a, stride_o1, d1, d1_f, eps1,
                  ROWS, BLOCK1, TAIL1, HF_ORDER, RNE_BF16, STORE_CS)  # fmt: skip
    else:
        _rms_tile(b_ptr, w2_ptr, o2_ptr, row0, n_rows, stride_b, stride_o2, d2, d2_f, eps2,
                  ROWS, BLOCK2, TAIL2, HF_ORDER, RNE_BF16, STORE_CS)  # fmt: skip


@triton.jit
def _grouped_rmsnorm_kernel(
    x_ptr,
    w_ptr,
    o_ptr,
    n_rows,
    stride_x,
    stride_o,
    chunk_stride_x,
    chunk_stride_o,
    stride_w,
    width,
    width_f,
    eps,
    ROWS: tl.constexpr,
    BLOCK: tl.constexpr,
    TAIL: tl.constexpr,
    HF_ORDER: tl.constexpr,
    RNE_BF16: tl.constexpr,
    SEG_MAJOR: tl.constexpr,
    N_SEG: tl.constexpr,
    STORE_CS: tl.constexpr,
    PDL: tl.constexpr,
):
    if PDL:  # see _dual_rmsnorm_kernel
        tl.extra.cuda.gdc_wait()
        tl.extra.cuda.gdc_launch_dependents()
    pid = tl.program_id(0)
    if SEG_MAJOR:
        c = (pid % N_SEG).to(tl.int64)
        row0 = (pid // N_SEG) * ROWS
    else:
        n_blocks = tl.cdiv(n_rows, ROWS)
        c = (pid // n_blocks).to(tl.int64)
        row0 = (pid % n_blocks) * ROWS
    _rms_tile(
        x_ptr + c * chunk_stride_x,
        w_ptr + c * stride_w,
        o_ptr + c * chunk_stride_o,
        row0,
        n_rows,
        stride_x,
        stride_o,
        width,
        width_f,
        eps,
        ROWS,
        BLOCK,
        TAIL,
        HF_ORDER,
        RNE_BF16,
        STORE_CS,
    )


def tiles(width: int, split: bool | None = None) -> tuple[int, int]:
    """Split a row of ``width`` elements into (BLOCK, TAIL) power-of-two tiles.

    Args:
        width: segment width W >= 1.
        split: False = one tile of next_pow2(W); True = the largest power of two <= W plus a
            masked tail tile; None = whichever leaves fewer idle lanes (6144 -> (4096, 2048),
            7168 -> (8192, 0), 4096 -> (4096, 0)).

    Returns:
        (BLOCK, TAIL) with TAIL == 0 meaning a single masked tile.
    """
    single = triton.next_power_of_2(width)
    head = single if single == width else single // 2
    rest = width - head
    tail = triton.next_power_of_2(rest) if rest else 0
    if split is None:
        split = rest > 0 and (tail - rest) < (single - width)
    return (head, tail) if split and rest else (single, 0)


#: Exceptions to the default launch: (min N, max padded row bytes, rows per program, num_warps),
#: first match wins. H200 sweep (``kernels/sweep_rmsnorm.py``, do_bench median, dual, bf16):
#: H=4096 N=32768 4 rows x 16 warps 274.1 µs vs 278.5 µs for 1 x 8 (copy 259.1 µs). For
#: 6144/7168 no variant beat 1 x 8 by more than 0.6 % (noise), so they keep it. Measured at
#: N=32768 only; N <= 4096 already reaches >= 96 % of copy with 1 x 8.
_LARGE_N_CONFIGS: tuple[tuple[int, int, int, int], ...] = ((32768, 8192, 4, 16),)


def launch_config(n_rows: int, block: int, elem_bytes: int) -> tuple[int, int]:
    """Pick ``(rows_per_program, num_warps)`` for a segment of padded width ``block``.

    One row per program, about 32 bytes per thread, at most 8 warps (what an H200 sweep of
    rows in {1, 2, 4} x warps in {4, 8, 16} favoured), except the large-N rows of
    :data:`_LARGE_N_CONFIGS` (4 rows x 16 warps for 8 KiB rows at N >= 32768). Under the CPU
    interpreter up to 16 rows go to one program (same arithmetic, fewer programs).

    Args:
        n_rows: N, the number of rows (tokens).
        block: the lanes of one row of a segment (BLOCK + TAIL of :func:`tiles`).
        elem_bytes: bytes per input element (2 for fp16/bf16, 4 for fp32).

    Returns:
        (rows per program, num_warps), both powers of two.
    """
    if INTERPRETED:  # the CPU interpreter pays per program: fewer, wider programs
        return min(16, triton.next_power_of_2(max(1, n_rows))), 4
    for min_rows, max_row_bytes, rows, warps in _LARGE_N_CONFIGS:
        if n_rows >= min_rows and block * elem_bytes <= max_row_bytes:
            return rows, warps
    # H200 sweep (docs/kernels/rmsnorm_bench.json): one row per program and 8 warps for a
    # 4096-8192-lane bf16 row were fastest or within noise at every N from 1 to 32768.
    warps = triton.next_power_of_2(max(1, (block * elem_bytes) // 1024))
    return 1, int(min(8, warps))


#: Programmatic dependent launch (PDL) by default where the GPU has it (compute capability >= 9,
#: Hopper: ``griddepcontrol``); never under the CPU interpreter. H200 sweep
#: (``kernels/sweep_rmsnorm.py``, CUDA graph of 20 back-to-back calls): dual H=4096 N=64
#: 2.21 -> 1.72 µs, grouped k=4 H=6144 N=64 2.93 -> 2.58 µs. The kernels call ``gdc_wait`` before
#: touching memory, so the previous kernel's writes are always visible.
USE_PDL: bool = True


@functools.lru_cache(maxsize=16)
def _has_pdl(device_index: int) -> bool:
    """sm90+ and a Triton that has ``gdc_wait`` (older releases lack PDL: fall back to plain launch)."""
    try:
        from triton.language.extra import cuda as tl_cuda
    except ImportError:
        return False
    if not hasattr(tl_cuda, "gdc_wait") or not hasattr(tl_cuda, "gdc_launch_dependents"):
        return False
    return torch.cuda.get_device_capability(device_index)[0] >= 9


def _pdl_kwargs(pdl: bool | None, device: torch.device) -> dict:
    """Kernel kwargs for PDL: the ``PDL`` constexpr and, when on, Triton's ``launch_pdl`` option."""
    if INTERPRETED or device.type != "cuda":
        on = False
    elif pdl is None:
        on = USE_PDL and _has_pdl(device.index if device.index is not None else 0)
    else:
        on = pdl
    return {"PDL": True, "launch_pdl": True} if on else {"PDL": False}


def _check_row_major(t: torch.Tensor, name: str) -> None:
    if t.dim() != 2:
        raise ValueError(f"{name} must be 2-D [N, width], got shape {tuple(t.shape)}")
    if t.shape[1] > 1 and t.stride(1) != 1:
        raise ValueError(f"{name} must have a contiguous last dimension, got strides {t.stride()}")


def dual_rmsnorm_launch(
    a: torch.Tensor,
    b: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    eps1: float,
    eps2: float,
    out1: torch.Tensor,
    out2: torch.Tensor,
    *,
    convention: str = "hf",
    rows_per_program: int | None = None,
    num_warps: int | None = None,
    split: bool | None = False,
    seg_major: bool = True,
    store_cs: bool = False,
    pdl: bool | None = None,
) -> None:
    """Launch the dual kernel: ``out1 = rmsnorm(a, w1, eps1)``, ``out2 = rmsnorm(b, w2, eps2)``.

    Args:
        a: [N, d1] fp16/bf16/fp32, last dim contiguous, rows may be strided.
        b: [N, d2], same dtype and device as ``a``.
        w1: [d1] contiguous weight (any float dtype; read as fp32).
        w2: [d2] contiguous weight.
        eps1, eps2: the two epsilons.
        out1: [N, d1] output view (last dim contiguous), e.g. ``buf[:, :d1]``.
        out2: [N, d2] output view, e.g. ``buf[:, d1:]``.
        convention: ``"hf"`` or ``"fp32_weight"`` (module docstring).
        rows_per_program, num_warps: override :func:`launch_config` (benchmarks).
        split: passed to :func:`tiles`; False (one tile) measured fastest on an H200.
        seg_major: program order, segment index fastest (default) or row fastest.
        store_cs: store with the streaming cache hint ``.cs``.
        pdl: launch with programmatic dependent launch (``gdc_wait`` before any memory access, so
            the result is the same); None = :data:`USE_PDL` on a GPU of compute capability >= 9.

    Raises:
        ValueError: on shapes that do not line up or a non-contiguous last dimension.
    """
    n = a.shape[0]
    for t, name in ((a, "a"), (b, "b"), (out1, "out1"), (out2, "out2")):
        _check_row_major(t, name)
    d1, d2 = a.shape[1], b.shape[1]
    if b.shape[0] != n or out1.shape != (n, d1) or out2.shape != (n, d2):
        raise ValueError(
            f"shapes do not line up: a {tuple(a.shape)}, b {tuple(b.shape)}, "
            f"out1 {tuple(out1.shape)}, out2 {tuple(out2.shape)}"
        )
    if tuple(w1.shape) != (d1,) or tuple(w2.shape) != (d2,):
        raise ValueError(
            f"weights must be [{d1}] and [{d2}], got {tuple(w1.shape)}, {tuple(w2.shape)}"
        )
    if n == 0:
        return
    w1, w2 = w1.contiguous(), w2.contiguous()
    (block1, tail1), (block2, tail2) = tiles(d1, split), tiles(d2, split)
    rows, warps = launch_config(n, max(block1 + tail1, block2 + tail2), a.element_size())
    rows = rows_per_program or rows
    warps = num_warps or warps
    grid = (triton.cdiv(n, rows) * 2,)
    _dual_rmsnorm_kernel[grid](
        a, b, w1, w2, out1, out2, n,
        a.stride(0), b.stride(0), out1.stride(0), out2.stride(0),
        d1, d2, float(d1), float(d2), float(eps1), float(eps2),
        ROWS=rows, BLOCK1=block1, TAIL1=tail1, BLOCK2=block2, TAIL2=tail2,
        HF_ORDER=CONVENTIONS[convention], RNE_BF16=INTERPRETED, SEG_MAJOR=seg_major,
        STORE_CS=store_cs, **_pdl_kwargs(pdl, a.device), num_warps=warps,
    )  # fmt: skip


def grouped_rmsnorm_launch(
    x: torch.Tensor,
    weights: torch.Tensor,
    eps: float,
    out: torch.Tensor,
    *,
    convention: str = "hf",
    rows_per_program: int | None = None,
    num_warps: int | None = None,
    split: bool | None = False,
    seg_major: bool = True,
    store_cs: bool = False,
    pdl: bool | None = None,
) -> None:
    """Launch the grouped kernel: chunk ``i`` of ``x`` normalised with ``weights[i]``, one launch.

    Args:
        x: [N, k*H] fp16/bf16/fp32, last dim contiguous, rows may be strided.
        weights: [k, H] (e.g. ``torch.stack`` of the k ``fc_norm`` weights), last dim contiguous.
        eps: the epsilon shared by all chunks.
        out: [N, k*H] output (last dim contiguous), may be a view.
        convention: ``"hf"`` or ``"fp32_weight"``.
        rows_per_program, num_warps: override :func:`launch_config` (benchmarks).
        split: passed to :func:`tiles`; False (one tile) measured fastest on an H200.
        seg_major: program order, segment index fastest (default) or row fastest.
        store_cs: store with the streaming cache hint ``.cs``.
        pdl: launch with programmatic dependent launch (``gdc_wait`` before any memory access, so
            the result is the same); None = :data:`USE_PDL` on a GPU of compute capability >= 9.

    Raises:
        ValueError: on shapes that do not line up or a non-contiguous last dimension.
    """
    _check_row_major(x, "x")
    _check_row_major(out, "out")
    if weights.dim() != 2 or weights.shape[0] < 1:
        raise ValueError(f"weights must be [k, H] with k >= 1, got {tuple(weights.shape)}")
    k, h = weights.shape
    n = x.shape[0]
    if x.shape[1] != k * h or tuple(out.shape) != tuple(x.shape):
        raise ValueError(f"x {tuple(x.shape)} and out {tuple(out.shape)} must be [N, {k}*{h}]")
    if n == 0:
        return
    weights = weights.contiguous()
    block, tail = tiles(h, split)
    rows, warps = launch_config(n, block + tail, x.element_size())
    rows = rows_per_program or rows
    warps = num_warps or warps
    grid = (triton.cdiv(n, rows) * k,)
    _grouped_rmsnorm_kernel[grid](
        x, weights, out, n,
        x.stride(0), out.stride(0), h, h, weights.stride(0), h, float(h), float(eps),
        ROWS=rows, BLOCK=block, TAIL=tail,
        HF_ORDER=CONVENTIONS[convention], RNE_BF16=INTERPRETED, SEG_MAJOR=seg_major, N_SEG=k,
        STORE_CS=store_cs, **_pdl_kwargs(pdl, x.device), num_warps=warps,
    )  # fmt: skip
