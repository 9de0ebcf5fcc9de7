"""The typed, immutable checkpoint description every command works from."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from itertools import compress
from operator import itemgetter
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

import numpy as np

from recipecli.checkpoint.textconfig import TextConfig, resolve_text_config
from recipecli.errors import CheckpointFormatError, RecipeCliError

SourceKind = Literal["local", "snapshot", "hf-cache", "hub", "config"]
WeightFormat = Literal["safetensors", "bin", "none"]

#: numpy dtype for each safetensors dtype whose values recipecli can decode (BF16 is special).
NUMPY_DTYPES: Mapping[str, str] = {
    "BOOL": "bool",
    "U8": "uint8",
    "I8": "int8",
    "I16": "<i2",
    "U16": "<u2",
    "F16": "<f2",
    "I32": "<i4",
    "U32": "<u4",
    "F32": "<f4",
    "I64": "<i8",
    "U64": "<u8",
    "F64": "<f8",
}


class TensorInfo(NamedTuple):
    """One tensor of a checkpoint, from its file header (never its data). Immutable (a NamedTuple:
    92k of them are built for DeepSeek-V3, where a frozen dataclass costs 2x the time).

    Attributes:
        name: full tensor name as stored, e.g. ``midlayer.self_attn.q_proj.weight``.
        dtype: safetensors dtype string (``BF16``, ``F16``, ``F32``, ``I64``, ``BOOL``, ``F8_E4M3`` …);
            for ``.bin`` files the torch dtype mapped to these names.
        shape: tensor shape.
        nbytes: size of the data in bytes.
        shard: file that holds it, relative to the checkpoint root.
    """

    name: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int
    shard: str

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dtype": self.dtype,
            "shape": list(self.shape),
            "bytes": self.nbytes,
            "shard": self.shard,
        }


def decode_values(raw: bytes, dtype: str, shape: tuple[int, ...], *, name: str = "") -> np.ndarray:
    """Decode little-endian tensor bytes into a numpy array.

    BF16 is returned as float32 holding exactly the same values (bf16 is the top half of fp32).

    Raises:
        RecipeCliError: dtype without a numpy equivalent (FP8/FP4 …), or a byte count mismatch.
    """
    if dtype == "BF16":
        u16 = np.frombuffer(raw, dtype="<u2")
        arr = (u16.astype(np.uint32) << 16).view(np.float32)
    elif dtype in NUMPY_DTYPES:
        arr = np.frombuffer(raw, dtype=NUMPY_DTYPES[dtype]).copy()
    else:
        raise RecipeCliError(f"cannot decode values of {dtype} tensor {name!r}")
    if arr.size != math.prod(shape):
        raise CheckpointFormatError(
            f"tensor {name!r}: {len(raw)} bytes do not hold {dtype} x {list(shape)}"
        )
    return arr.reshape(shape)


ValueReader = Callable[[TensorInfo], bytes]

_DTYPE, _SHAPE, _NBYTES = itemgetter(1), itemgetter(2), itemgetter(3)  # TensorInfo fields


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint summarised from ``config.json`` and tensor headers.

    Attributes:
        source: the SOURCE string as given.
        kind: how it was resolved: ``local`` dir, ``snapshot`` file, ``hf-cache``, ``hub``, or
            ``config`` (a bare config.json with no tensor table).
        config: the raw ``config.json`` (read-only mapping).
        tensors: name -> :class:`TensorInfo` (read-only mapping), empty for ``config`` sources.
        weight_format: ``safetensors``, ``bin`` or ``none``.
        shards: weight files, relative to the root, in index order.
        root: local directory (or snapshot file / repo id) the checkpoint came from.
        revision: Hub revision when resolved from the Hub or its cache.
        values: tensor name -> raw bytes kept in a metadata snapshot (small tensors only).
        read_raw: callable reading one tensor's raw bytes from its file; None when the data is
            not reachable (snapshot of a large tensor, config-only source).
    """

    source: str
    kind: SourceKind
    config: Mapping[str, Any]
    tensors: Mapping[str, TensorInfo]
    weight_format: WeightFormat = "none"
    shards: tuple[str, ...] = ()
    root: str = ""
    revision: str | None = None
    values: Mapping[str, bytes] = field(default_factory=dict)
    read_raw: ValueReader | None = field(default=None, compare=False, repr=False)
    notes: tuple[str, ...] = ()
    origin: str | None = None

    @property
    def display_name(self) -> str:
        """The source as given, plus the original source for snapshots."""
        if self.origin and self.origin != self.source:
            return f"{self.origin} (snapshot {Path(self.source).name})"
        return self.source

    def __post_init__(self) -> None:
        # A read-only copy of each mapping; a MappingProxyType is taken as is (the loaders hand
        # over a fresh dict: copying 1.5 million tensors would cost a second and ~100 MB).
        for name in ("config", "tensors", "values"):
            value = getattr(self, name)
            if not isinstance(value, MappingProxyType):
                object.__setattr__(self, name, MappingProxyType(dict(value)))

    @property
    def text(self) -> TextConfig:
        """The resolved TEXT config (unwrapped from ``text_config`` etc.)."""
        return resolve_text_config(self.config)

    @cached_property
    def total_bytes(self) -> int:
        """Bytes of all tensors (from the headers)."""
        return sum(map(_NBYTES, self.tensors.values()))

    @cached_property
    def total_params(self) -> int:
        """Elements of all tensors (the product of each shape, summed)."""
        return sum(map(math.prod, map(_SHAPE, self.tensors.values())))

    def bytes_by_dtype(self) -> dict[str, int]:
        """Tensor bytes per dtype, largest first (ties in order of first appearance)."""
        infos = self.tensors.values()
        dtypes = list(map(_DTYPE, infos))
        nbytes = list(map(_NBYTES, infos))
        totals = {d: sum(compress(nbytes, map(d.__eq__, dtypes))) for d in dict.fromkeys(dtypes)}
        return dict(sorted(totals.items(), key=lambda kv: -kv[1]))

    def has_values(self, name: str) -> bool:
        """True when :meth:`read_tensor` can return the values of ``name``."""
        if name not in self.tensors:
            return False
        return name in self.values or self.read_raw is not None

    def read_raw_bytes(self, name: str) -> bytes:
        """Raw little-endian bytes of tensor ``name``, reading only that tensor.

        Raises:
            RecipeCliError: no such tensor, or its values are not available from this source.
        """
        info = self.tensors.get(name)
        if info is None:
            raise RecipeCliError(f"tensor {name!r} is not in the checkpoint", path=self.source)
        if name in self.values:
            return self.values[name]
        if self.read_raw is None:
            raise RecipeCliError(
                f"values of tensor {name!r} are not available from this {self.kind} source",
                path=self.source,
                hint="use the checkpoint directory or a snapshot that kept small tensors",
            )
        return self.read_raw(info)

    def read_tensor(self, name: str) -> np.ndarray:
        """Values of tensor ``name`` as a numpy array (BF16 as exact float32).

        Reads only that tensor's bytes (one ``pread`` locally, one range request on the Hub).
        """
        info = self.tensors[name] if name in self.tensors else None
        raw = self.read_raw_bytes(name)
        assert info is not None
        return decode_values(raw, info.dtype, info.shape, name=name)
