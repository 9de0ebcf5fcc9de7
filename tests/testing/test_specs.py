"""Shapes of the full-size spec lists, worked out by hand from the fixture configs."""

from __future__ import annotations

import numpy as np
import pytest

from recipecli.testing.specs import draft_specs, target_specs, total_bytes, valid_vocab_map


def shapes(specs):
    return {s.name: s.shape for s in specs}


def dtypes(specs):
    return {s.name: s.dtype for s in specs}


# ----------------------------------------------------------------------------- drafts


def test_llama31_8b_draft_matches_engine_facts_worked_example(fixture_config):
    # SafeAILab traineagle3 config: H=4096, nh=32, nkv=8, no head_dim -> hd=4096/32=128,
    # I=14336, V=128256, Vd=32000, torch_dtype float16 (docs/engines/vllm.md#tensors example).
    d2t, t2d = valid_vocab_map(128256, 32000, seed=1)
    specs = draft_specs(fixture_config("SafeAILab__EAGLE3-traineagle3-config"), d2t=d2t, t2d=t2d)
    s = shapes(specs)
    assert s["midlayer.self_attn.q_proj.weight"] == (4096, 8192)  # [32*128, 2*4096]
    assert s["midlayer.self_attn.k_proj.weight"] == (1024, 8192)  # [8*128, 2*4096]
    assert s["midlayer.self_attn.v_proj.weight"] == (1024, 8192)
    assert s["midlayer.self_attn.o_proj.weight"] == (4096, 4096)
    assert s["midlayer.mlp.gate_proj.weight"] == (14336, 4096)
    assert s["midlayer.mlp.down_proj.weight"] == (4096, 14336)
    assert s["midlayer.hidden_norm.weight"] == (4096,)
    assert s["fc.weight"] == (4096, 12288)  # [H, 3*4096]
    assert s["lm_head.weight"] == (32000, 4096)
    assert s["d2t"] == (32000,)
    assert s["t2d"] == (128256,)
    assert "embed_tokens.weight" not in s
    dt = dtypes(specs)
    assert dt["fc.weight"] == "F16" and dt["d2t"] == "I64" and dt["t2d"] == "BOOL"
    # the only tensors with values are the norms and the vocab maps
    valued = {x.name for x in specs if x.value is not None}
    assert valued == {
        "midlayer.input_layernorm.weight",
        "midlayer.hidden_norm.weight",
        "midlayer.post_attention_layernorm.weight",
        "norm.weight",
        "d2t",
        "t2d",
    }


def test_qwen3_8b_draft_head_dim_128_bf16(fixture_config):
    # SpecForge qwen3-8b-eagle3: H=4096, nh=32, nkv=8, head_dim=128, I=12288, bfloat16
    specs = draft_specs(fixture_config("sgl-project-SpecForge-template__qwen3-8b-eagle3"))
    s = shapes(specs)
    assert s["midlayer.self_attn.q_proj.weight"] == (4096, 8192)
    assert s["midlayer.self_attn.k_proj.weight"] == (1024, 8192)
    assert s["midlayer.mlp.up_proj.weight"] == (12288, 4096)
    assert dtypes(specs)["midlayer.self_attn.q_proj.weight"] == "BF16"


def test_qwen3_30b_draft_head_dim_is_not_h_over_nh(fixture_config):
    # qwen3-30B-A3B-eagle3: H=2048, nh=32, nkv=4, head_dim=128 (H/nh would be 64)
    s = shapes(draft_specs(fixture_config("sgl-project-SpecForge-template__qwen3-30B-A3B-eagle3")))
    assert s["midlayer.self_attn.q_proj.weight"] == (4096, 4096)  # [32*128, 2*2048]
    assert s["midlayer.self_attn.k_proj.weight"] == (512, 4096)  # [4*128, 2*2048]
    assert s["midlayer.self_attn.o_proj.weight"] == (2048, 4096)
    assert s["fc.weight"] == (2048, 6144)
    assert s["lm_head.weight"] == (32000, 2048)


def test_eagle31_fc_norm_and_norm_before_fc_speculators_naming(fixture_config):
    # qwen3-30B-A3B-eagle3.1 (Ht = H = 2048), speculators naming, k=3
    cfg = fixture_config("sgl-project-SpecForge-template__qwen3-30B-A3B-eagle3.1")
    specs = draft_specs(cfg, naming="layers.0", fc_norm=True, norm_before_fc=True, with_embed=True)
    s = shapes(specs)
    assert s["layers.0.self_attn.q_proj.weight"] == (4096, 4096)
    assert [s[f"fc_norm.{i}.weight"] for i in range(3)] == [(2048,)] * 3
    assert "fc_norm.3.weight" not in s
    assert s["input_norm.weight"] == (6144,)  # k*Ht = 3*2048
    assert s["embed_tokens.weight"] == (151936, 2048)  # [V, H]
    assert not any(n.startswith("midlayer.") for n in s)


def test_target_hidden_and_k_change_fc_width(fixture_config):
    # Llama-3.1-8B-shaped draft on an 8192-wide target with 4 aux states: fc [4096, 4*8192]
    cfg = fixture_config("sgl-project-SpecForge-template__llama3-8B-eagle3")
    specs = draft_specs(cfg, k=4, target_hidden=8192, norm_before_fc=True, with_lm_head=False)
    s = shapes(specs)
    assert s["fc.weight"] == (4096, 32768)
    assert s["input_norm.weight"] == (32768,)
    assert "lm_head.weight" not in s


def test_gpt_oss_and_deepseek_drafts(fixture_config):
    # gpt-oss-120B-eagle3: H=2880, nh=64, nkv=8, head_dim=64, I=17280
    s = shapes(draft_specs(fixture_config("sgl-project-SpecForge-template__gpt-oss-120B-eagle3")))
    assert s["midlayer.self_attn.q_proj.weight"] == (4096, 5760)
    assert s["midlayer.self_attn.k_proj.weight"] == (512, 5760)
    assert s["midlayer.self_attn.o_proj.weight"] == (2880, 4096)
    assert s["fc.weight"] == (2880, 8640)
    # deepseek-v3-671b-eagle3: H=7168, nh=56, nkv=8, no head_dim -> 128, I=40960
    s = shapes(
        draft_specs(fixture_config("sgl-project-SpecForge-template__deepseek-v3-671b-eagle3"))
    )
    assert s["midlayer.self_attn.q_proj.weight"] == (7168, 14336)
    assert s["midlayer.self_attn.k_proj.weight"] == (1024, 14336)
    assert s["midlayer.mlp.gate_proj.weight"] == (40960, 7168)
    assert s["fc.weight"] == (7168, 21504)


def test_speculators_transformer_layer_config():
    cfg = {
        "speculators_model_type": "eagle3",
        "draft_vocab_size": 32000,
        "target_hidden_size": 8192,
        "torch_dtype": "bfloat16",
        "transformer_layer_config": {
            "hidden_size": 6144,
            "num_attention_heads": 48,
            "num_key_value_heads": 8,
            "intermediate_size": 16384,
            "vocab_size": 128256,
        },
    }
    s = shapes(draft_specs(cfg, naming="layers.0", with_embed=True))
    assert s["layers.0.self_attn.q_proj.weight"] == (6144, 12288)  # hd = 6144/48 = 128
    assert s["fc.weight"] == (6144, 24576)  # 3 * 8192
    assert s["embed_tokens.weight"] == (128256, 6144)


def test_template_with_nulls_is_refused(fixture_config):
    with pytest.raises(ValueError, match="hidden_size"):
        draft_specs(fixture_config("nvidia-modelopt-template__LlamaForCausalLMEagle3-export"))


def test_eagle1_bias_adds_fc_bias(fixture_config):
    s = shapes(draft_specs({**fixture_config("yuhuili__EAGLE-LLaMA3-Instruct-8B"), "bias": True}))
    assert s["fc.bias"] == (4096,)


def test_valid_vocab_map_properties():
    d2t, t2d = valid_vocab_map(1000, 100, seed=3)
    assert d2t.dtype == np.int64 and d2t.shape == (100,)
    assert t2d.dtype == np.bool_ and t2d.shape == (1000,)
    ids = np.arange(100) + d2t
    assert np.all(np.diff(ids) > 0) and ids.min() >= 0 and ids.max() < 1000
    assert t2d.sum() == 100 and t2d[ids].all()
    d2t_again, _ = valid_vocab_map(1000, 100, seed=3)
    assert np.array_equal(d2t, d2t_again)
    full, full_t2d = valid_vocab_map(50, 50)
    assert not full.any() and full_t2d.all()  # Vd == V: identity, all-zero offsets


# ----------------------------------------------------------------------------- targets


def test_llama31_8b_target(fixture_config):
    specs = target_specs(fixture_config("meta-llama__Meta-Llama-3.1-8B"))
    s = shapes(specs)
    # embed + 32 layers x (4 attn + 3 mlp + 2 norms) + norm + lm_head
    assert len(specs) == 1 + 32 * 9 + 2
    assert s["model.embed_tokens.weight"] == (128256, 4096)
    assert s["model.layers.31.self_attn.k_proj.weight"] == (1024, 4096)
    assert s["model.layers.0.mlp.down_proj.weight"] == (4096, 14336)
    assert s["lm_head.weight"] == (128256, 4096)
    # params: 2*128256*4096 + 32*(2*4096*4096 + 2*1024*4096 + 3*14336*4096 + 2*4096) + 4096
    #       = 1,050,673,152 + 32*218,112,000 + 4096 = 8,030,261,248 (the familiar 8.03B), x2 bytes
    assert total_bytes(specs) == 2 * 8_030_261_248


def test_llama31_70b_target_gqa(fixture_config):
    s = shapes(target_specs(fixture_config("meta-llama__Meta-Llama-3.1-70B")))
    assert s["model.layers.79.self_attn.q_proj.weight"] == (8192, 8192)
    assert s["model.layers.79.self_attn.v_proj.weight"] == (1024, 8192)  # 8 kv heads x 128
    assert s["model.layers.0.mlp.gate_proj.weight"] == (28672, 8192)
    assert "model.layers.80.input_layernorm.weight" not in s


def test_qwen3_8b_target_qk_norm(fixture_config):
    specs = target_specs(fixture_config("Qwen__Qwen3-8B"))
    s = shapes(specs)
    assert len(specs) == 1 + 36 * 11 + 2  # 9 per layer + q_norm + k_norm
    assert s["model.layers.0.self_attn.q_norm.weight"] == (128,)
    assert s["model.layers.0.self_attn.q_proj.weight"] == (4096, 4096)
    norm = next(x for x in specs if x.name == "model.layers.0.self_attn.q_norm.weight")
    assert norm.value is not None and abs(float(np.mean(norm.value)) - 1.0) < 0.01


def test_qwen3_moe_and_vl_wrapper(fixture_config):
    s = shapes(target_specs(fixture_config("Qwen__Qwen3-30B-A3B")))
    # 32 heads x head_dim 128 = 4096 rows from H=2048
    assert s["model.layers.0.self_attn.q_proj.weight"] == (4096, 2048)
    assert s["model.layers.47.mlp.gate.weight"] == (128, 2048)
    assert s["model.layers.47.mlp.experts.127.down_proj.weight"] == (2048, 768)
    assert "model.layers.0.mlp.gate_proj.weight" not in s  # every layer MoE
    vl = shapes(target_specs(fixture_config("Qwen__Qwen3-VL-30B-A3B-Instruct")))
    assert vl["language_model.model.embed_tokens.weight"] == (151936, 2048)
    assert vl["language_model.model.layers.0.mlp.experts.0.gate_proj.weight"] == (768, 2048)
    assert vl["language_model.model.norm.weight"] == (2048,)
    assert vl["lm_head.weight"] == (151936, 2048)  # documented: top-level head
    assert not any(n.startswith("model.") for n in vl)


def test_gpt_oss_mxfp4_layout(fixture_config):
    specs = target_specs(fixture_config("openai__gpt-oss-120b"))
    s, dt = shapes(specs), dtypes(specs)
    # H=2880 -> 90 blocks of 32; 2I = 5760; E=128
    assert s["model.layers.0.mlp.experts.gate_up_proj_blocks"] == (128, 5760, 90, 16)
    assert s["model.layers.0.mlp.experts.gate_up_proj_scales"] == (128, 5760, 90)
    assert s["model.layers.35.mlp.experts.down_proj_blocks"] == (128, 2880, 90, 16)
    assert dt["model.layers.0.mlp.experts.down_proj_blocks"] == "U8"
    assert s["model.layers.0.self_attn.q_proj.weight"] == (4096, 2880)  # 64 x 64
    assert s["model.layers.0.self_attn.q_proj.bias"] == (4096,)
    assert s["model.layers.0.self_attn.sinks"] == (64,)
    assert s["model.layers.0.mlp.router.weight"] == (128, 2880)
    # released checkpoint: ~65 GB
    assert 60e9 < total_bytes(specs) < 70e9


def test_deepseek_v3_mla_fp8_total(fixture_config):
    specs = target_specs(fixture_config("deepseek-ai__DeepSeek-V3"))
    s, dt = shapes(specs), dtypes(specs)
    a = "model.layers.0.self_attn."
    assert s[a + "q_a_proj.weight"] == (1536, 7168)
    assert s[a + "q_a_proj.weight_scale_inv"] == (12, 56)
    assert s[a + "q_b_proj.weight"] == (24576, 1536)  # 128 x (128 + 64)
    assert s[a + "kv_a_proj_with_mqa.weight"] == (576, 7168)  # 512 + 64
    assert s[a + "kv_a_proj_with_mqa.weight_scale_inv"] == (5, 56)  # ceil(576/128)
    assert s[a + "kv_b_proj.weight"] == (32768, 512)  # 128 x (128 + 128)
    assert s[a + "o_proj.weight"] == (7168, 16384)
    assert dt[a + "o_proj.weight"] == "F8_E4M3" and dt[a + "o_proj.weight_scale_inv"] == "F32"
    assert s["model.layers.2.mlp.gate_proj.weight"] == (18432, 7168)  # dense (first_k_dense=3)
    assert "model.layers.3.mlp.gate_proj.weight" not in s
    assert s["model.layers.3.mlp.gate.e_score_correction_bias"] == (256,)
    assert dt["model.layers.3.mlp.gate.weight"] == "BF16"
    assert s["model.layers.60.mlp.experts.255.down_proj.weight"] == (7168, 2048)
    assert s["model.layers.60.mlp.shared_experts.up_proj.weight_scale_inv"] == (16, 56)
    assert s["model.layers.61.eh_proj.weight"] == (7168, 14336)  # MTP layer
    # Hand count (bytes):
    # attention/layer: F8 1536*7168 + 24576*1536 + 576*7168 + 32768*512 + 7168*16384 = 187,105,280
    #   scales (12*56 + 192*12 + 5*56 + 256*4 + 56*128)*4 = 45,792; norms (2*7168+1536+512)*2
    #   = 32,768  -> 187,183,840
    # dense MLP: 3*18432*7168 + (144*56*3)*4 = 396,458,496
    # one expert (2048 wide): 3*2048*7168 + (16*56*3)*4 = 44,050,944
    # MoE MLP: 257 experts (256 routed + 1 shared) + gate 256*7168*2 + bias 256*4 = 11,324,763,648
    # 61 layers: 61*187,183,840 + 3*396,458,496 + 58*11,324,763,648 = 669,443,881,312
    # embed + lm_head 2*129280*7168*2 + final norm 14,336 = 3,706,730,496
    # MTP layer 61: attention + MoE + 3 norms 43,008 + eh_proj 7168*14336*2 + embed + head
    #   = 15,424,227,552
    # total 688,574,839,360 bytes (~688.6 GB, the released 163-shard checkpoint's size)
    total = total_bytes(specs)
    assert total == 688_574_839_360
    assert abs(total - 690e9) / 690e9 < 0.02


def test_minimax_m3_flat_and_nvfp4(fixture_config):
    s = shapes(target_specs(fixture_config("MiniMaxAI__MiniMax-M3")))
    assert s["model.layers.0.mlp.gate_proj.weight"] == (12288, 6144)  # dense_intermediate_size
    assert s["model.layers.0.self_attn.q_proj.weight"] == (8192, 6144)  # 64 x 128
    assert s["model.layers.0.self_attn.k_proj.weight"] == (512, 6144)  # 4 x 128
    assert s["model.layers.3.block_sparse_moe.experts.127.w2.weight"] == (6144, 3072)
    assert s["model.layers.3.block_sparse_moe.shared_experts.up_proj.weight"] == (3072, 6144)
    assert s["model.layers.3.block_sparse_moe.e_score_correction_bias"] == (128,)
    assert "model.layers.2.block_sparse_moe.gate.weight" not in s
    specs = target_specs(fixture_config("nvidia__MiniMax-M3-NVFP4"))
    s, dt = shapes(specs), dtypes(specs)
    p = "language_model.model.layers."
    assert s[p + "3.block_sparse_moe.experts.0.w1.weight"] == (3072, 3072)  # NVFP4: in/2
    assert dt[p + "3.block_sparse_moe.experts.0.w1.weight"] == "U8"
    assert s[p + "3.block_sparse_moe.experts.0.w1.weight_scale"] == (3072, 384)  # in/16
    assert s[p + "3.block_sparse_moe.experts.0.w1.weight_scale_2"] == ()
    assert dt[p + "0.self_attn.q_proj.weight"] == "F8_E4M3"  # MXFP8
    assert s[p + "0.self_attn.q_proj.weight_scale"] == (8192, 192)  # 6144/32
    assert dt[p + "3.block_sparse_moe.gate.weight"] == "BF16"  # excluded from quantisation
    assert s["lm_head.weight"] == (200064, 6144)
