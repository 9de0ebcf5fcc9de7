"""Read and validate safetensors headers without touching tensor data.

File layout (https://huggingface.co/docs/safetensors): 8-byte little-endian header length N, N
bytes of UTF-8 JSON ``{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {}}``,
then the data buffer. Offsets are relative to the data buffer; the buffer must be covered exactly,
without holes or overlaps (the same rule the safetensors library enforces).

Only ``8 + N`` bytes are read per file (``os.pread``); data is never read or mapped here. Files are
opened through :mod:`recipecli.safeio` (regular files only, never blocking).
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain
from operator import mul, sub
from typing import Any, NamedTuple

from recipecli.errors import CheckpointFormatError
from recipecli.safeio import loads_json, open_regular, pread_exact

#: Largest header accepted, in bytes. Real headers are < 10 MB (DeepSeek-V3 shards: ~0.1 MB). At
#: this cap a header holds at most about 1.5 million tensors (~70 bytes per entry).
MAX_HEADER_BYTES = 100 * 1024 * 1024
#: Largest header accepted when it is NOT in the safetensors library's compact layout (such
#: headers go through json.loads, ~10x the memory of the compact path): 16 MiB, about 230k
#: tensors, more than twice the tensors of any published checkpoint's largest shard.
MAX_LOOSE_HEADER_BYTES = 16 * 1024 * 1024

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
        return self.end - self.begin


_INT_TYPES = frozenset({int})


def _non_negative_ints(values: Any) -> bool:
    """True for a list of ints >= 0 (bools excluded); C-level checks, no generator."""
    return (
        isinstance(values, list)
        and set(map(type, values)) <= _INT_TYPES
        and (not values or min(values) >= 0)
    )


class Columns(NamedTuple):
    """A validated header as parallel lists (one entry per tensor, header order)."""

    names: list[str]
    dtypes: list[str]
    shapes: list[tuple[int, ...]]
    begins: list[int]
    ends: list[int]


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
        bits = DTYPE_BITS.get(dtype) if isinstance(dtype, str) else None
        if bits is None:
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


# ----------------------------------------------------------------------------- compact headers
# The safetensors library writes headers in one compact layout (serde_json, no whitespace, fields
# in the order dtype, shape, data_offsets, ``__metadata__`` first, spaces padding to 8 bytes):
#   {"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},...}
# For that layout (and no escapes in strings) the columns are cut out by C-level passes over the
# bytes instead of building one dict and two lists per tensor: a 100 MB header of 1.5 million
# tensors parses in ~2.9 s and ~500 MB peak on a loaded 2-core machine, against ~7 s and ~1.1 GB
# for json.loads alone (benchmarks/bench_header_15m.py). Anything else goes through json.loads and
# validate_entries, which accept the same headers (tests/checkpoint/test_hostile_read.py checks both agree).

_META_PREFIX = b'{"__metadata__":{'
#: fixed strings between the fields of an entry (they cannot occur inside a metadata string)
_KEYS = (b'":{"dtype":"', b'","shape":[', b'],"data_offsets":[', b']},"')
_INT = b"(?:0|[1-9][0-9]{0,17})"  # JSON integer of at most 18 digits: fits int64 (numpy)
_FIRST_NAME = re.compile(b'"([^"]*)":\\{"dtype":"')
_NAMES = re.compile(b'\\]\\},"([^"]*)":\\{"dtype":"')
#: dtype and shape of an entry, as ``DTYPE","shape":[DIMS``
_KINDS = re.compile(b'"dtype":"([A-Z0-9_]+","shape":\\[[0-9,]*)\\],"data_offsets":\\[')
_OFFSETS = re.compile(b'"data_offsets":\\[(' + _INT + b"," + _INT + b")\\]\\}")
_DIMS = re.compile(b"(?:" + _INT + b"(?:," + _INT + b")*)?")
#: every byte but the control characters, which JSON forbids raw in strings
_NOT_CONTROL = bytes(range(32, 256))
_BIG = 1 << 62


def _compact_metadata(raw: bytes) -> tuple[int, dict[str, str]] | None:
    """Parse a leading ``"__metadata__":{"k":"v",...}`` of a compact header.

    Returns:
        ``(pos, metadata)``: ``pos`` is the offset of the first tensor name's opening quote;
        None when the header does not start in the compact layout.
    """
    if not raw.startswith(_META_PREFIX):
        return (1, {}) if raw.startswith(b'{"') else None
    pos = len(_META_PREFIX)
    meta: dict[str, str] = {}
    if raw.startswith(b"}", pos):
        pos += 1
    else:
        while True:
            if not raw.startswith(b'"', pos):
                return None
            key_end = raw.find(b'"', pos + 1)
            if key_end < 0 or not raw.startswith(b':"', key_end + 1):
                return None
            value_end = raw.find(b'"', key_end + 3)
            if value_end < 0:
                return None
            try:
                key = raw[pos + 1 : key_end].decode("utf-8")
                meta[key] = raw[key_end + 3 : value_end].decode("utf-8")
            except UnicodeDecodeError:
                return None
            pos = value_end + 1
            if raw.startswith(b",", pos):
                pos += 1
            elif raw.startswith(b"}", pos):
                pos += 1
                break
            else:
                return None
    if not raw.startswith(b',"', pos):
        return None
    pos += 1
    if any(raw.find(key, 0, pos) >= 0 for key in _KEYS):
        return None  # a fixed string inside the metadata (a key named "dtype"): not handled here
    return pos, meta


def _tensor_span(raw: bytes) -> tuple[int, int, dict[str, str]] | None:
    """``(pos, end, metadata)`` of a compact header: the tensor part is ``raw[pos:end]`` (the
    padding spaces cut off); None when the header is not in the compact layout or holds an
    escape or a raw control byte."""
    if b"\\" in raw or raw.translate(None, _NOT_CONTROL):
        return None
    start = _compact_metadata(raw)
    if start is None:
        return None
    pos, meta = start
    end = len(raw)
    while end > pos and raw[end - 1] == 0x20 and len(raw) - end < 4096:  # padding spaces
        end -= 1
    if not raw.endswith(b"]}}", 0, end):
        return None
    return pos, end, meta


def _cut_fields(
    raw: bytes, pos: int, end: int
) -> tuple[list[bytes], list[bytes], list[bytes], int] | None:
    """``(names, kinds, offsets, quotes)`` of ``raw[pos:end]``: one ``findall`` per column and
    the number of quotes; None when the first entry is not ``"NAME":{"dtype":"``."""
    first = _FIRST_NAME.match(raw, pos)
    if first is None:
        return None
    raw_names = [first.group(1)]
    raw_names.extend(_NAMES.findall(raw, pos + 1, end))
    kinds = _KINDS.findall(raw, pos, end)
    offsets = _OFFSETS.findall(raw, pos, end)
    return raw_names, kinds, offsets, raw.count(b'"', pos, end)


def _decode_names(joined_names: bytes) -> list[str] | None:
    """The NUL-joined names as str, or None when they are not UTF-8."""
    try:
        return joined_names.decode("utf-8").split("\x00")
    except UnicodeDecodeError:
        return None


def _kind_tables(
    kinds: list[bytes],
) -> tuple[dict[bytes, str], dict[bytes, tuple[int, ...]], dict[bytes, int]] | None:
    """Per distinct ``DTYPE","shape":[DIMS`` field: its dtype, shape and byte count (-1 when
    dtype x shape does not fill whole bytes or is out of range); None for an unknown dtype or
    malformed dims."""
    dtype_of: dict[bytes, str] = {}
    shape_of: dict[bytes, tuple[int, ...]] = {}
    nbytes_of: dict[bytes, int] = {}
    for kind in set(kinds):
        dtype_b, _, shape_b = kind.partition(b'","shape":[')
        dtype = dtype_b.decode("ascii")
        if dtype not in DTYPE_BITS or not _DIMS.fullmatch(shape_b):
            return None
        shape = tuple(map(int, shape_b.split(b","))) if shape_b else ()
        bits = math.prod(shape) * DTYPE_BITS[dtype]
        dtype_of[kind] = sys.intern(dtype)
        shape_of[kind] = shape
        nbytes_of[kind] = bits >> 3 if bits % 8 == 0 and bits < _BIG else -1
    return dtype_of, shape_of, nbytes_of


def _offset_numbers(joined_offsets: bytes) -> Any:
    """``BEGIN,END,BEGIN,END,...`` as an int64 numpy array (C-level parse)."""
    import numpy as np  # the checkpoint package needs numpy anyway (decode_values)

    return np.fromstring(joined_offsets, dtype=np.int64, sep=",")


def _typed_columns(
    names: list[str],
    kinds: list[bytes],
    tables: tuple[dict[bytes, str], dict[bytes, tuple[int, ...]], dict[bytes, int]],
    numbers: Any,
    data_len: int | None,
) -> tuple[Columns, bool]:
    """``(columns, layout_ok)`` from the names, the kind field of each entry, the
    :func:`_kind_tables` of those kinds and the :func:`_offset_numbers` (two per entry)."""
    import numpy as np

    dtype_of, shape_of, nbytes_of = tables
    k = len(kinds)
    begins, ends = numbers[0::2], numbers[1::2]
    nbytes = np.fromiter(map(nbytes_of.__getitem__, kinds), dtype=np.int64, count=k)
    layout_ok = bool(
        begins[0] == 0
        and np.array_equal(ends - begins, nbytes)
        and np.array_equal(begins[1:], ends[:-1])
        and (data_len is None or ends[-1] == data_len)
    )
    cols = Columns(
        names,
        list(map(dtype_of.__getitem__, kinds)),
        list(map(shape_of.__getitem__, kinds)),
        begins.tolist(),
        ends.tolist(),
    )
    return cols, layout_ok


def _compact_columns(
    holder: list[bytes], data_len: int | None
) -> tuple[Columns, dict[str, str], bool] | None:
    """Typed columns of a compact-layout header, or None when it is not in that layout.

    Args:
        holder: a one-item list holding the header bytes; emptied once the columns are cut out
            (so the 100 MB of bytes can be freed early). When it is empty after a None return
            the caller reads the header again.
        data_len: size of the data buffer, or None when unknown.

    Returns:
        ``(columns, metadata, layout_ok)``: the columns are typed (dtypes known, shapes and
        offsets non-negative ints, names unique UTF-8); ``layout_ok`` tells whether the offsets
        span dtype x shape each and cover the data buffer exactly (when False,
        :func:`_check_columns` names the first bad tensor).

    How: the tensor part of a compact header is ``"`` NAME ``":{"dtype":"`` DTYPE
    ``","shape":[`` DIMS ``],"data_offsets":[`` BEGIN,END ``]}`` (``,"`` NAME ...)* ``}``. Each
    column is one ``findall`` whose pattern fixes the text around it and excludes quotes from the
    captured field; then two C-level counts prove nothing else is there: the quotes number
    exactly 10 per entry, and the matched fields plus the fixed strings add up to the exact
    length of the text, so no byte is left unmatched. Each big intermediate is deleted as soon
    as the next one is built (peak memory: benchmarks/bench_header_15m.py).
    """
    raw = holder[0]
    span = _tensor_span(raw)
    if span is None:
        return None
    pos, end, meta = span
    cut = _cut_fields(raw, pos, end)
    if cut is None:
        return None
    holder.clear()
    del raw
    raw_names, kinds, offsets, quotes = cut
    del cut
    k = len(kinds)
    if not len(raw_names) == len(offsets) == k or quotes != 10 * k:
        return None
    joined_names = b"\x00".join(raw_names)  # names hold no NUL (control bytes refused above)
    del raw_names
    joined_offsets = b",".join(offsets)
    del offsets
    fields = len(joined_names) + sum(map(len, kinds)) + len(joined_offsets) - 2 * (k - 1)
    if (end - pos) != 1 + fields + 32 * k + 2 * (k - 1) + 1:
        return None
    names = _decode_names(joined_names)
    del joined_names
    if names is None:
        return None
    if len(set(names)) != k:  # duplicate names: json.loads keeps the last; let it say so
        return None
    tables = _kind_tables(kinds)
    if tables is None:
        return None
    numbers = _offset_numbers(joined_offsets)
    del joined_offsets
    if len(numbers) != 2 * k:
        return None
    cols, layout_ok = _typed_columns(names, kinds, tables, numbers, data_len)
    return cols, meta, layout_ok


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

    Compact headers (the safetensors library's layout) take :func:`_compact_columns`; any other
    goes through ``json.loads`` and :func:`validate_entries`, which accept the same headers.
    """
    where, n, size, raw = _read_header_raw(path)
    data_len = size - 8 - n
    holder = [raw]
    del raw
    compact = _compact_columns(holder, data_len)
    if compact is not None:
        cols, meta, layout_ok = compact
        if not layout_ok:  # tensors out of file order, or a real error: the loop decides
            nbytes = _columns_nbytes(cols)
            if nbytes is None or not _layout_ok(cols.begins, cols.ends, nbytes, data_len):
                _check_columns(cols, where=where, data_len=data_len)  # raises for the first bad
        return where, n, size, cols, meta
    raw = holder[0] if holder else _read_header_raw(path)[3]
    del holder
    header = parse_header_bytes(raw, where=where)
    del raw
    if not isinstance(header, dict):
        raise CheckpointFormatError("safetensors header is not a JSON object", path=where)
    metadata = _string_metadata(header.get("__metadata__"), where)
    cols = _fast_columns(header, data_len)
    if cols is None:  # the entry loop names what is wrong (or accepts an unusual header)
        tensors, _ = validate_entries(header, where=where, data_len=data_len)
        raws = list(tensors.values())
        cols = Columns(
            list(tensors),
            [r.dtype for r in raws],
            [r.shape for r in raws],
            [r.begin for r in raws],
            [r.end for r in raws],
        )
    return where, n, size, cols, metadata


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
