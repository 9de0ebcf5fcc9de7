"""`recipecli verify-kernel` and `kernel_findings` (the `check --kernel` wiring), on CPU.

Draft checkpoints are built from real fixture configs (SpecForge llama3-8B EAGLE3: H = 4096,
float16, rms_norm_eps 1e-5; SpecForge qwen3-30B-A3B EAGLE3.1: H = 2048, fc_norm, bfloat16,
eps 1e-6; ModelOpt's speculators template) with small-N runs under Triton's interpreter.
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")  # before any kernel module import

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from helpers.fixtures import load_fixture_config  # noqa: E402

from recipecli.testing.builder import TensorSpec, write_checkpoint  # noqa: E402

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from recipecli import kernelcheck as kc  # noqa: E402


def _run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TRITON_INTERPRET="1")
    return subprocess.run([sys.executable, "-m", "recipecli", "verify-kernel", *args],
                          capture_output=True, text=True, env=env, timeout=120)  # fmt: skip


def _norm_values(h: int, seed: int) -> np.ndarray:
    return (1 + 0.1 * np.random.default_rng(seed).standard_normal(h)).astype(np.float32)


@pytest.fixture(scope="module")
def llama_draft(tmp_path_factory):
    """SpecForge llama3-8B EAGLE3 draft (flat midlayer.* names), norms with real values."""
    config = load_fixture_config("sgl-project-SpecForge-template__llama3-8B-eagle3")
    h = config["hidden_size"]  # 4096
    specs = [
        TensorSpec("midlayer.input_layernorm.weight", "F16", (h,), _norm_values(h, 1)),
        TensorSpec("midlayer.hidden_norm.weight", "F16", (h,), _norm_values(h, 2)),
        TensorSpec("fc.weight", "F16", (h, 3 * h)),  # a hole: never read
    ]
    return write_checkpoint(tmp_path_factory.mktemp("llama_draft"), config, specs)


@pytest.fixture(scope="module")
def eagle31_draft(tmp_path_factory):
    """SpecForge qwen3-30B-A3B EAGLE3.1 draft: fc_norm true, 3 fc_norm weights of [2048]."""
    config = load_fixture_config("sgl-project-SpecForge-template__qwen3-30B-A3B-eagle3.1")
    h = config["hidden_size"]  # 2048
    specs = [
        TensorSpec("midlayer.input_layernorm.weight", "BF16", (h,), _norm_values(h, 3)),
        TensorSpec("midlayer.hidden_norm.weight", "BF16", (h,), _norm_values(h, 4)),
        *(
            TensorSpec(f"fc_norm.{i}.weight", "BF16", (h,), _norm_values(h, 10 + i))
            for i in range(3)
        ),
    ]
    return write_checkpoint(tmp_path_factory.mktemp("eagle31_draft"), config, specs)


def test_llama_draft_json(llama_draft):
    r = _run("--draft", str(llama_draft), "--device", "cpu", "--tokens", "0,1,7", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    d = rep["draft"]
    # config: torch_dtype float16, rms_norm_eps 1e-05, hidden 4096
    assert d["dtype"] == "float16" and d["eps"] == 1e-05 and d["eps_origin"] == "rms_norm_eps"
    assert [(w["name"], w["width"], w["origin"]) for w in d["layer0"]] == [
        ("midlayer.input_layernorm.weight", 4096, "checkpoint"),
        ("midlayer.hidden_norm.weight", 4096, "checkpoint"),
    ]
    assert d["fc_norm"] == []
    assert rep["device"] == "cpu" and rep["interpreted"] and rep["passed"]
    # 3 token counts x 2 conventions x 2 code paths (register tile, looped), layer 0 only
    assert [(c["n"], c["convention"], c["path"]) for c in rep["cases"]] == [
        (n, conv, path) for n in (0, 1, 7) for conv in ("hf", "fp32_weight")
        for path in ("tile", "looped")
    ]  # fmt: skip
    c = rep["cases"][4]
    assert c["widths"] == [4096, 4096] and c["dtype"] == "float16" and c["launched"]
    assert not rep["cases"][0]["launched"]
    # fp16, equal eps, contiguous [N, 4096] inputs: both engines' fused paths are taken
    assert c["guards"]["vllm"] == {"eligible": True, "reasons": []}
    assert c["guards"]["tokenspeed"] == {"eligible": True, "reasons": []}
    assert set(c) >= {"max_abs_err", "max_ulp", "frac_bit_identical", "passed", "ulp_limit"}


def test_eagle31_fc_norm_text(eagle31_draft):
    r = _run("--draft", str(eagle31_draft), "--device", "cpu", "--tokens", "1,3")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "dtype bfloat16  eps 1e-06 (rms_norm_eps)" in out
    assert "fc_norm.2.weight: [2048] checkpoint" in out
    assert out.count("fc_norm ") >= 8  # 2 N x 2 conventions x 2 code paths
    # k = 3 is odd: tokenspeed fuses one pair and launches the last chunk alone (lightseekorg/tokenspeed PR #837)
    assert "odd k = 3: the last chunk is a separate unfused launch" in out
    assert "vLLM fuses only layer 0's norms" in out
    assert out.rstrip().endswith("all cases pass")


def test_eagle31_chunks_mismatch_is_bad_input(eagle31_draft):
    r = _run("--draft", str(eagle31_draft), "--device", "cpu", "--tokens", "1", "--chunks", "4")
    assert r.returncode == 2
    assert str(eagle31_draft) in r.stderr and "has 3 fc_norm weights" in r.stderr


def test_speculators_config_only_synthesises(tmp_path):
    # ModelOpt's speculators template, filled: eps lives under transformer_layer_config; a bare
    # config.json has no tensors, so both norms are synthesised at hidden_size 1536.
    config = load_fixture_config("nvidia-modelopt-template__vllm-Eagle3Speculator")
    config["torch_dtype"] = "bfloat16"
    config["transformer_layer_config"].update(hidden_size=1536, rms_norm_eps=1e-5)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    r = _run("--draft", str(path), "--device", "cpu", "--tokens", "2", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)["draft"]
    assert d["eps"] == 1e-5 and d["eps_origin"] == "transformer_layer_config.rms_norm_eps"
    assert [w["origin"] for w in d["layer0"]] == ["synthesised", "synthesised"]
    assert [w["width"] for w in d["layer0"]] == [1536, 1536]
    assert "input_layernorm: not in the checkpoint, synthesised [1536]" in d["notes"]


def test_widths_and_chunks_synthetic():
    r = _run(
        "--widths",
        "1536,512",
        "--chunks",
        "2",
        "--dtype",
        "fp16",
        "--device",
        "cpu",
        "--tokens",
        "3",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    kinds = [(c["kind"], tuple(c["widths"])) for c in rep["cases"]]
    assert kinds == [("layer0", (1536, 512))] * 4 + [("fc_norm", (512, 512))] * 4
    layer0 = rep["cases"][0]["guards"]
    # different widths: vLLM's guard wants the same shape; tokenspeed accepts any widths
    assert (
        layer0["vllm"]["eligible"] is False
        and "shapes differ: (3, 1536) vs (3, 512)" in layer0["vllm"]["reasons"]
    )
    assert layer0["tokenspeed"]["eligible"] is True


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--draft", "/nonexistent/draft-dir"], "/nonexistent/draft-dir"),
        (["--widths", "4096"], "expected two positive widths"),
        (["--widths", "8,8", "--tokens", "1,-1"], "--tokens"),
        (["--widths", "8,8", "--chunks", "0"], "--chunks 0"),
        (["--widths", "8,8", "--draft", "x"], "exactly one of --draft"),
        ([], "exactly one of --draft"),
        (["--widths", "8,8", "--dtype", "fp64"], "fp64"),
    ],
)
def test_bad_input_exit_2(args, needle):
    r = _run(*args, "--device", "cpu")
    assert r.returncode == 2
    assert needle in r.stderr


def test_not_a_draft_names_the_file(tmp_path):
    write_checkpoint(
        tmp_path / "t",
        {"architectures": ["Foo"]},
        [TensorSpec("x.weight", "F32", (2,), np.ones(2))],
    )
    r = _run("--draft", str(tmp_path / "t"), "--device", "cpu", "--tokens", "1")
    assert r.returncode == 2
    assert str(tmp_path / "t") in r.stderr and "not an EAGLE3 draft" in r.stderr


def test_mismatch_exits_1(monkeypatch, llama_draft, capsys):
    from recipecli.kernels import rmsnorm_triton

    from recipecli.cli import main

    def wrong(a, b, w1, w2, eps1, eps2, out1, out2, **kw):  # a kernel that forgets the weight
        for x, o, e in ((a, out1, eps1), (b, out2, eps2)):
            v = x.numpy()
            o.write(v / np.sqrt((v * v).mean(axis=-1, keepdims=True) + e))

    monkeypatch.setattr(rmsnorm_triton, "dual_rmsnorm_launch", wrong)
    with pytest.raises(SystemExit) as exc:
        main(["verify-kernel", "--draft", str(llama_draft), "--device", "cpu", "--tokens", "2"])
    assert exc.value.code == 1
    assert "FAIL" in capsys.readouterr().out


# ---------------------------------------------------------------- kernel_findings


def test_findings_pass_and_fp32_ineligible(tmp_path):
    # a float32 draft: the kernels pass, but tokenspeed's CUDA path takes fp16/bf16 only
    # (lightseekorg/tokenspeed PR #837: FusedRMSNorm's CUDA kernel is instantiated for half types)
    config = load_fixture_config("sgl-project-SpecForge-template__llama3-8B-eagle3")
    config["torch_dtype"] = "float32"
    config["hidden_size"] = 256
    specs = [
        TensorSpec(f"midlayer.{n}.weight", "F32", (256,), _norm_values(256, 5))
        for n in ("input_layernorm", "hidden_norm")
    ]
    root = write_checkpoint(tmp_path / "d", config, specs)
    from recipecli.checkpoint import open_checkpoint

    findings = kc.kernel_findings(open_checkpoint(str(root)), "cpu")
    codes = [(f.code, f.severity, f.engine) for f in findings]
    assert codes == [("kernel.pass", "info", "any"), ("kernel.ineligible", "warning", "tokenspeed")]
    assert "float16/bfloat16 only" in findings[1].message
    # the CPU check runs one N (3 rows: one program of 4 rows, one row masked)
    assert findings[0].evidence["tokens"] == [3] and findings[0].evidence["dtype"] == "float32"


def test_findings_mismatch(monkeypatch, llama_draft):
    from recipecli.kernels import rmsnorm_triton

    def zeros(a, b, w1, w2, eps1, eps2, out1, out2, **kw):
        out1.write(np.zeros(out1.shape))
        out2.write(np.zeros(out2.shape))

    monkeypatch.setattr(rmsnorm_triton, "dual_rmsnorm_launch", zeros)
    findings = kc.kernel_findings(str(llama_draft), "cpu")
    assert {f.code for f in findings} == {"kernel.mismatch"}
    assert (
        all(f.severity == "error" for f in findings) and len(findings) == 2
    )  # 1 N x 2 conventions


def test_findings_skip_imports_no_torch():
    code = (
        "import sys; from recipecli.kernelcheck import kernel_findings;"
        "f = kernel_findings('does-not-matter', 'skip');"
        "assert [x.code for x in f] == ['kernel.skipped'], f;"
        "assert 'torch' not in sys.modules and 'triton' not in sys.modules; print('ok')"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_findings_missing_dependency(monkeypatch):
    monkeypatch.setattr(kc, "dependencies_missing", lambda *device: ["triton"])
    (f,) = kc.kernel_findings("anything", "auto")
    assert f.code == "kernel.skipped" and f.severity == "info"
    assert 'pip install -e ".[kernels]"' in f.message


def test_findings_bad_mode():
    from recipecli.errors import UsageError

    with pytest.raises(UsageError, match="--kernel 'gpu'"):
        kc.kernel_findings("x", "gpu")


def test_cpu_check_imports_no_torch(llama_draft):
    # the CPU interpreter path runs on numpy-backed tensors: torch stays out of the process
    code = (
        "import sys; from recipecli.kernelcheck import kernel_findings;"
        f"f = kernel_findings({str(llama_draft)!r}, 'cpu');"
        "assert [x.code for x in f] == ['kernel.pass'], [(x.code, x.message) for x in f];"
        "assert 'torch' not in sys.modules; print('ok')"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_auto_without_a_driver_is_cpu(monkeypatch):
    monkeypatch.setattr(kc, "cuda_driver_present", lambda: False)
    assert kc.resolve_device("auto") == "cpu"


def test_findings_catch_a_wrong_grouped_kernel(monkeypatch, eagle31_draft):
    # fc_norm with the chunks' weights swapped (0 <-> 1) must be reported as a mismatch
    from recipecli.kernels import rmsnorm_triton

    real = rmsnorm_triton.grouped_rmsnorm_launch

    def swapped(x, weights, eps, out, **kw):
        ws = list(weights)
        ws[0], ws[1] = ws[1], ws[0]
        real(x, ws, eps, out, **kw)

    monkeypatch.setattr(rmsnorm_triton, "grouped_rmsnorm_launch", swapped)
    findings = kc.kernel_findings(str(eagle31_draft), "cpu")
    bad = [f for f in findings if f.code == "kernel.mismatch"]
    assert len(bad) == 2 and all("fused fc_norm kernel" in f.message for f in bad)
