"""Writing the output: safetensors shards tensor by tensor (kernel copies or chunked casts),
the index and ``config.json``, into a temporary directory with plain file modes."""

from __future__ import annotations

import ctypes
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recipecli.convert.casts import CAST_CHUNK_BYTES, CHUNK_BYTES, ITEMSIZE, cast_bytes
from recipecli.convert.progress import Progress
from recipecli.convert.reader import TensorReader
from recipecli.convert.tensors import TensorMove
from recipecli.errors import UsageError
from recipecli.safe_write import current_umask, fsync_dir

if TYPE_CHECKING:
    from recipecli.convert.plan import ConvertPlan


#: Modes of what convert creates, before the umask (``mkdtemp`` would leave 0700).
DIR_MODE = 0o755


FILE_MODE = 0o644


#: bytes written before the kernel is asked to start writing them back (``sync_file_range``)
WRITEBACK_BYTES = 16 << 20


#: ``SYNC_FILE_RANGE_WRITE`` of ``<linux/fs.h>``: start writeback of dirty pages, do not wait
_SYNC_FILE_RANGE_WRITE = 2


def _sync_file_range() -> Callable[[int, int, int, int], int] | None:
    """libc's ``sync_file_range(2)`` (Linux only; Python has no binding), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    fn.restype = ctypes.c_int
    start: Callable[[int, int, int, int], int] = fn
    return start


_START_WRITEBACK = _sync_file_range()


class Writeback:
    """Starts the kernel's writeback of a shard while later bytes are still being written.

    Every :data:`WRITEBACK_BYTES` written, ``sync_file_range(SYNC_FILE_RANGE_WRITE)`` is issued
    for the bytes written since the last one: it only queues the dirty pages for the disk and
    never waits, so the disk writes while the copy goes on and the final ``fsync`` (which stays,
    and is what makes the data durable) finds little left. Without the call (not Linux, or
    ``enabled=False``, as when the caller will not fsync) it does nothing. A failed call is
    ignored: it is a hint, and a real I/O error is reported by that ``fsync``.
    """

    def __init__(self, fd: int, enabled: bool) -> None:
        self.fd = fd
        self.done = 0  # bytes [0, done) already handed to writeback
        self.start = _START_WRITEBACK if enabled else None

    def poke(self) -> None:
        """Hand the bytes written since the last call to writeback once they reach
        :data:`WRITEBACK_BYTES` (the position is read from ``fd``)."""
        if self.start is None:
            return
        pos = os.lseek(self.fd, 0, os.SEEK_CUR)
        if pos - self.done >= WRITEBACK_BYTES:
            self.start(self.fd, self.done, pos - self.done, _SYNC_FILE_RANGE_WRITE)
            self.done = pos


def _chunk_elems(m: TensorMove) -> int:
    return max(
        1, CAST_CHUNK_BYTES // max(ITEMSIZE.get(m.src_dtype, 1), ITEMSIZE.get(m.dst_dtype, 1))
    )


def expected_chunks(
    m: TensorMove, reader: TensorReader, derived: Mapping[str, bytes], buf: bytearray
) -> Iterator[tuple[int, Any]]:
    """(output byte offset, expected output bytes) of ``m``, chunk by chunk.

    Uncast tensors are cut into :data:`CHUNK_BYTES` pieces; cast tensors into whole elements.
    """
    if m.derived:
        yield 0, derived[m.dst]
        return
    if m.src_dtype == m.dst_dtype:
        for off in range(0, m.nbytes, CHUNK_BYTES):
            yield off, reader.read(m.src, off, min(CHUNK_BYTES, m.nbytes - off), buf)
        return
    si, di = ITEMSIZE[m.src_dtype], ITEMSIZE[m.dst_dtype]
    numel = m.nbytes // di
    step = _chunk_elems(m)
    for e in range(0, numel, step):
        k = min(step, numel - e)
        raw = reader.read(m.src, e * si, k * si, buf)
        yield e * di, cast_bytes(raw, m.src_dtype, m.dst_dtype)


def safetensors_header(moves: Sequence[TensorMove]) -> bytes:
    """The 8-byte length + JSON header (space-padded to 8 bytes) of one output shard."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    off = 0
    for m in moves:
        header[m.dst] = {
            "dtype": m.dst_dtype,
            "shape": list(m.shape),
            "data_offsets": [off, off + m.nbytes],
        }
        off += m.nbytes
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    return len(raw).to_bytes(8, "little") + raw


def _write_all(fd: int, data: Any) -> None:
    view = memoryview(data).cast("B")
    while view:
        n = os.write(fd, view)
        view = view[n:]


def write_tensor(
    m: TensorMove,
    fd: int,
    reader: TensorReader,
    derived: Mapping[str, bytes],
    buf: bytearray,
    progress: Progress,
    writeback: Writeback | None = None,
) -> None:
    """Write tensor ``m`` at ``fd``'s position: a kernel copy when uncast, else chunked casts.

    ``writeback`` (when given) is poked after every chunk, so the disk writes behind the copy.
    """
    poke = writeback.poke if writeback is not None else None
    if not m.derived and m.src_dtype == m.dst_dtype and reader.copy_to(m.src, m.nbytes, fd, poke):
        progress.update(m.nbytes)
        return
    for _off, data in expected_chunks(m, reader, derived, buf):
        _write_all(fd, data)
        progress.update(len(data))
        if poke is not None:
            poke()


def output_layout(plan: ConvertPlan) -> dict[str, tuple[str, int]]:
    """Output tensor -> (shard, absolute file offset of its data), as :func:`safetensors_header`
    lays the shards out."""
    layout: dict[str, tuple[str, int]] = {}
    shards: dict[str, list[TensorMove]] = {}
    for m in plan.moves:
        shards.setdefault(m.shard, []).append(m)
    for shard, moves in shards.items():
        pos = len(safetensors_header(moves))
        for m in moves:
            layout[m.dst] = (shard, pos)
            pos += m.nbytes
    return layout


def write_output(
    plan: ConvertPlan,
    reader: TensorReader,
    tmp: Path,
    *,
    progress: bool = True,
    fsync: bool = True,
    on_written: Callable[[TensorMove], None] | None = None,
    start_writeback: bool = False,
) -> list[str]:
    """Write ``config.json``, the shards and (for several shards) the index into ``tmp``.

    Each shard is sized to its final length first (so it can be memory-mapped while being
    written), then filled tensor by tensor; ``on_written(move)`` is called after each tensor.
    ``start_writeback`` (or ``fsync``) hands the written bytes to the disk as the copy goes on
    (:class:`Writeback`) for a caller that fsyncs the shards afterwards.

    Returns:
        Shard file names in order.
    """
    shards: dict[str, list[TensorMove]] = {}
    for m in plan.moves:
        shards.setdefault(m.shard, []).append(m)
    bar = Progress(plan.total_bytes, "convert: write", progress)
    buf = bytearray(CHUNK_BYTES)
    try:
        for shard, moves in shards.items():
            fd = os.open(tmp / shard, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                header = safetensors_header(moves)
                os.ftruncate(fd, len(header) + sum(m.nbytes for m in moves))
                _write_all(fd, header)
                wb = Writeback(fd, start_writeback or fsync)
                for m in moves:
                    write_tensor(m, fd, reader, plan.derived, buf, bar, writeback=wb)
                    if on_written is not None:
                        on_written(m)
                if fsync:
                    os.fsync(fd)
            finally:
                os.close(fd)
    finally:
        bar.close()
    if len(shards) > 1:
        index = {
            "metadata": {"total_size": plan.total_bytes},
            "weight_map": {m.dst: m.shard for m in plan.moves},
        }
        write_new_file(tmp / "model.safetensors.index.json", json.dumps(index, indent=2) + "\n")
    write_new_file(tmp / "config.json", json.dumps(plan.config, indent=2) + "\n")
    return list(shards)


def write_new_file(path: Path, text: str) -> None:
    """Create ``path`` (must not exist) holding ``text`` in UTF-8, mode ``0o644 & ~umask``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def fsync_tree(root: Path) -> None:
    """fsync every file directly under ``root``, then ``root`` itself."""
    for p in sorted(root.iterdir()):
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    fsync_dir(root)


def make_temp_out(out: Path) -> Path:
    """Create the temporary directory next to ``out`` that becomes ``out`` after verification,
    with the mode a plain ``mkdir`` gives (``0o755 & ~umask``), not ``mkdtemp``'s 0700.

    Raises:
        UsageError: the directory cannot be created (read-only or virtual file system, …).
    """
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    except OSError as exc:
        raise UsageError(
            f"cannot write OUT: {exc.strerror or exc}", path=str(out), hint="give another OUT"
        ) from None
    os.chmod(tmp, DIR_MODE & ~current_umask())
    return tmp
