"""`recipecli convert`: round trips, vocab maps, casts, sharding (.bin input, atomicity, the CLI:
test_convert_io.py).

Expected values are worked out by hand from the fixture configs and the engines' code: vLLM v0.33.0
(vllm/model_executor/models/llama_eagle3.py Eagle3LlamaForCausalLM.load_weights / compute_logits,
vllm/transformers_utils/configs/speculators/algos.py update_eagle3) and tokenspeed@f4d8ec6e
(python/tokenspeed/runtime/models/llama_eagle3.py LlamaForCausalLMEagle3.load_weights).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers.convert import (
    TARGET_CONFIG,
    config_of,
    raw_tensors,
    tiny,
    write_draft,
    write_target,
)

from recipecli.checkpoint import open_checkpoint
from recipecli.convert import (
    ConvertOptions,
    cast_bytes,
    convert,
    derive_t2d,
    draft_semantics,
    f32_to_bf16_bits,
    semantic_diff,
)
from recipecli.draft import canonical_draft
from recipecli.errors import ConvertError
from recipecli.testing.specs import valid_vocab_map

LAYER_SUFFIXES = [
    "self_attn.q_proj.weight",
    "self_attn.k_proj.weight",
    "self_attn.v_proj.weight",
    "self_attn.o_proj.weight",
    "mlp.gate_proj.weight",
    "mlp.up_proj.weight",
    "mlp.down_proj.weight",
    "input_layernorm.weight",
    "hidden_norm.weight",
    "post_attention_layernorm.weight",
]


def _spec(**kw) -> ConvertOptions:
    return ConvertOptions(to="speculators", **kw)


def _eagle3(**kw) -> ConvertOptions:
    return ConvertOptions(to="eagle3", **kw)


def _sem(path: Path, *, eagle3: bool = False) -> dict:
    d = canonical_draft(open_checkpoint(str(path)))
    return draft_semantics(d, norm_output_meaning="post-norm-chaining" if eagle3 else None)


# --------------------------------------------------------------------------- round trips


def test_format_a_to_speculators_to_eagle3_round_trip(tmp_path, target, fixture_config):
    cfg = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"))
    d2t, t2d = valid_vocab_map(1000, 100, seed=3)
    src = write_draft(tmp_path / "A", cfg, d2t=d2t, t2d=t2d)
    spec, flat = tmp_path / "spec", tmp_path / "flat"

    convert(str(src), spec, _spec(norm_before_residual=False), target=str(target), progress=False)
    c = config_of(spec)
    # format D layout (the speculators config vLLM's update_eagle3 reads; ModelOpt vllm template)
    assert c["architectures"] == ["Eagle3Speculator"]
    assert c["speculators_model_type"] == "eagle3"
    assert c["draft_vocab_size"] == 100
    assert c["norm_before_residual"] is False
    assert c["target_hidden_size"] is None
    assert c["norm_output"] is False and c["fc_norm"] is False and c["norm_before_fc"] is False
    assert (
        "eagle_aux_hidden_state_layer_ids" not in c
    )  # absent stays absent (both engines' default [2, L//2, L-3])
    assert c["torch_dtype"] == "float16"
    tlc = c["transformer_layer_config"]
    assert (tlc["hidden_size"], tlc["num_hidden_layers"], tlc["vocab_size"]) == (64, 1, 1000)
    assert (tlc["max_position_embeddings"], tlc["rms_norm_eps"]) == (2048, 1e-05)
    assert tlc["tie_word_embeddings"] is False
    sc = c["speculators_config"]
    assert sc["algorithm"] == "eagle3" and sc["default_proposal_method"] == "greedy"
    assert sc["proposal_methods"][0]["proposal_type"] == "greedy"
    assert sc["verifier"] == {
        "name_or_path": "meta-llama/Llama-3.1-8B-Instruct",  # the target config's _name_or_path
        "architectures": ["LlamaForCausalLM"],
    }

    a, s = raw_tensors(src), raw_tensors(spec)
    assert set(s) == {f"layers.0.{x}" for x in LAYER_SUFFIXES} | {
        "fc.weight",
        "norm.weight",
        "lm_head.weight",
        "d2t",
        "t2d",
    }
    for suffix in LAYER_SUFFIXES:
        assert s[f"layers.0.{suffix}"] == a[f"midlayer.{suffix}"]
    for name in ("fc.weight", "norm.weight", "lm_head.weight", "d2t", "t2d"):
        assert s[name] == a[name]

    convert(str(spec), flat, _eagle3(), target=str(target), progress=False)
    f = raw_tensors(flat)
    assert f == a  # same names, dtypes, shapes and bytes as the original release
    fc = config_of(flat)
    assert fc["architectures"] == ["LlamaForCausalLMEagle3"]
    assert fc["norm_before_residual"] is False and "norm_output" not in fc
    assert fc["draft_vocab_size"] == 100 and fc["num_hidden_layers"] == 1

    diff = semantic_diff(_sem(src), _sem(flat, eagle3=True))
    assert diff == {"norm_before_residual": (None, False)}  # the one intended translation


def test_format_b_aux_ids_round_trip(tmp_path, target, fixture_config):
    # SpecForge gpt-oss template: eagle_config ids [1, 17, 33] in layer-output convention
    cfg = tiny(fixture_config("sgl-project-SpecForge-template__gpt-oss-120B-eagle3"))
    d2t, t2d = valid_vocab_map(1000, 100, seed=4)
    src = write_draft(tmp_path / "B", cfg, d2t=d2t, t2d=t2d)
    spec, back = tmp_path / "spec", tmp_path / "back"
    res = convert(
        str(src), spec, _spec(norm_before_residual=False), target=str(target), progress=False
    )
    c = config_of(spec)
    assert c["eagle_aux_hidden_state_layer_ids"] == [2, 18, 34]  # hidden-state = layer-output + 1
    assert "eagle_config" not in c
    assert c["transformer_layer_config"]["head_dim"] == 16
    assert c["torch_dtype"] == "bfloat16"
    aux = [t for t in res.plan.translations if t.field == "eagle_aux_hidden_state_layer_ids"]
    assert aux[0].source["ids"] == [1, 17, 33] and aux[0].output["ids"] == [2, 18, 34]

    convert(str(spec), back, _eagle3(), target=str(target), progress=False)
    b = config_of(back)
    assert b["eagle_aux_hidden_state_layer_ids"] == [1, 17, 33]
    assert b["eagle_config"] == {"eagle_aux_hidden_state_layer_ids": [1, 17, 33]}
    assert canonical_draft(open_checkpoint(str(back))).format == "B"
    for key in ("hidden_size", "head_dim", "intermediate_size", "max_position_embeddings"):
        assert b[key] == cfg[key]
    assert raw_tensors(back) == raw_tensors(src)
    diff = semantic_diff(_sem(src), _sem(back, eagle3=True))
    assert diff == {"norm_before_residual": (None, False)}


def test_eagle31_specforge_norm_output_means_norm_before_head(tmp_path, target, fixture_config):
    # SpecForge qwen3 eagle3.1 template: fc_norm true, norm_output true (SpecForge: norm before
    # the head) → speculators norm_output false (no post-norm chaining: vLLM llama_eagle3.py
    # LlamaModel.forward)
    cfg = tiny(fixture_config("sgl-project-SpecForge-template__qwen3-30B-A3B-eagle3.1"))
    d2t, t2d = valid_vocab_map(1000, 100, seed=5)
    src = write_draft(tmp_path / "B31", cfg, d2t=d2t, t2d=t2d, fc_norm=True)
    spec = tmp_path / "spec"
    res = convert(
        str(src), spec, _spec(norm_before_residual=False), target=str(target), progress=False
    )
    c = config_of(spec)
    assert c["fc_norm"] is True and c["norm_output"] is False
    tlc = c["transformer_layer_config"]
    assert tlc["rope_theta"] == 1000000.0 and tlc["rope_scaling"] is None
    assert tlc["sliding_window"] is None and tlc["use_sliding_window"] is False
    assert {"fc_norm.0.weight", "fc_norm.1.weight", "fc_norm.2.weight"} <= set(raw_tensors(spec))
    fields = {t.field: t for t in res.plan.translations}
    assert fields["norm_output"].source is True and fields["norm_output"].output is False


def test_speculators_chaining_norm_output_to_eagle3(tmp_path, target, fixture_config):
    cfg = tiny(fixture_config("sgl-project-SpecForge-template__llama3-8B-eagle3"))
    d2t, t2d = valid_vocab_map(1000, 100, seed=6)
    a = write_draft(tmp_path / "A", cfg, d2t=d2t, t2d=t2d)
    spec = tmp_path / "spec"
    convert(str(a), spec, _spec(norm_before_residual=False), target=str(target), progress=False)
    # make it an Eagle 3.1 speculators draft that chains the post-norm hidden
    c = config_of(spec)
    c["norm_output"] = True
    (spec / "config.json").write_text(json.dumps(c))
    flat = tmp_path / "flat"
    convert(str(spec), flat, _eagle3(), target=str(target), progress=False)
    assert config_of(flat)["norm_output"] is True  # tokenspeed reads it as chaining
    assert _sem(flat, eagle3=True)["post_norm_chaining"] is True


# --------------------------------------------------------------------------- vocab maps


def test_modelopt_d2t_without_t2d_derives_t2d(tmp_path, target, fixture_config):
    cfg = tiny(
        fixture_config("nvidia-modelopt-template__LlamaForCausalLMEagle3-export"),
        num_hidden_layers=1,
        rms_norm_eps=1e-5,
        max_position_embeddings=4096,
        torch_dtype="bfloat16",
        vocab_size=10,
        draft_vocab_size=4,
        # ModelOpt's exporter fills the template's nulls from the base model; these three would
        # otherwise stay null, which transformers' strict LlamaConfig refuses (config.null_value)
        attention_bias=False,
        mlp_bias=False,
        hidden_act="silu",
    )
    cfg["eagle_config"] = {
        **cfg["eagle_config"],
        "eagle_aux_hidden_state_layer_ids": [1, 5, 9],
        "use_aux_hidden_state": True,
    }
    d2t = np.array([0, 1, 3, 3], dtype=np.int64)  # target ids 0, 2, 5, 6
    src = write_draft(tmp_path / "C", cfg, d2t=d2t)
    assert canonical_draft(open_checkpoint(str(src))).format == "C"
    tgt = write_target(tmp_path / "t10", {**TARGET_CONFIG, "vocab_size": 10})
    spec = tmp_path / "spec"
    res = convert(
        str(src), spec, _spec(norm_before_residual=False), target=str(tgt), progress=False
    )
    out = open_checkpoint(str(spec))
    assert out.read_raw_bytes("d2t") == open_checkpoint(str(src)).read_raw_bytes("d2t")
    assert out.tensors["t2d"].dtype == "BOOL" and out.tensors["t2d"].shape == (10,)
    assert out.read_tensor("t2d").tolist() == [
        True, False, True, False, False, True, True, False, False, False,
    ]  # fmt: skip
    c = config_of(spec)
    assert c["eagle_aux_hidden_state_layer_ids"] == [2, 6, 10]  # ModelOpt = layer-output
    dropped = dict(res.plan.config_keys_dropped)
    assert "eagle_config.use_input_layernorm_in_first_layer" in dropped
    moves = {m.dst: m for m in res.plan.moves}
    assert moves["t2d"].derived and moves["t2d"].src == "d2t"


def test_derive_t2d_by_hand():
    assert derive_t2d(np.array([0, 1, 3, 3]), 10).tolist() == [
        True, False, True, False, False, True, True, False, False, False,
    ]  # fmt: skip
    assert derive_t2d(np.zeros(4, dtype=np.int64), 4).all()  # identity map when Vd == V
    with pytest.raises(ConvertError, match="outside"):
        derive_t2d(np.array([0, 1, 2, 9]), 10)  # 3 + 9 = 12 >= 10
    with pytest.raises(ConvertError, match="strictly increasing"):
        derive_t2d(np.array([0, 2, 1, 1]), 10)  # ids 0, 3, 3, 4


def test_tie_word_embeddings_forced_false_when_vd_lt_v(tmp_path, target, fixture_config):
    cfg = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"), tie_word_embeddings=True)
    d2t, t2d = valid_vocab_map(1000, 100, seed=7)
    src = write_draft(tmp_path / "A", cfg, d2t=d2t, t2d=t2d)
    flat = tmp_path / "flat"
    res = convert(str(src), flat, _eagle3(), target=str(target), progress=False)
    assert config_of(flat)["tie_word_embeddings"] is False
    t = {x.field: x for x in res.plan.translations}["tie_word_embeddings"]
    assert (t.source, t.output) == (True, False)


# --------------------------------------------------------------------------- config carry-over


def test_rope_parameters_and_dtype_key_of_transformers5(tmp_path, target, fixture_config):
    base = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"))
    del base["torch_dtype"]
    rope = {
        "rope_type": "llama3",
        "rope_theta": 500000.0,
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    }
    cfg = {**base, "dtype": "bfloat16", "rope_parameters": rope, "head_dim": 16}
    d2t, t2d = valid_vocab_map(1000, 100, seed=8)
    src = write_draft(tmp_path / "A", cfg, d2t=d2t, t2d=t2d)
    spec = tmp_path / "spec"
    convert(str(src), spec, _spec(norm_before_residual=True), target=str(target), progress=False)
    c = config_of(spec)
    assert c["dtype"] == "bfloat16" and "torch_dtype" not in c
    assert c["transformer_layer_config"]["rope_parameters"] == rope
    assert c["transformer_layer_config"]["head_dim"] == 16


def test_legacy_rope_scaling_carried(tmp_path, target, fixture_config):
    scaling = {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}
    cfg = tiny(
        fixture_config("SafeAILab__EAGLE3-traineagle3-config"),
        rope_theta=500000.0,
        rope_scaling=scaling,
    )
    d2t, t2d = valid_vocab_map(1000, 100, seed=9)
    src = write_draft(tmp_path / "A", cfg, d2t=d2t, t2d=t2d)
    flat = tmp_path / "flat"
    convert(str(src), flat, _eagle3(), target=str(target), progress=False)
    c = config_of(flat)
    assert c["rope_theta"] == 500000.0 and c["rope_scaling"] == scaling


def test_config_layer_count_follows_the_tensors(tmp_path, target, fixture_config):
    # format A: num_hidden_layers is not reliable (one public 13B draft's config says 40 for
    # its single layer); the tensors decide
    cfg = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"))
    d2t, t2d = valid_vocab_map(1000, 100, seed=10)
    src = write_draft(tmp_path / "A", cfg, d2t=d2t, t2d=t2d)
    c = config_of(src)
    c["num_hidden_layers"] = 40
    (src / "config.json").write_text(json.dumps(c))
    flat = tmp_path / "flat"
    res = convert(str(src), flat, _eagle3(), target=str(target), progress=False)
    assert config_of(flat)["num_hidden_layers"] == 1
    t = {x.field: x for x in res.plan.translations}["num_hidden_layers"]
    assert (t.source, t.output) == (40, 1)


# --------------------------------------------------------------------------- shards, dtype


def test_sharded_input_and_sharded_output(tmp_path, target, fixture_config):
    cfg = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"))
    d2t, t2d = valid_vocab_map(1000, 100, seed=11)
    src = write_draft(tmp_path / "A", cfg, d2t=d2t, t2d=t2d, num_shards=3, with_embed=True)
    spec = tmp_path / "spec"
    opts = _spec(norm_before_residual=False, max_shard_size=40_000)
    res = convert(str(src), spec, opts, target=str(target), progress=False)
    index = json.loads((spec / "model.safetensors.index.json").read_text())
    shards = sorted(set(index["weight_map"].values()))
    assert len(shards) == len(res.shards) > 1
    assert shards[0] == f"model-00001-of-{len(shards):05d}.safetensors"
    # embed_tokens [1000, 64] F16 = 128000 bytes > 40000: a shard of its own
    embed_shard = index["weight_map"]["embed_tokens.weight"]
    assert [n for n, s in index["weight_map"].items() if s == embed_shard] == [
        "embed_tokens.weight"
    ]
    assert index["metadata"]["total_size"] == sum(t[2].__len__() for t in raw_tensors(src).values())
    a, s = raw_tensors(src), raw_tensors(spec)
    for suffix in LAYER_SUFFIXES:
        assert s[f"layers.0.{suffix}"] == a[f"midlayer.{suffix}"]
    assert s["embed_tokens.weight"] == a["embed_tokens.weight"]


def test_dtype_cast_fp16_to_bf16_matches_torch_and_keeps_int_buffers(
    tmp_path, target, fixture_config
):
    torch = pytest.importorskip("torch")
    cfg = tiny(fixture_config("SafeAILab__EAGLE3-traineagle3-config"))
    d2t, t2d = valid_vocab_map(1000, 100, seed=12)
    src = write_draft(tmp_path / "A", cfg, d2t=d2t, t2d=t2d)
    spec = tmp_path / "spec"
    res = convert(
        str(src),
        spec,
        _spec(norm_before_residual=False, dtype="bf16"),
        target=str(target),
        progress=False,
    )
    a, s = raw_tensors(src), raw_tensors(spec)
    q = s["layers.0.self_attn.q_proj.weight"]
    assert q[0] == "BF16" and q[1] == (64, 128)
    want = (
        torch.frombuffer(bytearray(a["midlayer.self_attn.q_proj.weight"][2]), dtype=torch.float16)
        .to(torch.bfloat16)
        .view(torch.int16)
        .numpy()
        .tobytes()
    )
    assert q[2] == want
    assert s["d2t"] == a["d2t"] and s["d2t"][0] == "I64"
    assert s["t2d"] == a["t2d"] and s["t2d"][0] == "BOOL"
    assert config_of(spec)["torch_dtype"] == "bfloat16"
    assert _sem(spec)["dtype"] == "BF16"
    assert {t.field for t in res.plan.translations} >= {"torch_dtype"}


def test_cast_bytes_matches_torch_on_special_values():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    special = np.array(
        [
            0.0,
            -0.0,
            1.0,
            -2.5,
            np.inf,
            -np.inf,
            np.nan,
            3.4e38,
            -3.4e38,
            1e-40,
            65504.0,
            70000.0,
            6e-8,
        ],
        dtype=np.float32,
    )
    # halfway cases for bf16: 0x3F808000 ties to even 0x3F80, 0x3F818000 to 0x3F82
    ties = np.array([0x3F808000, 0x3F818000, 0x3F808001], dtype=np.uint32).view(np.float32)
    f32 = np.concatenate([special, ties, rng.standard_normal(5000).astype(np.float32) * 100])
    t = torch.from_numpy(f32.copy())
    bf = cast_bytes(f32.tobytes(), "F32", "BF16")
    ours = np.frombuffer(bf, dtype="<u2")
    theirs = t.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    nan = np.isnan(f32)
    np.testing.assert_array_equal(ours[~nan], theirs[~nan])
    # NaN: c10's scalar rule gives 0x7FC0 (torch's vectorised CPU path 0x7FFF); both are NaN
    assert ours[nan].tolist() == [0x7FC0]
    assert f32_to_bf16_bits(ties).tolist() == [0x3F80, 0x3F82, 0x3F81]
    f16 = cast_bytes(f32.tobytes(), "F32", "F16")
    finite = np.isfinite(f32) & ~np.isnan(f32)
    got16 = np.frombuffer(f16, dtype="<f2")
    np.testing.assert_array_equal(got16[finite], t.to(torch.float16).numpy()[finite])
    # bf16 → fp16 and fp16 → bf16 through the exact float32 (same as torch)
    bf_t = t.to(torch.bfloat16)
    got = cast_bytes(bf, "BF16", "F16")
    want = bf_t.to(torch.float16).numpy()
    np.testing.assert_array_equal(np.frombuffer(got, "<f2")[finite], want[finite])
    f16_t = t.to(torch.float16)
    got = np.frombuffer(cast_bytes(f16_t.numpy().tobytes(), "F16", "BF16"), dtype="<u2")
    want = f16_t.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    np.testing.assert_array_equal(got[~nan], want[~nan])
