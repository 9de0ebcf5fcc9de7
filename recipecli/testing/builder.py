"""Write safetensors checkpoints for tests and benchmarks.

Tensors given a ``value`` are written for real; the others are left as holes of a sparse file
(the header is written, then the file is extended with ``truncate``), so a full-size 690 GB
checkpoint costs a few MB of disk. Headers follow the safetensors layout exactly (8-byte length,
JSON padded with spaces to a multiple of 8, contiguous data), so the safetensors library reads them.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from recipecli.checkpoint.safetensors_format import tensor_nbytes


@dataclass(frozen=True)
class TensorSpec:
    """A tensor to write: name, safetensors dtype, shape, and optional values (else a hole)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    value: Any = None

    @property
    def nbytes(self) -> int:
        return tensor_nbytes(self.dtype, tuple(self.shape))


def encode_values(value: Any, dtype: str, shape: Sequence[int]) -> bytes:
    """Little-endian bytes of ``value`` as ``dtype`` (BF16 rounded to nearest even from fp32)."""
    arr = np.asarray(value)
    if tuple(arr.shape) != tuple(shape):
        arr = np.broadcast_to(arr, tuple(shape))
    if dtype == "BF16":
        f32 = np.ascontiguousarray(arr, dtype=np.float32).view(np.uint32)
        rounded = (f32 + 0x7FFF + ((f32 >> 16) & 1)) >> 16
        return rounded.astype("<u2").tobytes()
    np_dtype = {
        "BOOL": "bool",
        "U8": "uint8",
        "I8": "int8",
        "F16": "<f2",
        "F32": "<f4",
        "F64": "<f8",
        "I16": "<i2",
        "I32": "<i4",
        "I64": "<i8",
    }[dtype]
    return np.ascontiguousarray(arr, dtype=np_dtype).tobytes()


def write_safetensors(
    path: str | os.PathLike[str],
    specs: Iterable[TensorSpec],
    *,
    metadata: Mapping[str, str] | None = None,
) -> int:
    """Write one safetensors file; returns its (apparent) size in bytes."""
    specs = list(specs)
    header: dict[str, Any] = {}
    if metadata:
        header["__metadata__"] = dict(metadata)
    offset = 0
    for s in specs:
        n = s.nbytes
        header[s.name] = {
            "dtype": s.dtype,
            "shape": list(s.shape),
            "data_offsets": [offset, offset + n],
        }
        offset += n
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    data_start = 8 + len(raw)
    with open(path, "wb") as fh:
        fh.write(len(raw).to_bytes(8, "little"))
        fh.write(raw)
        for s in specs:
            if s.value is not None:
                begin = header[s.name]["data_offsets"][0]
                fh.seek(data_start + begin)
                fh.write(encode_values(s.value, s.dtype, s.shape))
        fh.truncate(data_start + offset)
    return data_start + offset


def shard_specs(specs: Sequence[TensorSpec], num_shards: int) -> list[list[TensorSpec]]:
    """Split ``specs`` into ``num_shards`` groups of roughly equal bytes, keeping order."""
    total = sum(s.nbytes for s in specs) or 1
    target = total / num_shards
    groups: list[list[TensorSpec]] = [[] for _ in range(num_shards)]
    acc = 0
    for s in specs:
        idx = min(int(acc / target), num_shards - 1) if target else 0
        groups[idx].append(s)
        acc += s.nbytes
    # every shard must hold something: move tails forward where a shard came out empty
    for i in range(num_shards):
        if not groups[i]:
            donor = max(range(num_shards), key=lambda j: len(groups[j]))
            groups[i].append(groups[donor].pop())
    return groups


def write_checkpoint(
    root: str | os.PathLike[str],
    config: Mapping[str, Any],
    specs: Sequence[TensorSpec],
    *,
    num_shards: int = 1,
) -> Path:
    """Write ``config.json`` and the tensors as one ``model.safetensors`` or N shards + index.

    Args:
        root: directory to create (parents too).
        config: the config.json content.
        specs: tensors; those with ``value=None`` become sparse holes.
        num_shards: 1 for ``model.safetensors``; more for ``model-0000i-of-0000N.safetensors``
            plus ``model.safetensors.index.json``.

    Returns:
        The checkpoint directory.
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps(config, indent=2))
    if num_shards <= 1:
        write_safetensors(root / "model.safetensors", specs, metadata={"format": "pt"})
        return root
    weight_map: dict[str, str] = {}
    total = 0
    width = max(5, len(str(num_shards)))
    for i, group in enumerate(shard_specs(specs, num_shards), start=1):
        name = f"model-{i:0{width}d}-of-{num_shards:0{width}d}.safetensors"
        write_safetensors(root / name, group, metadata={"format": "pt"})
        for s in group:
            weight_map[s.name] = name
            total += s.nbytes
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (root / "model.safetensors.index.json").write_text(json.dumps(index, indent=2))
    return root


def write_bin_checkpoint(
    root: str | os.PathLike[str], config: Mapping[str, Any], specs: Sequence[TensorSpec]
) -> Path:
    """Write ``config.json`` and ``pytorch_model.bin`` (needs torch; every tensor is materialised,
    holes as zeros, so keep it to draft-sized checkpoints)."""
    import torch

    from recipecli.checkpoint.local import TORCH_TO_SAFETENSORS

    to_torch = {v: getattr(torch, k.split(".")[1]) for k, v in TORCH_TO_SAFETENSORS.items()}
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps(config, indent=2))
    state = {}
    for s in specs:
        dt = to_torch[s.dtype]
        if s.value is None:
            state[s.name] = torch.zeros(s.shape, dtype=dt)
        else:
            state[s.name] = (
                torch.tensor(
                    np.asarray(s.value, dtype=np.float64 if dt.is_floating_point else None)
                )
                .to(dt)
                .reshape(s.shape)
            )
    torch.save(state, root / "pytorch_model.bin")
    return root


def numel(shape: Sequence[int]) -> int:
    return math.prod(shape)
