"""The safetensors format's dtypes and the typed forms of a validated header.

Shared by the header readers (:mod:`~recipecli.checkpoint.safetensors_header` for any layout,
:mod:`~recipecli.checkpoint.compact_header` for the safetensors library's compact one), the
snapshot reader and the test-checkpoint builder (format:
https://huggingface.co/docs/safetensors).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from recipecli.errors import CheckpointFormatError

#: Bits per element of every safetensors dtype.
DTYPE_BITS: Mapping[str, int] = {
    "BOOL": 8,
    "U8": 8,
    "I8": 8,
    "F8_E5M2": 8,
    "F8_E4M3": 8,
    "F8_E8M0": 8,
    "F4": 4,
    "F6_E2M3": 6,
    "F6_E3M2": 6,
    "I16": 16,
    "U16": 16,
    "F16": 16,
    "BF16": 16,
    "I32": 32,
    "U32": 32,
    "F32": 32,
    "I64": 64,
    "U64": 64,
    "F64": 64,
    "C64": 64,
}


@dataclass
class IOStats:
    """Bytes and calls spent reading checkpoint files (for benchmarks)."""

    bytes_read: int = 0
    files_opened: int = 0


#: Process-wide read counter; benchmarks reset and print it.
IO_STATS = IOStats()


def tensor_nbytes(dtype: str, shape: tuple[int, ...], *, where: str = "") -> int:
    """Byte size of a tensor of ``dtype`` and ``shape``.

    Raises:
        CheckpointFormatError: unknown dtype, or a sub-byte dtype whose bits do not fill bytes.
    """
    bits = DTYPE_BITS.get(dtype)
    if bits is None:
        raise CheckpointFormatError(f"unknown safetensors dtype {dtype!r}", path=where or None)
    total_bits = math.prod(shape) * bits
    if total_bits % 8:
        raise CheckpointFormatError(
            f"{dtype} tensor of shape {list(shape)} does not fill whole bytes", path=where or None
        )
    return total_bits // 8


class RawTensor(NamedTuple):
    """One header entry: dtype, shape and the [begin, end) offsets into the data buffer.

    A NamedTuple rather than a frozen dataclass: DeepSeek-V3 headers hold 92k entries and
    construction cost dominates.
    """

    name: str
    dtype: str
    shape: tuple[int, ...]
    begin: int
    end: int

    @property
    def nbytes(self) -> int:
        """Bytes the tensor spans in the data buffer (``end - begin``)."""
        return self.end - self.begin


class Columns(NamedTuple):
    """A validated header as parallel lists (one entry per tensor, header order)."""

    names: list[str]
    dtypes: list[str]
    shapes: list[tuple[int, ...]]
    begins: list[int]
    ends: list[int]
