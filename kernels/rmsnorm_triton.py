"""Triton kernels: fused dual RMSNorm + concat, and grouped (per-chunk) RMSNorm.

These are the raw launchers (the ``@triton.jit`` device code is :mod:`.rmsnorm_kernels`, its
names re-exported here): they check nothing beyond what they need to compute addresses. Call
them through :mod:`recipecli.kernels.rmsnorm` (guarded, with the torch reference as fallback)
unless you have already checked :func:`recipecli.kernels.rmsnorm_guards.recipecli_guard`.

What the kernels compute: per row, ``rstd = 1 / sqrt(sum(x^2) / W + eps)`` accumulated in fp32
over the true width ``W`` (masked lanes load 0), then either

* ``"hf"`` (HF transformers ``LlamaRMSNorm.forward``, vLLM's native ``RMSNorm``):
  ``y = cast(cast(x * rstd, x.dtype) * w, out.dtype)``
* ``"fp32_weight"`` (FlashInfer ``rmsnorm``, tokenspeed ``FusedRMSNorm`` of
  lightseekorg/tokenspeed PR #837): ``y = cast(x * rstd * w, out.dtype)``

``rstd`` uses IEEE round-to-nearest sqrt and division (``sqrt_rn``/``div_rn``), like torch's CPU
``rsqrt``. Under Triton's CPU interpreter (``TRITON_INTERPRET=1``, read when this module is
imported) the fp32 -> bf16 cast truncates (Triton's interpreter converts through numpy), so the
kernels then round to nearest-even by hand.

Layout: one program normalises ``ROWS`` rows of one segment (one of the two inputs, or one of the
``k`` chunks); a 1-D grid of ``cdiv(N, ROWS) * segments`` tiles, segment index fastest by default
(``SEG_MAJOR``) so consecutive programs stream consecutive memory. A row is read either as one
tile of ``BLOCK`` (+ ``TAIL``) lanes held in registers, or (``CHUNK > 0``) in a looped two-pass
reduction: pass 1 sums squares chunk by chunk, pass 2 re-reads each chunk (from L2) and writes
it. ``PERSISTENT`` launches at most a few programs per multiprocessor that loop over the tiles.
Rows may be strided; the last dimension must be contiguous. ``N == 0`` never launches. On GPUs of
compute capability >= 9 the kernels are launched with programmatic dependent launch
(:data:`USE_PDL`): each waits (``gdc_wait``) for the previous grid before touching memory.

Launch cost: the first call of each specialisation goes through Triton's ``kernel[grid](...)``;
later calls with the same specialisation (dtypes, 16-byte alignment, integer properties Triton
specialises on, constexprs) call the compiled kernel's launcher directly (:data:`FAST_LAUNCH`).

Only triton is imported at module load (torch lazily, for CUDA queries), so the CPU interpreter
path works on numpy-backed tensors (:mod:`recipecli.kernels.host_tensor`) without torch.
Raises nothing itself; shape errors surface as ``ValueError`` from the launchers.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import triton

from .rmsnorm_kernels import (
    CONVENTIONS,
    INTERPRETED,
    MAX_CHUNKS,
    _dual_rmsnorm_kernel,
    _grouped_rmsnorm_kernel,
)
from .rmsnorm_launch import Launch
from .rmsnorm_types import DualConsts, EvictHint, GroupedConsts, LaunchTensor, Tuning

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "CONVENTIONS",
    "INTERPRETED",
    "MAX_CHUNKS",
    "Launch",
    "dual_plan",
    "dual_rmsnorm_launch",
    "grouped_plan",
    "grouped_rmsnorm_launch",
    "launch_config",
    "loop_config",
    "split_config",
    "tiles",
]


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


@functools.lru_cache(maxsize=256)
def launch_config(n_rows: int, block: int, elem_bytes: int) -> tuple[int, int]:
    """Pick ``(rows_per_program, num_warps)`` for a segment of padded width ``block``.

    One row per program, about 32 bytes per thread, at most 8 warps (what an H200 sweep of
    rows in {1, 2, 4} x warps in {4, 8, 16} favoured), except the large-N rows of
    :data:`_LARGE_N_CONFIGS`. Under the CPU interpreter up to 16 rows go to one program (same
    arithmetic, fewer programs).

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
    if n_rows <= WIDE_ROW_MAX_ROWS and block * elem_bytes >= WIDE_ROW_BYTES:
        return 1, 16
    warps = triton.next_power_of_2(max(1, (block * elem_bytes) // 1024))
    return 1, int(min(8, warps))


#: Rows of at least this many padded bytes (H = 12288, 16384 in bf16/fp16) get 16 warps up to
#: :data:`WIDE_ROW_MAX_ROWS` rows. H200 sweep (``sweep_rmsnorm.py --small``, CUDA graph, bf16,
#: median of 5 rounds): dual N=64 H=12288 2.59 -> 2.53 µs, H=16384 2.99 -> 2.88 µs (copy 2.11,
#: 2.45); at N=1 8 and 16 warps tie (1.85 / 1.86 µs at H=12288).
WIDE_ROW_BYTES = 32768
WIDE_ROW_MAX_ROWS = 64


#: Exceptions to the default launch: (min N, max padded row bytes, rows per program, num_warps),
#: first match wins. H200 sweep (``kernels/sweep_rmsnorm.py``, do_bench median, dual, bf16):
#: H=4096 N=32768 4 rows x 16 warps 274.1 µs vs 278.5 µs for 1 x 8 (copy 259.1 µs); 4 KiB rows
#: (H=2048) at N=32768: grouped k=3 2 x 8 97.3 % of copy vs 94.9 % for 4 x 16.
_LARGE_N_CONFIGS: tuple[tuple[int, int, int, int], ...] = (
    (32768, 4096, 2, 8),
    (32768, 8192, 4, 16),
)

#: Looped two-pass reduction (:func:`_rms_loop`) for rows of at least
#: :data:`LOOP_MIN_ROW_BYTES`, from :data:`LOOP_MIN_ROWS_WIDE` rows on for widths of 8192 and
#: more, from :data:`LOOP_MIN_ROWS` rows on below. H200 sweeps (``kernels/sweep_rmsnorm.py``,
#: bf16, median of 5 interleaved rounds, % of a same-bytes copy, register tile -> looped): dual
#: H=8192 N=4096 graphed 92.7 -> 100.3 % (chunk 4096, 16 warps), N=65536 92.1 -> 102.0 %;
#: H=7168 N=32768 94.6 -> 100.1 % (chunk 2048, 8 warps, streaming stores); H=6144 N=32768
#: 95.8 -> 99.9 %; H=5120 N=32768 95.2 -> 100.0 % (chunk 2048, 8 warps); H=4096 N=32768
#: 96.2 -> 101.0 % (chunk 2048, 4 warps); grouped k=4 H=8192 N=16384 93.1 -> 100.7 %. At
#: N=4096 (graphed) the register tile stays ahead below 8192 lanes (H=4096: 101.2 % against
#: 93.8 % looped; H=5120 90.6 % looped), so those widths loop only from N=16384. 4 KiB rows
#: (H=2048) at N=32768: register tile 93.4 %, looped chunk 1024 x 4 warps 99.1 % (dual).
#: Widths 2049-3072 (``--wide``, do_bench, 5 rounds): dual H=2880 N=32768 chunk 2048 x 4 86.4 %,
#: 1024 x 8 96.4 % (N=65536 88.5 -> 97.9 %); H=2560 N=32768 78.8 -> 96.9 %.
LOOP_MIN_ROWS = 16384
LOOP_MIN_ROWS_WIDE = 2048
LOOP_MIN_ROW_BYTES = 4096


def loop_config(n_rows: int, width: int, elem_bytes: int) -> tuple[int, int, bool] | None:
    """``(CHUNK, num_warps, streaming stores)`` when rows of ``width`` are read looped, else None.

    Chunks of 4096 lanes x 16 warps when the width is a multiple of 4096 from 8192 on, 1024 x 4
    for a width of 2048 or less, 1024 x 8 up to 3072, 2048 x 4 up to 4096, else 2048 x 8 (5120,
    5376, 6144, 7168: at most half a chunk idle),
    with streaming stores (``.cs``) for widths above 6144 that are not a multiple of 4096 (7168).
    Never under the CPU interpreter (which gets ``chunk`` explicitly when it should loop).
    """
    if INTERPRETED or width * elem_bytes < LOOP_MIN_ROW_BYTES:
        return None
    if n_rows < (LOOP_MIN_ROWS_WIDE if width >= 8192 else LOOP_MIN_ROWS):
        return None
    if width > 4096 and width % 4096 == 0:
        return 4096, 16, False
    if width <= 2048:
        return 1024, 4, False
    if width <= 3072:
        return 1024, 8, False
    if width <= 4096:
        return 2048, 4, False
    return 2048, 8, width > 6144


#: Split reduction (:func:`.rmsnorm_kernels._rms_split`): a row of a segment shared by SPLIT
#: programs of :data:`SPLIT_WARPS` warps (about :data:`SPLIT_PART_BYTES` each) for N up to
#: :data:`SPLIT_MAX_ROWS` and rows of at least :data:`SPLIT_MIN_ROW_BYTES` (padded). Off by
#: default (SPLIT_MAX_ROWS = 0; ``row_split=`` asks for it): on an H200 (CUDA graph of 20 calls,
#: bf16, ``sweep_rmsnorm.py --small``) every split took 5.6-6.0 µs at N = 1, H = 16384 against
#: 2.04 µs for one program per row and 1.31 µs for the copy: the publish / wait / leave
#: handshake is four serial L2 atomics with gpu-scope fences, more than the whole copy.
SPLIT_MAX_ROWS = 0
SPLIT_MIN_ROW_BYTES = 16384
SPLIT_PART_BYTES = 4096
SPLIT_WARPS = 4
SPLIT_MAX = 16
#: Programs per SM a split grid may have (all SPLIT programs of a row must be resident at once).
SPLIT_RESIDENT_PER_SM = 8


def split_config(n_rows: int, block: int, tail: int, elem_bytes: int, segs: int,
                 device_index: int, row_split: int | None = None,
                 num_warps: int | None = None) -> tuple[int, int] | None:  # fmt: skip
    """``(SPLIT, num_warps)`` when each row of a segment is split over SPLIT programs, else None.

    Args:
        n_rows: N; block, tail: the tile of :func:`tiles` (split only a single tile, TAIL 0);
        elem_bytes: input element bytes; segs: segments (2 dual, k grouped);
        device_index: CUDA index (-1, or the CPU interpreter: never split);
        row_split: an override (1 = never; None = the table above); num_warps: an override.

    Raises:
        ValueError: an override whose grid would not fit the GPU in one wave (the programs of a
            row wait for each other) or that does not divide the tile into powers of two.
    """
    if INTERPRETED or device_index < 0 or row_split == 1 or tail:
        return None
    explicit = row_split is not None
    if row_split is None:
        if n_rows > SPLIT_MAX_ROWS or block * elem_bytes < SPLIT_MIN_ROW_BYTES:
            return None
        row_split = min(SPLIT_MAX, block * elem_bytes // SPLIT_PART_BYTES)
    warps = num_warps or SPLIT_WARPS
    if row_split & (row_split - 1) or not 1 < row_split <= block // 32:
        raise ValueError(f"row_split {row_split}: a power of two from 2 to {block // 32}")
    cap = _sm_count(device_index) * max(1, min(SPLIT_RESIDENT_PER_SM, 32 // warps))
    if n_rows * segs * row_split > cap:
        if not explicit:
            return None
        raise ValueError(f"a split grid of {n_rows * segs * row_split} programs exceeds {cap}")
    return row_split, warps


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
    import torch

    return torch.cuda.get_device_capability(device_index)[0] >= 9


@functools.lru_cache(maxsize=16)
def _sm_count(device_index: int) -> int:
    import torch

    return int(torch.cuda.get_device_properties(device_index).multi_processor_count)


def _device_index(t: object) -> int:
    """CUDA device index of a tensor (-1 for CPU / host tensors)."""
    get = getattr(t, "get_device", None)
    return int(get()) if get is not None else -1


def _pdl_on(pdl: bool | None, device_index: int) -> bool:
    if INTERPRETED or device_index < 0:
        return False
    if pdl is None:
        return USE_PDL and _has_pdl(device_index)
    return bool(pdl)


def _grid(n_tiles: int, persistent: int | None, device_index: int) -> int:
    """Programs to launch: one per tile, or ``persistent`` per SM (in all, on the host)."""
    if not persistent:
        return n_tiles
    per = persistent * (_sm_count(device_index) if device_index >= 0 else 1)
    return max(1, min(n_tiles, per))


def _check_row_major(t: LaunchTensor, name: str) -> None:
    if t.dim() != 2:
        raise ValueError(f"{name} must be 2-D [N, width], got shape {tuple(t.shape)}")
    if t.shape[1] > 1 and t.stride(1) != 1:
        raise ValueError(f"{name} must have a contiguous last dimension, got strides {t.stride()}")


def _tuning(n: int, width: int, true_width: int, esize: int, rows_per_program: int | None,
            num_warps: int | None, chunk: int | None,
            store_cs: bool | None) -> tuple[int, int, int, bool]:  # fmt: skip
    if chunk is None:
        looped = loop_config(n, true_width, esize)
    else:
        looped = (chunk, 0, False) if chunk else None
    rows, warps = launch_config(n, width, esize)
    cs = False
    if looped:
        chunk, warps, cs = looped[0], looped[1] or warps, looped[2]
    cs = cs if store_cs is None else store_cs
    return rows_per_program or rows, num_warps or warps, chunk or 0, bool(cs)


#: Up to this many rows the register tile loads the rows with no eviction hint (else
#: ``evict_first``). H200 sweeps (``kernels/sweep_rmsnorm.py``, CUDA graph of 20 calls, median
#: of 5 rounds, % of a same-bytes copy, ``evict_first`` -> none): dual N=512 H=8192 bf16
#: 93.7 -> 94.8 %, H=5120 85.5 -> 90.6 %; N=4096 H=4096 bf16 95.5 -> 105.3 %, fp16 95.1 ->
#: 105.1 %, H=7168 fp16 95.9 -> 100.4 % (the fp16 misses at N=4096 of the earlier run were this
#: hint: the two dtypes compile to the same instructions). A decode step's inputs sit in L2.
EVICT_HINT_MAX_ROWS = 4096


def _evict(evict: EvictHint | None, n: int, chunk: int) -> EvictHint:
    """The eviction hint of the rows' loads (pass 2 of the loop): ``evict`` when given."""
    if evict is not None:
        return evict
    return "" if chunk == 0 and n <= EVICT_HINT_MAX_ROWS else "evict_first"


def dual_plan(
    n: int, d1: int, d2: int, strides: tuple[int, int, int, int], o2_off: int, esize: int,
    device_index: int, *, convention: str = "hf", rows_per_program: int | None = None,
    num_warps: int | None = None, split: bool | None = False, seg_major: bool = True,
    store_cs: bool | None = None, pdl: bool | None = None, chunk: int | None = None,
    persistent: int | None = None, evict: EvictHint | None = None, row_split: int | None = None,
) -> Launch:  # fmt: skip
    """The :class:`Launch` of the dual kernel for N rows of widths d1, d2 (N >= 1).

    Args:
        strides: row strides (elements) of a, b, out1, out2; o2_off: elements from the out2
            pointer passed at call time to out2's first element (d1 when out1's buffer is passed
            for both); esize: input element bytes; device_index: CUDA index, -1 on the host.
        Keywords: as for :func:`dual_rmsnorm_launch`.

    Returns:
        A :class:`Launch` to call with ``(a, b, w1, w2, out1, out2)`` and ``(eps1, eps2)``.
    """
    (block1, tail1), (block2, tail2) = tiles(d1, split), tiles(d2, split)
    width = max(block1 + tail1, block2 + tail2)
    rows, warps, chunk, store_cs = _tuning(n, width, max(d1, d2), esize, rows_per_program, num_warps,
                                           chunk, store_cs)  # fmt: skip
    sp = None
    if block1 == block2 and not persistent and not chunk:
        sp = split_config(n, block1, tail1 | tail2, esize, 2, device_index, row_split, num_warps)
    if sp:
        rows, warps = 1, sp[1]
    n_tiles = triton.cdiv(n, rows) * 2 * (sp[0] if sp else 1)
    pdl_on = _pdl_on(pdl, device_index)
    consts: DualConsts = {"ROWS": rows, "BLOCK1": block1, "TAIL1": tail1, "BLOCK2": block2, "TAIL2": tail2,
              "CHUNK": chunk, "SPLIT": sp[0] if sp else 1, "HF_ORDER": CONVENTIONS[convention], "RNE_BF16": INTERPRETED,
              "SEG_MAJOR": seg_major, "STORE_CS": store_cs, "X_EVICT": _evict(evict, n, chunk),
              "PERSISTENT": bool(persistent), "O2_IN_O1": False, "PDL": pdl_on}  # fmt: skip
    static = (n, n_tiles, o2_off, *strides, d1, d2, float(d1), float(d2))
    return Launch(_dual_rmsnorm_kernel, _grid(n_tiles, persistent, device_index), static, consts,
                  warps, pdl_on, device_index, slots=2 * n if sp else 0,
                  split=sp[0] if sp else 1)  # fmt: skip


def grouped_plan(
    n: int, k: int, h: int, strides: tuple[int, int], stride_w: int, stacked: bool, esize: int,
    device_index: int, *, convention: str = "hf", rows_per_program: int | None = None,
    num_warps: int | None = None, split: bool | None = False, seg_major: bool = True,
    store_cs: bool | None = None, pdl: bool | None = None, chunk: int | None = None,
    persistent: int | None = None, evict: EvictHint | None = None, row_split: int | None = None,
) -> Launch:  # fmt: skip
    """The :class:`Launch` of the grouped kernel for N rows of k chunks of width h (N >= 1).

    Args:
        strides: row strides of x and out; stride_w: row stride of a stacked [k, H] weight;
            stacked: one [k, H] weight (True) or up to :data:`MAX_CHUNKS` separate ones.
        Keywords: as for :func:`dual_rmsnorm_launch`.

    Returns:
        A :class:`Launch` to call with ``(x, out, weights)`` (stacked) or ``(x, out, w0, ...,
        w{k-1})`` and ``(eps,)``; the unused weight parameters are padded by the launch.
    """
    block, tail = tiles(h, split)
    rows, warps, chunk, store_cs = _tuning(n, block + tail, h, esize, rows_per_program, num_warps,
                                           chunk, store_cs)  # fmt: skip
    sp = None
    if not persistent and not chunk:
        sp = split_config(n, block, tail, esize, k, device_index, row_split, num_warps)
    if sp:
        rows, warps = 1, sp[1]
    n_tiles = triton.cdiv(n, rows) * k * (sp[0] if sp else 1)
    pdl_on = _pdl_on(pdl, device_index)
    consts: GroupedConsts = {"ROWS": rows, "BLOCK": block, "TAIL": tail, "CHUNK": chunk,
              "SPLIT": sp[0] if sp else 1, "HF_ORDER": CONVENTIONS[convention], "RNE_BF16": INTERPRETED, "SEG_MAJOR": seg_major,
              "N_SEG": k, "STACKED": stacked, "STORE_CS": store_cs,
              "X_EVICT": _evict(evict, n, chunk), "PERSISTENT": bool(persistent),
              "PDL": pdl_on}  # fmt: skip
    static = (n, n_tiles, *strides, h, h, stride_w, h, float(h))
    live = 3 if stacked else 2 + k
    return Launch(_grouped_rmsnorm_kernel, _grid(n_tiles, persistent, device_index), static,
                  consts, warps, pdl_on, device_index, n_pad=MAX_CHUNKS + 2 - live, pad_src=2,
                  slots=k * n if sp else 0, split=sp[0] if sp else 1)  # fmt: skip


def dual_rmsnorm_launch(
    a: LaunchTensor,
    b: LaunchTensor,
    w1: LaunchTensor,
    w2: LaunchTensor,
    eps1: float,
    eps2: float,
    out1: LaunchTensor,
    out2: LaunchTensor,
    *,
    convention: str = "hf",
    **tuning: Unpack[Tuning],
) -> None:
    """Launch the dual kernel: ``out1 = rmsnorm(a, w1, eps1)``, ``out2 = rmsnorm(b, w2, eps2)``.

    Args:
        a: [N, d1] fp16/bf16/fp32, last dim contiguous, rows may be strided (a torch tensor, or
            a :class:`~recipecli.kernels.host_tensor.HostTensor` under the CPU interpreter).
        b: [N, d2], same dtype and device as ``a``.
        w1: [d1] contiguous weight (any float dtype; read as fp32).
        w2: [d2] contiguous weight.
        eps1, eps2: the two epsilons.
        out1: [N, d1] output view (last dim contiguous), e.g. ``buf[:, :d1]``.
        out2: [N, d2] output view, e.g. ``buf[:, d1:]``.
        convention: ``"hf"`` or ``"fp32_weight"`` (module docstring).
        tuning: benchmark overrides, all optional — ``rows_per_program``, ``num_warps`` (else
            :func:`launch_config`); ``split`` (:func:`tiles`; False, one tile, measured fastest
            on an H200); ``seg_major`` (program order, segment index fastest by default);
            ``store_cs`` (streaming store hint ``.cs``; None = :func:`loop_config`'s); ``pdl`` (programmatic dependent launch,
            None = :data:`USE_PDL` on compute capability >= 9); ``chunk`` (looped two-pass
            reduction over ``chunk`` lanes, 0 = one register tile, None = :func:`loop_config`);
            ``persistent`` (at most that many programs per SM, looping over the tiles).

    Raises:
        ValueError: on shapes that do not line up or a non-contiguous last dimension.
    """
    for t, name in ((a, "a"), (b, "b"), (out1, "out1"), (out2, "out2")):
        _check_row_major(t, name)
    n, d1, d2 = a.shape[0], a.shape[1], b.shape[1]
    if b.shape[0] != n or tuple(out1.shape) != (n, d1) or tuple(out2.shape) != (n, d2):
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
    strides = (a.stride(0), b.stride(0), out1.stride(0), out2.stride(0))
    plan = dual_plan(n, d1, d2, strides, 0, a.element_size(), _device_index(a),
                     convention=convention, **tuning)  # fmt: skip
    plan((a, b, w1.contiguous(), w2.contiguous(), out1, out2), (float(eps1), float(eps2)))


def grouped_rmsnorm_launch(
    x: LaunchTensor,
    weights: LaunchTensor | list[LaunchTensor] | tuple[LaunchTensor, ...],
    eps: float,
    out: LaunchTensor,
    *,
    convention: str = "hf",
    **tuning: Unpack[Tuning],
) -> None:
    """Launch the grouped kernel: chunk ``i`` of ``x`` normalised with weight ``i``, one launch.

    Args:
        x: [N, k*H] fp16/bf16/fp32, last dim contiguous, rows may be strided.
        weights: a [k, H] tensor (last dim contiguous), or a sequence of k contiguous [H]
            tensors of one dtype (k <= :data:`MAX_CHUNKS`; passed as separate pointers, nothing
            stacked or copied).
        eps: the epsilon shared by all chunks.
        out: [N, k*H] output (last dim contiguous), may be a view.
        convention: ``"hf"`` or ``"fp32_weight"``.
        tuning: as for :func:`dual_rmsnorm_launch`.

    Raises:
        ValueError: on shapes that do not line up, a non-contiguous last dimension, or more
            than :data:`MAX_CHUNKS` separate weights.
    """
    _check_row_major(x, "x")
    _check_row_major(out, "out")
    if isinstance(weights, (list, tuple)):
        k = len(weights)
        if not 1 <= k <= MAX_CHUNKS:
            raise ValueError(f"1 to {MAX_CHUNKS} separate weights, got {k}: stack them into [k, H]")
        h = weights[0].shape[-1]
        if any(tuple(w.shape) != (h,) for w in weights):
            raise ValueError(f"weights must all be [{h}], got {[tuple(w.shape) for w in weights]}")
        if any(w.dtype != weights[0].dtype for w in weights):
            raise ValueError("separate weights must share one dtype")
        ws, stacked, stride_w = tuple(w.contiguous() for w in weights), False, h
    else:
        if weights.dim() != 2 or weights.shape[0] < 1:
            raise ValueError(f"weights must be [k, H] with k >= 1, got {tuple(weights.shape)}")
        k, h = weights.shape
        if h > 1 and weights.stride(1) != 1:
            weights = weights.contiguous()
        ws, stacked, stride_w = (weights,), True, weights.stride(0)
    n = x.shape[0]
    if x.shape[1] != k * h or tuple(out.shape) != tuple(x.shape):
        raise ValueError(f"x {tuple(x.shape)} and out {tuple(out.shape)} must be [N, {k}*{h}]")
    if n == 0:
        return
    plan = grouped_plan(n, k, h, (x.stride(0), out.stride(0)), stride_w, stacked,
                        x.element_size(), _device_index(x), convention=convention, **tuning)  # fmt: skip
    plan((x, out, *ws), (float(eps),))
