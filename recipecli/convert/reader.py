"""Byte readers of a source checkpoint's tensors (safetensors ``pread``/``copy_file_range``,
``.bin`` through torch), never materialising a whole tensor."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from recipecli.checkpoint.model import Checkpoint
from recipecli.checkpoint.safetensors_header import read_file_header
from recipecli.convert.casts import CHUNK_BYTES
from recipecli.errors import ConvertError
from recipecli.hints import HF_DOWNLOAD


class TensorReader:
    """Reads byte ranges of one checkpoint's tensors without materialising whole tensors.

    safetensors: ``pread`` at the header offset (and ``copy_file_range`` for whole copies);
    ``.bin``: torch ``weights_only`` + ``mmap`` (torch imported only here), viewed as bytes.
    """

    def __init__(self, ck: Checkpoint):
        self.ck = ck
        self.root = Path(ck.root)
        self._fds: dict[str, int] = {}
        self._offsets: dict[str, tuple[str, int]] = {}
        #: tensor -> (absolute shard path, absolute data offset), safetensors sources only
        self.offsets: dict[str, tuple[str, int]] = {}
        self._states: dict[str, Mapping[str, Any]] = {}
        self._cached: tuple[str, memoryview] | None = None
        if ck.weight_format == "safetensors":
            for shard in ck.shards:
                header = read_file_header(self.root / shard)
                for name, raw in header.tensors.items():
                    self._offsets[name] = (shard, header.data_start + raw.begin)
                    self.offsets[name] = (str(self.root / shard), header.data_start + raw.begin)

    def _fd(self, shard: str) -> int:
        if shard not in self._fds:
            self._fds[shard] = os.open(self.root / shard, os.O_RDONLY)
        return self._fds[shard]

    def _bin_view(self, name: str) -> memoryview:
        if self._cached and self._cached[0] == name:
            return self._cached[1]
        import torch

        from recipecli.checkpoint.local import load_torch_state

        shard = self.ck.tensors[name].shard
        if shard not in self._states:
            self._states[shard] = load_torch_state(self.root / shard)
        t = self._states[shard][name].contiguous().reshape(-1).view(torch.uint8)
        view = memoryview(t.numpy()).cast("B")
        self._cached = (name, view)
        return view

    def read(self, name: str, offset: int, n: int, out: bytearray | None = None) -> Any:
        """``n`` bytes of tensor ``name`` starting at byte ``offset``.

        Args:
            out: reusable buffer; used (filled in place and returned) when it is exactly ``n``
                bytes long, so that comparisons are a plain ``memcmp`` of two bytearrays.

        Returns:
            A bytearray (safetensors sources) or a memoryview (``.bin`` sources, zero copy).
        """
        if name in self._offsets:
            shard, start = self._offsets[name]
            buf = out if out is not None and len(out) == n else bytearray(n)
            view = memoryview(buf)
            got = os.preadv(self._fd(shard), [view], start + offset)
            while got < n:  # short reads are legal
                more = os.preadv(self._fd(shard), [view[got:]], start + offset + got)
                if more <= 0:
                    raise ConvertError(
                        f"short read of tensor {name!r}", path=str(self.root / shard)
                    )
                got += more
            return buf
        if self.ck.weight_format == "bin":
            return self._bin_view(name)[offset : offset + n]
        return memoryview(self.ck.read_raw_bytes(name))[offset : offset + n]

    def copy_to(
        self, name: str, nbytes: int, dst_fd: int, on_chunk: Callable[[], None] | None = None
    ) -> bool:
        """Copy a whole tensor into ``dst_fd`` (at its position) in the kernel
        (``copy_file_range``, :data:`CHUNK_BYTES` per call, ``on_chunk()`` after each); False if
        unsupported (``dst_fd`` is then back where it was)."""
        if name not in self._offsets or not hasattr(os, "copy_file_range"):
            return False
        shard, start = self._offsets[name]
        done = 0
        try:
            while done < nbytes:
                step = min(CHUNK_BYTES, nbytes - done)
                n = os.copy_file_range(self._fd(shard), dst_fd, step, start + done)
                if n <= 0:
                    break
                done += n
                if on_chunk is not None:
                    on_chunk()
        except OSError:
            if done:
                os.lseek(dst_fd, -done, os.SEEK_CUR)
            return False
        if done != nbytes:
            os.lseek(dst_fd, -done, os.SEEK_CUR)
            return False
        return True

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        self._states.clear()
        self._cached = None


def open_reader(ck: Checkpoint) -> TensorReader:
    """A :class:`TensorReader` for a local checkpoint.

    Raises:
        ConvertError: the source has no local weight files (Hub, snapshot or bare config).
    """
    if ck.kind in ("local", "hf-cache") and ck.weight_format not in ("safetensors", "bin"):
        raise ConvertError(
            "the folder has no weight files (no model.safetensors, index or pytorch_model.bin "
            "next to config.json)",
            path=ck.source,
            hint=f"download the weights ({HF_DOWNLOAD}) into it",
        )
    if ck.kind not in ("local", "hf-cache"):
        raise ConvertError(
            f"convert needs the weights on local disk, but this is a {ck.kind} source",
            path=ck.source,
            hint=f"download it first ({HF_DOWNLOAD}) and pass DIR",
        )
    return TensorReader(ck)
