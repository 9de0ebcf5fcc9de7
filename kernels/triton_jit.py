"""``triton.jit`` with a type mypy can read: the kernels stay typed (issue #23).

Triton ships no type information (no ``py.typed``; pyproject's ``ignore_missing_imports`` makes
``triton`` ``Any``), so a bare ``@triton.jit`` would make every kernel and helper an untyped
function (mypy's ``untyped-decorator``). :func:`jit` *is* ``triton.jit``: it returns the very
``JITFunction`` (``InterpretedFunction`` under ``TRITON_INTERPRET=1``) that ``triton.jit``
returns, so compilation, specialisation, caching and ``torch.library.wrap_triton`` see exactly
what they saw before. Only its declared type differs: a :class:`JITKernel` that keeps the
decorated function's parameters for device-side calls from other kernels and gives
``kernel[grid](...)`` for launches.

How the device code is annotated (:mod:`.rmsnorm_kernels`): every runtime argument, pointer or
scalar, is a ``tl.tensor`` inside a kernel (Triton's type of all non-constexpr values); constexpr
parameters are ``tl.constexpr`` (Triton recognises them by that annotation). Python scalar types
are *not* used on kernel parameters: Triton reads ``int`` as a forced ``i32`` and ``float`` as an
unspecialised ``fp32`` (``triton/runtime/jit.py``, ``KernelParam.annotation_type``), which would
change the compiled signatures. ``tl`` is ``Any`` to mypy, so these annotations document rather
than check; mypy still checks every call's arity and keywords against the decorated signature.

Also here: :class:`CompiledKernel`, what a direct launch reads of the kernel Triton compiled.

Imports triton only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, Protocol, TypeGuard, TypeVar, cast

import triton

__all__ = ["CompiledKernel", "Grid", "JITKernel", "is_compiled", "jit"]

P = ParamSpec("P")
R_co = TypeVar("R_co", covariant=True)

#: A launch grid: programs along up to three axes.
Grid = tuple[int] | tuple[int, int] | tuple[int, int, int]


class JITKernel(Protocol[P, R_co]):
    """What the kernels' callers use of a Triton ``JITFunction``.

    ``kernel(...)``: a call from inside another ``@jit`` function (device code), with the
    decorated function's parameters; ``kernel[grid](*args, **constexprs, num_warps=...)``: a
    launch from the host, returning Triton's compiled kernel (``CompiledKernel``; ``None`` under
    the interpreter), whose attributes the caller checks before use.
    """

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R_co: ...

    def __getitem__(self, grid: Grid) -> Callable[..., object]: ...


def jit(fn: Callable[P, R_co]) -> JITKernel[P, R_co]:
    """``triton.jit(fn)``, typed: the returned object is Triton's own ``JITFunction``.

    Args:
        fn: a Triton kernel or device helper (module level, source available to ``inspect``).

    Returns:
        Triton's ``JITFunction`` for ``fn`` (``InterpretedFunction`` when ``TRITON_INTERPRET=1``
        at decoration time), typed as :class:`JITKernel` with ``fn``'s parameters.
    """
    return cast("JITKernel[P, R_co]", triton.jit(fn))


class CompiledKernel(Protocol):
    """What :class:`~.rmsnorm_triton.Launch` reads of Triton's ``CompiledKernel``
    (``triton/compiler/compiler.py``): the launcher, the loaded CUDA function handle and the
    packed metadata the launcher takes."""

    run: Callable[..., object]
    function: object
    packed_metadata: object


def is_compiled(launched: object) -> TypeGuard[CompiledKernel]:
    """True when a launch returned a compiled kernel that can be launched directly (``run`` and
    ``packed_metadata``; the interpreter's launches return None)."""
    return hasattr(launched, "run") and hasattr(launched, "packed_metadata")
