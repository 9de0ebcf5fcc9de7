"""`recipecli convert`: ``.bin`` input, atomicity (interrupts, failed verification), ``--force``,
the CLI and its JSON, ``--embed drop``.

Expected values are worked out by hand from the fixture configs and vLLM v0.33.0
(vllm/model_executor/models/llama_eagle3.py Eagle3LlamaForCausalLM.load_weights renames
``midlayer.*`` to ``layers.0.*``; vllm/v1/worker/gpu/spec_decode/eagle/utils.py load_eagle_model
shares the target's embedding with a draft that ships none).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers.convert import (
    TARGET_CONFIG,
    config_of,
    filled,
    raw_tensors,
    tiny,
    write_draft,
    write_target,
)

from recipecli.checkpoint import open_checkpoint
from recipecli.convert import ConvertOptions, convert
from recipecli.convert import write as convert_write
from recipecli.errors import ConvertError
from recipecli.testing.specs import draft_specs, valid_vocab_map


def _spec(**kw) -> ConvertOptions:
    return ConvertOptions(to="speculators", **kw)


# --------------------------------------------------------------------------- .bin input


def _write_bin_draft(root: Path, cfg: dict, *, seed: int = 0, d2t=None, t2d=None) -> Path:
    """A pytorch_model.bin EAGLE3 draft with random fp16 weights, made with torch directly
    (names/shapes from draft_specs: the midlayer.* layout vLLM's load_weights renames)."""
    torch = pytest.importorskip("torch")
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps(cfg))
    gen = torch.Generator().manual_seed(seed)
    state = {}
    for s in draft_specs(cfg, d2t=d2t, t2d=t2d):
        if s.dtype == "I64":
            state[s.name] = torch.from_numpy(np.asarray(s.value, dtype=np.int64))
        elif s.dtype == "BOOL":
            state[s.name] = torch.from_numpy(np.asarray(s.value, dtype=bool))
        elif s.value is not None:
            state[s.name] = torch.from_numpy(np.asarray(s.value, dtype=np.float32)).to(
                torch.float16
            )
        else:
            state[s.name] = torch.randn(s.shape, generator=gen, dtype=torch.float16)
    torch.save(state, root / "pytorch_model.bin")
    return root


def _check_bin_conversion(tmp_path: Path, cfg: dict, V: int, Vd: int) -> None:
    torch = pytest.importorskip("torch")
    d2t, t2d = valid_vocab_map(V, Vd, seed=13)
    src = _write_bin_draft(tmp_path / "bin", cfg, d2t=d2t, t2d=t2d)
    tgt = write_target(
        tmp_path / "target",
        {
            **TARGET_CONFIG,
            "hidden_size": cfg["hidden_size"],
            "vocab_size": V,
            "num_hidden_layers": 32,
        },
    )
    spec = tmp_path / "spec"
    convert(str(src), spec, _spec(norm_before_residual=False), target=str(tgt), progress=False)
    assert not list(spec.glob("*.bin")) and (spec / "model.safetensors").is_file()
    state = torch.load(src / "pytorch_model.bin", weights_only=True, mmap=True)
    out = open_checkpoint(str(spec))
    assert out.weight_format == "safetensors"
    for name, t in state.items():
        dst = name.replace("midlayer.", "layers.0.")
        assert out.tensors[dst].shape == tuple(t.shape)
        raw = t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
        assert out.read_raw_bytes(dst) == raw, name


def test_bin_draft_converts_to_safetensors_scaled_down(tmp_path, fixture_config):
    # Llama-3.1-8B EAGLE3 release layout (float16 pytorch_model.bin), geometry / 16
    cfg = fixture_config("SafeAILab__EAGLE3-traineagle3-config")
    cfg = {**cfg, "hidden_size": 256, "intermediate_size": 896, "num_attention_heads": 2,
           "num_key_value_heads": 1, "head_dim": 128, "vocab_size": 8016, "draft_vocab_size": 2000}  # fmt: skip
    _check_bin_conversion(tmp_path, cfg, 8016, 2000)


@pytest.mark.slow
def test_bin_draft_converts_to_safetensors_llama31_8b_shapes(tmp_path, fixture_config):
    # full Llama-3.1-8B shapes (meta-llama/Llama-3.1-8B config: H 4096, 32 heads x 128, 8 KV heads;
    # the draft's q takes [embed; hidden] = 8192 wide, fc 3 x 4096): q [4096, 8192], fc [4096, 12288],
    # lm_head [32000, 4096], d2t [32000], t2d [128256]; ~0.85 GB of fp16 materialised
    cfg = fixture_config("SafeAILab__EAGLE3-traineagle3-config")
    _check_bin_conversion(tmp_path, cfg, 128256, 32000)


# --------------------------------------------------------------------------- atomicity


def _a_draft(tmp_path: Path, fixture_config) -> Path:
    cfg = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"))
    d2t, t2d = valid_vocab_map(1000, 100, seed=14)
    return write_draft(tmp_path / "A", cfg, d2t=d2t, t2d=t2d)


@pytest.mark.parametrize("exc", [RuntimeError("disk on fire"), KeyboardInterrupt()])
def test_interrupted_run_leaves_no_out(tmp_path, target, fixture_config, monkeypatch, exc):
    src = _a_draft(tmp_path, fixture_config)
    work = tmp_path / "work"
    work.mkdir()
    real = convert_write.write_tensor
    calls = []

    def flaky(*args, **kw):
        calls.append(1)
        if len(calls) == 3:
            raise exc
        return real(*args, **kw)

    monkeypatch.setattr(convert_write, "write_tensor", flaky)
    with pytest.raises(type(exc)):
        convert(
            str(src),
            work / "out",
            _spec(norm_before_residual=False),
            target=str(target),
            progress=False,
        )
    assert len(calls) == 3
    assert list(work.iterdir()) == []  # neither OUT nor the temporary directory


def test_failed_verification_leaves_no_out(tmp_path, target, fixture_config, monkeypatch):
    src = _a_draft(tmp_path, fixture_config)
    real = convert_write.write_tensor

    def corrupt(m, fd, reader, derived, buf, progress, **kw):
        real(m, fd, reader, derived, buf, progress, **kw)
        if m.dst == "norm.weight":  # flip one byte just written
            os.lseek(fd, -1, os.SEEK_CUR)
            os.write(fd, b"\x55")

    monkeypatch.setattr(convert_write, "write_tensor", corrupt)
    out = tmp_path / "out"
    with pytest.raises(ConvertError, match="norm.weight differs"):
        convert(
            str(src), out, _spec(norm_before_residual=False), target=str(target), progress=False
        )
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]


def _main(args: list[str], capsys) -> tuple[int, str, str]:
    from recipecli.cli import main

    with pytest.raises(SystemExit) as exc:
        main(args)
    cap = capsys.readouterr()
    return exc.value.code, cap.out, cap.err


def test_existing_out_refused_without_force_and_foreign_folder_kept_with_it(
    tmp_path, target, fixture_config, capsys
):
    src = _a_draft(tmp_path, fixture_config)
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    args = ["convert", str(src), str(out), "--to", "eagle3"]
    code, _, err = _main(args, capsys)
    assert code == 2
    assert f"{out}: cannot write OUT: output exists" in err and "--force" in err
    assert (out / "keep.txt").read_text() == "mine"
    # --force replaces only a previous convert output: this folder is the user's
    code, _, err = _main(args + ["--force"], capsys)
    assert code == 2
    assert "is not a recipecli convert output" in err
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_force_replaces_a_previous_output_and_only_its_files(tmp_path, fixture_config, capsys):
    src = _a_draft(tmp_path, fixture_config)
    out = tmp_path / "out"
    args = ["convert", str(src), str(out), "--to", "eagle3"]
    assert _main(args, capsys)[0] == 0
    marker = json.loads((out / ".recipecli-convert.json").read_text())
    assert marker == {
        "recipecli_convert": 1,
        "to": "eagle3",
        "files": ["config.json", "model.safetensors"],
    }
    (out / "config.json").write_text("{}")  # a previous output, edited: still ours to replace
    assert _main(args + ["--force"], capsys)[0] == 0
    assert config_of(out)["architectures"] == ["LlamaForCausalLMEagle3"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    # a file the user added to a previous output: --force refuses, deletes nothing
    (out / "tokenizer.json").write_text("{}")
    before = sorted(p.name for p in out.iterdir())
    code, _, err = _main(args + ["--force"], capsys)
    assert code == 2
    assert "it holds tokenizer.json, which convert did not write" in err
    assert sorted(p.name for p in out.iterdir()) == before


# --------------------------------------------------------------------------- CLI and JSON


def test_cli_json_lists_every_mapping(tmp_path, target, fixture_config):
    src = _a_draft(tmp_path, fixture_config)
    out = tmp_path / "spec"
    proc = subprocess.run(
        [sys.executable, "-m", "recipecli", "convert", str(src), str(out), "--to", "speculators",
         "--target", str(target), "--norm-before-residual", "false", "--json"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    maps = {t["from"]: t["to"] for t in doc["tensors"]}
    assert maps["midlayer.self_attn.q_proj.weight"] == "layers.0.self_attn.q_proj.weight"
    assert maps["d2t"] == "d2t" and maps["lm_head.weight"] == "lm_head.weight"
    assert len(doc["tensors"]) == 15 == doc["verification"]["tensors_compared"]
    assert {t["field"] for t in doc["translated"]} == {"norm_before_residual"}
    assert doc["source_format"] == "A" and doc["to"] == "speculators" and doc["ok"] is True
    assert doc["check"]["engines"] == ["vllm"]
    # stderr is not a TTY: no progress lines, one summary line; JSON alone on stdout
    assert proc.stderr.splitlines() == [
        f"recipecli: wrote and verified 0.1 MB in 1 shard(s) into {out} ("
        + proc.stderr.rsplit("(", 1)[1].rstrip("\n")
    ]


def test_safetensors_conversion_never_imports_torch(tmp_path, target, fixture_config):
    src = _a_draft(tmp_path, fixture_config)
    code = (
        "import sys; from recipecli.convert import ConvertOptions, convert; "
        f"convert({str(src)!r}, {str(tmp_path / 'o')!r}, ConvertOptions(to='speculators', "
        f"norm_before_residual=False, dtype='bf16'), target={str(target)!r}, progress=False); "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_embed_drop_only_when_byte_identical_to_target(tmp_path, fixture_config):
    from recipecli.testing.builder import TensorSpec, write_checkpoint

    cfg = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"))
    d2t, t2d = valid_vocab_map(1000, 100, seed=15)
    specs = filled(draft_specs(cfg, d2t=d2t, t2d=t2d, with_embed=True), seed=1)
    src = tmp_path / "A"
    write_checkpoint(src, cfg, specs)
    embed = next(s for s in specs if s.name == "embed_tokens.weight")
    tgt_cfg = {**TARGET_CONFIG, "torch_dtype": "float16"}
    same = tmp_path / "same"
    write_checkpoint(
        same, tgt_cfg, [TensorSpec("model.embed_tokens.weight", "F16", (1000, 64), embed.value)]
    )
    other = tmp_path / "other"
    write_checkpoint(
        other,
        tgt_cfg,
        [TensorSpec("model.embed_tokens.weight", "F16", (1000, 64), embed.value + 1)],
    )
    opts = _spec(norm_before_residual=False, embed="drop")
    res = convert(str(src), tmp_path / "o1", opts, target=str(same), progress=False)
    assert "embed_tokens.weight" not in raw_tensors(tmp_path / "o1")
    assert res.plan.dropped[0][0] == "embed_tokens.weight"
    with pytest.raises(ConvertError, match="differs from the target"):
        convert(str(src), tmp_path / "o2", opts, target=str(other), progress=False)
    assert not (tmp_path / "o2").exists()
