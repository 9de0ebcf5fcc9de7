"""The data path's units and casts: chunk sizes, castable dtypes, float casts with numpy (no torch)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

#: bytes moved per read/cast/write/compare step (bounds the working set)
CHUNK_BYTES = 32 << 20


#: bytes per cast step (numpy temporaries stay cache-sized: ~2x faster than 32 MB steps)
CAST_CHUNK_BYTES = 4 << 20


#: bytes compared per step of the (memory-mapped) verification
VERIFY_CHUNK = 8 << 20


#: floating dtypes ``--dtype`` may cast between; everything else (I64, BOOL, FP8, U8 …) is copied
CASTABLE = frozenset({"F16", "BF16", "F32"})


ITEMSIZE: Mapping[str, int] = {"F16": 2, "BF16": 2, "F32": 4}


def f32_to_bf16_bits(f32: npt.ArrayLike) -> npt.NDArray[np.uint16]:
    """Round float32 values to bfloat16 bit patterns, round-to-nearest-even.

    Same rule as torch's scalar ``c10::BFloat16`` (``round_to_nearest_even``): NaN becomes 0x7FC0
    (torch's vectorised CPU path writes 0x7FFF; both are NaN), overflow rounds to ±inf.

    Args:
        f32: float32 array, any shape.

    Returns:
        uint16 array of the same shape.
    """
    u = np.ascontiguousarray(f32, dtype=np.float32).view(np.uint32)
    r = u >> np.uint32(16)  # in-place steps: few temporaries, fast on cache-sized chunks
    r &= np.uint32(1)
    r += np.uint32(0x7FFF)
    r += u
    r >>= np.uint32(16)
    out: npt.NDArray[np.uint16] = r.astype(np.uint16)
    nan = np.isnan(u.view(np.float32))
    if nan.any():
        out[nan] = 0x7FC0
    return out


def _as_f32(raw: Any, dtype: str) -> npt.NDArray[np.float32]:
    """float32 values of little-endian ``dtype`` bytes (F32 is viewed, not copied)."""
    if dtype == "BF16":
        bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32)
        shifted: npt.NDArray[np.uint32] = bits << np.uint32(16)
        return shifted.view(np.float32)
    if dtype == "F16":
        return np.frombuffer(raw, dtype="<f2").astype(np.float32)
    if dtype == "F32":
        return np.frombuffer(raw, dtype="<f4")
    raise ValueError(f"cannot cast {dtype}")


def cast_bytes(raw: Any, src: str, dst: str) -> bytes:
    """Cast little-endian tensor bytes between F32, F16 and BF16 with numpy (no torch).

    fp16 ↔ fp32 ↔ bf16 go through float32, which holds every fp16 and bf16 value exactly; the one
    rounding step is round-to-nearest-even (numpy's float32→float16, :func:`f32_to_bf16_bits`).

    Args:
        raw: bytes-like holding a whole number of ``src`` elements.
        src, dst: safetensors dtype names in :data:`CASTABLE`.

    Returns:
        The ``dst`` bytes (a copy of ``raw`` when ``src == dst``).
    """
    if src == dst:
        return bytes(raw)
    f32 = _as_f32(raw, src)
    if dst == "F32":
        return f32.astype("<f4").tobytes()
    if dst == "F16":
        with np.errstate(over="ignore"):  # out-of-range values become ±inf, as in torch
            return f32.astype("<f2").tobytes()
    if dst == "BF16":
        return f32_to_bf16_bits(f32).astype("<u2").tobytes()
    raise ValueError(f"cannot cast to {dst}")
