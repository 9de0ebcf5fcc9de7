"""GPU tests of the fused EAGLE3 norm kernels (marker ``gpu``; skipped without CUDA).

Run alone so the kernel module is compiled, not interpreted:
``pytest -m gpu tests/test_kernels_gpu.py`` (test_kernels.py sets TRITON_INTERPRET=1 on import).
References are computed on the CPU in plain torch (the ground truth).
"""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from recipecli.kernels import rmsnorm_triton as K  # noqa: E402
from recipecli.kernels.rmsnorm import dual_rmsnorm_concat, grouped_rmsnorm  # noqa: E402
from recipecli.kernels.rmsnorm_guards import tokenspeed_fused_guard, vllm_layer0_guard  # noqa: E402
from recipecli.kernels.rmsnorm_ref import compare, dual_rmsnorm_concat_ref, grouped_rmsnorm_ref  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
    pytest.mark.skipif(
        K.INTERPRETED, reason="kernel module imported under TRITON_INTERPRET=1; run this file alone"
    ),
]
DTYPES = [torch.bfloat16, torch.float16, torch.float32]


def _w(d, dtype):
    return (1 + 0.1 * torch.randn(d, device="cuda")).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize(
    "d1, d2", [(4096, 4096), (1536, 512), (2880, 2880), (6144, 6144), (7168, 7168)]
)
def test_dual_gpu_matches_reference(d1, d2, dtype):
    torch.manual_seed(d1 + d2)
    w1, w2 = _w(d1, dtype), _w(d2, dtype)
    for n in (0, 1, 3, 64, 512, 4096):
        a = torch.randn(n, d1, device="cuda").to(dtype)
        b = torch.randn(n, d2, device="cuda").to(dtype)
        for conv in ("hf", "fp32_weight"):
            out, path, _ = dual_rmsnorm_concat(
                a, b, w1, w2, 1e-5, 1e-6, convention=conv, return_path=True
            )
            assert path == ("empty" if n == 0 else "triton")
            ref = dual_rmsnorm_concat_ref(a.cpu(), b.cpu(), w1.cpu(), w2.cpu(), 1e-5, 1e-6, conv)
            res = compare(out.cpu(), ref, convention=conv)
            print(f"dual {d1},{d2} {dtype} N={n} {conv}: max_ulp={res['max_ulp']} "
                  f"identical={res['frac_bit_identical']:.6f} max_abs={res['max_abs_err']:.3g}")  # fmt: skip
            assert res["passed"], (n, conv, res)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_grouped_gpu_matches_reference(k):
    torch.manual_seed(k)
    h = 6144
    for dtype in (torch.bfloat16, torch.float16):
        ws = torch.stack([_w(h, dtype) for _ in range(k)])
        for n in (0, 1, 64, 4096):
            big = torch.randn(n, k * h + 64, device="cuda").to(dtype)
            x = big[:, 64:]
            for conv in ("hf", "fp32_weight"):
                out, path, _ = grouped_rmsnorm(x, ws, 1e-5, convention=conv, return_path=True)
                res = compare(
                    out.cpu(), grouped_rmsnorm_ref(x.cpu(), ws.cpu(), 1e-5, conv), convention=conv
                )
                print(
                    f"grouped k={k} {dtype} N={n} {conv}: max_ulp={res['max_ulp']} identical={res['frac_bit_identical']:.6f}"
                )
                assert res["passed"], (k, n, conv, res)


def test_sliced_outputs_and_strided_inputs_gpu():
    n, h = 512, 4096
    big = torch.randn(n, 3 * h, device="cuda", dtype=torch.bfloat16)
    a, b = big[:, :h], big[:, 2 * h :]
    w1, w2 = _w(h, torch.bfloat16), _w(h, torch.bfloat16)
    buf = torch.full((n, 2 * h + 16), float("nan"), device="cuda", dtype=torch.bfloat16)
    dual_rmsnorm_concat(
        a, b, w1, w2, 1e-6, 1e-6, out=(buf[:, 8 : 8 + h], buf[:, 8 + h : 8 + 2 * h])
    )
    ref = dual_rmsnorm_concat_ref(a.cpu(), b.cpu(), w1.cpu(), w2.cpu(), 1e-6, 1e-6)
    assert compare(buf[:, 8 : 8 + 2 * h].cpu(), ref, convention="hf")["passed"]
    assert torch.isnan(buf[:, :8]).all() and torch.isnan(buf[:, -8:]).all()


def test_launch_variants_agree_gpu():
    # every (rows, warps, split) variant the benchmark sweeps computes the same bits
    n, h = 777, 6144
    a = torch.randn(n, h, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, h, device="cuda", dtype=torch.bfloat16)
    w1, w2 = _w(h, torch.bfloat16), _w(h, torch.bfloat16)
    outs = []
    for rows in (1, 2, 4):
        for warps in (4, 16):
            for split, seg_major in ((False, True), (True, False)):
                out = torch.empty(n, 2 * h, device="cuda", dtype=torch.bfloat16)
                K.dual_rmsnorm_launch(a, b, w1, w2, 1e-6, 1e-6, out[:, :h], out[:, h:],
                                      rows_per_program=rows, num_warps=warps, split=split, seg_major=seg_major)  # fmt: skip
                outs.append(out)
    assert all(torch.equal(outs[0], o) for o in outs[1:])


def test_kernel_in_cuda_graph():
    n, h = 64, 4096
    a = torch.randn(n, h, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, h, device="cuda", dtype=torch.bfloat16)
    w1, w2 = _w(h, torch.bfloat16), _w(h, torch.bfloat16)
    out = torch.empty(n, 2 * h, device="cuda", dtype=torch.bfloat16)
    dual_rmsnorm_concat(a, b, w1, w2, 1e-6, 1e-6, out=out)  # compile outside the capture
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        dual_rmsnorm_concat(a, b, w1, w2, 1e-6, 1e-6, out=out)
    a.copy_(torch.randn_like(a))
    g.replay()
    torch.cuda.synchronize()
    ref = dual_rmsnorm_concat_ref(a.cpu(), b.cpu(), w1.cpu(), w2.cpu(), 1e-6, 1e-6)
    assert compare(out.cpu(), ref, convention="hf")["passed"]


def test_guards_on_real_cuda_tensors():
    a = torch.randn(8, 4096, device="cuda", dtype=torch.bfloat16)
    w = torch.ones(4096, device="cuda", dtype=torch.bfloat16)
    assert vllm_layer0_guard(a, a, 1e-6, 1e-6) == (True, [])
    assert tokenspeed_fused_guard(a, a, w, w, 1e-6, 1e-6) == (True, [])
    ok, reasons = tokenspeed_fused_guard(a, a, w.float(), w, 1e-6, 1e-6)
    assert not ok and "weight_a" in reasons[0]


def test_fallback_on_cuda_equals_reference():
    # float64 on CUDA is not a kernel dtype: reference path, same values as the CPU reference
    a = torch.randn(4, 64, device="cuda", dtype=torch.float64)
    w = torch.rand(64, device="cuda", dtype=torch.float64)
    out, path, _ = dual_rmsnorm_concat(a, a, w, w, 1e-6, 1e-6, return_path=True)
    assert path == "reference"
    assert torch.allclose(
        out.cpu(), dual_rmsnorm_concat_ref(a.cpu(), a.cpu(), w.cpu(), w.cpu(), 1e-6, 1e-6)
    )
