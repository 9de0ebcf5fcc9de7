"""Proving the output is the plan: reopened with the checkpoint reader, compared with the
source bit for bit (memory-mapped, on a background thread while later tensors are written),
and read back to the same meaning."""

from __future__ import annotations

import ctypes
import mmap
import os
import queue
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from recipecli.checkpoint.model import Checkpoint
from recipecli.checkpoint.safetensors_header import read_file_header
from recipecli.convert.casts import CHUNK_BYTES, VERIFY_CHUNK
from recipecli.convert.progress import Progress
from recipecli.convert.reader import TensorReader
from recipecli.convert.semantics import draft_semantics, semantic_diff
from recipecli.convert.tensors import TensorMove
from recipecli.convert.write import expected_chunks, output_layout
from recipecli.draft import canonical_draft
from recipecli.errors import ConvertError

if TYPE_CHECKING:
    from recipecli.convert.plan import ConvertPlan


class MappedFiles:
    """Read-only memory maps of whole files, handing out zero-copy numpy views of byte ranges.

    Views are released with ``MADV_DONTNEED`` after use, so the resident set stays at a few
    chunks although every byte of both checkpoints is read (the pages stay in the page cache).
    """

    def __init__(self) -> None:
        self._maps: dict[str, mmap.mmap] = {}
        self._lock = threading.Lock()

    def _map(self, path: str) -> mmap.mmap:
        with self._lock:
            if path not in self._maps:
                fd = os.open(path, os.O_RDONLY)
                try:
                    self._maps[path] = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
                finally:
                    os.close(fd)
            return self._maps[path]

    def view(self, path: str, offset: int, n: int) -> np.ndarray:
        """uint8 array over bytes [offset, offset + n) of ``path`` (no copy)."""
        return np.frombuffer(self._map(path), dtype=np.uint8, count=n, offset=offset)

    def release(self, path: str, offset: int, n: int) -> None:
        """Drop the pages of [offset, offset + n) from this process (not from the page cache)."""
        m = self._maps.get(path)
        if m is None or not hasattr(m, "madvise"):
            return
        start = offset // mmap.PAGESIZE * mmap.PAGESIZE
        length = (offset + n - start) // mmap.PAGESIZE * mmap.PAGESIZE
        if length > 0:
            m.madvise(mmap.MADV_DONTNEED, start, length)

    def close(self) -> None:
        for m in self._maps.values():
            try:
                m.close()
            except BufferError:  # a view is still alive; the map goes with it
                pass
        self._maps.clear()


def _libc_memcmp() -> Callable[[int, int, int], int] | None:
    """The C library's ``memcmp`` through ctypes (which lets go of the GIL while it runs, so the
    writer thread is not held up by the comparison), or None where there is no C library to
    load (Windows)."""
    try:
        fn = ctypes.CDLL(None).memcmp
    except (OSError, TypeError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    fn.restype = ctypes.c_int
    cmp: Callable[[int, int, int], int] = fn
    return cmp


_MEMCMP = _libc_memcmp()


def same_array(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-for-bit equality of two uint8 arrays: one ``memcmp`` of both buffers when they are
    contiguous (else numpy, compared as uint64 words when aligned)."""
    if a.shape != b.shape:
        return False
    if not a.size:
        return True
    contiguous = a.flags.c_contiguous and b.flags.c_contiguous
    if _MEMCMP is not None and contiguous and a.dtype == b.dtype == np.uint8:
        return _MEMCMP(a.ctypes.data, b.ctypes.data, a.size) == 0
    n = a.size - a.size % 8
    if n and a[:n].ctypes.data % 8 == 0 and b[:n].ctypes.data % 8 == 0:
        if not np.array_equal(a[:n].view(np.uint64), b[:n].view(np.uint64)):
            return False
        return bool(np.array_equal(a[n:], b[n:]))
    return bool(np.array_equal(a, b))


def verify_tensor(
    m: TensorMove,
    reader: TensorReader,
    src_maps: MappedFiles,
    out_maps: MappedFiles,
    out_at: tuple[str, int],
    derived: Mapping[str, bytes],
    buf: bytearray,
) -> int:
    """Compare output tensor ``m`` (at ``out_at`` = (file, offset)) with its source, bit for bit.

    Uncast safetensors tensors: both files memory-mapped, compared in :data:`VERIFY_CHUNK` slices.
    Cast or derived tensors: the expected bytes are recomputed from the source (the same
    :func:`cast_bytes`) and compared with the mapped output.

    Returns:
        Bytes compared.

    Raises:
        ConvertError: naming the tensor and the first differing byte range.
    """
    out_path, out_off = out_at

    def fail(off: int, n: int) -> ConvertError:
        return ConvertError(
            f"verification: tensor {m.dst} differs from source {m.src} in bytes [{off}, {off + n})",
            path=str(Path(out_path).parent),
            hint="the output was not kept; report this as a bug",
        )

    if not m.derived and m.src_dtype == m.dst_dtype and m.src in reader.offsets:
        src_path, src_off = reader.offsets[m.src]
        for off in range(0, m.nbytes, VERIFY_CHUNK):
            n = min(VERIFY_CHUNK, m.nbytes - off)
            a = src_maps.view(src_path, src_off + off, n)
            b = out_maps.view(out_path, out_off + off, n)
            if not same_array(a, b):
                raise fail(off, n)
            del a, b
            src_maps.release(src_path, src_off + off, n)
            out_maps.release(out_path, out_off + off, n)
        return m.nbytes
    for off, data in expected_chunks(m, reader, derived, buf):
        n = len(data)
        b = out_maps.view(out_path, out_off + off, n)
        if not same_array(np.frombuffer(data, dtype=np.uint8), b):
            raise fail(off, n)
        del b
        out_maps.release(out_path, out_off + off, n)
    return m.nbytes


def verify_reopened(plan: ConvertPlan, tmp: Path) -> Checkpoint:
    """Reopen ``tmp`` with the checkpoint reader and check it is the plan: the same tensor set,
    dtypes, shapes and data offsets (so the bytes compared are the bytes a loader reads), and the
    same meaning (:func:`draft_semantics`, only the planned translations differ from the source).

    Raises:
        ConvertError: any difference.
    """
    from recipecli.checkpoint import open_checkpoint

    out_ck: Checkpoint = open_checkpoint(str(tmp))
    want = {m.dst: m for m in plan.moves}
    got = set(out_ck.tensors)
    if got != set(want):
        raise ConvertError(
            f"verification: output tensors differ from the plan (missing {sorted(set(want) - got)[:3]}, "
            f"extra {sorted(got - set(want))[:3]})",
            path=str(tmp),
        )
    layout = output_layout(plan)
    headers = {shard: read_file_header(tmp / shard) for shard in out_ck.shards}
    for m in plan.moves:
        info = out_ck.tensors[m.dst]
        if (info.dtype, tuple(info.shape)) != (m.dst_dtype, m.shape):
            raise ConvertError(
                f"verification: {m.dst} is {info.dtype} {list(info.shape)}, expected "
                f"{m.dst_dtype} {list(m.shape)}",
                path=str(tmp),
            )
        h = headers[info.shard]
        if (info.shard, h.data_start + h.tensors[m.dst].begin) != layout[m.dst]:
            raise ConvertError(
                f"verification: {m.dst} is not where it was written", path=str(tmp / info.shard)
            )
    # every output format writes norm_output in the chaining meaning (translate.resolve_norm_output),
    # whatever the format the output detects as (eagle3 output detects as SpecForge's B)
    got_sem = draft_semantics(canonical_draft(out_ck), norm_output_meaning="post-norm-chaining")
    diff = semantic_diff(plan.expected, got_sem)
    if diff:
        raise ConvertError(
            "verification: the output draft means something else than the source: "
            + "; ".join(f"{k} {a!r} -> {b!r}" for k, (a, b) in diff.items()),
            path=str(tmp),
            hint="the output was not kept; report this as a bug",
        )
    return out_ck


class Verifier:
    """Compares tensors with the source on a background thread while later ones are written.

    ``submit(move)`` after a tensor is written; ``finish()`` waits and re-raises the first
    mismatch. Memory: two mapped :data:`VERIFY_CHUNK` slices (plus one cast chunk) at a time.
    """

    def __init__(self, plan: ConvertPlan, reader: TensorReader, tmp: Path, progress: bool):
        self.plan, self.reader, self.tmp = plan, reader, tmp
        self.layout = output_layout(plan)
        self.src_maps, self.out_maps = MappedFiles(), MappedFiles()
        self.queue: queue.Queue[TensorMove | None] = queue.Queue()
        self.error: BaseException | None = None
        self.compared = 0
        self.bar = Progress(plan.total_bytes, "convert: verify", progress)
        self.thread = threading.Thread(target=self._run, name="recipecli-verify", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        buf = bytearray(CHUNK_BYTES)
        while True:
            m = self.queue.get()
            if m is None:
                return
            if self.error is not None:
                continue
            try:
                shard, off = self.layout[m.dst]
                n = verify_tensor(
                    m,
                    self.reader,
                    self.src_maps,
                    self.out_maps,
                    (str(self.tmp / shard), off),
                    self.plan.derived,
                    buf,
                )
                self.compared += n
                self.bar.update(n)
            except BaseException as exc:  # handed to the writer thread
                self.error = exc

    def submit(self, m: TensorMove) -> None:
        """Queue ``m`` for comparison; raises at once if an earlier tensor already differed."""
        if self.error is not None:
            raise self.error
        self.queue.put(m)

    def finish(self) -> int:
        """Wait for every queued tensor; returns bytes compared or raises the first mismatch."""
        self.queue.put(None)
        self.thread.join()
        self.bar.close()
        self.src_maps.close()
        self.out_maps.close()
        if self.error is not None:
            raise self.error
        return self.compared
