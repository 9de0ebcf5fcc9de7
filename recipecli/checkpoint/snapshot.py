"""Metadata snapshots: a self-contained JSON copy of a checkpoint's config and tensor table.

Written by ``recipecli inspect --save-metadata FILE``; accepted by every SOURCE argument. It keeps
the VALUES of small tensors (norm weights, ``d2t``, ``t2d``, anything up to
:data:`SMALL_TENSOR_BYTES`) as base64 of their raw little-endian bytes, bit-exact, and none of
the large weights.

Format (version 1)::

    {"recipecli_snapshot": 1, "source": str, "revision": str|null, "kind": str,
     "weight_format": "safetensors"|"bin"|"none", "shards": [str],
     "config": {...config.json...},
     "tensors": {name: {"dtype": str, "shape": [int], "bytes": int, "shard": str}},
     "values": {name: base64 str}, "note": str (optional)}
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from recipecli.checkpoint.model import Checkpoint, TensorInfo
from recipecli.checkpoint.safetensors_header import tensor_nbytes
from recipecli.errors import CheckpointFormatError

SNAPSHOT_KEY = "recipecli_snapshot"
SNAPSHOT_VERSION = 1
#: Tensors at most this many bytes keep their values in a snapshot (1 MiB).
SMALL_TENSOR_BYTES = 1 << 20


def snapshot_dict(ck: Checkpoint, *, max_value_bytes: int = SMALL_TENSOR_BYTES) -> dict[str, Any]:
    """The snapshot of ``ck`` as a JSON-ready dict, reading the values of small tensors only."""
    values: dict[str, str] = {}
    for name, info in ck.tensors.items():
        if info.nbytes <= max_value_bytes and ck.has_values(name):
            values[name] = base64.b64encode(ck.read_raw_bytes(name)).decode("ascii")
    return {
        SNAPSHOT_KEY: SNAPSHOT_VERSION,
        "source": ck.source,
        "revision": ck.revision,
        "kind": ck.kind,
        "weight_format": ck.weight_format,
        "shards": list(ck.shards),
        "config": dict(ck.config),
        "tensors": {name: info.to_dict() for name, info in ck.tensors.items()},
        "values": values,
    }


def is_snapshot(data: Any) -> bool:
    return isinstance(data, dict) and SNAPSHOT_KEY in data


def load_snapshot(data: dict[str, Any], *, path: Path, source: str) -> Checkpoint:
    """Build a :class:`Checkpoint` from a parsed snapshot, validating every entry.

    Raises:
        CheckpointFormatError: unknown version, missing config, malformed tensor entries or
            values whose length disagrees with dtype x shape.
    """
    where = str(path)
    if data.get(SNAPSHOT_KEY) != SNAPSHOT_VERSION:
        raise CheckpointFormatError(
            f"unsupported snapshot version {data.get(SNAPSHOT_KEY)!r} (expected {SNAPSHOT_VERSION})",
            path=where,
        )
    config = data.get("config")
    if not isinstance(config, dict):
        raise CheckpointFormatError("snapshot has no 'config' object", path=where)
    raw_tensors = data.get("tensors", {})
    raw_values = data.get("values", {})
    if not isinstance(raw_tensors, dict) or not isinstance(raw_values, dict):
        raise CheckpointFormatError("snapshot 'tensors'/'values' must be objects", path=where)
    tensors: dict[str, TensorInfo] = {}
    for name, entry in raw_tensors.items():
        try:
            dtype = entry["dtype"]
            shape = tuple(int(d) for d in entry["shape"])
            shard = str(entry.get("shard", ""))
        except (KeyError, TypeError, ValueError):
            raise CheckpointFormatError(
                f"snapshot tensor {name!r} is malformed", path=where
            ) from None
        nbytes = tensor_nbytes(dtype, shape, where=where)
        if "bytes" in entry and entry["bytes"] != nbytes:
            raise CheckpointFormatError(
                f"snapshot tensor {name!r}: bytes {entry['bytes']} != {dtype} x {list(shape)} = {nbytes}",
                path=where,
            )
        tensors[name] = TensorInfo(name, dtype, shape, nbytes, shard)
    values: dict[str, bytes] = {}
    for name, b64 in raw_values.items():
        if name not in tensors:
            raise CheckpointFormatError(f"snapshot value for unknown tensor {name!r}", path=where)
        try:
            raw = base64.b64decode(b64, validate=True)
        except (ValueError, TypeError):
            raise CheckpointFormatError(
                f"snapshot value of {name!r} is not base64", path=where
            ) from None
        if len(raw) != tensors[name].nbytes:
            raise CheckpointFormatError(
                f"snapshot value of {name!r} has {len(raw)} bytes, expected {tensors[name].nbytes}",
                path=where,
            )
        values[name] = raw
    notes = (str(data["note"]),) if data.get("note") else ()
    return Checkpoint(
        source=source,
        kind="snapshot",
        config=config,
        tensors=tensors,
        weight_format=data.get("weight_format", "safetensors" if tensors else "none"),
        shards=tuple(data.get("shards", ())),
        root=where,
        revision=data.get("revision"),
        values=values,
        notes=notes,
        origin=str(data["source"]) if data.get("source") else None,
    )


def dumps_snapshot(snap: dict[str, Any]) -> str:
    """Serialise a snapshot deterministically (sorted tensor order kept, compact values)."""
    return json.dumps(snap, indent=1, ensure_ascii=False) + "\n"
