"""The fast path for headers in the safetensors library's compact layout.

The safetensors library writes headers in one compact layout (serde_json, no whitespace, fields
in the order dtype, shape, data_offsets, ``__metadata__`` first, spaces padding to 8 bytes)::

    {"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},...}

For that layout (and no escapes in strings) the columns are cut out by C-level passes over the
bytes instead of building one dict and two lists per tensor: a 100 MB header of 1.5 million
tensors parses in ~2.9 s and ~500 MB peak on a loaded 2-core machine, against ~7 s and ~1.1 GB
for json.loads alone (benchmarks/bench_header_15m.py). Anything else goes through json.loads and
:func:`recipecli.checkpoint.safetensors_header.validate_entries`, which accept the same headers
(tests/checkpoint/test_hostile_read.py checks both agree).
"""

from __future__ import annotations

import math
import re
import sys
from typing import TYPE_CHECKING

from recipecli.checkpoint.safetensors_format import DTYPE_BITS, Columns

if TYPE_CHECKING:  # numpy is imported on use (the parse is its first user in a command)
    import numpy as np
    from numpy.typing import NDArray

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


def _kind_tables(kinds: list[bytes]) -> KindTables | None:
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


#: per distinct kind field: its dtype, its shape and its byte count (:func:`_kind_tables`)
KindTables = tuple[dict[bytes, str], dict[bytes, tuple[int, ...]], dict[bytes, int]]


def _offset_numbers(joined_offsets: bytes) -> NDArray[np.int64]:
    """``BEGIN,END,BEGIN,END,...`` as an int64 numpy array (C-level parse)."""
    import numpy as np  # the checkpoint package needs numpy anyway (decode_values)

    return np.fromstring(joined_offsets, dtype=np.int64, sep=",")


def _typed_columns(
    names: list[str],
    kinds: list[bytes],
    tables: KindTables,
    numbers: NDArray[np.int64],
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


def _joined_fields(holder: list[bytes]) -> tuple[bytes, list[bytes], bytes, dict[str, str]] | None:
    """Cut the columns out of the header bytes in ``holder[0]`` and prove nothing else is there:
    ``(NUL-joined names, kind fields, comma-joined offsets, metadata)``, or None when the header
    is not in the compact layout. Empties ``holder`` once the columns are cut out.

    The tensor part of a compact header is ``"`` NAME ``":{"dtype":"`` DTYPE ``","shape":[``
    DIMS ``],"data_offsets":[`` BEGIN,END ``]}`` (``,"`` NAME ...)* ``}``. Each column is one
    ``findall`` whose pattern fixes the text around it and excludes quotes from the captured
    field; then two C-level counts prove nothing else is there: the quotes number exactly 10 per
    entry, and the matched fields plus the fixed strings add up to the exact length of the text,
    so no byte is left unmatched.
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
    return joined_names, kinds, joined_offsets, meta


def compact_columns(
    holder: list[bytes], data_len: int | None
) -> tuple[Columns, dict[str, str], bool] | None:
    """Typed columns of a compact-layout header, or None when it is not in that layout.

    Args:
        holder: a one-item list holding the header bytes; emptied once the columns are cut out
            (so the 100 MB of bytes can be freed early). When it is empty after a None return
            the caller reads the header again.
        data_len: size of the data buffer in bytes, or None when unknown.

    Returns:
        ``(columns, metadata, layout_ok)``: the columns are typed (dtypes known, shapes and
        offsets non-negative ints, names unique UTF-8); ``layout_ok`` tells whether the offsets
        span dtype x shape each and cover the data buffer exactly (when False,
        :func:`recipecli.checkpoint.safetensors_header._check_columns` names the first bad
        tensor).

    How: :func:`_joined_fields` cuts the columns out, then names, dtypes and shapes, and offsets
    are decoded one C-level pass each. Each big intermediate is deleted as soon as the next one
    is built (peak memory: benchmarks/bench_header_15m.py).
    """
    joined = _joined_fields(holder)
    if joined is None:
        return None
    joined_names, kinds, joined_offsets, meta = joined
    del joined
    k = len(kinds)
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
