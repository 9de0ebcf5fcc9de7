"""`check` on full-size sparse checkpoints built from the real fixture configs.

Every expected verdict below was worked out by hand from the fixture configs and the engines' code
(vLLM v0.33.0, lightseekorg/tokenspeed@f4d8ec6e, SGLang v0.5.23: file and function named in the
comments); the arithmetic is in the comments. pad64(v) = ceil(v / 64) * 64.

SGLang (python/sglang/srt/speculative/eagle_worker_v2.py EagleDraftWorker.__init__ builds the draft
with the target's context length; configs/model_config.py ModelConfig._derive_context_length
raises when it exceeds the draft's derived one, SGLang PR #9388) refuses every draft here whose
max_position_embeddings is below the target's: that is ``("maxpos.short", "sglang")``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers.fixtures import load_fixture_config

from recipecli.check import run_check
from recipecli.checkpoint import open_checkpoint
from recipecli.testing.builder import write_checkpoint
from recipecli.testing.specs import draft_specs, target_specs, valid_vocab_map

TPS = (1, 2, 4, 8)


def _build(tmp_path_factory, name, config, specs):
    d = tmp_path_factory.mktemp(name)
    write_checkpoint(d, config, specs)
    return open_checkpoint(str(d))


@pytest.fixture(scope="module")
def targets(tmp_path_factory):
    out = {}
    for key, fixture in {
        "llama8b": "meta-llama__Meta-Llama-3.1-8B",
        "qwen3_8b": "Qwen__Qwen3-8B",
        "qwen3_30b": "Qwen__Qwen3-30B-A3B",
        "gptoss": "openai__gpt-oss-120b",
        "dsv3": "deepseek-ai__DeepSeek-V3",
        "m3_nvfp4": "nvidia__MiniMax-M3-NVFP4",
    }.items():
        cfg = load_fixture_config(fixture)
        out[key] = _build(tmp_path_factory, key, cfg, target_specs(cfg))
    return out


def _draft(tmp_path_factory, fixture_or_cfg, *, V, **kw):
    cfg = load_fixture_config(fixture_or_cfg) if isinstance(fixture_or_cfg, str) else fixture_or_cfg
    Vd = cfg.get("draft_vocab_size") or V
    if Vd < V:
        d2t, t2d = valid_vocab_map(V, Vd, seed=1)
        kw.setdefault("d2t", d2t)
        kw.setdefault("t2d", t2d)
    name = fixture_or_cfg if isinstance(fixture_or_cfg, str) else "custom"
    return _build(tmp_path_factory, name.replace("_", "-")[:40], cfg, draft_specs(cfg, **kw))


def codes(res, severity=None):
    return {(f.code, f.engine) for f in res.findings if severity is None or f.severity == severity}


def sharing(res, engine):
    return {r.tp: r for r in res.embed_sharing if r.engine == engine}


def test_llama8b_with_eagle3_trainer_draft(targets, tmp_path_factory):
    # Format A: LlamaForCausalLM, 1 layer, draft_vocab_size 32000, no aux ids, maxpos 2048.
    draft = _draft(tmp_path_factory, "SafeAILab__EAGLE3-traineagle3-config", V=128256)
    res = run_check(targets["llama8b"], draft, tps=TPS)
    assert res.draft.format == "A"
    # tokenspeed get_config: 'LlamaForCausalLM' + 'NextN', which registry.py does not register
    # SGLang model_config.py _config_draft_model keeps 'LlamaForCausalLM', registered as the
    # target class, not an EAGLE3 draft (models/registry.py) -> draft.arch_name too
    assert codes(res, "error") == {("draft.arch_name", "tokenspeed"), ("draft.arch_name", "sglang")}
    assert codes(res, "warning") == set()
    # no ids: both engines capture the default (2, L//2, L-3), which EAGLE trained this release on
    aux = next(f for f in res.findings if f.code == "aux.default" and f.engine == "vllm")
    assert aux.evidence["layers"] == [2, 16, 29]  # L = 32: (2, 32 // 2, 32 - 3)
    assert aux.severity == "info"
    # vLLM speculative.py _maybe_override_draft_max_position_embeddings raises 2048 to the target's
    assert ("maxpos.short", "vllm") in codes(res, "info")
    assert res.ready_tps("vllm") == [1, 2, 4, 8] and res.ready_tps("tokenspeed") == []
    # tokenspeed stops at the architecture: no sharing rows for it
    assert sharing(res, "tokenspeed") == {}
    # pad64(128256) = 128256 (2004 * 64); per rank at TP8: 16032 rows
    assert sharing(res, "vllm")[8].target_shape == (16032, 4096)
    assert (
        sharing(res, "vllm")[1].verdict == "share" and sharing(res, "vllm")[1].head_verdict == "own"
    )


def test_llama8b_with_specforge_draft(targets, tmp_path_factory):
    draft = _draft(tmp_path_factory, "sgl-project-SpecForge-template__llama3-8B-eagle3", V=128256)
    res = run_check(targets["llama8b"], draft, tps=TPS)
    assert res.draft.format == "B"
    # draft max_position_embeddings 2048 < the target's 131072: SGLang refuses to start
    assert codes(res, "error") == {("maxpos.short", "sglang")}
    assert ("draft.arch_name", "tokenspeed") not in codes(res)  # LlamaForCausalLMEagle3
    assert res.ready_tps("tokenspeed") == [1, 2, 4, 8]


def test_qwen3_8b(targets, tmp_path_factory):
    # H 4096, hd 128 explicit, Vd 32000 of V 151936; pad64(151936) = 151936 (2374 * 64), /8 = 18992.
    draft = _draft(tmp_path_factory, "sgl-project-SpecForge-template__qwen3-8b-eagle3", V=151936)
    res = run_check(targets["qwen3_8b"], draft, tps=TPS)
    # tokenspeed qwen3.py Qwen3Model.forward ends `return hidden_states, None`: no aux states
    assert codes(res, "error") == {("target.no_aux_capture", "tokenspeed")}
    assert ("maxpos.short", "tokenspeed") not in codes(res)  # 40960 == 40960
    assert sharing(res, "tokenspeed")[8].target_shape == (18992, 4096)
    assert res.ready_tps("vllm") == [1, 2, 4, 8]


@pytest.mark.parametrize(
    "template,fc_norm", [("qwen3-30B-A3B-eagle3", False), ("qwen3-30B-A3B-eagle3.1", True)]
)
def test_qwen3_30b_a3b(targets, tmp_path_factory, template, fc_norm):
    # H 2048, nh 32, nkv 4, hd 128: q_proj [4096, 4096]; at TP8 the 4 KV heads divide 8 → OK.
    draft = _draft(
        tmp_path_factory, f"sgl-project-SpecForge-template__{template}", V=151936, fc_norm=fc_norm
    )
    res = run_check(targets["qwen3_30b"], draft, tps=TPS)
    assert res.draft.fc_norm is fc_norm
    # tokenspeed qwen3_moe.py Qwen3MoeModel.forward ends `return hidden_states, None`
    # SGLang: 2048 < 40960 refuses to start (maxpos.short error)
    assert codes(res, "error") == {
        ("target.no_aux_capture", "tokenspeed"),
        ("maxpos.short", "sglang"),
    }
    assert ("maxpos.short", "tokenspeed") in codes(res, "warning")  # 2048 < 40960
    assert res.ready_tps("tokenspeed") == []
    assert res.ready_tps("vllm") == [1, 2, 4, 8]
    if fc_norm:
        info = next(f for f in res.findings if f.code == "norm.output_meaning")
        assert (
            info.evidence["meaning"] == "norm-before-head"
        )  # SpecForge meaning (docs/check.md#norm-flags)


def test_gpt_oss_120b(targets, tmp_path_factory):
    # Nested-only ids [1, 17, 33] (SpecForge, layer-output convention) with L = 36:
    # trained on hidden_states [2, 18, 34]; tokenspeed (factory.py _eagle_aux_layer_ids reads
    # eagle_config; BaseCausalLM adds 1) → [2, 18, 34]; vLLM's V2 runner (eagle3_utils.py
    # get_eagle3_aux_layers_from_config) does not read eagle_config's ids → default
    # (2, 36 // 2, 36 - 3) = [2, 18, 33]: the last state is one layer early, silently.
    draft = _draft(
        tmp_path_factory, "sgl-project-SpecForge-template__gpt-oss-120B-eagle3", V=201088
    )
    res = run_check(targets["gptoss"], draft, tps=TPS)
    # SGLang: draft maxpos 4096 < gpt-oss's 131072 -> refuses to start. Its gpt_oss.py
    # GptOssForCausalLM.set_eagle3_layers_to_capture adds 1 (max id 33 != L = 36) -> [2, 18, 34]
    assert codes(res, "error") == {("aux.default", "vllm"), ("maxpos.short", "sglang")}
    conv = next(f for f in res.findings if f.code == "aux.convention")
    assert conv.evidence["captured"] == {
        "vllm": [2, 18, 33],
        "tokenspeed": [2, 18, 34],
        "sglang": [2, 18, 34],
    }
    assert conv.evidence["trained_on"] == [2, 18, 34]
    assert conv.evidence["differs"] == ["vllm"]
    assert res.ready_tps("tokenspeed") == [1, 2, 4, 8]
    # pad64(201088) = 201088 (3142 * 64); TP4 → 50272 rows (docs/engines/vllm.md)
    assert sharing(res, "vllm")[4].target_shape == (50272, 2880)


def test_deepseek_v3(targets, tmp_path_factory):
    # Draft nh 56, nkv 8, H 7168 → hd 128; q_proj [7168, 14336]; 56 % 8 == 0 → TP8 fine.
    # nested ids [1, 29, 57] +1 → [2, 30, 58] = vLLM's default (2, 61 // 2, 61 - 3), which vLLM
    # captures since it does not read the nested ids → no engine differs.
    draft = _draft(
        tmp_path_factory, "sgl-project-SpecForge-template__deepseek-v3-671b-eagle3", V=129280
    )
    res = run_check(targets["dsv3"], draft, tps=TPS)
    assert res.target.mla and res.target.L == 61
    assert codes(res, "error") == set()
    conv = next(f for f in res.findings if f.code == "aux.convention")
    assert conv.evidence["differs"] == []
    assert conv.evidence["captured"]["vllm"] == [2, 30, 58]
    # tokenspeed deepseek_v3.py DeepseekV3Model builds its embedding REPLICATED (no TP args):
    # [pad64(129280), 7168] = [129280, 7168] on every rank (2020 * 64 = 129280). The Llama draft's
    # sharded one at TP8 is [16160, 7168] → set_embed_and_head rebuilds it replicated and shares.
    ts = sharing(res, "tokenspeed")
    assert ts[8].target_shape == (129280, 7168) and ts[8].draft_sharded_shape == (16160, 7168)
    assert ts[8].verdict == "share-replicated" and ts[1].verdict == "share"


M3_DRAFT = {
    "architectures": ["LlamaForCausalLMEagle3"],
    "model_type": "llama",
    "hidden_size": 6144,
    "intermediate_size": 16384,
    "num_attention_heads": 48,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "num_hidden_layers": 1,
    "vocab_size": 200064,
    "rms_norm_eps": 1e-6,
    "max_position_embeddings": 1048576,
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
    "fc_norm": True,
    "norm_output": True,
    "eagle_aux_hidden_state_layer_ids": [2, 30, 57],
}


def test_minimax_m3_nvfp4_wrapper(targets, tmp_path_factory):
    # Target text config under text_config: H 6144, V 200064, L 60, 64 heads / 4 KV heads.
    # V = Vd = 200064 = 3126 * 64 → pad64 = 200064; no draft_vocab_size → tokenspeed borrows the head.
    draft = _draft(tmp_path_factory, M3_DRAFT, V=200064, fc_norm=True, with_lm_head=False)
    res = run_check(targets["m3_nvfp4"], draft, tps=TPS)
    assert res.target.wrapper == "text_config" and res.target.H == 6144 and res.target.V == 200064
    # SGLang llama_eagle3.py LlamaForCausalLMEagle3.__init__ reads config.draft_vocab_size as an
    # attribute: absent -> AttributeError at start-up
    assert codes(res, "error") == {("config.draft_vocab_size_absent", "sglang")}
    ts, vl = sharing(res, "tokenspeed"), sharing(res, "vllm")
    # tokenspeed keeps MiniMax-M3's embedding replicated: [200064, 6144] on every rank.
    assert ts[1].verdict == "share"  # sharded draft at TP1 == replicated
    for tp, rows in ((2, 100032), (4, 50016), (8, 25008)):
        assert ts[tp].target_shape == (200064, 6144)
        assert ts[tp].draft_sharded_shape == (rows, 6144)
        assert ts[tp].verdict == "share-replicated"
    assert all(r.head_verdict == "share" for r in ts.values())
    # bytes per rank of the shared embedding at TP4: 200064*6144*2 = 2,458,386,432 (~2.46 GB)
    # replicated on tokenspeed vs 50016*6144*2 = 614,596,608 (~0.61 GB) sharded on vLLM.
    assert ts[4].embed_bytes_per_rank == 2_458_386_432
    assert vl[4].embed_bytes_per_rank == 614_596_608
    assert vl[4].verdict == "share" and vl[4].head_verdict == "share"
    # Explicit top-level ids of a format-B draft are layer outputs: trained on [3, 31, 58];
    # tokenspeed captures ids + 1 = [3, 31, 58], vLLM takes them as-is = [2, 30, 57].
    conv = next(f for f in res.findings if f.code == "aux.convention")
    # SGLang reads only eagle_config's ids (spec_aux_hidden_state.py
    # _resolve_eagle_aux_hidden_state): none -> minimax_m3_vl.py
    # MiniMaxM3SparseForConditionalGeneration.set_eagle3_layers_to_capture shifts the default
    # (2, 30, 57) by 1 too -> [3, 31, 58], which is what this draft was trained on.
    assert conv.evidence["captured"] == {
        "vllm": [2, 30, 57],
        "tokenspeed": [3, 31, 58],
        "sglang": [3, 31, 58],
    }
    assert conv.evidence["differs"] == ["vllm"]
    assert ("aux.mismatch", "vllm") in codes(res, "warning")


def test_check_cli_json_on_snapshots(targets, tmp_path_factory, tmp_path):
    draft = _draft(tmp_path_factory, "sgl-project-SpecForge-template__llama3-8B-eagle3", V=128256)
    snap_t, snap_d = tmp_path / "t.json", tmp_path / "d.json"
    for ck, snap in ((targets["llama8b"], snap_t), (draft, snap_d)):
        subprocess.run(
            [sys.executable, "-m", "recipecli", "inspect", ck.source, "--save-metadata", str(snap)],
            check=True,
            capture_output=True,
        )
    proc = subprocess.run(
        # serving length 2048 = the draft's max_position_embeddings: SGLang starts (its draft
        # worker gets the serving length, configs/model_config.py _derive_context_length)
        [
            sys.executable,
            "-m",
            "recipecli",
            "check",
            str(snap_t),
            str(snap_d),
            "--json",
            "--max-model-len",
            "2048",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc) >= {"target", "draft", "findings", "embed_sharing", "ok"}
    assert doc["ok"] is True
    assert doc["draft"]["Vd"] == 32000 and doc["draft"]["sources"]["Vd"] == "draft_vocab_size"
    row = next(r for r in doc["embed_sharing"] if r["engine"] == "tokenspeed" and r["tp"] == 8)
    assert row == {**row, "target_shape": [16032, 4096], "verdict": "share", "tp": 8}


def test_example_verdicts_and_no_torch_with_kernel_skip():
    code = (
        "import sys\nfrom recipecli.cli import main\n"
        "try:\n    main(['check', '--example', 'llama3.1-8b-eagle3', '--kernel', 'skip'])\n"
        "except SystemExit as e:\n    rc = e.code\n"
        "print('TORCH' if 'torch' in sys.modules else 'NOTORCH', rc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "vllm        READY" in proc.stdout and "tokenspeed  NOT READY" in proc.stdout
    assert proc.stdout.strip().endswith("NOTORCH 1")


def test_example_kernel_on_runs_the_kernel_check(tmp_path):
    # --kernel on runs it (the default answers from a cached run only: tests/kernelcheck)
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    proc = subprocess.run(
        [sys.executable, "-m", "recipecli", "check", "--example", "llama3.1-8b-eagle3", "--json",
         "--kernel", "on"],
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)},
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr  # tokenspeed cannot load the draft as published
    kernel = [f for f in json.loads(proc.stdout)["findings"] if f["code"].startswith("kernel.")]
    # the example draft has equal-width fp16 norms with one eps: every engine's guard passes
    assert [f["code"] for f in kernel] == ["kernel.pass"]
