"""The vLLM 0.33.0 engine model (recipecli/engines/vllm/): what vLLM alone reports on a tiny pair,
its config translations (speculators), and public vLLM reports rebuilt as tiny pairs.

Expected values come from reading vLLM v0.33.0's code (the wheel; file and function in each comment,
arithmetic too) and transformers' config classes; the pair geometry is tests/helpers/pairs.py's
(target H 64, nh 4, nkv 2, V 640, L 8; draft format B, H = Ht = 64, hd 16, I 128, Vd 128, d2t
keeping target ids 5*i). Findings tests have a passing twin where one differs minimally
(tests/check/test_check_codes.py holds the codes several engines report).
"""

from __future__ import annotations

import json

from helpers.pairs import (
    Pair,
    base_pair,
    base_pair_d,
    codes,
    draft_config_b,
    find,
    one,
    stride_map,
    target_config,
)

from recipecli.testing.specs import draft_specs

# -------------------------------------------------------------------- findings on the smallest pair


def test_base_draft_bytes_per_rank(tmp_path):
    res = base_pair().run(tmp_path, tps=(1,))
    row = next(r for r in res.embed_sharing if r.engine == "vllm")
    # bf16 (2 bytes): q 64*128*2 = 16384, k = v = 32*128*2 = 8192 each, o 64*64*2 = 8192,
    # gate/up/down 128*64*2 = 16384 each, 3 layer norms 3*64*2 = 384, fc 64*192*2 = 24576,
    # norm 128, lm_head 128*64*2 = 16384, d2t 128*8 = 1024, t2d 640 -> 133248
    assert row.draft_bytes_per_rank == 133248
    # shared target embedding 640*64*2 = 81920 bytes at TP1
    assert row.embed_bytes_per_rank == 81920


def test_aux_out_of_range_vllm(tmp_path):
    # id 9 > L = 8: vLLM interfaces.py EagleModelMixin captures indices 0..L only -> [2, 4]
    p = base_pair()
    p.draft["eagle_aux_hidden_state_layer_ids"] = [2, 4, 9]
    res = p.run(tmp_path)
    f = one(res, "aux.out_of_range", engine="vllm")
    assert f.severity == "error"
    assert f.evidence == {"ids": [2, 4, 9], "L": 8, "captured": [2, 4]}


def test_aux_default_original_release_is_info(tmp_path):
    # the original EAGLE release (format A) was trained on EAGLE's default (2, L//2, L-3), which
    # both engines capture when no ids are given -> nothing to warn about
    p = base_pair()
    p.draft["architectures"] = ["LlamaForCausalLM"]
    res = p.run(tmp_path)
    assert one(res, "aux.default", engine="vllm").severity == "info"


def test_norm_residual_default(tmp_path):
    # speculators config without the key: vLLM's update_eagle3 assumes true (docs/engines/vllm.md#config)
    p = base_pair_d()
    del p.draft["norm_before_residual"]
    f = one(p.run(tmp_path), "norm.residual_default")
    assert (f.severity, f.engine, f.tp) == ("warning", "vllm", None)


def test_norm_residual_default_twin(tmp_path):
    # base_pair_d writes norm_before_residual: false; a flat (format B) config without it is read
    # as false by vLLM, so no warning there either
    assert "norm.residual_default" not in codes(base_pair_d().run(tmp_path / "d"))
    assert "norm.residual_default" not in codes(base_pair().run(tmp_path / "b"))


def test_tp_heads_indivisible_kv(tmp_path):
    # target nh 12, nkv 3 at TP 2: 12 % 2 = 0 but 3 % 2 = 1 and 2 % 3 = 2 -> KV heads neither
    # divisible by nor dividing TP. At TP 3 (3 % 3 = 0) fine. The draft (nh 4, nkv 2) is fine at 2.
    p = base_pair()
    p.target.update(num_attention_heads=12, num_key_value_heads=3)
    res = p.run(tmp_path, tps=(2,))
    f = one(res, "tp.heads_indivisible", engine="vllm")
    assert f.tp == 2
    assert f.evidence == {"what": "target", "heads": 12, "kv_heads": 3, "tp_size": 2}


# --------------------------------------------------------------------------- config translation


def test_target_hidden_size_null_raises_on_vllm(tmp_path):
    # vLLM llama_eagle3.py LlamaModel.__init__: getattr(config, "target_hidden_size", hidden_size)
    # returns None for a present null key; None * k raises TypeError
    p = base_pair()
    p.draft["target_hidden_size"] = None
    res = p.run(tmp_path)
    assert one(res, "config.target_hidden_null", engine="vllm").severity == "error"
    assert res.ready_tps("vllm") == []


def test_speculators_four_ids_without_num_aux_fail_on_vllm(tmp_path):
    # speculators/base.py builds the draft config from transformer_layer_config; algos.py
    # update_eagle3 copies the top-level ids, not num_aux_hidden_states. LlamaModel.__init__:
    # k = num_aux_hidden_states, else len(eagle_config ids), else 3 -> fc [64, 192] for a
    # checkpoint fc [64, 4*64] = [64, 256] -> the load fails.
    p = base_pair_d(eagle_aux_hidden_state_layer_ids=[1, 2, 4, 5])
    p.reshape("fc.weight", (64, 256))
    res = p.run(tmp_path)
    f = one(res, "aux.count", engine="vllm")
    assert (f.evidence["k"], f.evidence["fc_k"]) == (3, 4)
    # num_aux_hidden_states inside transformer_layer_config reaches the model: k = 4, loads
    p = base_pair_d(eagle_aux_hidden_state_layer_ids=[1, 2, 4, 5])
    p.draft["transformer_layer_config"]["num_aux_hidden_states"] = 4
    p.reshape("fc.weight", (64, 256))
    res = p.run(tmp_path / "fixed")
    assert not find(res, "aux.count", engine="vllm")
    # at the top level it does not get through
    p = base_pair_d(eagle_aux_hidden_state_layer_ids=[1, 2, 4, 5], num_aux_hidden_states=4)
    p.reshape("fc.weight", (64, 256))
    assert find(p.run(tmp_path / "top"), "aux.count", engine="vllm")


def test_convert_to_speculators_output_loads_on_vllm(tmp_path):
    # recipecli's own conversion of a 4-id draft must give vLLM k = 4 (the example 4)
    from recipecli.checkpoint import open_checkpoint
    from recipecli.convert import ConvertOptions, convert

    p = base_pair()
    p.draft["eagle_aux_hidden_state_layer_ids"] = [1, 2, 4, 5]
    p.reshape("fc.weight", (64, 256))
    t, d = p.write(tmp_path)
    out = tmp_path / "spec"
    opts = ConvertOptions(to="speculators", verifier="tiny/target", norm_before_residual=False)
    convert(str(d), out, opts, target=str(t), progress=False, fsync=False, run_target_check=False)
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["transformer_layer_config"]["num_aux_hidden_states"] == 4
    from recipecli.check import run_check

    res = run_check(open_checkpoint(str(t)), open_checkpoint(str(out)), engines=("vllm",), tps=(1,))
    assert not find(res, "aux.count")
    assert not find(res, "shape.fc")


def test_speculators_layer_config_without_hidden_act_fails_on_vllm(tmp_path):
    # vLLM speculators/base.py: the draft config is a bare PreTrainedConfig made from
    # transformer_layer_config (no LlamaConfig defaults); llama.py LlamaMLP reads
    # config.hidden_act -> AttributeError at build (the conformance suite saw the same)
    p = base_pair_d()
    del p.draft["transformer_layer_config"]["hidden_act"]
    res = p.run(tmp_path)
    f = one(res, "config.model_type", engine="vllm")
    assert f.evidence == {"missing": ["hidden_act"]}
    assert res.ready_tps("vllm") == []


def test_vllm_d2t_with_equal_vocabularies_raises(tmp_path):
    # llama_eagle3.py Eagle3LlamaForCausalLM: draft_id_to_target_id is None when Vd == V, but
    # load_weights keeps a shipped d2t (renamed) -> AutoWeightsLoader has no such parameter
    p = base_pair(Vd=640)
    res = p.run(tmp_path)
    assert one(res, "vocab.d2t_ignored", engine="vllm").severity == "error"
    assert not find(res, "vocab.d2t_ignored", engine="tokenspeed")


def test_vllm_drops_fc_bias_silently(tmp_path):
    # AutoWeightsLoader.load_weights appends ".bias" to ignore_unexpected_suffixes; LlamaModel's
    # fc is ReplicatedLinear(bias=False): a trained fc.bias is skipped without an error
    p = base_pair().put("fc.bias", "BF16", (64,))
    res = p.run(tmp_path)
    assert one(res, "tensor.dropped", engine="vllm").evidence == {"dropped": ["fc.bias"]}
    # tokenspeed llama_eagle3.py: fc is ColumnParallelLinear(..., bias=False), unknown names skipped
    assert one(res, "tensor.dropped", engine="tokenspeed").evidence == {"dropped": ["fc.bias"]}


def test_vllm_rope_type_that_is_not_resized(tmp_path):
    # speculative.py _maybe_override_draft_max_position_embeddings resizes only
    # _CACHE_ONLY_ROPE_TYPES (default, linear, llama3, ntk, proportional); yarn is not
    p = base_pair()
    p.draft["max_position_embeddings"] = 1024
    p.draft["rope_scaling"] = {
        "rope_type": "yarn",
        "factor": 2.0,
        "original_max_position_embeddings": 1024,
    }
    res = p.run(tmp_path)
    f = one(res, "maxpos.short", engine="vllm")
    assert (f.severity, f.evidence["rope_type"]) == ("warning", "yarn")


def test_vllm_mtp_rewrite_of_a_deepseek_v3_draft(tmp_path):
    # speculative.py SpeculativeConfig.hf_config_override: model_type deepseek_v3 ->
    # deepseek_mtp, architectures [DeepSeekMTPModel]; EAGLEConfig -> Eagle3DeepSeekMTPModel, which
    # registry.py does not register (reasoned from the code: no CPU build of an MLA draft here)
    p = base_pair()
    p.draft["model_type"] = "deepseek_v3"
    res = p.run(tmp_path, engines=("vllm",))
    f = one(res, "draft.arch_name", engine="vllm")
    assert f.evidence["architecture"] == "Eagle3DeepSeekMTPModel"


# --------------------------------------------------------------------------- public reports


def test_vllm_pr_43671_layer_output_ids_read_as_hidden_state_ids(tmp_path):
    # vLLM PR #43671: SpecForge ids (layer outputs) served as vLLM hidden-state indices -> one
    # layer early. Format B ids [1, 3, 5] were trained on hidden_states [2, 4, 6]; vLLM captures
    # [1, 3, 5] (eagle3_utils.py get_eagle3_aux_layers_from_config; interfaces.py
    # EagleModelMixin), tokenspeed [2, 4, 6] (causal_lm.py +1)
    p = base_pair()
    p.draft["eagle_aux_hidden_state_layer_ids"] = [1, 3, 5]
    res = p.run(tmp_path)
    f = one(res, "aux.mismatch", engine="vllm")
    assert f.evidence == {"captured": [1, 3, 5], "trained_on": [2, 4, 6]}
    assert not find(res, "aux.mismatch", engine="tokenspeed")


def test_vllm_18906_narrow_draft_without_embedding(tmp_path):
    # vLLM #18906: a draft narrower than the target needs its own embed_tokens; the V2 runner
    # (eagle/utils.py maybe_share_target_embed) shares the target's regardless of width
    cfg = draft_config_b(H=32, hd=8)
    cfg["intermediate_size"] = 64
    cfg["target_hidden_size"] = 64
    d2t, t2d = stride_map(640, 128)
    specs = draft_specs(cfg, d2t=d2t, t2d=t2d, with_embed=False)
    res = Pair(target_config(), cfg, {s.name: s for s in specs}).run(tmp_path)
    assert one(res, "embed.width_mismatch", engine="vllm").evidence == {
        "H": 32,
        "target_hidden": 64,
    }


# ------------------------------------------------ issue #24: use_aux_hidden_state, tie, RoPE


def test_vllm_use_aux_hidden_state_false_has_no_fc(tmp_path):
    # llama_eagle3.py LlamaModel.__init__ builds fc, and sets num_aux_hidden_states and
    # fc_input_size, only `if self.use_aux_hidden_state:` (eagle_config's, else True)
    p = base_pair().drop("fc.weight")
    p.draft["eagle_config"] = {"use_aux_hidden_state": False}
    res = p.run(tmp_path / "no-fc", engines=("vllm",))
    assert res.resolved["vllm"]["k"]["value"] is None
    assert res.resolved["vllm"]["fc_in"]["value"] is None
    assert not {"tensor.unexpected", "tensor.missing", "aux.fc_unused"} & codes(res)
    assert res.ready_tps("vllm") == [1, 2, 4]


def test_vllm_use_aux_hidden_state_false_drops_a_shipped_fc(tmp_path):
    # Eagle3LlamaForCausalLM.load_weights maps "fc." to None without aux states: the [64, 192]
    # fc.weight is dropped, not refused (the conformance probe of syn-use_aux-false: "tensor
    # model.fc.weight dropped"), and combine_hidden_states returns the hidden state unchanged
    p = base_pair()
    p.draft["eagle_config"] = {"use_aux_hidden_state": False}
    res = p.run(tmp_path, engines=("vllm",))
    assert "tensor.unexpected" not in codes(res)
    f = one(res, "aux.fc_unused", engine="vllm")
    assert (f.severity, f.evidence) == ("error", {"dropped": ["fc.weight"]})


def test_vllm_never_ties_a_reduced_head(tmp_path):
    # llama_eagle3.py Eagle3LlamaForCausalLM.__init__: nn.Module.__init__(self) (not
    # LlamaForCausalLM's), lm_head = ParallelLMHead(draft_vocab_size 128, H 64): the draft's own
    # [128, 64] lm_head loads whatever tie_word_embeddings says -> an info, vLLM stays READY
    p = base_pair()
    p.draft["tie_word_embeddings"] = True
    res = p.run(tmp_path, engines=("vllm",))
    f = one(res, "tie.reduced_vocab", engine="vllm")
    assert (f.severity, f.evidence) == ("info", {"Vd": 128, "V": 640})
    assert res.ready_tps("vllm") == [1, 2, 4]


def test_vllm_stale_t2d_is_an_info(tmp_path):
    # Eagle3LlamaForCausalLM.load_weights: `if "t2d" in name: continue`; t2d of the wrong length
    _, t2d = stride_map(640, 128)
    p = base_pair().put("t2d", "BOOL", (639,), t2d[:639])
    res = p.run(tmp_path, engines=("vllm",))
    f = one(res, "vocab.t2d_invalid", engine="vllm")
    assert (f.severity, f.evidence) == (
        "info",
        {"dtype": "BOOL", "shape": [639], "expected": [640]},
    )
    assert res.ready_tps("vllm") == [1, 2, 4]


def test_vllm_rope_scaling_and_rope_parameters_compare_as_one(tmp_path):
    # transformers 5 (vLLM pins 5.20.2) standardises rope_scaling + rope_theta into
    # rope_parameters; models/llama.py LlamaAttention._init_rotary_emb passes the draft config's
    # rope_parameters to get_rope. Llama 3.1's llama3 scaling written either way is the same
    llama3 = {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    }
    p = base_pair()
    p.target.update(rope_theta=500000.0, rope_scaling=llama3)
    p.draft["rope_parameters"] = {**llama3, "rope_theta": 500000.0}
    assert not find(p.run(tmp_path / "same", engines=("vllm",)), "rope.mismatch")
    # the draft without the scaling: get_rope builds default RoPE at theta 500000 for it
    del p.draft["rope_parameters"]
    p.draft["rope_theta"] = 500000.0
    f = one(p.run(tmp_path / "differs", engines=("vllm",)), "rope.mismatch", engine="vllm")
    assert f.severity == "info"
    assert f.evidence["differences"] == {
        "factor": [None, 8.0],
        "high_freq_factor": [None, 4.0],
        "low_freq_factor": [None, 1.0],
        "original_max_position_embeddings": [None, 8192],
        "rope_type": ["default", "llama3"],
    }
