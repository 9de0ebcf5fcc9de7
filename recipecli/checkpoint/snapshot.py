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
import gzip
import json
from dataclasses import replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from recipecli.checkpoint.configcheck import validate_config_types
from recipecli.checkpoint.model import Checkpoint, TensorInfo
from recipecli.checkpoint.safetensors_format import DTYPE_BITS, tensor_nbytes
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


def _fail(message: str, where: str) -> CheckpointFormatError:
    return CheckpointFormatError(
        message, path=where, hint="write it again with recipecli inspect --save-metadata"
    )


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _optional_str(data: dict[str, Any], key: str, where: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise _fail(f"snapshot {key!r} must be a string, got {type(value).__name__}", where)
    return value


def _snapshot_tensor(name: str, entry: Any, where: str) -> TensorInfo:
    """One ``tensors`` entry of a snapshot, validated by type.

    Raises:
        CheckpointFormatError: not an object, an unknown dtype, a shape that is not a list of
            non-negative integers, a shard that is not a string, or bytes != dtype x shape.
    """
    if not isinstance(entry, dict):
        raise _fail(f"snapshot tensor {name!r} is not an object", where)
    dtype = entry.get("dtype")
    if not isinstance(dtype, str) or dtype not in DTYPE_BITS:
        raise _fail(f"snapshot tensor {name!r} has unknown dtype {_short(dtype)}", where)
    shape = entry.get("shape")
    if not (
        isinstance(shape, list)
        and all(type(d) is int and d >= 0 for d in shape)  # bools and floats refused
    ):
        raise _fail(
            f"snapshot tensor {name!r}: shape must be a list of non-negative integers, "
            f"got {_short(shape)}",
            where,
        )
    shard = entry.get("shard", "")
    if not isinstance(shard, str):
        raise _fail(f"snapshot tensor {name!r}: shard must be a string", where)
    nbytes = tensor_nbytes(dtype, tuple(shape), where=where)
    if "bytes" in entry and (type(entry["bytes"]) is not int or entry["bytes"] != nbytes):
        raise _fail(
            f"snapshot tensor {name!r}: bytes {_short(entry['bytes'])} != {dtype} x "
            f"{shape} = {nbytes}",
            where,
        )
    return TensorInfo(name, dtype, tuple(shape), nbytes, shard)


def _snapshot_values(
    raw_values: dict[str, Any], tensors: dict[str, TensorInfo], where: str
) -> dict[str, bytes]:
    """The ``values`` of a snapshot decoded: tensor name -> raw bytes.

    Raises:
        CheckpointFormatError: a value of an unknown tensor, not base64, or of the wrong length.
    """
    values: dict[str, bytes] = {}
    for name, b64 in raw_values.items():
        if name not in tensors:
            raise _fail(f"snapshot value for unknown tensor {name!r}", where)
        if not isinstance(b64, str):
            raise _fail(f"snapshot value of {name!r} is not a base64 string", where)
        try:
            raw = base64.b64decode(b64, validate=True)
        except (ValueError, TypeError):
            raise _fail(f"snapshot value of {name!r} is not base64", where) from None
        if len(raw) != tensors[name].nbytes:
            raise _fail(
                f"snapshot value of {name!r} has {len(raw)} bytes, expected {tensors[name].nbytes}",
                where,
            )
        values[name] = raw
    return values


def load_snapshot(data: dict[str, Any], *, path: Path, source: str) -> Checkpoint:
    """Build a :class:`Checkpoint` from a parsed snapshot, validating every entry by type first.

    Raises:
        CheckpointFormatError: unknown version; a missing or mistyped config (see
            :func:`recipecli.checkpoint.configcheck.validate_config_types`); ``tensors``/``values``
            not objects; a tensor entry whose dtype is not a safetensors dtype, whose shape is not a
            list of non-negative integers, or whose bytes disagree with dtype x shape; values that
            are not base64 or whose length disagrees; ``shards`` not a list of strings;
            ``revision``/``source``/``note`` not strings; an unknown ``weight_format``.
    """
    where = str(path)
    if data.get(SNAPSHOT_KEY) != SNAPSHOT_VERSION:
        raise CheckpointFormatError(
            f"unsupported snapshot version {_short(data.get(SNAPSHOT_KEY))} "
            f"(expected {SNAPSHOT_VERSION})",
            path=where,
        )
    config = data.get("config")
    if not isinstance(config, dict):
        raise _fail("snapshot has no 'config' object", where)
    validate_config_types(config, where)
    raw_tensors = data.get("tensors", {})
    raw_values = data.get("values", {})
    if not isinstance(raw_tensors, dict) or not isinstance(raw_values, dict):
        raise _fail("snapshot 'tensors'/'values' must be objects", where)
    tensors = {name: _snapshot_tensor(name, entry, where) for name, entry in raw_tensors.items()}
    values = _snapshot_values(raw_values, tensors, where)
    shards = data.get("shards", [])
    if not isinstance(shards, list) or not all(isinstance(x, str) for x in shards):
        raise _fail(f"snapshot 'shards' must be a list of strings, got {_short(shards)}", where)
    weight_format = data.get("weight_format", "safetensors" if tensors else "none")
    if weight_format not in ("safetensors", "bin", "none"):
        raise _fail(
            f"snapshot weight_format must be safetensors, bin or none, got {_short(weight_format)}",
            where,
        )
    revision = _optional_str(data, "revision", where)
    origin = _optional_str(data, "source", where)
    note = _optional_str(data, "note", where)
    return Checkpoint(
        source=source,
        kind="snapshot",
        config=config,
        tensors=tensors,
        weight_format=weight_format,
        shards=tuple(shards),
        root=where,
        revision=revision,
        values=values,
        notes=(note,) if note else (),
        origin=origin or None,
    )


def dumps_snapshot(snap: dict[str, Any]) -> str:
    """Serialise a snapshot deterministically (sorted tensor order kept, compact values)."""
    return json.dumps(snap, indent=1, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------- bundled snapshots

#: folders of ``recipecli/data`` holding bundled snapshots: the example pair (``*.json``), and
#: the recipes' targets and drafts (``*.snapshot.json.gz``, scripts/build_bundled.py)
BUNDLED_DIRS: tuple[str, ...] = ("examples", "targets", "drafts")
BUNDLED_SUFFIX = ".snapshot.json.gz"


def read_snapshot_file(path: Path) -> Any:
    """The parsed JSON of a snapshot file, gzip-decompressed when its name ends in ``.gz``.

    Raises:
        CheckpointFormatError: unreadable, not gzip, or not JSON.
    """
    try:
        raw = path.read_bytes()
        if path.name.endswith(".gz"):
            raw = gzip.decompress(raw)
        return json.loads(raw)
    except (OSError, EOFError, gzip.BadGzipFile, ValueError) as exc:
        raise CheckpointFormatError(
            f"cannot read the snapshot ({type(exc).__name__})", path=str(path)
        ) from None


def _data_dir() -> Path:
    return Path(str(resources.files("recipecli.data")))


def _repo_of_file(name: str) -> str | None:
    stem = name[: -len(BUNDLED_SUFFIX)]
    org, sep, model = stem.partition("__")
    return f"{org}/{model}" if sep and org and model else None


@lru_cache(maxsize=1)
def bundled_snapshot_paths() -> dict[str, Path]:
    """The snapshots shipped in ``recipecli/data`` by the repo id they describe.

    ``examples/*.json`` are read for their ``source``; ``targets/`` and ``drafts/`` files are
    named ``<org>__<name>.snapshot.json.gz``. The first file found for an id wins (examples
    first).

    Returns:
        ``{"meta-llama/Llama-3.1-8B-Instruct": Path(...), ...}``.
    """
    out: dict[str, Path] = {}
    root = _data_dir()
    for path in sorted((root / "examples").glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # pragma: no cover - shipped files are valid
            continue
        if isinstance(data, dict) and isinstance(data.get("source"), str):
            out.setdefault(data["source"], path)
    for folder in BUNDLED_DIRS[1:]:
        for path in sorted((root / folder).glob("*" + BUNDLED_SUFFIX)):
            repo = _repo_of_file(path.name)
            if repo is not None:
                out.setdefault(repo, path)
    return out


def bundled_label(path: Path) -> str:
    """``recipecli/data/<folder>/<file>``: a bundled file named inside the package, never by
    its install path."""
    return f"recipecli/data/{path.parent.name}/{path.name}"


def open_bundled(repo_id: str) -> Checkpoint | None:
    """The bundled snapshot of ``repo_id`` as a :class:`Checkpoint` (kind ``snapshot``,
    ``origin`` the repo id, ``source`` its ``recipecli/data/...`` label, a note saying it is
    the bundled snapshot and where its tensor table came from), or None when none ships.

    Raises:
        CheckpointFormatError: the shipped file is unreadable (a broken install).
    """
    path = bundled_snapshot_paths().get(repo_id)
    if path is None:
        return None
    data = read_snapshot_file(path)
    if not is_snapshot(data):  # pragma: no cover - shipped files are snapshots
        raise _fail("bundled file is not a recipecli snapshot", bundled_label(path))
    ck = load_snapshot(data, path=path, source=bundled_label(path))
    used = (
        f"bundled snapshot of {repo_id} used (not in the HF cache; {bundled_label(path)}; no "
        f"weights, tensor table {data.get('tensors_from', 'config-derived')}); pass --revision "
        "to read the Hub"
    )
    return replace(ck, notes=(used, *ck.notes))


def bundled_origin(ck: Checkpoint) -> str | None:
    """The repo id a checkpoint opened from a bundled snapshot stands for (its ``origin``; the
    ``source`` is the ``recipecli/data/...`` label :func:`open_bundled` gives it), else None.
    ``convert --target REPO_ID`` names that repo as the verifier."""
    if ck.kind == "snapshot" and ck.origin and ck.source.startswith("recipecli/data/"):
        return ck.origin
    return None
