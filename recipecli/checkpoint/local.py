"""Local checkpoint directories: config.json plus safetensors (single or sharded) or .bin files.

Every file is read through :mod:`recipecli.safeio` (regular files only, never blocking, bounded
size and parse). Symlinks: a file of a checkpoint is read through a link only when the link
stays inside the checkpoint directory, or -- for a Hugging Face cache snapshot
(``models--ORG--NAME/snapshots/REV/``) -- leads into that same repo's ``blobs/`` (how the cache
stores files: https://huggingface.co/docs/huggingface_hub/guides/manage-cache). Anything else
is refused with a message that names the link, never the target's content.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from itertools import repeat
from operator import sub
from pathlib import Path
from types import MappingProxyType
from typing import Any

from recipecli.checkpoint.configcheck import validate_config_types
from recipecli.checkpoint.model import Checkpoint, SourceKind, TensorInfo
from recipecli.checkpoint.safetensors_format import IO_STATS
from recipecli.checkpoint.safetensors_header import read_file_columns
from recipecli.errors import CheckpointFormatError, MissingDependencyError, SourceError
from recipecli.hints import install_hint
from recipecli.safeio import loads_json, open_regular, pread_exact, read_regular, stat_regular

#: Largest config.json read (configs are a few KB)
MAX_CONFIG_BYTES = 16 * 1024 * 1024
#: Largest weight index read (DeepSeek-V3's, 92k entries: ~9 MB)
MAX_INDEX_BYTES = 256 * 1024 * 1024
#: Largest snapshot or other JSON file read
MAX_JSON_FILE_BYTES = 512 * 1024 * 1024

SAFE_INDEX = "model.safetensors.index.json"
SAFE_SINGLE = "model.safetensors"
BIN_INDEX = "pytorch_model.bin.index.json"
BIN_SINGLE = "pytorch_model.bin"


def read_json_file(path: Path, *, what: str = "JSON", max_bytes: int = MAX_JSON_FILE_BYTES) -> Any:
    """Parse a JSON file (regular files only, bounded size and depth), errors naming it.

    Raises:
        CheckpointFormatError: not a regular file, unreadable, too large, malformed, too deep.
    """
    raw = read_regular(path, what=what, error=CheckpointFormatError, max_bytes=max_bytes)
    IO_STATS.bytes_read += len(raw)
    return loads_json(raw, where=str(path), what=what, error=CheckpointFormatError)


def read_config(path: Path) -> dict[str, Any]:
    """Read ``config.json``; it must be a JSON object whose common keys have the right types.

    Raises:
        CheckpointFormatError: see :func:`read_json_file` and
            :func:`recipecli.checkpoint.configcheck.validate_config_types`.
    """
    config = read_json_file(path, what="config.json", max_bytes=MAX_CONFIG_BYTES)
    if not isinstance(config, dict):
        raise CheckpointFormatError("config.json is not a JSON object", path=str(path))
    validate_config_types(config, str(path))
    return config


def _allowed_roots(root: Path) -> tuple[str, ...]:
    """Real directories a checkpoint's links may lead into: itself, plus the repo's ``blobs/``
    when it is a Hugging Face cache snapshot (``models--ORG--NAME/snapshots/REV``)."""
    real = os.path.realpath(root)
    snapshots = os.path.dirname(real)
    repo = os.path.dirname(snapshots)
    roots = [real]
    if os.path.basename(snapshots) == "snapshots" and os.path.basename(repo).startswith(
        ("models--", "datasets--", "spaces--")
    ):
        roots.append(os.path.join(repo, "blobs"))
    return tuple(roots)


def member_path(root: Path, name: str, *, what: str = "file", roots: tuple[str, ...] = ()) -> str:
    """The path of file ``name`` of checkpoint ``root``, after the symlink rule.

    Args:
        root: the checkpoint directory.
        name: a relative file name inside it (already checked lexically).
        what: what the file is, for messages.
        roots: :func:`_allowed_roots` of ``root`` (computed when empty).

    Raises:
        CheckpointFormatError: the file (or a folder on its way) is a symlink that leads
            outside the checkpoint and outside the HF cache's ``blobs/`` of the same repo.
    """
    path = os.path.join(root, name)
    real = os.path.realpath(path)
    for allowed in roots or _allowed_roots(root):
        if real != allowed and os.path.commonpath((real, allowed)) == allowed:
            return path
    raise CheckpointFormatError(
        f"{what} is a symlink that leads outside the checkpoint",
        path=path,
        hint="recipecli follows a checkpoint's links only inside its directory or into the HF "
        "cache's blobs/ of the same repo; copy the file into the checkpoint",
    )


def _listing(root: Path) -> frozenset[str]:
    """Names in a checkpoint directory (one ``listdir``, so an unreadable one is one line)."""
    try:
        return frozenset(os.listdir(root))
    except OSError as exc:
        raise SourceError(
            f"cannot read the checkpoint directory ({exc.strerror})",
            path=str(root),
            hint="check its permissions",
        ) from None


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
    """Read ``weight_map`` of an index file: tensor name -> shard file (validated, relative).

    Raises:
        CheckpointFormatError: malformed index, a shard name leaving the directory, a shard
            that is missing, not a regular file, or a symlink leading outside the checkpoint.
    """
    roots = _allowed_roots(root)
    index_path = Path(member_path(root, index_name, what="weight index", roots=roots))
    index = read_json_file(index_path, what="weight index", max_bytes=MAX_INDEX_BYTES)
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
        if not os.path.lexists(root / shard):
            raise CheckpointFormatError(
                f"weight_map names shard {shard!r}, which is missing",
                path=str(index_path),
                hint="download the missing shard or fix the index",
            )
        shard_path = member_path(root, shard, what="shard", roots=roots)
        stat_regular(shard_path, what="shard", error=CheckpointFormatError)
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
    root: Path,
    *,
    source: str,
    kind: SourceKind = "local",
    revision: str | None = None,
    names: frozenset[str] | None = None,
) -> Checkpoint:
    """Build a :class:`Checkpoint` from a directory of safetensors files, reading headers only.

    Args:
        root: the checkpoint directory.
        source, kind, revision: recorded in the :class:`Checkpoint`.
        names: the directory listing, when the caller already has it.

    Raises:
        CheckpointFormatError: malformed index or headers, shards missing or outside the
            directory (by name or by symlink), a file that is not a regular file, a tensor in the
            index but not in its shard or the reverse.
        SourceError: the directory cannot be listed.
    """
    names = _listing(root) if names is None else names
    roots = _allowed_roots(root)
    config, weight_map = _config_and_index(root, names, SAFE_INDEX, roots)
    if weight_map is not None:
        shards = _ordered_unique(sorted(weight_map.values()))
    elif SAFE_SINGLE in names:
        shards = [SAFE_SINGLE]
    else:
        shards = sorted(n for n in names if n.endswith(".safetensors"))

    with _gc_paused():
        tensors, offsets, shard_paths = _read_shards(root, shards, weight_map, roots)
    # every tensor read is in the index (checked above), so one is missing iff the counts differ
    if weight_map is not None and len(tensors) != len(weight_map):
        check_index_covered(root, weight_map, tensors)
    return Checkpoint(
        source=source,
        kind=kind,
        config=config,
        tensors=MappingProxyType(tensors),
        weight_format="safetensors" if shards else "none",
        shards=tuple(shards),
        root=str(root),
        revision=revision,
        read_raw=_shard_reader(offsets, shard_paths),
    )


def _config_and_index(
    root: Path, names: frozenset[str], index_name: str, roots: tuple[str, ...]
) -> tuple[dict[str, Any], dict[str, str] | None]:
    """``config.json`` of ``root`` and the ``weight_map`` of its index ``index_name`` (None
    when the directory listing ``names`` has no such index).

    Raises:
        CheckpointFormatError: see :func:`read_config` and :func:`read_weight_map`.
    """
    config = read_config(Path(member_path(root, "config.json", what="config.json", roots=roots)))
    weight_map = read_weight_map(root, index_name) if index_name in names else None
    return config, weight_map


def _shard_reader(
    offsets: list[tuple[list[str], list[int]]], shard_paths: Mapping[str, str]
) -> Callable[[TensorInfo], bytes]:
    """``read_raw`` of a safetensors directory: one ``pread`` of the tensor's bytes.

    Args:
        offsets: per shard, its tensor names and their absolute file offsets (the name ->
            offset map is built on the first read).
        shard_paths: shard name -> path (after the symlink rule).
    """
    begins: dict[str, int] = {}

    def read_raw(info: TensorInfo) -> bytes:
        if not begins:
            for shard_names, starts in offsets:
                begins.update(zip(shard_names, starts, strict=True))
        path, offset = shard_paths[info.shard], begins[info.name]
        fd, _ = open_regular(path, what="shard", error=CheckpointFormatError)
        try:
            data = pread_exact(fd, info.nbytes, offset)
        finally:
            os.close(fd)
        IO_STATS.bytes_read += len(data)
        if len(data) != info.nbytes:
            raise CheckpointFormatError(f"short read of tensor {info.name!r}", path=path)
        return data

    return read_raw


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while millions of tuples are built (none of them can
    form a cycle): its full collections cost ~25 % of a 1.5-million-tensor load."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _read_shards(
    root: Path, shards: list[str], weight_map: dict[str, str] | None, roots: tuple[str, ...]
) -> tuple[dict[str, TensorInfo], list[tuple[list[str], list[int]]], dict[str, str]]:
    """Read every shard's header: (tensors, per-shard names and absolute offsets, shard paths).

    Raises:
        CheckpointFormatError: a bad header, or a tensor the index misplaces or two shards hold.
    """
    tensors: dict[str, TensorInfo] = {}
    shard_paths = {
        shard: member_path(root, shard, what="safetensors file", roots=roots) for shard in shards
    }
    # per shard: (names, absolute data offsets); the name -> offset map is built on first use
    offsets: list[tuple[list[str], list[int]]] = []
    for shard in shards:
        shard_path = shard_paths[shard]
        cols, data_start = read_file_columns(shard_path)
        shard_names = cols.names
        misplaced = weight_map is not None and list(map(weight_map.get, shard_names)) != [
            shard
        ] * len(shard_names)
        if misplaced or not tensors.keys().isdisjoint(shard_names):
            _raise_shard_disagreement(shard_names, shard, shard_path, weight_map, tensors)
        nbytes = list(map(sub, cols.ends, cols.begins))
        # tuple.__new__ straight from C: TensorInfo's own __new__ is Python (~0.4 us a call)
        fields = zip(shard_names, cols.dtypes, cols.shapes, nbytes, repeat(shard))
        infos = map(tuple.__new__, repeat(TensorInfo), fields)
        tensors.update(zip(shard_names, infos, strict=True))
        offsets.append((shard_names, [data_start + b for b in cols.begins]))
        del cols, nbytes
    return tensors, offsets, shard_paths


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
            hint=f"{install_hint('kernels')}, or convert the checkpoint to safetensors",
        ) from None
    return torch


#: The first bytes of a zip archive: the layout ``torch.save`` writes since torch 1.6 (the only
#: one ``torch.load(mmap=True)`` maps; https://pytorch.org/docs/stable/generated/torch.load.html)
ZIP_MAGIC = b"PK\x03\x04"

#: Hint for a refused ``.bin``: our words, never torch's (its advice would run the pickle)
BIN_REFUSED_HINT = (
    "recipecli reads .bin files only as plain tensors and never runs code from a pickle; "
    "convert the checkpoint to safetensors with a tool you trust, or get a safetensors copy "
    "from its publisher"
)


def _check_zip_layout(path: Path) -> None:
    """Refuse a ``.bin`` that is not torch's zip layout (torch < 1.6 or not torch at all).

    Raises:
        CheckpointFormatError: the file does not start with :data:`ZIP_MAGIC`.
    """
    fd, _ = open_regular(path, what=".bin file", error=CheckpointFormatError)
    try:  # an OSError (EIO) is the CLI's one line, as for every other read
        head = pread_exact(fd, len(ZIP_MAGIC), 0)
    finally:
        os.close(fd)
    if head != ZIP_MAGIC:
        raise CheckpointFormatError(
            ".bin file is not in torch's zip layout (saved by torch before 1.6, or not a torch "
            "file), which recipecli cannot memory-map",
            path=str(path),
            hint="convert it to safetensors with a tool you trust (or, only if you trust the "
            "file, re-save it with torch >= 1.6)",
        )


def _torch_load(torch: Any, path: Path) -> Any:
    """``torch.load(path, weights_only=True, mmap=True)``, its failures in recipecli's words.

    Raises:
        CheckpointFormatError: the pickle asks for more than tensors and plain containers
            (``pickle.UnpicklingError``: refused, never retried), or the file is corrupt.
    """
    import pickle

    try:
        return torch.load(str(path), map_location="cpu", weights_only=True, mmap=True)
    except pickle.UnpicklingError:
        raise CheckpointFormatError(
            "refused to load .bin file: its pickle asks for objects other than tensors and "
            "plain containers (it may run code); recipecli did not load it",
            path=str(path),
            hint=BIN_REFUSED_HINT,
        ) from None
    except Exception as exc:  # torch raises many types for corrupt files
        # torch's first sentence only (its advice, if any, is never passed on)
        first = str(exc).replace(str(path), "<file>").split(". ")[0].splitlines()[:1]
        said = f": {first[0][:160]}" if first and "weights_only" not in first[0] else ""
        raise CheckpointFormatError(
            f"cannot load .bin file, corrupt or truncated? ({type(exc).__name__}{said})",
            path=str(path),
            hint=BIN_REFUSED_HINT,
        ) from None


def load_torch_state(path: Path) -> Mapping[str, Any]:
    """``torch.load(path, weights_only=True, mmap=True)``: tensors are mapped, not read.

    Returns:
        the state dict: tensor name (str) -> ``torch.Tensor``.

    Raises:
        CheckpointFormatError: not a regular file, not torch's zip layout, refused by
            ``weights_only=True`` (in recipecli's words), or not a flat state dict of tensors
            (a training checkpoint nesting the model's state under a key is named as such).
    """
    stat_regular(path, what=".bin file", error=CheckpointFormatError)  # a FIFO would block torch
    torch = _import_torch(path)
    _check_zip_layout(path)
    state = _torch_load(torch, path)
    if not isinstance(state, Mapping):
        raise CheckpointFormatError(
            f".bin file holds {type(state).__name__}, not a state dict of tensors",
            path=str(path),
        )
    for name, value in state.items():
        if not isinstance(name, str) or not isinstance(value, torch.Tensor):
            raise CheckpointFormatError(
                f".bin state dict entry {str(name)[:80]!r} is {type(value).__name__}, not a tensor",
                path=str(path),
                hint="a training checkpoint? save model.state_dict() (a flat name -> tensor dict)",
            )
    return state


def _read_bin_shards(
    root: Path, shards: list[str], weight_map: dict[str, str] | None, roots: tuple[str, ...]
) -> tuple[dict[str, TensorInfo], dict[str, Mapping[str, Any]]]:
    """Load every ``.bin`` shard (memory-mapped): (tensors, shard -> its state dict).

    Raises:
        CheckpointFormatError: see :func:`load_torch_state`; a tensor the index does not put in
            the shard that holds it.
    """
    tensors: dict[str, TensorInfo] = {}
    states: dict[str, Mapping[str, Any]] = {}
    for shard in shards:
        shard_path = Path(member_path(root, shard, what=".bin file", roots=roots))
        state = load_torch_state(shard_path)
        states[shard] = state
        for name, t in state.items():
            if weight_map is not None and weight_map.get(name) != shard:
                raise CheckpointFormatError(
                    f"tensor {name!r} is in shard {shard!r} but the index does not put it there",
                    path=str(shard_path),
                )
            dtype = TORCH_TO_SAFETENSORS.get(str(t.dtype), str(t.dtype))
            shape = tuple(int(d) for d in t.shape)
            tensors[name] = TensorInfo(name, dtype, shape, t.numel() * t.element_size(), shard)
    return tensors, states


def load_bin_dir(
    root: Path,
    *,
    source: str,
    kind: SourceKind = "local",
    revision: str | None = None,
    names: frozenset[str] | None = None,
) -> Checkpoint:
    """Build a :class:`Checkpoint` from ``pytorch_model.bin`` (single or sharded, with index).

    Needs torch; the files are memory-mapped, so only the pickle metadata is read.

    Raises:
        MissingDependencyError: torch is not installed.
        CheckpointFormatError: malformed index, missing shard, a file that is not a regular
            file or links outside the checkpoint, not a state dict of tensors, or index/shard
            disagreement.
    """
    names = _listing(root) if names is None else names
    roots = _allowed_roots(root)
    config, weight_map = _config_and_index(root, names, BIN_INDEX, roots)
    shards = [BIN_SINGLE] if weight_map is None else _ordered_unique(sorted(weight_map.values()))
    tensors, states = _read_bin_shards(root, shards, weight_map, roots)
    if weight_map is not None:
        check_index_covered(root, weight_map, tensors)

    def read_raw(info: TensorInfo) -> bytes:
        t = states[info.shard][info.name].contiguous()
        torch = _import_torch()
        raw: bytes  # torch is untyped here (imported on use)
        if t.dtype == torch.bfloat16:
            raw = t.view(torch.int16).numpy().tobytes()
        else:
            raw = t.numpy().tobytes()
        return raw

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


def _has_weights(names: frozenset[str]) -> bool:
    return bool(names & {SAFE_INDEX, SAFE_SINGLE, BIN_INDEX, BIN_SINGLE}) or any(
        n.endswith(".safetensors") for n in names
    )


def has_weights(root: Path) -> bool:
    """True when ``root`` holds weight files recipecli can read (False when it cannot be read)."""
    try:
        return _has_weights(frozenset(os.listdir(root)))
    except OSError:
        return False


def load_local_dir(
    root: Path, *, source: str, kind: SourceKind = "local", revision: str | None = None
) -> Checkpoint:
    """Load a local checkpoint directory, preferring safetensors over ``.bin``.

    Raises:
        SourceError: the directory cannot be listed, or holds no ``config.json``.
        CheckpointFormatError: see :func:`load_safetensors_dir` and :func:`load_bin_dir`.
    """
    names = _listing(root)
    if "config.json" not in names:
        raise SourceError(
            "directory has no config.json",
            path=str(root),
            hint="point at the checkpoint directory (the one holding config.json)",
        )
    safetensors_present = SAFE_INDEX in names or any(n.endswith(".safetensors") for n in names)
    if not safetensors_present and (BIN_INDEX in names or BIN_SINGLE in names):
        return load_bin_dir(root, source=source, kind=kind, revision=revision, names=names)
    return load_safetensors_dir(root, source=source, kind=kind, revision=revision, names=names)


def config_only(path: Path, config: Mapping[str, Any], *, source: str) -> Checkpoint:
    """A checkpoint with a config and no tensor table (a bare ``config.json`` file).

    Raises:
        CheckpointFormatError: see :func:`recipecli.checkpoint.configcheck.validate_config_types`.
    """
    validate_config_types(config, str(path))
    return Checkpoint(source=source, kind="config", config=config, tensors={}, root=str(path))
