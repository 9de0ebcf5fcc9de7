"""The kernels' signatures as Triton reads them, against what the launchers pass (no GPU needed).

The direct launch (:class:`recipecli.kernels.rmsnorm_triton.Launch`) passes the runtime arguments
and the constexpr values positionally, so the constexpr dicts must list the kernel's constexpr
parameters in signature order, and the runtime arguments must be as many as the kernel takes.
The parameter lists below are read off ``kernels/rmsnorm_kernels.py`` by hand. Triton's own
``KernelParam`` (``triton/runtime/jit.py``) decides from each annotation whether a parameter is a
constexpr and whether its type is forced: ``tl.tensor`` must force nothing (Triton specialises on
the value, as for an unannotated parameter), ``tl.constexpr`` must make a constexpr.
"""

import inspect
import os
import subprocess
import sys

# as test_kernels.py: the kernel modules are imported once per process, under the interpreter
os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402

triton = pytest.importorskip("triton")

from recipecli.kernels import rmsnorm_kernels as RK  # noqa: E402
from recipecli.kernels import rmsnorm_triton as K  # noqa: E402
from recipecli.kernels.rmsnorm_types import DualConsts, GroupedConsts  # noqa: E402
from recipecli.kernels.triton_jit import jit  # noqa: E402

# Read off _dual_rmsnorm_kernel's and _grouped_rmsnorm_kernel's signatures.
DUAL_RUNTIME = ["a_ptr", "b_ptr", "w1_ptr", "w2_ptr", "o1_ptr", "o2_ptr", "part_ptr", "cnt_ptr",
                "n_rows", "n_tiles",
                "o2_off", "stride_a", "stride_b", "stride_o1", "stride_o2", "d1", "d2", "d1_f",
                "d2_f", "eps1", "eps2"]  # fmt: skip
DUAL_CONSTEXPR = ["ROWS", "BLOCK1", "TAIL1", "BLOCK2", "TAIL2", "CHUNK", "SPLIT", "HF_ORDER", "RNE_BF16",
                  "SEG_MAJOR", "STORE_CS", "X_EVICT", "PERSISTENT", "O2_IN_O1", "PDL"]  # fmt: skip
GROUPED_RUNTIME = ["x_ptr", "o_ptr", *[f"w{i}" for i in range(8)], "part_ptr", "cnt_ptr", "n_rows", "n_tiles", "stride_x",
                   "stride_o", "chunk_stride_x", "chunk_stride_o", "stride_w", "width", "width_f",
                   "eps"]  # fmt: skip
GROUPED_CONSTEXPR = ["ROWS", "BLOCK", "TAIL", "CHUNK", "SPLIT", "HF_ORDER", "RNE_BF16", "SEG_MAJOR", "N_SEG",
                     "STACKED", "STORE_CS", "X_EVICT", "PERSISTENT", "PDL"]  # fmt: skip


def _params(kernel):
    """Triton's reading of each parameter: (name, is_constexpr, forced type or '')."""
    sig = inspect.signature(kernel.fn)
    kps = [
        triton.runtime.jit.KernelParam(i, p, False, False)
        for i, p in enumerate(sig.parameters.values())
    ]
    return [(kp.name, kp.is_constexpr, kp.annotation_type) for kp in kps]


@pytest.mark.parametrize(
    "kernel, runtime, constexpr",
    [
        (RK._dual_rmsnorm_kernel, DUAL_RUNTIME, DUAL_CONSTEXPR),
        (RK._grouped_rmsnorm_kernel, GROUPED_RUNTIME, GROUPED_CONSTEXPR),
    ],
)
def test_triton_reads_runtime_args_unforced_and_constexprs(kernel, runtime, constexpr):
    expected = [(n, False, "") for n in runtime] + [(n, True, "") for n in constexpr]
    assert _params(kernel) == expected


def test_consts_dicts_follow_the_kernels_signature_order():
    assert list(DualConsts.__annotations__) == DUAL_CONSTEXPR
    assert list(GroupedConsts.__annotations__) == GROUPED_CONSTEXPR
    dual = K.dual_plan(5, 64, 32, (64, 32, 96, 96), 64, 2, -1)
    assert list(dual.consts) == DUAL_CONSTEXPR
    # 6 pointers + 2 scratch pointers + the static scalars + 2 epsilons = the 21 runtime parameters
    assert 6 + 2 + len(dual.static) + 2 == len(DUAL_RUNTIME) == 21
    grouped = K.grouped_plan(5, 3, 16, (48, 48), 16, True, 2, -1)
    assert list(grouped.consts) == GROUPED_CONSTEXPR
    # x, out, 8 weight pointers (padded), 2 scratch pointers + the static scalars + eps = 22
    assert 2 + 8 + 2 + len(grouped.static) + 1 == len(GROUPED_RUNTIME) == 22
    assert grouped.n_pad == 8 + 2 - 3  # stacked: x, out, one [k, H] weight pointer are live


def test_jit_is_tritons_own_decorator():
    def _f(x_ptr):  # a module-level-like function with its source available to inspect
        pass

    assert type(jit(_f)) is type(triton.jit(_f))
    assert jit(_f).fn is _f


_COMPILE = """
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from recipecli.kernels import rmsnorm_kernels as RK, rmsnorm_triton as K
p = K.dual_plan(64, 4096, 4096, (4096, 4096, 8192, 8192), 4096, 2, -1)
fn = RK._dual_rmsnorm_kernel
sig = {n: "*bf16" for n in fn.arg_names[:6]}
sig.update({"part_ptr": "*fp32", "cnt_ptr": "*i32"})
sig.update({n: "i32" for n in fn.arg_names[8:17]})
sig.update({n: "fp32" for n in fn.arg_names[17:21]})
sig.update({n: "constexpr" for n in p.consts})
src = ASTSource(fn, sig, constexprs={(fn.arg_names.index(k),): v for k, v in p.consts.items()})
ck = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": p.num_warps})
import re
head = next(line for line in ck.asm["ttir"].splitlines() if "tt.func public" in line)
print(re.sub(r" loc\\(#loc\\d*\\)", "", head))
print("ptx", ".entry _dual_rmsnorm_kernel" in ck.asm["ptx"])
"""


@pytest.mark.skipif(
    "nvidia" not in getattr(triton.backends, "backends", {}), reason="no NVIDIA backend"
)
def test_dual_kernel_compiles_for_sm90_without_a_gpu():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run([sys.executable, "-c", _COMPILE], capture_output=True, text=True,
                          env=env, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ptx True" in proc.stdout
    assert "@_dual_rmsnorm_kernel(%a_ptr: !tt.ptr<bf16>" in proc.stdout
    # the scalars keep the types the signature gave (i32 sizes, fp32 widths and epsilons)
    assert "%n_rows: i32" in proc.stdout and "%eps2: f32" in proc.stdout
