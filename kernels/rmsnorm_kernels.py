"""Triton device code of the fused norms: dual RMSNorm + concat and grouped (per-chunk) RMSNorm.

The ``@triton.jit`` kernels and their helpers only; launch planning, the launch tables and the
direct launcher are :mod:`.rmsnorm_triton` (which re-exports the names below). What the kernels
compute, the rounding conventions and the layout are described there.

The decorator is :func:`.triton_jit.jit` (``triton.jit`` itself, typed for mypy). Runtime
arguments, pointers and scalars alike, are annotated ``tl.tensor`` (what they are inside a kernel),
constexprs ``tl.constexpr``: Triton reads both annotations and neither changes what it compiles or
how it specialises (a Python ``int``/``float`` annotation would: :mod:`.triton_jit`).

Only triton is imported; ``TRITON_INTERPRET`` is read when this module is imported.
"""

from __future__ import annotations

import os

import triton.language as tl

from .triton_jit import jit

#: True when this module was imported under Triton's CPU interpreter.
INTERPRETED: bool = os.environ.get("TRITON_INTERPRET", "0") == "1"

#: Rounding conventions: name -> HF_ORDER constexpr.
CONVENTIONS: dict[str, bool] = {"hf": True, "fp32_weight": False}

#: Most chunks the grouped kernel takes as separate weight pointers (more: stack them first).
MAX_CHUNKS = 8


@jit
def _to_out(y: tl.tensor, dtype: tl.constexpr, RNE_BF16: tl.constexpr) -> tl.tensor:
    """Cast fp32 ``y`` to ``dtype``; round-to-nearest-even by hand for bf16 when asked."""
    if RNE_BF16 and dtype == tl.bfloat16:
        bits = y.to(tl.uint32, bitcast=True)
        bits = bits + 0x7FFF + ((bits >> 16) & 1)
        return (bits >> 16).to(tl.uint16).to(tl.bfloat16, bitcast=True)
    else:
        return y.to(dtype)


@jit
def _normed(x: tl.tensor, rstd: tl.tensor, w: tl.tensor, in_dtype: tl.constexpr,
            out_dtype: tl.constexpr, HF_ORDER: tl.constexpr,
            RNE_BF16: tl.constexpr) -> tl.tensor:  # fmt: skip
    """``x * rstd`` times the weight in the chosen rounding convention, cast to ``out_dtype``."""
    y = x * rstd[:, None]
    if HF_ORDER:
        y = _to_out(y, in_dtype, RNE_BF16).to(tl.float32) * w[None, :]
    else:
        y = y * w[None, :]
    return _to_out(y, out_dtype, RNE_BF16)


@jit
def _rstd(ssq: tl.tensor, width_f: tl.tensor, eps: tl.tensor) -> tl.tensor:
    # width_f and eps arrive as fp64 when Inductor launches the kernel (torch.library.triton_op)
    var = tl.math.div_rn(ssq, tl.cast(width_f, tl.float32))
    return tl.math.div_rn(1.0, tl.math.sqrt_rn(var + tl.cast(eps, tl.float32)))


@jit
def _rms_tile(x_ptr: tl.tensor, w_ptr: tl.tensor, o_ptr: tl.tensor, row0: tl.tensor,
              n_rows: tl.tensor, stride_x: tl.tensor, stride_o: tl.tensor, width: tl.tensor,
              width_f: tl.tensor, eps: tl.tensor, ROWS: tl.constexpr, BLOCK: tl.constexpr,
              TAIL: tl.constexpr, HF_ORDER: tl.constexpr, RNE_BF16: tl.constexpr,
              STORE_CS: tl.constexpr, X_EVICT: tl.constexpr) -> None:  # fmt: skip
    """Normalise rows ``row0 .. row0+ROWS-1`` (masked by ``n_rows``) of one segment in registers.

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
                eviction_policy=X_EVICT).to(tl.float32)  # fmt: skip
    w = tl.load(w_ptr + cols, mask=cmask, other=0.0, eviction_policy="evict_last").to(tl.float32)
    ssq = tl.sum(x * x, axis=1)
    if TAIL > 0:
        cols_t = BLOCK + tl.arange(0, TAIL)
        cmask_t = cols_t < width
        mask_t = rmask[:, None] & cmask_t[None, :]
        xt = tl.load(x_ptr + rows64[:, None] * stride_x + cols_t[None, :], mask=mask_t, other=0.0,
                     eviction_policy=X_EVICT).to(tl.float32)  # fmt: skip
        wt = tl.load(w_ptr + cols_t, mask=cmask_t, other=0.0, eviction_policy="evict_last").to(
            tl.float32
        )
        ssq += tl.sum(xt * xt, axis=1)
    rstd = _rstd(ssq, width_f, eps)
    in_dt: tl.constexpr = x_ptr.dtype.element_ty
    out_dt: tl.constexpr = o_ptr.dtype.element_ty
    y = _normed(x, rstd, w, in_dt, out_dt, HF_ORDER, RNE_BF16)
    tl.store(o_ptr + rows64[:, None] * stride_o + cols[None, :], y, mask=mask,
             cache_modifier=".cs" if STORE_CS else "")  # fmt: skip
    if TAIL > 0:
        yt = _normed(xt, rstd, wt, in_dt, out_dt, HF_ORDER, RNE_BF16)
        tl.store(o_ptr + rows64[:, None] * stride_o + cols_t[None, :], yt, mask=mask_t,
                 cache_modifier=".cs" if STORE_CS else "")  # fmt: skip


@jit
def _rms_loop(x_ptr: tl.tensor, w_ptr: tl.tensor, o_ptr: tl.tensor, row0: tl.tensor,
              n_rows: tl.tensor, stride_x: tl.tensor, stride_o: tl.tensor, width: tl.tensor,
              width_f: tl.tensor, eps: tl.tensor, ROWS: tl.constexpr, CHUNK: tl.constexpr,
              HF_ORDER: tl.constexpr, RNE_BF16: tl.constexpr, STORE_CS: tl.constexpr,
              X_EVICT: tl.constexpr) -> None:  # fmt: skip
    """The same rows as :func:`_rms_tile`, as a looped two-pass reduction over CHUNK columns.

    Pass 1 accumulates ``x^2`` lane-wise over the chunks (loads hinted ``evict_last`` so pass 2
    finds them in L2), pass 2 reloads each chunk (``evict_first``), scales and stores it. Fewer
    registers per row than one tile of the whole row, so more rows are in flight per SM.
    """
    rows = row0 + tl.arange(0, ROWS)
    rmask = rows < n_rows
    rows64 = rows.to(tl.int64)
    x_rows = x_ptr + rows64[:, None] * stride_x
    o_rows = o_ptr + rows64[:, None] * stride_o
    acc = tl.zeros([ROWS, CHUNK], dtype=tl.float32)
    for c0 in range(0, width, CHUNK):
        cols = c0 + tl.arange(0, CHUNK)
        mask = rmask[:, None] & (cols < width)[None, :]
        x = tl.load(x_rows + cols[None, :], mask=mask, other=0.0, eviction_policy="evict_last")
        x = x.to(tl.float32)
        acc += x * x
    rstd = _rstd(tl.sum(acc, axis=1), width_f, eps)
    in_dt: tl.constexpr = x_ptr.dtype.element_ty
    out_dt: tl.constexpr = o_ptr.dtype.element_ty
    for c0 in range(0, width, CHUNK):
        cols = c0 + tl.arange(0, CHUNK)
        cmask = cols < width
        mask = rmask[:, None] & cmask[None, :]
        x = tl.load(x_rows + cols[None, :], mask=mask, other=0.0, eviction_policy=X_EVICT)
        w = tl.load(w_ptr + cols, mask=cmask, other=0.0, eviction_policy="evict_last")
        y = _normed(x.to(tl.float32), rstd, w.to(tl.float32), in_dt, out_dt, HF_ORDER, RNE_BF16)
        tl.store(o_rows + cols[None, :], y, mask=mask, cache_modifier=".cs" if STORE_CS else "")


@jit
def _rms_split(x_ptr: tl.tensor, w_ptr: tl.tensor, o_ptr: tl.tensor, row: tl.tensor,
               part_ptr: tl.tensor, cnt_ptr: tl.tensor, slot: tl.tensor, s: tl.tensor,
               stride_x: tl.tensor, stride_o: tl.tensor, width: tl.tensor, width_f: tl.tensor,
               eps: tl.tensor, SPLIT: tl.constexpr, SBLOCK: tl.constexpr, HF_ORDER: tl.constexpr,
               RNE_BF16: tl.constexpr, STORE_CS: tl.constexpr,
               X_EVICT: tl.constexpr) -> None:  # fmt: skip
    """Part ``s`` (of SPLIT) of one row: a split reduction over SPLIT programs, no clusters.

    Each program loads its SBLOCK columns, publishes their sum of squares in slot ``slot`` of
    ``part_ptr`` ([slots, SPLIT] fp32) and counts itself in ``cnt_ptr[slot]`` (int32, release);
    it waits (acquire) until all SPLIT parts are in, sums them in a fixed order (the result does
    not depend on which program came first), scales and stores its columns. The counter goes on
    to 2 * SPLIT as the programs leave and the last one resets it to 0, so the scratch is ready
    for the next launch (inside a CUDA graph too). All SPLIT programs of a row must be resident
    at once: the launcher splits only grids that fit the GPU in one wave.
    """
    cols = s * SBLOCK + tl.arange(0, SBLOCK)
    cmask = cols < width
    row64 = row.to(tl.int64)
    x = tl.load(x_ptr + row64 * stride_x + cols, mask=cmask, other=0.0, eviction_policy=X_EVICT)
    x = x.to(tl.float32)
    w = tl.load(w_ptr + cols, mask=cmask, other=0.0, eviction_policy="evict_last").to(tl.float32)
    tl.atomic_xchg(part_ptr + slot * SPLIT + s, tl.sum(x * x, axis=0), sem="relaxed")
    tl.atomic_add(cnt_ptr + slot, 1, sem="release")
    arrived = tl.atomic_add(cnt_ptr + slot, 0, sem="acquire")
    while arrived < SPLIT:
        arrived = tl.atomic_add(cnt_ptr + slot, 0, sem="acquire")
    parts = tl.atomic_add(part_ptr + slot * SPLIT + tl.arange(0, SPLIT),
                          tl.zeros([SPLIT], dtype=tl.float32), sem="relaxed")  # fmt: skip
    rstd = _rstd(tl.sum(parts, axis=0), width_f, eps)
    y = x * rstd
    if HF_ORDER:
        y = _to_out(y, x_ptr.dtype.element_ty, RNE_BF16).to(tl.float32) * w
    else:
        y = y * w
    tl.store(o_ptr + row64 * stride_o + cols, _to_out(y, o_ptr.dtype.element_ty, RNE_BF16),
             mask=cmask, cache_modifier=".cs" if STORE_CS else "")  # fmt: skip
    if tl.atomic_add(cnt_ptr + slot, 1, sem="acq_rel") == 2 * SPLIT - 1:
        tl.atomic_xchg(cnt_ptr + slot, 0, sem="relaxed")


@jit
def _rms_rows(x_ptr: tl.tensor, w_ptr: tl.tensor, o_ptr: tl.tensor, part_ptr: tl.tensor,
              cnt_ptr: tl.tensor, slot: tl.tensor, s: tl.tensor, row0: tl.tensor,
              n_rows: tl.tensor, stride_x: tl.tensor, stride_o: tl.tensor, width: tl.tensor,
              width_f: tl.tensor, eps: tl.tensor, ROWS: tl.constexpr, BLOCK: tl.constexpr,
              TAIL: tl.constexpr, CHUNK: tl.constexpr, SPLIT: tl.constexpr,
              HF_ORDER: tl.constexpr, RNE_BF16: tl.constexpr, STORE_CS: tl.constexpr,
              X_EVICT: tl.constexpr) -> None:  # fmt: skip
    if SPLIT > 1:  # one row over SPLIT programs of BLOCK // SPLIT columns (ROWS == 1)
        _rms_split(x_ptr, w_ptr, o_ptr, row0, part_ptr, cnt_ptr, slot, s, stride_x, stride_o,
                   width, width_f, eps, SPLIT, (BLOCK + TAIL) // SPLIT, HF_ORDER, RNE_BF16,
                   STORE_CS, X_EVICT)  # fmt: skip
    elif CHUNK > 0:
        _rms_loop(x_ptr, w_ptr, o_ptr, row0, n_rows, stride_x, stride_o, width, width_f, eps,
                  ROWS, CHUNK, HF_ORDER, RNE_BF16, STORE_CS, X_EVICT)  # fmt: skip
    else:
        _rms_tile(x_ptr, w_ptr, o_ptr, row0, n_rows, stride_x, stride_o, width, width_f, eps,
                  ROWS, BLOCK, TAIL, HF_ORDER, RNE_BF16, STORE_CS, X_EVICT)  # fmt: skip


@jit
def _dual_tile(t: tl.tensor, a_ptr: tl.tensor, b_ptr: tl.tensor, w1_ptr: tl.tensor,
               w2_ptr: tl.tensor, o1_ptr: tl.tensor, o2_ptr: tl.tensor, part_ptr: tl.tensor,
               cnt_ptr: tl.tensor, n_rows: tl.tensor, stride_a: tl.tensor, stride_b: tl.tensor,
               stride_o1: tl.tensor, stride_o2: tl.tensor, d1: tl.tensor, d2: tl.tensor,
               d1_f: tl.tensor, d2_f: tl.tensor, eps1: tl.tensor, eps2: tl.tensor,
               ROWS: tl.constexpr, BLOCK1: tl.constexpr, TAIL1: tl.constexpr,
               BLOCK2: tl.constexpr, TAIL2: tl.constexpr, CHUNK: tl.constexpr,
               SPLIT: tl.constexpr, HF_ORDER: tl.constexpr, RNE_BF16: tl.constexpr,
               SEG_MAJOR: tl.constexpr, STORE_CS: tl.constexpr,
               X_EVICT: tl.constexpr) -> None:  # fmt: skip
    s = t % SPLIT  # the part of the row (0 unless split), parts of one row adjacent
    t = t // SPLIT
    if SEG_MAJOR:
        seg = t % 2
        row0 = (t // 2) * ROWS
    else:
        n_blocks = tl.cdiv(n_rows, ROWS)
        seg = t // n_blocks
        row0 = (t % n_blocks) * ROWS
    slot = row0 * 2 + seg
    if seg == 0:
        _rms_rows(a_ptr, w1_ptr, o1_ptr, part_ptr, cnt_ptr, slot, s, row0, n_rows, stride_a,
                  stride_o1, d1, d1_f, eps1, ROWS, BLOCK1, TAIL1, CHUNK, SPLIT, HF_ORDER,
                  RNE_BF16, STORE_CS, X_EVICT)  # fmt: skip
    else:
        _rms_rows(b_ptr, w2_ptr, o2_ptr, part_ptr, cnt_ptr, slot, s, row0, n_rows, stride_b,
                  stride_o2, d2, d2_f, eps2, ROWS, BLOCK2, TAIL2, CHUNK, SPLIT, HF_ORDER,
                  RNE_BF16, STORE_CS, X_EVICT)  # fmt: skip


@jit
def _dual_rmsnorm_kernel(
    a_ptr: tl.tensor, b_ptr: tl.tensor, w1_ptr: tl.tensor, w2_ptr: tl.tensor, o1_ptr: tl.tensor,
    o2_ptr: tl.tensor, part_ptr: tl.tensor, cnt_ptr: tl.tensor, n_rows: tl.tensor,
    n_tiles: tl.tensor, o2_off: tl.tensor,
    stride_a: tl.tensor, stride_b: tl.tensor, stride_o1: tl.tensor, stride_o2: tl.tensor,
    d1: tl.tensor, d2: tl.tensor, d1_f: tl.tensor, d2_f: tl.tensor, eps1: tl.tensor,
    eps2: tl.tensor,
    ROWS: tl.constexpr, BLOCK1: tl.constexpr, TAIL1: tl.constexpr, BLOCK2: tl.constexpr,
    TAIL2: tl.constexpr, CHUNK: tl.constexpr, SPLIT: tl.constexpr, HF_ORDER: tl.constexpr,
    RNE_BF16: tl.constexpr, SEG_MAJOR: tl.constexpr, STORE_CS: tl.constexpr,
    X_EVICT: tl.constexpr, PERSISTENT: tl.constexpr, O2_IN_O1: tl.constexpr, PDL: tl.constexpr,
) -> None:  # fmt: skip
    if PDL:  # programmatic dependent launch: wait for the previous grid, let the next one start
        tl.extra.cuda.gdc_wait()
        tl.extra.cuda.gdc_launch_dependents()
    if O2_IN_O1:  # out2 = out1's buffer + o2_off; o2_ptr is unused (torch.compile: no aliasing)
        o2_ptr = o1_ptr + o2_off
    else:  # out2 may be given as out1's buffer plus d1 columns
        o2_ptr += o2_off
    if PERSISTENT:
        for t in range(tl.program_id(0), n_tiles, tl.num_programs(0)):
            _dual_tile(t, a_ptr, b_ptr, w1_ptr, w2_ptr, o1_ptr, o2_ptr, part_ptr, cnt_ptr,
                       n_rows, stride_a, stride_b, stride_o1, stride_o2, d1, d2, d1_f, d2_f,
                       eps1, eps2, ROWS, BLOCK1, TAIL1, BLOCK2, TAIL2, CHUNK, 1, HF_ORDER,
                       RNE_BF16, SEG_MAJOR, STORE_CS, X_EVICT)  # fmt: skip
    else:
        _dual_tile(tl.program_id(0), a_ptr, b_ptr, w1_ptr, w2_ptr, o1_ptr, o2_ptr, part_ptr,
                   cnt_ptr, n_rows, stride_a, stride_b, stride_o1, stride_o2, d1, d2, d1_f,
                   d2_f, eps1, eps2, ROWS, BLOCK1, TAIL1, BLOCK2, TAIL2, CHUNK, SPLIT, HF_ORDER,
                   RNE_BF16, SEG_MAJOR, STORE_CS, X_EVICT)  # fmt: skip


@jit
def _pick(c: tl.tensor, w0: tl.tensor, w1: tl.tensor, w2: tl.tensor, w3: tl.tensor, w4: tl.tensor,
          w5: tl.tensor, w6: tl.tensor, w7: tl.tensor, stride_w: tl.tensor, N_SEG: tl.constexpr,
          STACKED: tl.constexpr) -> tl.tensor:  # fmt: skip
    """Chunk ``c``'s weight pointer: ``w0 + c*stride_w`` (one [k, H] tensor) or the c-th of w0..w7."""
    if STACKED:
        p = w0 + c * stride_w
    else:
        p = w0
        if N_SEG > 1:
            if c == 1:
                p = w1
        if N_SEG > 2:
            if c == 2:
                p = w2
        if N_SEG > 3:
            if c == 3:
                p = w3
        if N_SEG > 4:
            if c == 4:
                p = w4
        if N_SEG > 5:
            if c == 5:
                p = w5
        if N_SEG > 6:
            if c == 6:
                p = w6
        if N_SEG > 7:
            if c == 7:
                p = w7
    return p


@jit
def _grouped_tile(t: tl.tensor, x_ptr: tl.tensor, o_ptr: tl.tensor, w0: tl.tensor, w1: tl.tensor,
                  w2: tl.tensor, w3: tl.tensor, w4: tl.tensor, w5: tl.tensor, w6: tl.tensor,
                  w7: tl.tensor, part_ptr: tl.tensor, cnt_ptr: tl.tensor, n_rows: tl.tensor,
                  stride_x: tl.tensor, stride_o: tl.tensor, chunk_stride_x: tl.tensor,
                  chunk_stride_o: tl.tensor, stride_w: tl.tensor, width: tl.tensor,
                  width_f: tl.tensor, eps: tl.tensor, ROWS: tl.constexpr, BLOCK: tl.constexpr,
                  TAIL: tl.constexpr, CHUNK: tl.constexpr, SPLIT: tl.constexpr,
                  HF_ORDER: tl.constexpr, RNE_BF16: tl.constexpr, SEG_MAJOR: tl.constexpr,
                  N_SEG: tl.constexpr, STACKED: tl.constexpr, STORE_CS: tl.constexpr,
                  X_EVICT: tl.constexpr) -> None:  # fmt: skip
    s = t % SPLIT  # as in _dual_tile
    t = t // SPLIT
    if SEG_MAJOR:
        c = t % N_SEG  # c * chunk stride < k * H fits in 32 bits; rows use 64-bit offsets
        row0 = (t // N_SEG) * ROWS
    else:
        n_blocks = tl.cdiv(n_rows, ROWS)
        c = t // n_blocks
        row0 = (t % n_blocks) * ROWS
    w_ptr = _pick(c, w0, w1, w2, w3, w4, w5, w6, w7, stride_w, N_SEG, STACKED)
    _rms_rows(x_ptr + c * chunk_stride_x, w_ptr, o_ptr + c * chunk_stride_o, part_ptr, cnt_ptr,
              row0 * N_SEG + c, s, row0, n_rows, stride_x, stride_o, width, width_f, eps, ROWS,
              BLOCK, TAIL, CHUNK, SPLIT, HF_ORDER, RNE_BF16, STORE_CS, X_EVICT)  # fmt: skip


@jit
def _grouped_rmsnorm_kernel(
    x_ptr: tl.tensor, o_ptr: tl.tensor, w0: tl.tensor, w1: tl.tensor, w2: tl.tensor,
    w3: tl.tensor, w4: tl.tensor, w5: tl.tensor, w6: tl.tensor, w7: tl.tensor,
    part_ptr: tl.tensor, cnt_ptr: tl.tensor, n_rows: tl.tensor,
    n_tiles: tl.tensor, stride_x: tl.tensor, stride_o: tl.tensor, chunk_stride_x: tl.tensor,
    chunk_stride_o: tl.tensor, stride_w: tl.tensor, width: tl.tensor, width_f: tl.tensor,
    eps: tl.tensor,
    ROWS: tl.constexpr, BLOCK: tl.constexpr, TAIL: tl.constexpr, CHUNK: tl.constexpr,
    SPLIT: tl.constexpr, HF_ORDER: tl.constexpr, RNE_BF16: tl.constexpr, SEG_MAJOR: tl.constexpr,
    N_SEG: tl.constexpr, STACKED: tl.constexpr, STORE_CS: tl.constexpr, X_EVICT: tl.constexpr,
    PERSISTENT: tl.constexpr, PDL: tl.constexpr,
) -> None:  # fmt: skip
    if PDL:  # see _dual_rmsnorm_kernel
        tl.extra.cuda.gdc_wait()
        tl.extra.cuda.gdc_launch_dependents()
    if PERSISTENT:
        for t in range(tl.program_id(0), n_tiles, tl.num_programs(0)):
            _grouped_tile(t, x_ptr, o_ptr, w0, w1, w2, w3, w4, w5, w6, w7, part_ptr, cnt_ptr,
                          n_rows, stride_x, stride_o, chunk_stride_x, chunk_stride_o, stride_w,
                          width, width_f, eps, ROWS, BLOCK, TAIL, CHUNK, 1, HF_ORDER, RNE_BF16,
                          SEG_MAJOR, N_SEG, STACKED, STORE_CS, X_EVICT)  # fmt: skip
    else:
        _grouped_tile(tl.program_id(0), x_ptr, o_ptr, w0, w1, w2, w3, w4, w5, w6, w7, part_ptr,
                      cnt_ptr, n_rows, stride_x, stride_o, chunk_stride_x, chunk_stride_o,
                      stride_w, width, width_f, eps, ROWS, BLOCK, TAIL, CHUNK, SPLIT, HF_ORDER,
                      RNE_BF16, SEG_MAJOR, N_SEG, STACKED, STORE_CS, X_EVICT)  # fmt: skip
