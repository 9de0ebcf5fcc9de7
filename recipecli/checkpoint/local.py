"""Local checkpoint directories: config.json plus safetensors (single or sharded) or .bin files."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from itertools import repeat
from operator import sub
from pathlib import Path
from typing import Any

from recipecli.checkpoint.model import Checkpoint, SourceKind, TensorInfo
from recipecli.checkpoint.safetensors_header import IO_STATS, read_file_columns
from recipecli.errors import CheckpointFormatError, MissingDependencyError, SourceError

SAFE_INDEX = "model.safetensors.index.json"
SAFE_SINGLE = "model.safetensors"
BIN_INDEX = "pytorch_model.bin.index.json"
BIN_SINGLE = "pytorch_model.bin"


def read_json_file(path: Path, *, what: str = "JSON") -> Any:
    """Parse a JSON file, raising :class:`CheckpointFormatError` that names it."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"cannot read {what} ({exc.strerror})", path=str(path)) from None
    IO_STATS.bytes_read += len(raw)
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CheckpointFormatError(f"malformed {what}: {exc}", path=str(path)) from None


def read_config(path: Path) -> dict[str, Any]:
    """Read ``config.json``; it must be a JSON object."""
    config = read_json_file(path, what="config.json")
    if not isinstance(config, dict):
        raise CheckpointFormatError("config.json is not a JSON object", path=str(path))
    return config


def _safe_shard_path(root: Path, shard: Any, index_path: Path) -> str:
    """Validate an index ``weight_map`` value: a relative file name inside ``root``."""
    if not isinstance(shard, str) or not shard:
        raise CheckpointFormatError(
            f"weight_map value {shard!r} is not a file name", path=str(index_path)
        )
    parts = Path(shard).parts
    if os.path.isabs(shard) or ".." in parts or shard.startswith(("/", "\\")):
        raise CheckpointFormatError(
            f"weight_map points outside the checkpoint directory: {shard!r}",
            path=str(index_path),
            hint="shard names must be plain relative file names",
        )
    # Lexical check only: shards may be symlinks leaving the directory (the HF cache links
    # snapshots/<sha>/<file> to ../../blobs/<hash>); the index itself must not point outside.
    normalised = Path(os.path.normpath(root / shard))
    if Path(os.path.normpath(root)) not in normalised.parents:
        raise CheckpointFormatError(
            f"weight_map points outside the checkpoint directory: {shard!r}", path=str(index_path)
        )
    return shard


def read_weight_map(root: Path, index_name: str) -> dict[str, str]:
    """Read ``weight_map`` of an index file: tensor name -> shard file (validated, relative)."""
    index_path = root / index_name
    index = read_json_file(index_path, what="weight index")
    if not isinstance(index, dict) or not isinstance(index.get("weight_map"), dict):
        raise CheckpointFormatError("index has no 'weight_map' object", path=str(index_path))
    raw_map: dict[str, Any] = index["weight_map"]
    for shard in raw_map.values():
        if not isinstance(shard, str) or not shard:
            _safe_shard_path(root, shard, index_path)  # raises: not a file name
    # validate each distinct shard name once (DeepSeek-V3: 92k entries, 163 shards)
    for shard in set(raw_map.values()):
        _safe_shard_path(root, shard, index_path)
    weight_map: dict[str, str] = dict(raw_map)
    for shard in sorted(set(weight_map.values())):
        if not (root / shard).is_file():
            raise CheckpointFormatError(
                f"weight_map names shard {shard!r}, which is missing",
                path=str(index_path),
                hint="download the missing shard or fix the index",
            )
    return weight_map


def check_index_covered(
    root: Path, weight_map: Mapping[str, str], tensors: Mapping[str, Any]
) -> None:
    """Every tensor the index lists must be in the shards read.

    Raises:
        CheckpointFormatError: naming the shard that should hold the first missing tensor.
    """
    for name, shard in weight_map.items():
        if name not in tensors:
            raise CheckpointFormatError(
                f"index lists tensor {name!r} in {shard!r} but that shard does not hold it",
                path=str(root / shard),
            )


def _ordered_unique(values: Any) -> list[str]:
    return list(dict.fromkeys(values))


def _raise_shard_disagreement(
    names: list[str],
    shard: str,
    shard_path: str,
    weight_map: Mapping[str, str] | None,
    tensors: Mapping[str, TensorInfo],
) -> None:
    """Raise for the first tensor of ``shard`` that the index misplaces or another shard holds."""
    for name in names:
        if weight_map is not None and weight_map.get(name) != shard:
            listed = weight_map.get(name)
            raise CheckpointFormatError(
                f"tensor {name!r} is in shard {shard!r} but the index "
                + (f"puts it in {listed!r}" if listed else "does not list it"),
                path=shard_path,
            )
        if name in tensors:
            raise CheckpointFormatError(
                f"tensor {name!r} appears in two shards ({tensors[name].shard}, {shard})",
                path=shard_path,
            )


def load_safetensors_dir(
    root: Path, *, source: str, kind: SourceKind = "local", revision: str | None = None
) -> Checkpoint:
    """Build a :class:`Checkpoint` from a directory of safetensors files, reading headers only.

    Raises:
        CheckpointFormatError: malformed index or headers, shards missing or outside the directory,
            a tensor in the index but not in its shard or the reverse.
    """
    config = read_config(root / "config.json")
    index_path = root / SAFE_INDEX
    weight_map: dict[str, str] | None = None
    if index_path.is_file():
        weight_map = read_weight_map(root, SAFE_INDEX)
        shards = _ordered_unique(sorted(weight_map.values()))
    elif (root / SAFE_SINGLE).is_file():
        shards = [SAFE_SINGLE]
    else:
        shards = sorted(p.name for p in root.glob("*.safetensors"))

    tensors: dict[str, TensorInfo] = {}
    begins: dict[str, int] = {}  # tensor -> absolute file offset of its data
    shard_paths = {shard: str(root / shard) for shard in shards}
    for shard in shards:
        shard_path = shard_paths[shard]
        cols, data_start = read_file_columns(shard_path)
        names = cols.names
        misplaced = weight_map is not None and list(map(weight_map.get, names)) != [shard] * len(
            names
        )
        if misplaced or not tensors.keys().isdisjoint(names):
            _raise_shard_disagreement(names, shard, shard_path, weight_map, tensors)
        nbytes = list(map(sub, cols.ends, cols.begins))
        infos = map(TensorInfo, names, cols.dtypes, cols.shapes, nbytes, repeat(shard))
        tensors.update(zip(names, infos, strict=True))
        begins.update(zip(names, [data_start + b for b in cols.begins], strict=True))
    # every tensor read is in the index (checked above), so one is missing iff the counts differ
    if weight_map is not None and len(tensors) != len(weight_map):
        check_index_covered(root, weight_map, tensors)

    def read_raw(info: TensorInfo) -> bytes:
        path, offset = shard_paths[info.shard], begins[info.name]
        fd = os.open(path, os.O_RDONLY)
        try:
            data = os.pread(fd, info.nbytes, offset)
        finally:
            os.close(fd)
        IO_STATS.bytes_read += len(data)
        if len(data) != info.nbytes:
            raise CheckpointFormatError(f"short read of tensor {info.name!r}", path=path)
        return data

    return Checkpoint(
        source=source,
        kind=kind,
        config=config,
        tensors=tensors,
        weight_format="safetensors" if shards else "none",
        shards=tuple(shards),
        root=str(root),
        revision=revision,
        read_raw=read_raw,
    )


#: torch dtype name -> safetensors dtype name
TORCH_TO_SAFETENSORS: Mapping[str, str] = {
    "torch.bool": "BOOL",
    "torch.uint8": "U8",
    "torch.int8": "I8",
    "torch.int16": "I16",
    "torch.float16": "F16",
    "torch.bfloat16": "BF16",
    "torch.int32": "I32",
    "torch.float32": "F32",
    "torch.int64": "I64",
    "torch.float64": "F64",
    "torch.float8_e4m3fn": "F8_E4M3",
    "torch.float8_e5m2": "F8_E5M2",
}


def _import_torch(path: Path | None = None) -> Any:
    try:
        import torch
    except ImportError:
        raise MissingDependencyError(
            "reading .bin (pickle) checkpoints needs torch, which is not installed",
            path=str(path) if path is not None else None,
            hint="pip install 'recipecli[kernels]', or convert the checkpoint to safetensors",
        ) from None
    return torch


def load_torch_state(path: Path) -> Mapping[str, Any]:
    """``torch.load(path, weights_only=True, mmap=True)``: tensors are mapped, not read."""
    torch = _import_torch(path)
    try:
        state = torch.load(str(path), map_location="cpu", weights_only=True, mmap=True)
    except Exception as exc:  # torch raises many types for corrupt pickles
        raise CheckpointFormatError(
            f"cannot load .bin with weights_only=True ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})",
            path=str(path),
        ) from None
    if not isinstance(state, Mapping):
        raise CheckpointFormatError(".bin file does not hold a state dict", path=str(path))
    return state


def load_bin_dir(
    root: Path, *, source: str, kind: SourceKind = "local", revision: str | None = None
) -> Checkpoint:
    """Build a :class:`Checkpoint` from ``pytorch_model.bin`` (single or sharded, with index).

    Needs torch; the files are memory-mapped, so only the pickle metadata is read.

    Raises:
        MissingDependencyError: torch is not installed.
        CheckpointFormatError: malformed index, missing shard, or index/shard disagreement.
    """
    config = read_config(root / "config.json")
    weight_map: dict[str, str] | None = None
    if (root / BIN_INDEX).is_file():
        weight_map = read_weight_map(root, BIN_INDEX)
        shards = _ordered_unique(sorted(weight_map.values()))
    else:
        shards = [BIN_SINGLE]
    tensors: dict[str, TensorInfo] = {}
    states: dict[str, Mapping[str, Any]] = {}
    for shard in shards:
        state = load_torch_state(root / shard)
        states[shard] = state
        for name, t in state.items():
            if weight_map is not None and weight_map.get(name) != shard:
                raise CheckpointFormatError(
                    f"tensor {name!r} is in shard {shard!r} but the index does not put it there",
                    path=str(root / shard),
                )
            dtype = TORCH_TO_SAFETENSORS.get(str(t.dtype), str(t.dtype))
            shape = tuple(int(d) for d in t.shape)
            tensors[name] = TensorInfo(name, dtype, shape, t.numel() * t.element_size(), shard)
    if weight_map is not None:
        check_index_covered(root, weight_map, tensors)

    def read_raw(info: TensorInfo) -> bytes:
        t = states[info.shard][info.name].contiguous()
        torch = _import_torch()
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().tobytes()
        return t.numpy().tobytes()

    return Checkpoint(
        source=source,
        kind=kind,
        config=config,
        tensors=tensors,
        weight_format="bin",
        shards=tuple(shards),
        root=str(root),
        revision=revision,
        read_raw=read_raw,
    )


def has_weights(root: Path) -> bool:
    """True when ``root`` holds weight files recipecli can read."""
    names = (SAFE_INDEX, SAFE_SINGLE, BIN_INDEX, BIN_SINGLE)
    return any((root / n).is_file() for n in names) or any(root.glob("*.safetensors"))


def load_local_dir(
    root: Path, *, source: str, kind: SourceKind = "local", revision: str | None = None
) -> Checkpoint:
    """Load a local checkpoint directory, preferring safetensors over ``.bin``.

    Raises:
        SourceError: no ``config.json`` in the directory.
    """
    if not (root / "config.json").is_file():
        raise SourceError(
            "directory has no config.json",
            path=str(root),
            hint="point at the checkpoint directory (the one holding config.json)",
        )
    safetensors_present = (
        (root / SAFE_INDEX).is_file()
        or (root / SAFE_SINGLE).is_file()
        or any(root.glob("*.safetensors"))
    )
    if not safetensors_present and ((root / BIN_INDEX).is_file() or (root / BIN_SINGLE).is_file()):
        return load_bin_dir(root, source=source, kind=kind, revision=revision)
    return load_safetensors_dir(root, source=source, kind=kind, revision=revision)


def config_only(path: Path, config: Mapping[str, Any], *, source: str) -> Checkpoint:
    """A checkpoint with a config and no tensor table (a bare ``config.json`` file)."""
    return Checkpoint(source=source, kind="config", config=config, tensors={}, root=str(path))
