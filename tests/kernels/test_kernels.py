"""CPU tests of the fused EAGLE3 norm kernels under Triton's interpreter, references, guards, prep.

TRITON_INTERPRET=1 is set before the kernel module is imported (Triton reads it at import). Expected values
in the hand-worked tests are derived in the comments, never by calling the code under test.
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")  # must precede the import of rmsnorm_triton

import pytest  # noqa: E402

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from recipecli.kernels import rmsnorm_triton as K  # noqa: E402
from recipecli.kernels.rmsnorm import dual_rmsnorm_concat, grouped_rmsnorm  # noqa: E402
from recipecli.kernels.rmsnorm_guards import (  # noqa: E402
    TensorDesc,
    column_slice,
    dense,
    recipecli_guard,
    tokenspeed_fused_guard,
    vllm_layer0_guard,
)
from recipecli.kernels.rmsnorm_ref import (  # noqa: E402
    compare,
    dual_rmsnorm_concat_ref,
    grouped_rmsnorm_ref,
    rmsnorm_ref,
    ulp_distance,
)

needs_interpreter = pytest.mark.skipif(
    not K.INTERPRETED,
    reason="kernel module was imported without TRITON_INTERPRET=1 (run CPU tests alone)",
)
DTYPES = [torch.bfloat16, torch.float16, torch.float32]
WIDTHS = [(4096, 4096), (1536, 512), (2880, 2880), (6144, 6144)]
NS = [0, 1, 3, 64]


def _weights(d, dtype, gen):
    return (1 + 0.1 * torch.randn(d, generator=gen)).to(dtype)


# ---------------------------------------------------------------- references, by hand


def test_reference_hand_values_fp32():
    # x = [3, 4]: mean(x^2) = 12.5, rstd = 1/sqrt(12.5) = 0.28284271; w = [1, 2]
    # -> [3 * 0.28284271, 2 * 4 * 0.28284271] = [0.84852814, 2.26274170]
    x = torch.tensor([[3.0, 4.0]])
    w = torch.tensor([1.0, 2.0])
    for conv in ("hf", "fp32_weight"):
        out = rmsnorm_ref(x, w, 0.0, conv)
        assert out[0].tolist() == pytest.approx([0.84852814, 2.26274170], rel=1e-6)


def test_conventions_differ_by_one_bf16_ulp_by_hand():
    # x = [1, 0], eps 0: normed = [1/sqrt(0.5), 0] = [1.41421356, 0]; w0 = 1.046875 (134/128).
    # hf: round_bf16(1.41421356) = 181/128 = 1.4140625; * 1.046875 = 1.48034668 = 189.48/128
    #     -> 189/128 = 1.4765625.
    # fp32_weight: 1.41421356 * 1.046875 = 1.48050482 = 189.51/128 -> 190/128 = 1.484375.
    x = torch.tensor([[1.0, 0.0]], dtype=torch.bfloat16)
    w = torch.tensor([1.046875, 1.0], dtype=torch.bfloat16)
    hf = rmsnorm_ref(x, w, 0.0, "hf")
    f32 = rmsnorm_ref(x, w, 0.0, "fp32_weight")
    assert hf[0, 0].item() == 1.4765625
    assert f32[0, 0].item() == 1.484375
    assert ulp_distance(hf, f32).tolist() == [[1, 0]]


@needs_interpreter
@pytest.mark.parametrize("conv, expected", [("hf", 1.4765625), ("fp32_weight", 1.484375)])
def test_kernel_follows_the_selected_convention(conv, expected):
    x = torch.tensor([[1.0, 0.0]], dtype=torch.bfloat16)
    w = torch.tensor([1.046875, 1.0], dtype=torch.bfloat16)
    out = dual_rmsnorm_concat(x, x, w, w, 0.0, 0.0, convention=conv)
    assert out[0, 0].item() == expected and out[0, 2].item() == expected


def test_ulp_distance_by_hand():
    one = torch.tensor([1.0], dtype=torch.bfloat16)
    nxt = torch.tensor([1.0078125], dtype=torch.bfloat16)  # 1 + 2^-7, the next bf16 after 1
    assert ulp_distance(one, nxt).item() == 1
    assert ulp_distance(torch.tensor([0.0]), torch.tensor([-0.0])).item() == 0
    # -1 and +1 in bf16 are 2 * 0x3F80 = 32512 ulps apart through zero
    assert ulp_distance(-one, one).item() == 2 * 0x3F80
    assert ulp_distance(torch.tensor([float("nan")]), torch.tensor([1.0])).item() >= 1 << 40


def test_compare_reports_and_tolerances():
    ref = torch.tensor([1.0, 2.0], dtype=torch.bfloat16)
    out = torch.tensor([1.0078125, 2.0], dtype=torch.bfloat16)
    r = compare(out, ref)
    assert r["max_ulp"] == 1 and r["frac_bit_identical"] == 0.5 and r["passed"]
    assert r["max_abs_err"] == pytest.approx(0.0078125)
    out2 = torch.tensor([1.015625, 2.0], dtype=torch.bfloat16)  # 2 ulps
    assert not compare(out2, ref)["passed"]
    assert compare(out2, ref, interpreted=True)["passed"]
    # hf rounds twice: one more ulp is allowed (HF_EXTRA_ULP, worked case in rmsnorm_ref)
    assert compare(out2, ref, convention="hf")["ulp_limit"] == 2
    empty = compare(torch.empty(0, 4), torch.empty(0, 4))
    assert empty["passed"] and empty["numel"] == 0


# ---------------------------------------------------------------- dual kernel


@needs_interpreter
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("d1, d2", WIDTHS)
def test_dual_kernel_matches_reference(d1, d2, dtype):
    gen = torch.Generator().manual_seed(d1 + d2)
    w1, w2 = _weights(d1, dtype, gen), _weights(d2, dtype, gen)
    for n in NS:
        a = torch.randn(n, d1, generator=gen).to(dtype)
        b = torch.randn(n, d2, generator=gen).to(dtype)
        for conv in ("hf", "fp32_weight"):
            out, path, _ = dual_rmsnorm_concat(
                a, b, w1, w2, 1e-5, 1e-6, convention=conv, return_path=True
            )
            assert out.shape == (n, d1 + d2) and out.dtype == dtype
            assert path == ("empty" if n == 0 else "triton")
            ref = dual_rmsnorm_concat_ref(a, b, w1, w2, 1e-5, 1e-6, conv)
            res = compare(out, ref, interpreted=True, convention=conv)
            assert res["passed"], (n, conv, res)


@needs_interpreter
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_dual_strided_inputs_and_sliced_outputs(dtype):
    # inputs: column chunks of one [N, 3H] tensor (row stride 3H); outputs: slices of a wider
    # NaN-poisoned buffer; columns outside the slices must stay NaN.
    n, h = 3, 2880
    gen = torch.Generator().manual_seed(7)
    big = torch.randn(n, 3 * h, generator=gen).to(dtype)
    a, b = big[:, :h], big[:, 2 * h :]
    assert a.stride() == (3 * h, 1)
    w1, w2 = _weights(h, dtype, gen), _weights(h, dtype, gen)
    buf = torch.full((n, 2 * h + 8), float("nan"), dtype=dtype)
    o1, o2 = buf[:, 4 : 4 + h], buf[:, 4 + h : 4 + 2 * h]
    res, path, _ = dual_rmsnorm_concat(a, b, w1, w2, 1e-6, 1e-6, out=(o1, o2), return_path=True)
    assert path == "triton" and res[0] is o1
    ref = dual_rmsnorm_concat_ref(a, b, w1, w2, 1e-6, 1e-6)
    assert compare(buf[:, 4 : 4 + 2 * h], ref, interpreted=True)["passed"]
    assert torch.isnan(buf[:, :4]).all() and torch.isnan(buf[:, -4:]).all()


@needs_interpreter
def test_dual_honours_both_eps():
    # eps1 = 0.5 vs eps2 = 1e-6 on rows of mean square 1: the first half is scaled by
    # 1/sqrt(1.5) = 0.8165, the second by ~1; a kernel using eps1 for both would fail.
    n, d = 2, 16
    a = torch.ones(n, d)
    b = torch.ones(n, d)
    w = torch.ones(d)
    out = dual_rmsnorm_concat(a, b, w, w, 0.5, 1e-6)
    assert out[:, :d].flatten().tolist() == pytest.approx([0.81649658] * n * d, rel=1e-6)
    assert out[:, d:].flatten().tolist() == pytest.approx([0.9999995] * n * d, rel=1e-6)


@needs_interpreter
def test_dual_explicit_launch_configs_agree():
    # rows/warps/split/order variants used on the GPU give the same bits (N=5 not a multiple of rows)
    gen = torch.Generator().manual_seed(3)
    a = torch.randn(5, 1536, generator=gen).to(torch.bfloat16)
    b = torch.randn(5, 512, generator=gen).to(torch.bfloat16)
    w1, w2 = _weights(1536, torch.bfloat16, gen), _weights(512, torch.bfloat16, gen)
    outs = []
    for rows, split, seg_major in ((1, False, True), (2, True, False), (4, None, True)):
        out = torch.empty(5, 2048, dtype=torch.bfloat16)
        K.dual_rmsnorm_launch(a, b, w1, w2, 1e-6, 1e-6, out[:, :1536], out[:, 1536:],
                              rows_per_program=rows, num_warps=4, split=split, seg_major=seg_major)  # fmt: skip
        outs.append(out)
    x = torch.cat([a[:, :512], b], dim=1)
    g1, g2 = torch.empty_like(x), torch.empty_like(x)
    K.grouped_rmsnorm_launch(x, torch.stack([w2, w2]), 1e-6, g1, rows_per_program=1, seg_major=True)
    K.grouped_rmsnorm_launch(
        x, torch.stack([w2, w2]), 1e-6, g2, rows_per_program=2, seg_major=False
    )
    assert torch.equal(g1, g2)
    assert all(torch.equal(outs[0], o) for o in outs[1:])


def test_tiles_by_hand():
    assert K.tiles(4096) == (4096, 0)
    assert K.tiles(6144) == (4096, 2048)  # no idle lanes instead of 2048 idle in one 8192 tile
    assert K.tiles(7168) == (8192, 0)  # 4096 + 4096 would idle as many lanes: keep one tile
    assert K.tiles(2880) == (2048, 1024)
    assert K.tiles(2880, split=False) == (4096, 0)
    assert K.tiles(1) == (1, 0)


# ---------------------------------------------------------------- grouped kernel


@needs_interpreter
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_grouped_kernel_matches_reference(k):
    h = 1536
    gen = torch.Generator().manual_seed(k)
    for dtype in DTYPES:
        ws = [_weights(h, dtype, gen) for _ in range(k)]
        for n in NS:
            big = torch.randn(n, k * h + 64, generator=gen).to(dtype)
            x = big[:, 64:]  # rows strided by k*H + 64
            for conv in ("hf", "fp32_weight"):
                out, path, _ = grouped_rmsnorm(x, ws, 1e-5, convention=conv, return_path=True)
                assert path == ("empty" if n == 0 else "triton")
                res = compare(
                    out, grouped_rmsnorm_ref(x, ws, 1e-5, conv), interpreted=True, convention=conv
                )
                assert res["passed"], (k, dtype, n, conv, res)


@needs_interpreter
def test_grouped_fc_norm_shape_k4_h6144():
    # the benchmark's fc_norm case, k = 4 chunks of 6144 (tiles 4096 + 2048), N = 3
    gen = torch.Generator().manual_seed(11)
    x = torch.randn(3, 4 * 6144, generator=gen).to(torch.bfloat16)
    ws = torch.stack([_weights(6144, torch.bfloat16, gen) for _ in range(4)])
    out = grouped_rmsnorm(x, ws, 1e-6)
    assert compare(out, grouped_rmsnorm_ref(x, ws, 1e-6), interpreted=True)["passed"]


def test_grouped_rejects_bad_widths():
    with pytest.raises(ValueError, match="chunks"):
        grouped_rmsnorm(torch.zeros(2, 10), torch.ones(3, 4), 1e-6)


# ---------------------------------------------------------------- zero rows, fallback


def test_zero_rows_never_launch(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("launched with N == 0")

    monkeypatch.setattr(K, "dual_rmsnorm_launch", boom)
    monkeypatch.setattr(K, "grouped_rmsnorm_launch", boom)
    a = torch.empty(0, 8, dtype=torch.bfloat16)
    w = torch.ones(8, dtype=torch.bfloat16)
    out, path, _ = dual_rmsnorm_concat(a, a, w, w, 1e-6, 1e-6, return_path=True)
    assert out.shape == (0, 16) and path == "empty"
    out, path, _ = grouped_rmsnorm(torch.empty(0, 16), torch.ones(2, 8), 1e-6, return_path=True)
    assert out.shape == (0, 16) and path == "empty"
    # the raw launchers return before launching too
    out = torch.empty(0, 16, dtype=torch.bfloat16)
    monkeypatch.undo()
    K.dual_rmsnorm_launch(a, a, w, w, 1e-6, 1e-6, out[:, :8], out[:, 8:])


def test_fallback_equals_reference_when_guard_fails():
    # float64 is not a kernel dtype: the entry point takes the reference path, bit for bit
    gen = torch.Generator().manual_seed(5)
    a = torch.randn(3, 32, generator=gen, dtype=torch.float64)
    b = torch.randn(3, 16, generator=gen, dtype=torch.float64)
    w1, w2 = (
        torch.rand(32, generator=gen, dtype=torch.float64),
        torch.rand(16, generator=gen, dtype=torch.float64),
    )
    out, path, reasons = dual_rmsnorm_concat(a, b, w1, w2, 1e-5, 1e-6, return_path=True)
    assert path == "reference" and any("float64" in r for r in reasons)
    assert torch.equal(out, dual_rmsnorm_concat_ref(a, b, w1, w2, 1e-5, 1e-6))
    # mixed input dtypes, pair-of-views output
    b16 = b.to(torch.bfloat16)
    buf = torch.empty(3, 48, dtype=torch.float64)
    _, path, reasons = dual_rmsnorm_concat(
        a.float(), b16, w1, w2, 1e-5, 1e-6, out=(buf[:, :32], buf[:, 32:]), return_path=True
    )
    assert path == "reference" and any("different dtypes" in r for r in reasons)
    assert torch.equal(buf[:, 32:], rmsnorm_ref(b16, w2, 1e-6).to(torch.float64))


def test_fallback_grouped_equals_reference():
    x = torch.randn(4, 12, dtype=torch.float64)
    ws = torch.rand(3, 4, dtype=torch.float64)
    out, path, _ = grouped_rmsnorm(x, ws, 1e-6, return_path=True)
    assert path == "reference"
    assert torch.equal(out, grouped_rmsnorm_ref(x, ws, 1e-6))


# ---------------------------------------------------------------- guards


def _cuda(shape, dtype="bfloat16"):
    return dense(shape, dtype, "cuda")


def test_vllm_guard_accepts_layer0_inputs():
    ok, reasons = vllm_layer0_guard(_cuda((64, 4096)), _cuda((64, 4096)), 1e-5, 1e-5)
    assert ok and reasons == []


@pytest.mark.parametrize(
    "embeds, hidden, eps2, needle",
    [
        (
            dense((8, 4096), "bfloat16", "cpu"),
            dense((8, 4096), "bfloat16", "cpu"),
            1e-5,
            "not a GPU",
        ),
        (column_slice(_cuda((8, 3 * 4096)), 0, 4096), _cuda((8, 4096)), 1e-5, "not contiguous"),
        (_cuda((8, 4096)), _cuda((8, 4096), "float16"), 1e-5, "dtypes differ"),
        (_cuda((8, 4096)), _cuda((8, 4096)), 1e-6, "eps differ"),
        (_cuda((8, 4096)), _cuda((8, 2048)), 1e-5, "shapes differ"),
    ],
)
def test_vllm_guard_rejections(embeds, hidden, eps2, needle):
    ok, reasons = vllm_layer0_guard(embeds, hidden, 1e-5, eps2)
    assert not ok and any(needle in r for r in reasons), reasons


def test_vllm_guard_on_real_cpu_tensors():
    a = torch.zeros(2, 8)
    ok, reasons = vllm_layer0_guard(a, a, 1e-6, 1e-6)
    assert not ok and reasons == [
        "embeds is on cpu, not a GPU",
        "hidden_states is on cpu, not a GPU",
    ]


def test_tokenspeed_guard_accepts_strided_views():
    # row-strided chunks of [N, 3H] and column-slice outputs are fine for tokenspeed
    big = _cuda((8, 3 * 4096))
    out = _cuda((8, 2 * 4096))
    w = _cuda((4096,))
    ok, reasons = tokenspeed_fused_guard(column_slice(big, 0, 4096), column_slice(big, 4096, 4096), w, w, 1e-6, 1e-6,
                                         column_slice(out, 0, 4096), column_slice(out, 4096, 4096))  # fmt: skip
    assert ok, reasons


@pytest.mark.parametrize(
    "case, needle",
    [
        ("fp32", "float16/bfloat16 only"),
        ("weight_dtype", "weights are read as the input dtype"),
        ("eps", "first norm's eps"),
        ("noncontig", "last dim is not contiguous"),
        ("rows", "row counts differ"),
        ("zero", "N == 0"),
        ("cpu", "CUDA-only"),
        ("misaligned", "16-byte aligned"),
    ],
)
def test_tokenspeed_guard_rejections(case, needle):
    a, b = _cuda((8, 4096)), _cuda((8, 4096))
    wa, wb = _cuda((4096,)), _cuda((4096,))
    eps2 = 1e-6
    if case == "fp32":
        a, b, wa, wb = (dense(t.shape, "float32", "cuda") for t in (a, b, wa, wb))
    elif case == "weight_dtype":
        wa = dense((4096,), "float32", "cuda")
    elif case == "eps":
        eps2 = 1e-5
    elif case == "noncontig":
        a = TensorDesc((8, 4096), (1, 8), "bfloat16", "cuda", 2)
    elif case == "rows":
        b = _cuda((7, 4096))
    elif case == "zero":
        a, b = _cuda((0, 4096)), _cuda((0, 4096))
    elif case == "cpu":
        a = dense((8, 4096), "bfloat16", "cpu")
    elif case == "misaligned":
        a = column_slice(_cuda((8, 3 * 4097)), 4097, 4096)  # odd width: offset 8194 B
    ok, reasons = tokenspeed_fused_guard(a, b, wa, wb, 1e-6, eps2)
    assert not ok and any(needle in r for r in reasons), reasons


def test_recipecli_guard_reasons():
    ok, reasons = recipecli_guard([torch.zeros(2, 4)], [torch.zeros(3)], [torch.zeros(2, 4)])
    assert not ok and any("weight 0" in r for r in reasons)
    ok, reasons = recipecli_guard([torch.zeros(2, 4, dtype=torch.int32)], [torch.zeros(4)])
    assert not ok and any("int32" in r for r in reasons)


@needs_interpreter
def test_ops_registered_and_compiled_function_matches_eager():
    # Dynamo traces through the public entry points into torch.ops.recipecli.* (custom_op under
    # the CPU interpreter, triton_op on CUDA); fullgraph=True raises on any graph break, and
    # aot_eager runs the ops' real kernels, so the compiled result must equal the eager one.
    from recipecli.kernels import rmsnorm as R

    assert R.OP_REGISTRATION in ("custom_op", "existing")
    assert hasattr(torch.ops.recipecli, "dual_rmsnorm_concat")
    gen = torch.Generator().manual_seed(5)
    a, b = (
        torch.randn(3, 64, generator=gen).bfloat16(),
        torch.randn(3, 32, generator=gen).bfloat16(),
    )
    w1, w2 = _weights(64, torch.bfloat16, gen), _weights(32, torch.bfloat16, gen)
    x = torch.randn(3, 3 * 16, generator=gen).bfloat16()
    ws = [_weights(16, torch.bfloat16, gen) for _ in range(3)]

    def f(a, b, x):
        y = dual_rmsnorm_concat(a, b, w1, w2, 1e-5, 1e-6)
        z = grouped_rmsnorm(x, ws, 1e-5, convention="fp32_weight")
        return y * 2, z + 1

    eager = f(a, b, x)
    torch._dynamo.reset()
    compiled = torch.compile(f, backend="aot_eager", fullgraph=True)(a, b, x)
    assert torch.equal(eager[0], compiled[0]) and torch.equal(eager[1], compiled[1])
    # and the ops themselves compute what the references do
    ref = dual_rmsnorm_concat_ref(a, b, w1, w2, 1e-5, 1e-6)
    assert compare(torch.ops.recipecli.dual_rmsnorm_concat(a, b, w1, w2, 1e-5, 1e-6, "hf"), ref,
                   interpreted=True, convention="hf")["passed"]  # fmt: skip


def test_host_tensor_path_equals_torch_path_and_numpy_reference_equals_torch_reference():
    # the torch-free CPU check (HostTensor + numpy reference) against the torch path: the
    # kernel gives the same bits on both kinds of tensor, and the two references agree
    import numpy as np
    from recipecli.kernels.host_tensor import HostTensor, rmsnorm_np, ulp_distance_np

    rng = np.random.default_rng(11)
    for name, dt in (("bfloat16", torch.bfloat16), ("float16", torch.float16),
                     ("float32", torch.float32)):  # fmt: skip
        xa, wa = rng.standard_normal((5, 96)), 1 + 0.1 * rng.standard_normal(96)
        ha, hw = HostTensor.from_values(xa, name), HostTensor.from_values(wa, name)
        ta, tw = torch.tensor(ha.numpy()).to(dt), torch.tensor(hw.numpy()).to(dt)
        assert torch.equal(ta.float(), torch.tensor(ha.numpy()))  # exact in the dtype
        for conv in ("hf", "fp32_weight"):
            ref_np = rmsnorm_np(ha.numpy(), hw.numpy(), 1e-5, name, conv)
            ref_t = rmsnorm_ref(ta, tw, 1e-5, conv)
            got_np = HostTensor(ref_np.reshape(-1), name, (5, 96)).numpy()
            if name == "float32":  # fp32 sums in another order: a few fp32 ulps apart
                assert np.allclose(got_np, ref_t.numpy(), rtol=1e-6, atol=0), conv
            else:  # one or two roundings to 8/11 mantissa bits hide the fp32 summation order
                assert np.array_equal(got_np, ref_t.float().numpy()), (name, conv)
            hout = HostTensor.empty((5, 2 * 96), name)
            K.dual_rmsnorm_launch(ha, ha, hw, hw, 1e-5, 1e-5, hout.columns(0, 96),
                                  hout.columns(96, 96), convention=conv)  # fmt: skip
            tout = torch.empty(5, 2 * 96, dtype=dt)
            K.dual_rmsnorm_launch(ta, ta, tw, tw, 1e-5, 1e-5, tout[:, :96], tout[:, 96:],
                                  convention=conv)  # fmt: skip
            assert np.array_equal(hout.numpy(), tout.float().numpy()), (name, conv)
            assert ulp_distance_np(hout.storage_numpy()[:, :96], ref_np, name).max() <= 3


def test_bf16_rounding_by_hand():
    # 1 + 2^-8 is halfway between bf16 neighbours 1 and 1 + 2^-7: ties to even -> 1.0;
    # 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd mantissa) and 1 + 2^-6: -> 1 + 2^-6
    import numpy as np
    from recipecli.kernels.host_tensor import bf16_bits, bf16_values

    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, -2.5, 0.0], dtype=np.float32)
    assert bf16_values(bf16_bits(x)).tolist() == [1.0, 1 + 2**-6, -2.5, 0.0]
    assert bf16_bits(np.array([1.0], dtype=np.float32)).tolist() == [0x3F80]


@needs_interpreter
def test_second_call_takes_the_cached_hot_path(monkeypatch):
    # the guard and the launch plan are worked out once per tensor description: a second call
    # with the same shapes/strides/dtypes/devices (out=None) is served by the flat-key hot path
    from recipecli.kernels import rmsnorm as R

    gen = torch.Generator().manual_seed(9)
    a, b = torch.randn(2, 48, generator=gen).half(), torch.randn(2, 48, generator=gen).half()
    w1, w2 = _weights(48, torch.float16, gen), _weights(48, torch.float16, gen)
    x = torch.randn(2, 3 * 32, generator=gen).half()
    ws = [_weights(32, torch.float16, gen) for _ in range(3)]
    R.clear_cache()
    first = (dual_rmsnorm_concat(a, b, w1, w2, 1e-5, 1e-5), grouped_rmsnorm(x, ws, 1e-5))

    def boom(*args, **kwargs):
        raise AssertionError("planned again: the cached hot path was missed")

    class NoLookups(dict):
        get = __getitem__ = boom

    monkeypatch.setattr(R, "_dual_plan", boom)
    monkeypatch.setattr(R, "_grouped_plan", boom)
    monkeypatch.setattr(R, "_PLANS", NoLookups())  # not even the slower cache may be consulted
    a2 = torch.randn(2, 48, generator=gen).half()  # new values, same description
    second = dual_rmsnorm_concat(a2, b, w1, w2, 1e-5, 1e-5)
    assert torch.equal(grouped_rmsnorm(x, ws, 1e-5), first[1])
    assert compare(second, dual_rmsnorm_concat_ref(a2, b, w1, w2, 1e-5, 1e-5), interpreted=True,
                   convention="hf")["passed"]  # fmt: skip
    assert not torch.equal(second, first[0])


def test_loop_config_for_widths_between_2048_and_4096(monkeypatch):
    # the table as loop_config's docstring states it, outside the interpreter (which never loops):
    # rows of >= 4 KiB from N = 16384 (LOOP_MIN_ROWS) on, 8192 lanes and more from N = 2048
    monkeypatch.setattr(K, "INTERPRETED", False)
    assert K.loop_config(32768, 2880, 2) == (1024, 8, False)  # gpt-oss-120b
    assert K.loop_config(65536, 2560, 2) == (1024, 8, False)
    assert K.loop_config(32768, 3072, 2) == (1024, 8, False)
    assert K.loop_config(32768, 3584, 2) == (2048, 4, False)
    assert K.loop_config(32768, 2048, 2) == (1024, 4, False)
    assert K.loop_config(32768, 5376, 2) == (2048, 8, False)
    assert K.loop_config(4096, 12288, 2) == (4096, 16, False)
    assert K.loop_config(16383, 2880, 2) is None  # below LOOP_MIN_ROWS: the register tile
    assert K.loop_config(32768, 1536, 2) is None  # 3 KiB rows (bf16) never loop
    assert K.loop_config(32768, 1536, 4) == (1024, 4, False)  # 6 KiB fp32 rows do


def test_eviction_hint_of_the_row_loads():
    # the register tile at N <= 4096 (decode, a graphed prefill chunk) loads with no hint,
    # everything else evict_first
    assert K._evict(None, 1, 0) == ""
    assert K._evict(None, 4096, 0) == ""
    assert K._evict(None, 4097, 0) == "evict_first"
    assert K._evict(None, 512, 1024) == "evict_first"  # the looped reduction's second pass
    assert K._evict("evict_last", 1, 0) == "evict_last"
    plan = K.dual_plan(64, 2880, 2880, (2880, 2880, 5760, 5760), 2880, 2, -1)
    assert plan.consts["X_EVICT"] == ""
    assert list(plan.consts).index("X_EVICT") == list(plan.consts).index("STORE_CS") + 1


@needs_interpreter
def test_eviction_hints_give_the_same_bits():
    gen = torch.Generator().manual_seed(7)
    a = torch.randn(3, 2880, generator=gen).to(torch.bfloat16)
    b = torch.randn(3, 2880, generator=gen).to(torch.bfloat16)
    w = _weights(2880, torch.bfloat16, gen)
    outs = []
    for evict in ("", "evict_first", "evict_last"):
        out = torch.full((3, 5760), float("nan"), dtype=torch.bfloat16)
        K.dual_rmsnorm_launch(a, b, w, w, 1e-5, 1e-5, out[:, :2880], out[:, 2880:], evict=evict)
        outs.append(out)
    assert not outs[0].isnan().any()
    assert all(torch.equal(outs[0], o) for o in outs[1:])
    ref = dual_rmsnorm_concat_ref(a, b, w, w, 1e-5, 1e-5, "hf")
    assert compare(outs[0], ref, convention="hf")["passed"]
