"""Read and validate safetensors headers without touching tensor data.

File layout (https://huggingface.co/docs/safetensors): 8-byte little-endian header length N, N
bytes of UTF-8 JSON ``{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__":
{}}``, then the data buffer. Offsets are relative to the data buffer; the buffer must be covered
exactly, without holes or overlaps (the same rule the safetensors library enforces).

Only ``8 + N`` bytes are read per file (``os.pread``); data is never read or mapped here. Files are
opened through :mod:`recipecli.safeio` (regular files only, never blocking). Headers in the
safetensors library's compact layout take the fast path of
:mod:`~recipecli.checkpoint.compact_header`; the dtype table and the typed header forms live in
:mod:`~recipecli.checkpoint.safetensors_format`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain
from operator import mul, sub
from typing import Any, TypeGuard

from recipecli.checkpoint.compact_header import compact_columns
from recipecli.checkpoint.safetensors_format import (
    DTYPE_BITS,
    IO_STATS,
    Columns,
    RawTensor,
    tensor_nbytes,
)
from recipecli.errors import CheckpointFormatError
from recipecli.safeio import loads_json, open_regular, pread_exact

#: Largest header accepted, in bytes. Real headers are < 10 MB (DeepSeek-V3 shards: ~0.1 MB). At
#: this cap a header holds at most about 1.5 million tensors (~70 bytes per entry).
MAX_HEADER_BYTES = 100 * 1024 * 1024
#: Largest header accepted when it is NOT in the safetensors library's compact layout (such
#: headers go through json.loads, ~10x the memory of the compact path): 16 MiB, about 230k
#: tensors, more than twice the tensors of any published checkpoint's largest shard.
MAX_LOOSE_HEADER_BYTES = 16 * 1024 * 1024

_INT_TYPES = frozenset({int})


def _non_negative_ints(values: object) -> TypeGuard[list[int]]:
    """True for a list of ints >= 0 (bools excluded); C-level checks, no generator."""
    return (
        isinstance(values, list)
        and set(map(type, values)) <= _INT_TYPES
        and (not values or min(values) >= 0)
    )


def _fast_columns(header: dict[str, Any], data_len: int | None) -> Columns | None:
    """Accept a well-formed header with C-level passes over whole columns, or return None.

    All-or-nothing: on ANY irregularity it returns None and :func:`validate_entries` runs its
    entry-by-entry loop, which names the first bad tensor. Both accept exactly the same headers
    (dtype known, shape and offsets lists of non-negative ints, offsets span dtype x shape bytes,
    the buffer covered without holes or overlaps up to ``data_len``). About 10x faster on the
    92k entries of DeepSeek-V3's 163 headers.
    """
    names = [k for k in header if k != "__metadata__"]
    if not names:
        return None
    entries = [header[k] for k in names]
    if set(map(type, entries)) != {dict}:
        return None
    try:
        dtypes = [e["dtype"] for e in entries]
        shapes = [e["shape"] for e in entries]
        offsets = [e["data_offsets"] for e in entries]
        bits = list(map(DTYPE_BITS.__getitem__, dtypes))
    except (KeyError, TypeError):
        return None
    if set(map(type, dtypes)) != {str} or set(map(type, shapes)) != {list}:
        return None
    if set(map(type, offsets)) != {list} or set(map(len, offsets)) != {2}:
        return None
    dims = list(chain.from_iterable(shapes))
    if dims and (set(map(type, dims)) != {int} or min(dims) < 0):
        return None
    begins = [o[0] for o in offsets]
    ends = [o[1] for o in offsets]
    if set(map(type, begins)) != {int} or set(map(type, ends)) != {int} or min(begins) < 0:
        return None
    total_bits = list(map(mul, map(math.prod, shapes), bits))
    nbytes = [b >> 3 for b in total_bits]
    if [n << 3 for n in nbytes] != total_bits or list(map(sub, ends, begins)) != nbytes:
        return None
    order = sorted(zip(begins, ends, strict=True))
    starts = [p[0] for p in order]
    stops = [p[1] for p in order]
    if starts[0] != 0 or starts[1:] != stops[:-1]:
        return None
    if data_len is not None and stops[-1] != data_len:
        return None
    return Columns(names, dtypes, list(map(tuple, shapes)), begins, ends)


def _fast_entries(header: dict[str, Any], data_len: int | None) -> dict[str, RawTensor] | None:
    """:func:`_fast_columns` as name -> :class:`RawTensor`, or None."""
    cols = _fast_columns(header, data_len)
    if cols is None:
        return None
    return dict(zip(cols.names, map(RawTensor, *cols), strict=True))


def _short(value: Any, limit: int = 40) -> str:
    """``repr(value)`` cut to ``limit`` characters (messages quote headers, never whole values)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _string_metadata(metadata: Any, where: str) -> dict[str, str]:
    """``__metadata__`` as a str -> str dict.

    The safetensors library reads ``__metadata__`` as a map of strings to strings and refuses any
    other value (``safetensors`` crate, ``Metadata`` deserialisation), so engines cannot load such
    a file; recipecli refuses it too.
    """
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise CheckpointFormatError(
            "safetensors __metadata__ is not an object", path=where, hint=_LIBRARY_REFUSES
        )
    for key, value in metadata.items():
        if not isinstance(value, str):
            raise CheckpointFormatError(
                f"safetensors __metadata__ value of {_short(key)} is {type(value).__name__}, "
                "not a string",
                path=where,
                hint=_LIBRARY_REFUSES,
            )
    return dict(metadata)


_LIBRARY_REFUSES = "the safetensors library refuses such files; rewrite the header"


def _layout_ok(begins: list[int], ends: list[int], nbytes: list[int], data_len: int | None) -> bool:
    """Offsets span ``nbytes`` each and cover ``[0, data_len)`` without holes or overlaps."""
    if list(map(sub, ends, begins)) != nbytes:
        return False
    if begins[0] == 0 and begins[1:] == ends[:-1]:  # header order is file order (the usual case)
        last = ends[-1]
    else:
        order = sorted(zip(begins, ends, strict=True))
        starts = [p[0] for p in order]
        stops = [p[1] for p in order]
        if starts[0] != 0 or starts[1:] != stops[:-1]:
            return False
        last = stops[-1]
    return data_len is None or last == data_len


def _check_columns(cols: Columns, *, where: str, data_len: int | None) -> None:
    """Entry-by-entry checks of typed columns, raising for the first bad tensor.

    Raises:
        CheckpointFormatError: offsets out of order, byte count that disagrees with dtype x
            shape, overlap, hole, truncation or trailing bytes.
    """
    for name, dtype, shape, begin, end in zip(*cols, strict=True):
        if end < begin:
            raise CheckpointFormatError(
                f"tensor {name!r} has data_offsets out of order ({begin} > {end})", path=where
            )
        total_bits = math.prod(shape) * DTYPE_BITS[dtype]
        if total_bits % 8:
            tensor_nbytes(dtype, shape, where=where)  # raises: does not fill whole bytes
        want = total_bits // 8
        if end - begin != want:
            raise CheckpointFormatError(
                f"tensor {name!r}: {dtype} x {list(shape)} is {want} bytes but data_offsets span "
                f"{end - begin}",
                path=where,
            )
    cursor = 0
    for begin, end, name in sorted(zip(cols.begins, cols.ends, cols.names, strict=True)):
        if begin < cursor:
            raise CheckpointFormatError(
                f"tensor {name!r} at bytes [{begin}, {end}) overlaps the previous tensor "
                f"(ends at {cursor})",
                path=where,
            )
        if begin > cursor:
            raise CheckpointFormatError(
                f"hole in the data buffer before tensor {name!r} (bytes [{cursor}, {begin}))",
                path=where,
            )
        cursor = end
    if data_len is not None:
        if cursor > data_len:
            raise CheckpointFormatError(
                f"tensor data ends at byte {cursor} of the data buffer but the file holds only "
                f"{data_len} (truncated download?)",
                path=where,
                hint="download the file again",
            )
        if cursor < data_len:
            raise CheckpointFormatError(
                f"{data_len - cursor} trailing bytes after the last tensor", path=where
            )


def validate_entries(
    header: Any, *, where: str, data_len: int | None
) -> tuple[dict[str, RawTensor], dict[str, str]]:
    """Validate a parsed header and return its tensors and ``__metadata__``.

    Args:
        header: the parsed JSON header.
        where: the file (or URL) named in errors.
        data_len: size of the data buffer in bytes (file size - 8 - N), or None when unknown.

    Returns:
        ``(tensors, metadata)``: name -> :class:`RawTensor`, and the string metadata.

    Raises:
        CheckpointFormatError: not an object; ``__metadata__`` not a map of strings; bad dtype,
            shape or offsets; byte count that disagrees with dtype x shape; overlapping or
            out-of-order offsets; a hole in the buffer; data past the end of the file (truncated
            download) or trailing bytes.
    """
    if not isinstance(header, dict):
        raise CheckpointFormatError("safetensors header is not a JSON object", path=where)
    metadata = _string_metadata(header.get("__metadata__"), where)
    fast = _fast_entries(header, data_len)
    if fast is not None:
        return fast, metadata
    cols = Columns([], [], [], [], [])
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(entry, dict):
            raise CheckpointFormatError(f"header entry {name!r} is not an object", path=where)
        dtype = entry.get("dtype")
        shape = entry.get("shape")
        offsets = entry.get("data_offsets")
        if not isinstance(dtype, str) or dtype not in DTYPE_BITS:
            raise CheckpointFormatError(
                f"tensor {name!r} has unknown dtype {_short(dtype)}", path=where
            )
        if not _non_negative_ints(shape):
            raise CheckpointFormatError(
                f"tensor {name!r} has invalid shape {_short(shape)}", path=where
            )
        if not _non_negative_ints(offsets) or len(offsets) != 2:
            raise CheckpointFormatError(
                f"tensor {name!r} has invalid data_offsets {_short(offsets)}", path=where
            )
        cols.names.append(name)
        cols.dtypes.append(dtype)
        cols.shapes.append(tuple(shape))
        cols.begins.append(offsets[0])
        cols.ends.append(offsets[1])
    _check_columns(cols, where=where, data_len=data_len)
    return dict(zip(cols.names, map(RawTensor, *cols), strict=True)), metadata


def parse_header_bytes(raw: bytes, *, where: str) -> Any:
    """Decode a JSON header (UTF-8), raising :class:`CheckpointFormatError` naming ``where``.

    The error never quotes the header (it may not be a safetensors file at all).
    """
    if len(raw) > MAX_LOOSE_HEADER_BYTES:
        raise CheckpointFormatError(
            f"safetensors header of {len(raw)} bytes is not in the compact layout the safetensors "
            f"library writes; headers in other layouts are read up to {MAX_LOOSE_HEADER_BYTES} "
            "bytes",
            path=where,
            hint="rewrite the file with the safetensors library (safetensors.torch.save_file)",
        )
    return loads_json(
        raw,
        where=where,
        what="safetensors header JSON",
        error=CheckpointFormatError,
        max_depth=None,
    )


def _columns_nbytes(cols: Columns) -> list[int] | None:
    """Bytes of each tensor from dtype x shape, or None when some sub-byte tensor is ragged."""
    numel = {shape: math.prod(shape) for shape in set(cols.shapes)}
    total_bits = list(
        map(mul, map(numel.__getitem__, cols.shapes), map(DTYPE_BITS.__getitem__, cols.dtypes))
    )
    nbytes = [b >> 3 for b in total_bits]
    if [n << 3 for n in nbytes] != total_bits:
        return None
    return nbytes


@dataclass(frozen=True)
class FileHeader:
    """The validated header of one safetensors file."""

    path: str
    header_len: int
    file_size: int
    tensors: Mapping[str, RawTensor]
    metadata: Mapping[str, str]

    @property
    def data_start(self) -> int:
        """Absolute file offset of the data buffer."""
        return 8 + self.header_len


def _read_header_raw(path: str | os.PathLike[str]) -> tuple[str, int, int, bytes]:
    """Read ``8 + N`` bytes of a local safetensors file: ``(path, N, file size, header bytes)``.

    Messages never show the header length read from the file: for a file that is not a
    safetensors file those 8 bytes are its content (a token file starts ``hf_...``).
    """
    where = os.fspath(path)
    fd, st = open_regular(where, what="safetensors file", error=CheckpointFormatError)
    try:
        size = st.st_size
        IO_STATS.files_opened += 1
        if size < 8:
            raise CheckpointFormatError(
                f"file is {size} bytes, too short for a safetensors header (truncated?)", path=where
            )
        try:
            (n,) = _u64(pread_exact(fd, 8, 0))
            if n > MAX_HEADER_BYTES:
                raise CheckpointFormatError(
                    f"the header length in the first 8 bytes is over the {MAX_HEADER_BYTES}-byte "
                    "cap (not a safetensors file?)",
                    path=where,
                )
            if 8 + n > size:
                raise CheckpointFormatError(
                    f"the header length in the first 8 bytes is larger than the file ({size} "
                    "bytes): truncated, or not a safetensors file",
                    path=where,
                )
            raw = pread_exact(fd, n, 8)
        except OSError as exc:
            raise CheckpointFormatError(
                f"cannot read safetensors file ({exc.strerror})", path=where
            ) from None
        IO_STATS.bytes_read += 8 + len(raw)
    finally:
        os.close(fd)
    if len(raw) != n:
        raise CheckpointFormatError("file shrank while being read", path=where)
    return where, n, size, raw


def _header_columns(
    path: str | os.PathLike[str],
) -> tuple[str, int, int, Columns, dict[str, str]]:
    """Read and validate one header: ``(path, N, file size, columns, metadata)``.

    Compact headers (the safetensors library's layout) take
    :func:`~recipecli.checkpoint.compact_header.compact_columns`; any other goes through
    ``json.loads`` and :func:`validate_entries`, which accept the same headers.
    """
    where, n, size, raw = _read_header_raw(path)
    data_len = size - 8 - n
    holder = [raw]
    del raw
    compact = compact_columns(holder, data_len)
    if compact is not None:
        cols, meta, layout_ok = compact
        if not layout_ok:  # tensors out of file order, or a real error: the loop decides
            nbytes = _columns_nbytes(cols)
            if nbytes is None or not _layout_ok(cols.begins, cols.ends, nbytes, data_len):
                _check_columns(cols, where=where, data_len=data_len)  # raises for the first bad
        return where, n, size, cols, meta
    loose, metadata = _loose_columns(holder, path, where=where, data_len=data_len)
    return where, n, size, loose, metadata


def _loose_columns(
    holder: list[bytes], path: str | os.PathLike[str], *, where: str, data_len: int
) -> tuple[Columns, dict[str, str]]:
    """The columns and metadata of a header that is not in the compact layout, through
    ``json.loads``: the header bytes still in ``holder`` (taken out of it), else read again.

    Raises:
        CheckpointFormatError: see :func:`parse_header_bytes` and :func:`validate_entries`.
    """
    raw = holder.pop() if holder else _read_header_raw(path)[3]
    header = parse_header_bytes(raw, where=where)
    del raw
    if not isinstance(header, dict):
        raise CheckpointFormatError("safetensors header is not a JSON object", path=where)
    metadata = _string_metadata(header.get("__metadata__"), where)
    cols = _fast_columns(header, data_len)
    if cols is not None:
        return cols, metadata
    # the entry loop names what is wrong (or accepts an unusual header)
    tensors, _ = validate_entries(header, where=where, data_len=data_len)
    raws = list(tensors.values())
    cols = Columns(
        list(tensors),
        [r.dtype for r in raws],
        [r.shape for r in raws],
        [r.begin for r in raws],
        [r.end for r in raws],
    )
    return cols, metadata


def read_file_header(path: str | os.PathLike[str]) -> FileHeader:
    """Read and validate the header of a local safetensors file, reading only ``8 + N`` bytes.

    Raises:
        CheckpointFormatError: see :func:`validate_entries`; also not a regular file (a FIFO or
            a directory is refused without blocking), a file shorter than 8 bytes, a header
            length over :data:`MAX_HEADER_BYTES` or larger than the file.
    """
    where, n, size, cols, metadata = _header_columns(path)
    tensors = dict(zip(cols.names, map(RawTensor, *cols), strict=True))
    return FileHeader(where, n, size, tensors, metadata)


def read_file_columns(path: str | os.PathLike[str]) -> tuple[Columns, int]:
    """Like :func:`read_file_header`, but the tensors as :class:`Columns` (no per-tensor object).

    Returns:
        ``(columns, data_start)``: the validated tensors (names unique, in header order) and the
        absolute file offset of the data buffer.

    Raises:
        CheckpointFormatError: as :func:`read_file_header`.
    """
    _, n, _, cols, _ = _header_columns(path)
    return cols, 8 + n


def _u64(head: bytes) -> tuple[int]:
    return (int.from_bytes(head[:8], "little"),)
