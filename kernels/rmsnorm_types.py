"""Types shared by the fused norms' launchers, entry points, checks and sweeps (typing only).

* :class:`LaunchTensor` — what the raw launchers (:mod:`.rmsnorm_triton`) use of a tensor: a
  torch tensor, or a :class:`~.host_tensor.HostTensor` under the CPU interpreter.
* :class:`DualConsts` / :class:`GroupedConsts` — the constexprs of the two kernels
  (:mod:`.rmsnorm_kernels`), as the Python values a :class:`~.rmsnorm_triton.Launch` passes.
* :class:`Tuning` — the launchers' optional benchmark overrides (``**tuning``).
* :class:`Comparison` — the result of :func:`.rmsnorm_ref.compare` and
  :func:`.host_tensor.compare_np`.

Imports nothing but :mod:`typing`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, TypedDict, overload

__all__ = ["Comparison", "DualConsts", "EvictHint", "GroupedConsts", "LaunchTensor", "Tuning"]

#: Eviction hint of the rows' loads (Triton's ``eviction_policy``; ``""`` = none).
EvictHint = Literal["", "evict_first", "evict_last"]


class LaunchTensor(Protocol):
    """A 1-D or 2-D tensor as the launchers see it (strides and sizes in elements)."""

    @property
    def shape(self) -> Sequence[int]: ...

    @property
    def dtype(self) -> object: ...

    def dim(self) -> int: ...

    @overload
    def stride(self) -> tuple[int, ...]: ...

    @overload
    def stride(self, dim: int) -> int: ...

    def element_size(self) -> int: ...

    def data_ptr(self) -> int: ...

    def contiguous(self) -> LaunchTensor: ...


class DualConsts(TypedDict):
    """Constexprs of ``_dual_rmsnorm_kernel``, in its signature order (widths in lanes)."""

    ROWS: int
    BLOCK1: int
    TAIL1: int
    BLOCK2: int
    TAIL2: int
    CHUNK: int
    SPLIT: int
    HF_ORDER: bool
    RNE_BF16: bool
    SEG_MAJOR: bool
    STORE_CS: bool
    X_EVICT: EvictHint
    PERSISTENT: bool
    O2_IN_O1: bool
    PDL: bool


class GroupedConsts(TypedDict):
    """Constexprs of ``_grouped_rmsnorm_kernel``, in its signature order (``N_SEG`` = k)."""

    ROWS: int
    BLOCK: int
    TAIL: int
    CHUNK: int
    SPLIT: int
    HF_ORDER: bool
    RNE_BF16: bool
    SEG_MAJOR: bool
    N_SEG: int
    STACKED: bool
    STORE_CS: bool
    X_EVICT: EvictHint
    PERSISTENT: bool
    PDL: bool


class Tuning(TypedDict, total=False):
    """Benchmark overrides of a launch (:func:`.rmsnorm_triton.dual_rmsnorm_launch` documents
    each); a missing key or ``None`` means the default (tuning tables, :data:`USE_PDL`, ...)."""

    rows_per_program: int | None
    num_warps: int | None
    split: bool | None
    seg_major: bool
    store_cs: bool | None
    pdl: bool | None
    chunk: int | None
    persistent: int | None
    evict: EvictHint | None
    row_split: int | None


class Comparison(TypedDict):
    """A kernel output against its reference: errors, tolerances and the verdict."""

    max_abs_err: float
    max_ulp: int
    frac_bit_identical: float
    atol: float
    rtol: float
    ulp_limit: int | None
    allclose: bool
    passed: bool
    numel: int
