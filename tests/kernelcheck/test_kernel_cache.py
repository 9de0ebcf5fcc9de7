"""The kernel-verification cache behind ``check --kernel auto|on`` (recipecli/kernelcheck/cache.py):
``on`` runs and records, ``auto`` answers from a matching record without importing triton or
torch and otherwise says how to run it; the key is (dtype, widths, eps, device, N, kernel
source, triton/torch/numpy versions); a broken or unwritable cache is never an error.

Every test points ``XDG_CACHE_HOME`` at its own directory: nothing is read from or written to
the user's cache."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from helpers.fixtures import load_fixture_config  # noqa: E402

from recipecli.testing.builder import TensorSpec, write_checkpoint  # noqa: E402

pytest.importorskip("triton")

from recipecli import kernelcheck as kc  # noqa: E402
from recipecli.kernelcheck import cache  # noqa: E402

H = 64


def _draft(root: Path, *, eps: float = 1e-5, dtype: str = "float16") -> Path:
    """SpecForge's llama3-8B EAGLE3 config at H = 64, norms with real values."""
    config = load_fixture_config("sgl-project-SpecForge-template__llama3-8B-eagle3")
    config.update(hidden_size=H, rms_norm_eps=eps, torch_dtype=dtype)
    values = (1 + 0.1 * np.random.default_rng(3).standard_normal(H)).astype(np.float32)
    st = {"float16": "F16", "bfloat16": "BF16", "float32": "F32"}[dtype]
    specs = [
        TensorSpec(f"midlayer.{n}.weight", st, (H,), values)
        for n in ("input_layernorm", "hidden_norm")
    ]
    return write_checkpoint(root, config, specs)


@pytest.fixture(autouse=True)
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setattr(kc, "cuda_driver_present", lambda: False)  # the CPU interpreter's key
    return tmp_path / "xdg"


@pytest.fixture
def draft(tmp_path: Path) -> Path:
    return _draft(tmp_path / "draft")


def _codes(findings: list) -> list[str]:
    return [f.code for f in findings]


def test_cache_dir_follows_xdg_and_falls_back_to_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere/else")
    assert cache.cache_dir() == Path("/somewhere/else/recipecli/kernelcheck")
    monkeypatch.setenv("HOME", str(tmp_path))
    for value in ("", "relative/dir"):  # the XDG spec: a relative path is ignored
        monkeypatch.setenv("XDG_CACHE_HOME", value)
        assert cache.cache_dir() == tmp_path / ".cache" / "recipecli" / "kernelcheck"


def test_auto_without_a_record_skips_and_says_how_to_run_it(draft, xdg):
    (f,) = kc.kernel_findings(str(draft), "auto")
    assert f.code == "kernel.skipped" and f.severity == "info"
    assert "--kernel on" in f.message and "float16, widths 64+64, eps 1e-05" in f.message
    assert f.evidence["verification"] == "skipped"
    assert not xdg.exists()  # auto never writes


def test_on_records_and_auto_answers_from_the_record(draft, xdg):
    ran = kc.kernel_findings(str(draft), "on")
    assert _codes(ran) == ["kernel.pass"]
    assert "ran now; cached for later checks" in ran[0].message
    (entry,) = (xdg / "recipecli" / "kernelcheck").glob("*.json")
    doc = json.loads(entry.read_text())
    # the key as worked out from the draft: fp16, two norms of 64, eps 1e-5, one N = 3 on CPU
    assert doc["key"]["dtype"] == "float16" and doc["key"]["layer0"] == [64, 64]
    assert doc["key"]["eps"] == 1e-5 and doc["key"]["tokens"] == [3]
    assert doc["key"]["device"] == "cpu" and len(doc["cases"]) == 2  # N = 3 x 2 conventions
    hit = kc.kernel_findings(str(draft), "auto")
    assert _codes(hit) == ["kernel.pass"] and hit[0].evidence["verification"] == "cached"
    assert f"cached from {doc['created']}" in hit[0].message


def test_a_record_holds_only_for_its_dtype_and_eps(draft, tmp_path):
    kc.kernel_findings(str(draft), "on")
    assert _codes(kc.kernel_findings(str(_draft(tmp_path / "eps", eps=1e-6)), "auto")) == [
        "kernel.skipped"
    ]
    bf16 = _draft(tmp_path / "bf16", dtype="bfloat16")
    assert _codes(kc.kernel_findings(str(bf16), "auto")) == ["kernel.skipped"]
    # the same dtype, widths and eps in another draft: the record holds (weights' values differ)
    assert _codes(kc.kernel_findings(str(_draft(tmp_path / "twin")), "auto")) == ["kernel.pass"]


def test_a_new_kernel_or_triton_version_invalidates_the_record(draft, monkeypatch):
    kc.kernel_findings(str(draft), "on")
    with monkeypatch.context() as m:
        m.setattr(cache, "kernel_source_hash", lambda: "0" * 16)
        assert _codes(kc.kernel_findings(str(draft), "auto")) == ["kernel.skipped"]
    with monkeypatch.context() as m:
        m.setattr(cache, "_version", lambda dist: "9.9.9" if dist == "triton" else None)
        assert _codes(kc.kernel_findings(str(draft), "auto")) == ["kernel.skipped"]
    assert _codes(kc.kernel_findings(str(draft), "auto")) == ["kernel.pass"]


def test_kernel_source_hash_reads_the_kernel_files():
    h = cache.kernel_source_hash()
    assert len(h) == 16 and int(h, 16) >= 0 and h == cache.kernel_source_hash()


@pytest.mark.parametrize(
    "content", [b"", b"{not json", b'{"version": 1}', b"[]", b'{"version": 1, "key": 3}']
)
def test_a_broken_record_is_a_miss(draft, xdg, content):
    kc.kernel_findings(str(draft), "on")
    (entry,) = (xdg / "recipecli" / "kernelcheck").glob("*.json")
    entry.write_bytes(content)
    assert _codes(kc.kernel_findings(str(draft), "auto")) == ["kernel.skipped"]


def test_a_record_for_another_key_under_this_name_is_a_miss(draft, xdg):
    kc.kernel_findings(str(draft), "on")
    (entry,) = (xdg / "recipecli" / "kernelcheck").glob("*.json")
    doc = json.loads(entry.read_text())
    doc["key"]["eps"] = 0.5
    entry.write_text(json.dumps(doc))
    assert _codes(kc.kernel_findings(str(draft), "auto")) == ["kernel.skipped"]


def test_a_cache_that_cannot_be_written_is_not_an_error(draft, xdg):
    xdg.parent.mkdir(parents=True, exist_ok=True)
    xdg.write_text("a file where the cache folder would be")
    (f,) = kc.kernel_findings(str(draft), "on")
    assert f.code == "kernel.pass" and "not cached: cache not writable" in f.message
    assert xdg.read_text().startswith("a file")


def test_cpu_mode_runs_for_this_check_only(draft, xdg):
    assert _codes(kc.kernel_findings(str(draft), "cpu")) == ["kernel.pass"]
    assert not xdg.exists()


def test_auto_from_the_record_imports_neither_triton_nor_torch(draft, xdg):
    kc.kernel_findings(str(draft), "on")
    code = (
        "import sys; from recipecli.kernelcheck import kernel_findings;"
        f"f = kernel_findings({str(draft)!r}, 'auto');"
        "assert [x.code for x in f] == ['kernel.pass'], [(x.code, x.message) for x in f];"
        "assert 'triton' not in sys.modules and 'torch' not in sys.modules; print('ok')"
    )
    env = dict(os.environ, XDG_CACHE_HOME=str(xdg))
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_the_cli_choices_are_the_library_modes():
    from recipecli.cli.params import KERNEL_MODE

    assert tuple(KERNEL_MODE.choices) == kc.KERNEL_MODES


def _check(xdg: Path, *extra: str) -> tuple[int, list[dict], str]:
    """``check --example llama3.1-8b-eagle3 --engine vllm --json`` in a child process: its exit
    code, its kernel.* findings, and whether torch/triton were imported (printed last)."""
    code = (
        "import sys, atexit;"
        "atexit.register(lambda: print('MODULES', 'torch' in sys.modules, 'triton' in sys.modules,"
        " file=sys.stderr));"
        "from recipecli.cli import main;"
        "main(['check', '--example', 'llama3.1-8b-eagle3', '--engine', 'vllm', '--json',"
        f" *{list(extra)!r}])"
    )
    env = dict(os.environ, XDG_CACHE_HOME=str(xdg), HF_HUB_OFFLINE="1")
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    kernel = [f for f in json.loads(r.stdout)["findings"] if f["code"].startswith("kernel.")]
    return r.returncode, kernel, r.stderr.strip().splitlines()[-1]


@pytest.mark.slow  # three child processes, one runs the CPU interpreter on 4096 lanes
def test_check_by_default_answers_on_metadata_then_from_the_cache(xdg):
    # vLLM loads the published example draft: exit 0 whatever the kernel note says
    code, kernel, modules = _check(xdg)
    assert code == 0 and [f["code"] for f in kernel] == ["kernel.skipped"]
    assert "--kernel on" in kernel[0]["message"] and modules == "MODULES False False"
    code, kernel, _ = _check(xdg, "--kernel", "on")
    assert code == 0 and [f["code"] for f in kernel] == ["kernel.pass"]
    assert kernel[0]["evidence"]["verification"] == "ran"
    code, kernel, modules = _check(xdg)
    assert code == 0 and [f["code"] for f in kernel] == ["kernel.pass"]
    assert kernel[0]["evidence"]["verification"] == "cached"
    assert modules == "MODULES False False"


def _verify(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recipecli", "verify-kernel", "--widths", "64,64", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, TRITON_INTERPRET="1"),
    )


def test_verify_kernel_cpu_defaults_and_progress_only_when_asked():
    quiet = _verify("--device", "cpu", "--json")
    assert quiet.returncode == 0 and quiet.stderr == ""  # stderr is a pipe: no bar
    doc = json.loads(quiet.stdout)
    # CPU default N = 0, 1, 7; x 2 conventions x 2 code paths (tile, looped) = 12 cases
    assert sorted({c["n"] for c in doc["cases"]}) == [0, 1, 7] and len(doc["cases"]) == 12
    shown = _verify("--device", "cpu", "--tokens", "1", "--progress")
    assert shown.returncode == 0 and "verify-kernel:" in shown.stderr and "/4 [" in shown.stderr
    assert _verify("--device", "cpu", "--tokens", "1", "--no-progress").stderr == ""


def test_case_count_is_what_run_cases_returns():
    norms = kc.synthetic_norms(64, 64, 3, "bfloat16")  # layer 0 and a 3-chunk fc_norm
    # 2 kinds x 2 N x 2 conventions x 2 paths on CPU; x 1 path on CUDA or without both_paths
    assert kc.case_count(norms, [1, 7], "cpu") == 16
    assert kc.case_count(norms, [1, 7], "cuda") == 8
    assert kc.case_count(norms, [1, 7], "cpu", both_paths=False) == 8
    seen: list[str] = []
    got = kc.run_cases(norms, [1, 7], "cpu", on_case=lambda r: seen.append(r.kind))
    assert len(got) == len(seen) == 16 and seen.count("fc_norm") == 8


def test_versions_are_the_installed_distributions():
    from importlib import metadata

    for dist in cache.VERSIONED:
        try:
            expected: str | None = metadata.version(dist)
        except metadata.PackageNotFoundError:
            expected = None
        assert cache._version(dist) == expected
    assert cache._version("no_such_package_anywhere") is None


def test_a_kernel_that_fails_to_run_is_a_skipped_note_not_a_traceback(draft, monkeypatch, xdg):
    def broken(*args, **kwargs):
        raise RuntimeError("only 0-dimensional arrays can be converted\nmore")

    monkeypatch.setattr(kc, "run_cases", broken)
    (f,) = kc.kernel_findings(str(draft), "on")
    assert f.code == "kernel.skipped" and f.evidence["error"] == "RuntimeError"
    assert f.message.endswith("(RuntimeError: only 0-dimensional arrays can be converted)")
    assert not xdg.exists()  # nothing recorded
