"""The direct launch of the fused-norm kernels (:class:`Launch`) and the split reduction's scratch.

A :class:`Launch` holds everything of one kernel launch but the tensors' addresses and the
epsilons; after the first call of a specialisation it calls the compiled kernel's C launcher
directly (:data:`FAST_LAUNCH`). Launches whose rows are split over several programs
(``SPLIT > 1``, :func:`.rmsnorm_kernels._rms_split`) get an fp32 partial-sum buffer and an int32
counter per row segment, one pair per CUDA stream (two streams never share a counter), zeroed
once and left zeroed by every launch; the buffers are never freed (a captured CUDA graph keeps
their addresses). Imports triton; torch lazily (streams, scratch allocation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import triton

from .rmsnorm_kernels import INTERPRETED
from .rmsnorm_types import DualConsts, GroupedConsts, LaunchTensor
from .triton_jit import JITKernel, is_compiled

__all__ = ["FAST_LAUNCH", "Launch"]

#: Call the compiled launcher directly once a specialisation has been compiled (False: always go
#: through ``kernel[grid](...)``, e.g. to compare the two).
FAST_LAUNCH: bool = True


_RAW_STREAM: Callable[[int], int] | None = None


def _stream(device_index: int) -> int:
    """The current CUDA stream of a device as a raw handle (torch's, as Triton itself uses)."""
    global _RAW_STREAM
    if _RAW_STREAM is None:
        import torch

        _RAW_STREAM = torch._C._cuda_getCurrentRawStream
    return _RAW_STREAM(device_index)


_RUNTIME_KNOBS: Any = getattr(getattr(triton, "knobs", None), "runtime", None)


def _enter_hook() -> object:
    """Triton's launch-enter hook when one is installed (a profiler), else None.

    Triton 3.6 keeps the hooks in a ``HookChain`` that is never None: it counts as installed
    only when it holds calls.
    """
    if _RUNTIME_KNOBS is None:
        return None
    hook = _RUNTIME_KNOBS.launch_enter_hook
    if hook is not None and not getattr(hook, "calls", True):
        return None
    return hook


#: Triton releases whose C launcher signature :class:`Launch` calls directly (checked against
#: ``triton/backends/nvidia/driver.py`` of 3.6: ``launch(gridX, gridY, gridZ, stream, function,
#: launch_cooperative_grid, launch_pdl, global_scratch, profile_scratch, packed_metadata,
#: launch_metadata, enter_hook, exit_hook, *args)``); others go through ``CompiledKernel.run``.
_DIRECT_C_LAUNCH = ("3.6.",)

#: A compiled specialisation (``CompiledKernel.run``, ``.function``, ``.packed_metadata``), and
#: the hot path's (launcher, function, cooperative-grid flag, PDL flag, packed metadata).
_Hit = tuple[Callable[..., object], object, object]
_Fast = tuple[Callable[..., object], object, object, object, object]


#: Every split-reduction scratch pair ever allocated (kept alive: CUDA graphs hold addresses).
_SCRATCH_KEPT: list[tuple[Any, Any]] = []
_NO_SCRATCH = (0, 0)


def _new_scratch(device_index: int, slots: int, split: int) -> tuple[Any, Any]:
    """(fp32 [slots * split] partial sums, int32 [slots] counters), zeroed, on the device."""
    import torch

    dev = torch.device("cuda", device_index)
    pair = (torch.zeros(slots * split, dtype=torch.float32, device=dev),
            torch.zeros(slots, dtype=torch.int32, device=dev))  # fmt: skip
    _SCRATCH_KEPT.append(pair)
    return pair


class Launch:
    """One kernel launch with everything fixed but the tensors' addresses and the epsilons.

    ``Launch(...)(ptrs, eps)`` launches ``kernel`` on ``(grid0,)`` with arguments
    ``ptrs (+ padding) + static + eps`` and the constexprs ``consts``. The first call for a
    given 16-byte alignment of the pointers goes through ``kernel[grid](...)`` (Triton compiles
    or finds the specialisation); later calls pass the addresses straight to the compiled
    kernel's launcher (:data:`FAST_LAUNCH`), skipping Triton's per-call argument binding,
    specialisation and launch-metadata dict. Under the interpreter, on host tensors, or while
    a Triton launch hook is installed (profilers), every call goes through ``kernel[grid](...)``.

    ``n_pad`` trailing pointer parameters are never dereferenced (unused grouped weights): the
    slow path repeats ``ptrs[pad_src]`` for them, the direct launch passes 0. Then come the split
    reduction's two scratch pointers: the current stream's pair when ``slots`` > 0 (the
    launch's ``SPLIT`` > 1), else never dereferenced (``ptrs[0]`` / 0).

    Attributes:
        grid0: programs launched; num_warps; consts: the constexprs (signature order).
    """

    __slots__ = ("kernel", "grid0", "static", "consts", "cvals", "opts", "dev", "_compiled",
                 "_fast", "n_pad", "pad_src", "_zeros", "out_shape", "slots", "split", "_scr",
                 "_scr_t")  # fmt: skip

    def __init__(self, kernel: JITKernel[..., None], grid0: int, static: tuple[int | float, ...],
                 consts: DualConsts | GroupedConsts, num_warps: int, pdl: bool, device_index: int,
                 n_pad: int = 0, pad_src: int = 0, slots: int = 0,
                 split: int = 1) -> None:  # fmt: skip
        self.kernel, self.grid0, self.static, self.consts = kernel, grid0, static, consts
        self.cvals = tuple(consts.values())
        self.opts: dict[str, int] = {"num_warps": num_warps,
                                     **({"launch_pdl": True} if pdl else {})}  # fmt: skip
        self.dev = device_index
        self._compiled: dict[tuple[bool, ...], _Hit] = {}
        self._fast: _Fast | None = None
        self.n_pad, self.pad_src, self._zeros = n_pad, pad_src, (0,) * n_pad
        self.out_shape: tuple[int, int] | None = None
        self.slots, self.split = slots, split
        self._scr: dict[int, tuple[int, int]] = {}
        self._scr_t: dict[int, tuple[Any, Any]] = {}

    def _scratch(self, stream: int) -> tuple[int, int]:
        """The split scratch's addresses on ``stream`` ((0, 0) when the rows are not split)."""
        if not self.slots:
            return _NO_SCRATCH
        hit = self._scr.get(stream)
        if hit is None:
            pair = self._scr_t[stream] = _new_scratch(self.dev, self.slots, self.split)
            hit = self._scr[stream] = (pair[0].data_ptr(), pair[1].data_ptr())
        return hit

    @property
    def num_warps(self) -> int:
        return self.opts["num_warps"]

    def __call__(self, ptrs: tuple[LaunchTensor, ...], eps: tuple[float, ...]) -> None:
        fast = self._fast
        if fast is not None:
            addrs = [p.data_ptr() for p in ptrs]
            ored = 0
            for a in addrs:
                ored |= a
            if not ored & 15 and _enter_hook() is None:
                launch, function, coop, pdl, meta = fast
                st = _stream(self.dev)
                launch(self.grid0, 1, 1, st, function, coop, pdl, None, None, meta, None, None,
                       None, *addrs, *self._zeros, *self._scratch(st), *self.static, *eps,
                       *self.cvals)  # fmt: skip
                return
        self._slow(ptrs, eps)

    def dual(self, a: LaunchTensor, b: LaunchTensor, w1: LaunchTensor, w2: LaunchTensor,
             out: LaunchTensor, eps1: float, eps2: float) -> None:  # fmt: skip
        """The dual kernel's hot path: ``self((a, b, w1, w2, out, out), (eps1, eps2))`` with
        out2 = out1 + d1 columns (``o2_off``), without building tuples first."""
        fast = self._fast
        if fast is not None:
            pa, pb, p1, p2, po = (a.data_ptr(), b.data_ptr(), w1.data_ptr(), w2.data_ptr(),
                                  out.data_ptr())  # fmt: skip
            if not (pa | pb | p1 | p2 | po) & 15 and _enter_hook() is None:
                launch, function, coop, pdl, meta = fast
                st = _stream(self.dev)
                sp, sc = self._scratch(st) if self.slots else _NO_SCRATCH
                launch(self.grid0, 1, 1, st, function, coop, pdl, None, None, meta, None, None,
                       None, pa, pb, p1, p2, po, po, sp, sc, *self.static, eps1, eps2,
                       *self.cvals)  # fmt: skip
                return
        self._slow((a, b, w1, w2, out, out), (eps1, eps2))

    def _slow(self, ptrs: tuple[LaunchTensor, ...], eps: tuple[float, ...]) -> None:
        full = ptrs + (ptrs[self.pad_src],) * self.n_pad + self._scratch_tensors(ptrs[0])
        if INTERPRETED or self.dev < 0 or not FAST_LAUNCH or _enter_hook() is not None:
            self.kernel[(self.grid0,)](*full, *self.static, *eps, **self.consts, **self.opts)
            return
        addrs = [p.data_ptr() for p in ptrs]
        align = tuple([a & 15 == 0 for a in addrs])
        hit = self._compiled.get(align)
        if hit is None:
            compiled = self.kernel[(self.grid0,)](
                *full, *self.static, *eps, **self.consts, **self.opts
            )
            if is_compiled(compiled):
                hit = self._compiled[align] = (compiled.run, compiled.function,
                                               compiled.packed_metadata)  # fmt: skip
                if all(align):
                    self._fast = self._direct(*hit)
            return
        run, function, meta = hit
        st = _stream(self.dev)
        run(self.grid0, 1, 1, st, function, meta, None, None, None,
            *addrs, *self._zeros, *self._scratch(st), *self.static, *eps, *self.cvals)  # fmt: skip

    def _scratch_tensors(self, dummy: LaunchTensor) -> tuple[Any, ...]:
        """The scratch pair as tensors for ``kernel[grid](...)`` (``dummy`` twice if unsplit)."""
        if not self.slots:
            return (dummy, dummy)
        st = _stream(self.dev)
        self._scratch(st)
        return self._scr_t[st]

    @staticmethod
    def _direct(run: Callable[..., object], function: object, meta: object) -> _Fast:
        """(launch, function, coop, pdl, meta) for the hot path: the C launcher itself when this
        Triton's is known and needs no scratch memory, else a shim with the same signature."""
        c_launch = getattr(run, "launch", None)
        if (
            triton.__version__.startswith(_DIRECT_C_LAUNCH)
            and c_launch is not None
            and not getattr(run, "global_scratch_size", 1)
            and not getattr(run, "profile_scratch_size", 1)
            and hasattr(run, "launch_cooperative_grid")
            and hasattr(run, "launch_pdl")
        ):
            return (c_launch, function, run.launch_cooperative_grid, run.launch_pdl, meta)

        def shim(gx: int, gy: int, gz: int, stream: int, fn: object, _coop: object, _pdl: object,
                 _gs: object, _ps: object, *rest: object) -> None:  # fmt: skip
            run(gx, gy, gz, stream, fn, *rest)

        return (shim, function, None, None, meta)
