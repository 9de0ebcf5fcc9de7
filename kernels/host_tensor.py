"""numpy-backed tensors for running the kernels under Triton's CPU interpreter without torch.

``recipecli check`` verifies the fused norm kernels on every run; importing torch alone costs
more time and memory than the whole check may (about 1.3 s and 220 MB on a 2-core box). Triton's
interpreter needs only objects that look enough like a tensor: a ``data_ptr()``, a ``dtype`` whose
name Triton maps to its own types, and the storage calls it makes to stage arguments on the host
(which here are no-ops: the memory already is on the host). :class:`HostTensor` is that object,
over a numpy buffer; bfloat16 is stored as ``uint16`` bit patterns.

Also here: numpy references of RMSNorm in both rounding conventions (the same arithmetic as
:func:`recipecli.kernels.rmsnorm_ref.rmsnorm_ref`: fp32 mean of squares, ``1/sqrt``, HF's extra
rounding to the input dtype), round-to-nearest-even fp32 -> bf16, an ulp distance, and
:func:`compare_np` with the same tolerances and keys as :func:`~.rmsnorm_ref.compare`.

Imports numpy only.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, overload

import numpy as np

from .rmsnorm_types import Comparison

#: torch dtype name -> (numpy storage dtype, bytes per element).
STORAGE: dict[str, tuple[Any, int]] = {
    "bfloat16": (np.uint16, 2),
    "float16": (np.float16, 2),
    "float32": (np.float32, 4),
}

#: Tolerances per dtype name, the same as :data:`recipecli.kernels.rmsnorm_ref.TOLERANCES`:
#: (atol, rtol, max ulp on GPU, max ulp under the CPU interpreter).
TOLERANCES: dict[str, tuple[float, float, int | None, int | None]] = {
    "bfloat16": (1e-2, 1e-2, 1, 2),
    "float16": (1e-3, 1e-3, 1, 2),
    "float32": (1e-5, 1e-5, None, None),
}
HF_EXTRA_ULP = 1  # see recipecli.kernels.rmsnorm_ref.HF_EXTRA_ULP

_CPU = SimpleNamespace(type="cpu", index=None)


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """fp32 values -> bfloat16 bit patterns (uint16), rounding to nearest, ties to even."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    nan = np.isnan(x)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(nan, np.uint16(0x7FC0), rounded)


def bf16_values(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns (uint16) -> fp32 values (exact)."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def to_dtype(x: np.ndarray, dtype: str) -> np.ndarray:
    """fp32 values rounded to ``dtype`` (RNE), returned as that dtype's storage array."""
    if dtype == "bfloat16":
        return bf16_bits(x)
    return np.asarray(x, dtype=np.float32).astype(STORAGE[dtype][0])


def values(storage: np.ndarray, dtype: str) -> np.ndarray:
    """A storage array of ``dtype`` as exact fp32 values."""
    if dtype == "bfloat16":
        return bf16_values(storage)
    return np.asarray(storage).astype(np.float32)


class HostTensor:
    """A strided 2-D (or 1-D) view of a flat numpy buffer that Triton's interpreter accepts.

    Attributes:
        buf: the flat storage array (``uint16`` for bfloat16, else the dtype itself).
        dtype: torch dtype name (``"bfloat16"``, ``"float16"``, ``"float32"``); Triton maps it.
        shape: sizes; ``offset``: first element's index into ``buf``; strides in elements.
    """

    device = _CPU

    def __init__(
        self,
        buf: np.ndarray,
        dtype: str,
        shape: tuple[int, ...],
        strides: tuple[int, ...] | None = None,
        offset: int = 0,
    ) -> None:
        self.buf, self.dtype, self.shape, self.offset = buf, dtype, tuple(shape), offset
        if strides is None:
            strides = (shape[1], 1) if len(shape) == 2 else (1,)
        self._strides = tuple(strides)

    @classmethod
    def from_values(cls, x: np.ndarray, dtype: str) -> HostTensor:
        """A contiguous tensor of ``dtype`` holding fp32 values ``x`` rounded to nearest-even."""
        x = np.asarray(x, dtype=np.float32)
        return cls(to_dtype(x.reshape(-1), dtype), dtype, x.shape)

    @classmethod
    def empty(cls, shape: tuple[int, ...], dtype: str, fill: float = float("nan")) -> HostTensor:
        """A contiguous tensor of ``dtype`` filled with ``fill`` (NaN: unwritten lanes show)."""
        size = int(np.prod(shape)) if shape else 1
        return cls(to_dtype(np.full(size, fill, dtype=np.float32), dtype), dtype, shape)

    # --- what the launchers use
    def dim(self) -> int:
        return len(self.shape)

    @overload
    def stride(self, dim: None = None) -> tuple[int, ...]: ...

    @overload
    def stride(self, dim: int) -> int: ...

    def stride(self, dim: int | None = None) -> tuple[int, ...] | int:
        return self._strides if dim is None else self._strides[dim]

    def element_size(self) -> int:
        return STORAGE[self.dtype][1]

    def contiguous(self) -> HostTensor:
        if self.dim() == 1 and self._strides == (1,):
            return self
        if self.dim() == 2 and self._strides == (self.shape[1], 1):
            return self
        return HostTensor(to_dtype(self.numpy().reshape(-1), self.dtype), self.dtype, self.shape)

    def data_ptr(self) -> int:
        return int(self.buf.ctypes.data) + self.offset * self.element_size()

    def columns(self, start: int, width: int) -> HostTensor:
        """The view ``t[:, start:start+width]`` of a 2-D tensor."""
        return HostTensor(
            self.buf, self.dtype, (self.shape[0], width), self._strides, self.offset + start
        )

    def numpy(self) -> np.ndarray:
        """The values as a new fp32 array of ``shape``."""
        flat = values(self.buf, self.dtype)
        isz = flat.itemsize
        view = np.lib.stride_tricks.as_strided(
            flat[self.offset :], shape=self.shape, strides=tuple(s * isz for s in self._strides)
        )
        return np.array(view, dtype=np.float32)

    def write(self, x: np.ndarray) -> None:
        """Store fp32 values ``x`` (shape ``shape``) into this view, rounded to nearest-even."""
        isz = self.buf.itemsize
        view = np.lib.stride_tricks.as_strided(
            self.buf[self.offset :],
            shape=self.shape,
            strides=tuple(s * isz for s in self._strides),
            writeable=True,
        )
        view[...] = to_dtype(np.asarray(x, dtype=np.float32), self.dtype).reshape(self.shape)

    def storage_numpy(self) -> np.ndarray:
        """The raw storage of this view (bit patterns for bfloat16), shape ``shape``."""
        isz = self.buf.itemsize
        view = np.lib.stride_tricks.as_strided(
            self.buf[self.offset :],
            shape=self.shape,
            strides=tuple(s * isz for s in self._strides),
        )
        return np.array(view)

    # --- what Triton's interpreter calls to stage arguments on the host (already there)
    def untyped_storage(self) -> HostTensor:
        return self

    def cpu(self) -> HostTensor:
        return self

    def to(self, *args: Any, **kwargs: Any) -> HostTensor:
        return self

    @property
    def data(self) -> HostTensor:
        return self

    def new_empty(self, *args: Any, **kwargs: Any) -> HostTensor:
        return self

    def set_(self, *args: Any, **kwargs: Any) -> HostTensor:
        return self

    def storage_offset(self) -> int:
        return self.offset

    def size(self) -> tuple[int, ...]:
        return self.shape

    def copy_(self, other: Any) -> HostTensor:
        if other is not self and isinstance(other, HostTensor) and other.buf is not self.buf:
            raise ValueError("HostTensor.copy_: host tensors share their storage, nothing to copy")
        return self


# ---------------------------------------------------------------- references and comparison


def rmsnorm_np(x: np.ndarray, w: np.ndarray, eps: float, dtype: str, convention: str) -> np.ndarray:
    """RMSNorm of fp32 values ``x`` [N, W] (exactly representable in ``dtype``) with weight ``w``.

    Same arithmetic as :func:`recipecli.kernels.rmsnorm_ref.rmsnorm_ref`: mean of squares in
    fp32, ``normed = x * (1 / sqrt(var + eps))``; ``"hf"`` rounds ``normed`` to ``dtype`` and
    multiplies by the weight (one more rounding), ``"fp32_weight"`` multiplies in fp32 and rounds
    once. Returns the storage array of ``dtype`` (bit patterns for bfloat16), shape of ``x``.
    """
    x = np.asarray(x, dtype=np.float32)
    w = np.asarray(w, dtype=np.float32)
    var = np.mean(x * x, axis=-1, keepdims=True, dtype=np.float32)
    rstd = np.float32(1.0) / np.sqrt(var + np.float32(eps), dtype=np.float32)
    normed = (x * rstd).astype(np.float32)
    if convention == "hf":
        rounded = values(to_dtype(normed, dtype), dtype)
        return to_dtype(rounded * w, dtype)
    if convention == "fp32_weight":
        return to_dtype(normed * w, dtype)
    raise ValueError(f"convention must be 'hf' or 'fp32_weight', got {convention!r}")


def _ordered(storage: np.ndarray, dtype: str) -> np.ndarray:
    size = STORAGE[dtype][1]
    ints = np.ascontiguousarray(storage).view({2: np.int16, 4: np.int32}[size]).astype(np.int64)
    magnitude = (1 << (8 * size - 1)) - 1
    ordered: np.ndarray = np.where(ints >= 0, ints, -(ints & magnitude))
    return ordered


def ulp_distance_np(out: np.ndarray, ref: np.ndarray, dtype: str) -> np.ndarray:
    """Elementwise distance in ulps of ``dtype`` between two storage arrays (int64).

    +0 and -0 are 0 apart; NaN against a number is a huge distance.
    """
    d = np.abs(_ordered(out, dtype) - _ordered(ref, dtype))
    nan = np.isnan(values(out, dtype)) ^ np.isnan(values(ref, dtype))
    dist: np.ndarray = np.where(nan, np.int64(1 << 40), d)
    return dist


def compare_np(
    out: np.ndarray, ref: np.ndarray, dtype: str, *, interpreted: bool, convention: str
) -> Comparison:
    """:func:`recipecli.kernels.rmsnorm_ref.compare` for storage arrays of ``dtype``.

    Returns the same keys: ``max_abs_err``, ``max_ulp``, ``frac_bit_identical``, ``atol``,
    ``rtol``, ``ulp_limit``, ``allclose``, ``passed``, ``numel``.
    """
    atol, rtol, ulp_gpu, ulp_cpu = TOLERANCES[dtype]
    ulp_limit = ulp_cpu if interpreted else ulp_gpu
    if ulp_limit is not None and convention == "hf":
        ulp_limit += HF_EXTRA_ULP
    if out.size == 0:
        return {"max_abs_err": 0.0, "max_ulp": 0, "frac_bit_identical": 1.0, "atol": atol,
                "rtol": rtol, "ulp_limit": ulp_limit, "allclose": True, "passed": True, "numel": 0}  # fmt: skip
    o, r = values(out, dtype).astype(np.float64), values(ref, dtype).astype(np.float64)
    with np.errstate(invalid="ignore"):
        diff = np.abs(o - r)
        allclose = bool(np.all(diff <= atol + rtol * np.abs(r)) and not np.isnan(o).any())
    ulps = ulp_distance_np(out, ref, dtype)
    max_ulp = int(ulps.max())
    ulp_ok = ulp_limit is not None and max_ulp <= ulp_limit
    passed = (allclose or (convention == "hf" and ulp_ok)) and (ulp_limit is None or ulp_ok)
    return {
        "max_abs_err": float(diff.max()),
        "max_ulp": max_ulp,
        "frac_bit_identical": float(np.mean(ulps == 0)),
        "atol": atol,
        "rtol": rtol,
        "ulp_limit": ulp_limit,
        "allclose": allclose,
        "passed": bool(passed),
        "numel": int(out.size),
    }
