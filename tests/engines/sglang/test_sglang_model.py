"""The SGLang 0.5.23 engine model (recipecli/engines/sglang/), step by step.

Every expected value was worked out from SGLang 0.5.23's own code (the PyPI wheel; paths below are
python/sglang/srt/... in sgl-project/sglang v0.5.23, file and function named in each test) and
transformers 5.19.0's config classes (the release SGLang pins). Pair geometry is
tests/helpers/pairs.py's: target Llama H 64, nh 4, nkv 2, V 640, L 8, max_position_embeddings 2048;
draft format B, H = Ht = 64, hd 16, I 128, Vd 128, one layer, lm_head, d2t and t2d.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers.pairs import (
    Pair,
    base_pair,
    codes,
    draft_config_b,
    errors,
    find,
    one,
    stride_map,
    target_config,
)

from recipecli.engines import ENGINES, engine_model
from recipecli.engines.base import load_data
from recipecli.testing.specs import draft_specs

S = "sglang"


def _run(pair: Pair, tmp_path, **kw):
    kw.setdefault("engines", (S,))
    return pair.run(tmp_path, **kw)


def _resolved(res, name):
    return res.resolved[S][name]["value"]


def _sharing(res):
    return {r.tp: r for r in res.embed_sharing if r.engine == S}


def _target(arch: str, **extra) -> dict:
    cfg = target_config(**extra)
    cfg["architectures"] = [arch]
    return cfg


# --------------------------------------------------------------------------- registration, data


def test_sglang_is_an_engine_with_its_pinned_version():
    assert "sglang" in ENGINES
    m = engine_model(S)
    assert (m.repo, m.version) == ("sgl-project/sglang", "v0.5.23")
    # the wheel's METADATA pins transformers==5.19.0
    assert m.data == ("sglang-0.5.23.json", "transformers-5.19.0-defaults.json")
    assert load_data("sglang-0.5.23.json")["version"] == "0.5.23"
    assert load_data("transformers-5.19.0-defaults.json")["version"] == "5.19.0"
    assert [s.key for s in m.steps] == list("abcdefg")
    for step in m.steps:
        assert step.doc and step.sources
        assert all(s.repo == "sgl-project/sglang" and s.version == "v0.5.23" for s in step.sources)
        assert all(s.file.startswith("python/sglang/srt/") for s in step.sources)
    assert "json-model-override-args" in {s.anchor for s in m.sections}


def test_sglang_data_facts_read_by_hand():
    d = load_data("sglang-0.5.23.json")
    # models/llama_eagle3.py and models/kimi_k25_eagle3.py EntryClass
    assert sorted(d["eagle3_drafts"]) == ["Eagle3DeepseekV2ForCausalLM", "LlamaForCausalLMEagle3"]
    # models/llama.py LlamaForCausalLM.set_eagle3_layers_to_capture: [val + 1 for val in layer_ids]
    assert d["targets"]["LlamaForCausalLM"]["rule"] == "plus1"
    # models/deepseek_v2.py DeepseekV2ForCausalLM.set_eagle3_layers_to_capture: +1 only when
    # layer_ids[0] == 1 (DeepseekV3ForCausalLM inherits it)
    assert d["targets"]["DeepseekV3ForCausalLM"]["rule"] == "plus1_if_first_is_1"
    # models/gpt_oss.py GptOssForCausalLM: as-is when max(layer_ids) == num_layers
    assert d["targets"]["GptOssForCausalLM"]["rule"] == "as_is_if_max_is_L"
    assert d["targets"]["GptOssForCausalLM"]["final_index"] is True
    # models/minimax_m3_vl.py: the default (2, L//2, L-3) gets +1 too
    assert d["targets"]["MiniMaxM3SparseForConditionalGeneration"]["rule"] == "plus1_default_too"
    # models/mixtral.py MixtralForCausalLM defines no set_eagle3_layers_to_capture
    assert d["targets"]["MixtralForCausalLM"]["captures_aux"] is False
    # configs/model_config.py ModelConfig._config_draft_model
    assert d["draft_renames"]["DeepseekV3ForCausalLM"] == "DeepseekV3ForCausalLMNextN"
    assert "LlamaForCausalLM" not in d["draft_renames"]


def test_every_sglang_finding_cites_sglang(tmp_path):
    p = base_pair()
    p.draft["architectures"] = ["LlamaForCausalLM"]
    p.drop("d2t")
    res = _run(p, tmp_path)
    assert res.findings
    for f in res.findings:
        if f.engine == S:
            assert f.source.startswith("sgl-project/sglang@v0.5.23 python/sglang/srt/"), f.source


def test_engine_sglang_alone_json_reports_its_version(tmp_path):
    t, d = base_pair().write(tmp_path)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "recipecli",
            "check",
            str(t),
            str(d),
            "--engine",
            S,
            "--json",
            "--tp",
            "1,2",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["engine_versions"] == {S: {"repo": "sgl-project/sglang", "version": "v0.5.23"}}
    assert {f["engine"] for f in doc["findings"]} <= {S, "any"}


# --------------------------------------------------------------------------- a. config


def test_base_pair_resolves_as_sglang_reads_it(tmp_path):
    res = _run(base_pair(), tmp_path)
    assert errors(res) == []
    # llama_eagle3.py LlamaModel.__init__: no target_hidden_size -> hidden_size; no
    # num_aux_hidden_states and no eagle_config ids -> 3; fc [H, 3 * 64] = [64, 192]
    assert _resolved(res, "Ht") == 64
    assert _resolved(res, "k") == 3
    assert _resolved(res, "fc_in") == 192
    assert _resolved(res, "Vd") == 128
    assert _resolved(res, "norm_before_residual") is False
    assert "not read" in res.resolved[S]["norm_before_residual"]["origin"]


def test_missing_hidden_size_is_llama_config_default_4096(tmp_path):
    # transformers 5.19.0 configuration_llama.py LlamaConfig: hidden_size 4096 (get_config builds
    # it with AutoConfig); q_proj [nh*hd, 2*4096] = [64, 8192] vs the checkpoint's [64, 128]
    p = base_pair()
    del p.draft["hidden_size"]
    res = _run(p, tmp_path)
    assert res.resolved[S]["H"]["value"] == 4096
    assert "transformers 5.19.0 LlamaConfig default" in res.resolved[S]["H"]["origin"]
    f = one(res, "shape.q_proj", engine=S)
    assert (f.evidence["expected"], f.evidence["found"]) == ([64, 8192], [64, 128])


def test_null_target_hidden_size_raises(tmp_path):
    # llama_eagle3.py LlamaModel.__init__: hasattr(config, "target_hidden_size") is true for a
    # null key -> hidden_size_in None -> Linear(None * 3, ...) raises TypeError
    p = base_pair()
    p.draft["target_hidden_size"] = None
    res = _run(p, tmp_path)
    assert one(res, "config.target_hidden_null", engine=S).severity == "error"
    assert res.ready_tps(S) == []


def test_absent_draft_vocab_size_raises_and_null_borrows_the_head(tmp_path):
    # llama_eagle3.py LlamaForCausalLMEagle3.__init__: `config.draft_vocab_size is None` on a
    # LlamaConfig without the key -> AttributeError (transformers 5.19 sets no such attribute)
    p = base_pair(Vd=640).drop("lm_head.weight", "d2t", "t2d")
    del p.draft["draft_vocab_size"]
    res = _run(p, tmp_path / "absent")
    assert [f.code for f in errors(res)] == ["config.draft_vocab_size_absent"]
    # a null one: load_lm_head_from_target -> eagle_worker_v2.py EagleDraftWorker.init_lm_head
    # calls set_embed_and_head: the target's head, no lm_head needed
    p.draft["draft_vocab_size"] = None
    res = _run(p, tmp_path / "null")
    assert errors(res) == []
    assert _resolved(res, "head_from_target") is True
    assert _resolved(res, "Vd") == 640
    assert all(r.head_verdict == "share" for r in _sharing(res).values())


def test_k_from_num_aux_hidden_states_then_eagle_config_not_top_level(tmp_path):
    # llama_eagle3.py LlamaModel.__init__: num_aux_hidden_states, else len(eagle_config ids),
    # else 3. Four TOP-LEVEL ids with fc [64, 256]: k = 3 -> fc allocated [64, 192]
    p = base_pair().reshape("fc.weight", (64, 256))
    p.draft["eagle_aux_hidden_state_layer_ids"] = [1, 2, 4, 5]
    f = one(_run(p, tmp_path / "top"), "aux.count", engine=S)
    assert (f.evidence["k"], f.evidence["fc_k"]) == (3, 4)
    # the same four ids under eagle_config: k = 4, and the target captures [2, 3, 5, 6]
    p = base_pair().reshape("fc.weight", (64, 256))
    p.draft["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": [1, 2, 4, 5]}
    res = _run(p, tmp_path / "nested")
    assert _resolved(res, "k") == 4
    assert _resolved(res, "aux_layers") == [2, 3, 5, 6]
    assert errors(res) == []
    # num_aux_hidden_states wins over both
    p = base_pair().reshape("fc.weight", (64, 128))
    p.draft["num_aux_hidden_states"] = 2
    p.draft["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": [1, 3]}
    res = _run(p, tmp_path / "num")
    assert _resolved(res, "k") == 2 and errors(res) == []


def test_norm_before_fc_from_eagle_config_first(tmp_path):
    # LlamaModel.__init__: eagle_config.get("norm_before_fc", getattr(config, "norm_before_fc"))
    # -> input_norm RMSNorm(Ht * k) = [192], which this checkpoint lacks
    p = base_pair()
    p.draft["eagle_config"] = {"norm_before_fc": True}
    p.draft["norm_before_fc"] = False
    res = _run(p, tmp_path)
    assert _resolved(res, "norm_before_fc") is True
    assert "input_norm.weight" in one(res, "tensor.missing", engine=S).evidence["missing"]


def test_fc_norm_read_at_top_level_or_as_use_aux_norm(tmp_path):
    # LlamaModel.__init__: getattr(config, "fc_norm", None) or getattr(config, "use_aux_norm")
    p = base_pair()
    p.draft["eagle_config"] = {"fc_norm": True}
    f = one(_run(p, tmp_path / "nested"), "norm.flag_ignored", engine=S)
    assert f.evidence == {"flag": "fc_norm", "nested": True, "used": False}
    p = base_pair()
    p.draft["use_aux_norm"] = True
    res = _run(p, tmp_path / "legacy")
    assert _resolved(res, "fc_norm") is True
    # fc_norm.i [Ht] for i < 3
    assert one(res, "tensor.missing", engine=S).evidence["missing"] == [
        "fc_norm.0.weight",
        "fc_norm.1.weight",
        "fc_norm.2.weight",
    ]


def test_norm_before_residual_is_never_read(tmp_path):
    # llama_eagle3.py LlamaDecoderLayer.forward: residual = hidden_states (raw) on layer 0
    p = base_pair()
    p.draft["norm_before_residual"] = True
    assert one(_run(p, tmp_path), "norm.residual_unsupported", engine=S).severity == "error"


def test_two_layer_llama_draft_loads_but_mla_draft_needs_one(tmp_path):
    # llama_eagle3.py LlamaModel.__init__ builds num_hidden_layers layers (no limit); layer 0's
    # qkv takes 2H, later layers H. The checkpoint's second layer (layers.1.*) is absent here.
    cfg = draft_config_b()
    cfg["num_hidden_layers"] = 2
    d2t, t2d = stride_map(640, 128)
    specs = {s.name: s for s in draft_specs(cfg, naming="layers.0", d2t=d2t, t2d=t2d)}
    res = _run(Pair(target_config(), cfg, specs), tmp_path / "llama")
    assert not find(res, "draft.layers", engine=S)
    missing = one(res, "tensor.missing", engine=S).evidence["missing"]
    assert "layers.1.self_attn.q_proj.weight" in missing
    # kimi_k25_eagle3.py Eagle3MLAModel.__init__: num_hidden_layers != 1 -> ValueError
    p = base_pair()
    p.draft["architectures"] = ["Eagle3DeepseekV2ForCausalLM"]
    p.draft["kv_lora_rank"] = 16
    p.draft["num_hidden_layers"] = 2
    f = one(_run(p, tmp_path / "mla"), "draft.layers", engine=S)
    assert f.evidence == {"num_hidden_layers": 2}


def test_fc_bias_from_the_bias_key(tmp_path):
    # LlamaModel.__init__: fc = Linear(..., bias=getattr(config, "bias", False)); models/llama.py
    # LlamaDecoderLayer: attention_bias = attention_bias or bias -> o_proj bias [H] too
    p = base_pair()
    p.draft["bias"] = True
    missing = one(_run(p, tmp_path), "tensor.missing", engine=S).evidence["missing"]
    assert set(missing) == {"fc.bias", "midlayer.self_attn.o_proj.bias"}


# --------------------------------------------------------------------------- b. architecture


def test_llama_for_causal_lm_draft_is_a_target_class(tmp_path):
    # model_config.py _config_draft_model keeps 'LlamaForCausalLM'; registry.py registers it
    # (models/llama.py EntryClass) but not as an EAGLE3 draft
    p = base_pair()
    p.draft["architectures"] = ["LlamaForCausalLM"]
    res = _run(p, tmp_path)
    f = one(res, "draft.arch_name", engine=S)
    assert f.evidence == {"architecture": "LlamaForCausalLM", "looked_up": "LlamaForCausalLM"}
    assert "target model" in f.message
    assert _sharing(res) == {}  # the run stops at the architecture


def test_draft_architecture_renames_and_vllm_names(tmp_path):
    # _config_draft_model: DeepseekV3ForCausalLM -> DeepseekV3ForCausalLMNextN (an MTP class)
    from recipecli.engines.sglang.config import draft_architecture

    assert draft_architecture("DeepseekV3ForCausalLM")[0] == "DeepseekV3ForCausalLMNextN"
    assert draft_architecture("LlamaForCausalLMEagle3")[0] == "LlamaForCausalLMEagle3"
    # vLLM's internal name Eagle3LlamaForCausalLM is in no SGLang EntryClass
    p = base_pair()
    p.draft["architectures"] = ["Eagle3LlamaForCausalLM"]
    f = one(_run(p, tmp_path), "draft.arch_name", engine=S)
    assert f.evidence["looked_up"] == "Eagle3LlamaForCausalLM"
    assert "not supported for now" in f.message


# --------------------------------------------------------------------------- c. target


def test_target_without_set_eagle3_layers_to_capture(tmp_path):
    # attention_backend_setup.py configure_aux_hidden_state_capture raises ValueError when the
    # target lacks set_eagle3_layers_to_capture; models/mixtral.py MixtralForCausalLM has none
    p = base_pair()
    p.target = _target("MixtralForCausalLM", model_type="mixtral")
    res = _run(p, tmp_path / "mixtral")
    assert one(res, "target.no_eagle3", engine=S).severity == "error"
    assert res.ready_tps(S) == []
    # an unregistered target falls back to TransformersForCausalLM, which has no capture either
    p.target = _target("NoSuchForCausalLM")
    assert one(_run(p, tmp_path / "none"), "target.unregistered", engine=S).severity == "error"


# --------------------------------------------------------------------------- d. aux layers


def test_ids_only_from_eagle_config_with_llama_plus_one(tmp_path):
    # spec_aux_hidden_state.py _resolve_eagle_aux_hidden_state: eagle_config ids only;
    # llama.py set_eagle3_layers_to_capture: +1 -> [1, 3, 5] -> [2, 4, 6]
    p = base_pair()
    p.draft["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": [1, 3, 5]}
    res = _run(p, tmp_path / "nested")
    assert _resolved(res, "aux_layers") == [2, 4, 6]
    assert not find(res, "aux.default") and not find(res, "aux.mismatch")
    # the same ids at the top level are never read: the default (2, 8 // 2, 8 - 3) = [2, 4, 5],
    # while format B [1, 3, 5] was trained on hidden_states [2, 4, 6]
    p = base_pair()
    p.draft["eagle_aux_hidden_state_layer_ids"] = [1, 3, 5]
    res = _run(p, tmp_path / "top")
    assert _resolved(res, "aux_layers") == [2, 4, 5]
    f = one(res, "aux.default", engine=S)
    assert f.severity == "error" and f.evidence["top_level"] == [1, 3, 5]


def test_deepseek_target_shifts_only_when_the_first_id_is_1(tmp_path):
    # deepseek_v2.py DeepseekV2ForCausalLM.set_eagle3_layers_to_capture: layer_ids[0] == 1 -> +1,
    # else as written. [1, 3, 5] -> [2, 4, 6]; [2, 4, 5] -> [2, 4, 5]
    p = base_pair()
    p.target = _target("DeepseekV3ForCausalLM", model_type="deepseek_v3")
    p.draft["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": [1, 3, 5]}
    assert _resolved(_run(p, tmp_path / "one"), "aux_layers") == [2, 4, 6]
    p.draft["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": [2, 4, 5]}
    res = _run(p, tmp_path / "two")
    assert _resolved(res, "aux_layers") == [2, 4, 5]
    # format B writes layer outputs: [2, 4, 5] was trained on [3, 5, 6]
    assert one(res, "aux.mismatch", engine=S).evidence == {
        "captured": [2, 4, 5],
        "trained_on": [3, 5, 6],
    }
    # an id past the layers: the packed capture (AuxHiddenStatePacker.finalize) raises at the
    # first forward; 8 (first id not 1) stays 8 = L, never captured by DeepseekV2Model.forward
    p.draft["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": [2, 4, 8]}
    f = one(_run(p, tmp_path / "oob"), "aux.out_of_range", engine=S)
    assert f.evidence["captured"] == [2, 4]
    assert "first forward" in f.message


def test_gpt_oss_target_keeps_hidden_state_ids_and_captures_index_l(tmp_path):
    # gpt_oss.py GptOssForCausalLM.set_eagle3_layers_to_capture: max(ids) == L (8) -> as written;
    # GptOssModel.forward captures index L (end_layer) at the final norm
    p = base_pair()
    p.target = _target("GptOssForCausalLM", model_type="gpt_oss")
    p.draft["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": [2, 4, 8]}
    res = _run(p, tmp_path / "asis")
    assert _resolved(res, "aux_layers") == [2, 4, 8]
    assert not find(res, "aux.out_of_range")
    # else +1: [1, 3, 7] -> [2, 4, 8], index 8 again captured
    p.draft["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": [1, 3, 7]}
    res = _run(p, tmp_path / "plus1")
    assert _resolved(res, "aux_layers") == [2, 4, 8]
    assert not find(res, "aux.out_of_range")


def test_llama_target_drops_index_l_silently(tmp_path):
    # llama.py LlamaModel.forward captures only inside the layer loop (i in 0..L-1): id 7 -> 8
    # is never captured; 2 states for k = 3
    p = base_pair()
    p.draft["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": [1, 3, 7]}
    f = one(_run(p, tmp_path), "aux.out_of_range", engine=S)
    assert f.evidence["captured"] == [2, 4]
    assert "fewer states" in f.message


def test_qwen3_moe_target_raises_at_startup_for_an_id_past_the_layers(tmp_path):
    # qwen2_moe.py Qwen2MoeModel.set_eagle3_layers_to_capture (Qwen3MoeModel inherits it):
    # setattr(self.layers[layer_id], ...) -> IndexError for 7 + 1 = 8 >= L
    p = base_pair()
    p.target = _target("Qwen3MoeForCausalLM", model_type="qwen3_moe")
    p.draft["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": [1, 3, 7]}
    f = one(_run(p, tmp_path), "aux.out_of_range", engine=S)
    assert "IndexError at start-up" in f.message


def test_minimax_m3_target_shifts_the_default_too(tmp_path):
    # minimax_m3_vl.py MiniMaxM3SparseForConditionalGeneration.set_eagle3_layers_to_capture:
    # default (2, 8 // 2, 8 - 3) = (2, 4, 5), then +1 -> [3, 5, 6]
    p = base_pair()
    p.target = _target("MiniMaxM3SparseForConditionalGeneration", model_type="minimax_m3_vl")
    res = _run(p, tmp_path)
    assert _resolved(res, "aux_layers") == [3, 5, 6]


def test_unsorted_ids_are_captured_in_layer_order(tmp_path):
    # llama.py LlamaModel.forward appends in layer order: [5, 1, 3] -> capture [2, 4, 6]
    p = base_pair()
    p.draft["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": [5, 1, 3]}
    f = one(_run(p, tmp_path), "aux.order", engine=S)
    assert f.evidence == {"ids": [5, 1, 3], "captured": [2, 4, 6]}


# --------------------------------------------------------------------------- e. tensors


def test_qkv_biases_are_skipped_and_o_proj_bias_is_expected(tmp_path):
    # llama_eagle3.py LlamaDecoderLayer.__init__ rebuilds qkv_proj with bias=False (q/k/v biases
    # have no parameter: load_weights skips them); o_proj keeps attention_bias (models/llama.py
    # LlamaAttention.__init__) -> o_proj.bias [64] expected and missing
    cfg = draft_config_b()
    cfg["attention_bias"] = True
    d2t, t2d = stride_map(640, 128)
    specs = {s.name: s for s in draft_specs(cfg, d2t=d2t, t2d=t2d)}
    res = _run(Pair(target_config(), cfg, specs), tmp_path)
    extra = one(res, "tensor.unexpected", engine=S)
    assert extra.severity == "warning"
    assert set(extra.evidence["unexpected"]) == {
        "midlayer.self_attn.q_proj.bias",
        "midlayer.self_attn.k_proj.bias",
        "midlayer.self_attn.v_proj.bias",
    }
    assert one(res, "tensor.missing", engine=S).evidence["missing"] == [
        "midlayer.self_attn.o_proj.bias"
    ]


def test_d2t_with_equal_vocabularies_is_used_not_refused(tmp_path):
    # llama_eagle3.py load_weights turns any d2t into hot_token_id (vLLM refuses a d2t when
    # draft_vocab_size == vocab): identity offsets with Vd = V = 640 load fine
    p = base_pair(Vd=640)
    assert not find(_run(p, tmp_path), "vocab.d2t_ignored")
    assert errors(_run(p, tmp_path / "again")) == []


def test_no_d2t_and_no_head(tmp_path):
    # load_weights: hot_token_id only from d2t -> draft ids proposed as target ids
    res = _run(base_pair().drop("d2t"), tmp_path / "d2t")
    assert one(res, "vocab.d2t_missing", engine=S).evidence == {"Vd": 128, "V": 640}
    # draft_vocab_size 128 given, no lm_head: ParallelLMHead stays uninitialised (SGLang PR #27908)
    res = _run(base_pair().drop("lm_head.weight"), tmp_path / "head")
    assert one(res, "lm_head.missing", engine=S).evidence == {"Vd": 128}


# --------------------------------------------------------------------------- f. sharing and TP


def test_base_pair_shares_the_target_embedding(tmp_path):
    # eagle_worker_v2.py init_lm_head -> llama.py set_embed: target embedding per rank
    # pad64(640)/2 = 320 rows at TP2; the draft keeps its own head
    rows = _sharing(_run(base_pair(), tmp_path))
    assert rows[2].target_shape == (320, 64) and rows[2].draft_sharded_shape == (320, 64)
    assert (rows[2].verdict, rows[2].head_verdict) == ("share", "own")
    # embedding bytes per rank at TP4: 160 rows * 64 * 2 bytes (BF16) = 20480
    assert rows[4].embed_bytes_per_rank == 160 * 64 * 2


def test_vocab_tp_does_not_divide_is_padded_to_64_times_tp(tmp_path):
    # vocab_parallel_embedding.py VocabParallelEmbedding.__init__: pad64(650) = 704; 704 % 3 != 0
    # -> padding 64 * 3 = 192: ceil(650 / 192) * 192 = 768, 256 per rank at TP3. Target heads
    # 6 / KV 6 split over 3 (llama.py LlamaAttention.__init__).
    cfg = draft_config_b(H=96, nh=6, nkv=6, V=650, Vd=128)
    d2t, t2d = stride_map(650, 128)
    specs = {s.name: s for s in draft_specs(cfg, d2t=d2t, t2d=t2d)}
    tcfg = target_config(H=96, nh=6, nkv=6, V=650)
    res = _run(Pair(tcfg, cfg, specs), tmp_path, tps=(3,))
    assert not find(res, "tp.vocab_indivisible")
    assert _sharing(res)[3].target_shape == (256, 96)
    assert errors(res) == []


def test_draft_vocab_size_unlike_the_target_is_swapped_in_anyway(tmp_path):
    # set_embed swaps the target's tensor in with no shape check; the draft's own
    # VocabParallelEmbedding (vocab_size 704) computes other shard ranges: at TP2 target 320 rows
    # per rank, draft 352 -> wrong rows silently. At TP1 a larger draft vocab reads in range.
    p = base_pair()
    p.draft["vocab_size"] = 704
    res = _run(p, tmp_path, tps=(1, 2))
    f = one(res, "embed.layout_mismatch", engine=S)
    assert f.tp == 2
    assert (f.evidence["target_rows"], f.evidence["draft_rows"]) == (320, 352)
    assert _sharing(res)[1].verdict == "share"


def test_target_hidden_size_unlike_hidden_size_keeps_the_draft_embedding(tmp_path):
    # llama.py set_embed returns early when target_hidden_size != hidden_size: a draft H 32 for a
    # target H 64 keeps its own embed_tokens [640, 32]
    cfg = draft_config_b(H=32, hd=8)
    cfg["intermediate_size"] = 64
    cfg["target_hidden_size"] = 64
    d2t, t2d = stride_map(640, 128)
    with_embed = {s.name: s for s in draft_specs(cfg, d2t=d2t, t2d=t2d, with_embed=True)}
    res = _run(Pair(target_config(), cfg, with_embed), tmp_path / "own")
    assert {r.verdict for r in _sharing(res).values()} == {"own"}
    assert not find(res, "embed.width_mismatch")
    without = {s.name: s for s in draft_specs(cfg, d2t=d2t, t2d=t2d, with_embed=False)}
    res = _run(Pair(target_config(), cfg, without), tmp_path / "none")
    assert one(res, "embed.width_mismatch", engine=S).severity == "error"


def test_heads_per_tp(tmp_path):
    # llama.py LlamaAttention.__init__: 4 heads % 8 != 0 -> assertion at TP8 (target and draft)
    res = _run(base_pair(), tmp_path, tps=(4, 8))
    found = find(res, "tp.heads_indivisible", engine=S)
    assert {(f.tp, f.evidence["what"]) for f in found} == {(8, "target"), (8, "draft")}
    assert res.ready_tps(S) == [4]


# --------------------------------------------------------------------------- g. positions


def test_short_draft_context_refuses_to_start(tmp_path):
    # eagle_worker_v2.py EagleDraftWorker.__init__ gives the draft the target's context length;
    # model_config.py ModelConfig._derive_context_length raises when 2048 > the draft's 1024
    p = base_pair()
    p.draft["max_position_embeddings"] = 1024
    f = one(_run(p, tmp_path / "short"), "maxpos.short", engine=S)
    assert f.severity == "error" and f.evidence == {"draft": 1024, "serving": 2048}
    # serving at 1024 is fine
    assert not find(_run(p, tmp_path / "served", max_model_len=1024), "maxpos.short")


@pytest.mark.parametrize(
    "rope,short",
    [
        # utils/hf_transformers/common.py get_context_length: factor 2 -> 2 * 1024 = 2048
        ({"rope_type": "linear", "factor": 2.0}, False),
        # factor ignored for llama3 rope and when original_max_position_embeddings is given
        ({"rope_type": "llama3", "factor": 8.0}, True),
        ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024}, True),
    ],
)
def test_context_length_applies_the_rope_factor(tmp_path, rope, short):
    p = base_pair()
    p.draft["max_position_embeddings"] = 1024
    p.draft["rope_scaling"] = rope
    res = _run(p, tmp_path)
    assert bool(find(res, "maxpos.short", engine=S)) is short


# --------------------------------------------------------------------------- fixture configs


def test_specforge_deepseek_v3_draft_ids_start_at_1(tmp_path):
    # SpecForge's deepseek-v3 template: eagle_config ids [1, 29, 57] on a 61-layer target;
    # DeepseekV2ForCausalLM.set_eagle3_layers_to_capture: first id 1 -> +1 -> [2, 30, 58]
    from recipecli.engines.sglang.target import capture_indices

    assert capture_indices("plus1_if_first_is_1", [1, 29, 57], 61) == [2, 30, 58]
    assert capture_indices("plus1_if_first_is_1", [2, 30, 58], 61) == [2, 30, 58]
    assert capture_indices("plus1", None, 61) == [2, 30, 58]
    assert capture_indices("plus1_default_too", None, 60) == [3, 31, 58]
    assert capture_indices("as_is_if_max_is_L", [2, 18, 36], 36) == [2, 18, 36]


def test_fixture_specforge_llama_on_llama_8b(fixture_config, tmp_path):
    # sgl-project-SpecForge-template__llama3-8B-eagle3: no ids -> default (2, 16, 29) on L 32;
    # max_position_embeddings 2048 < Llama-3.1-8B's 131072 -> SGLang refuses to start (SGLang
    # PR #9388: SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN defaults to false)
    from recipecli.testing.specs import valid_vocab_map

    tcfg = fixture_config("meta-llama__Meta-Llama-3.1-8B")
    dcfg = fixture_config("sgl-project-SpecForge-template__llama3-8B-eagle3")
    d2t, t2d = valid_vocab_map(128256, 32000, seed=1)
    specs = {s.name: s for s in draft_specs(dcfg, d2t=d2t, t2d=t2d)}
    p = Pair(tcfg, dcfg, specs)
    res = _run(p, tmp_path, tps=(1, 8))
    assert _resolved(res, "aux_layers") == [2, 16, 29]
    assert [f.code for f in errors(res)] == ["maxpos.short"]
    assert one(res, "maxpos.short", engine=S).evidence == {"draft": 2048, "serving": 131072}
    # pad64(128256) = 128256 (2004 * 64) divides 8: 16032 rows per rank
    assert _sharing(res)[8].target_shape == (16032, 4096)
    assert "maxpos.short" not in codes(_run(p, tmp_path / "ctx", tps=(8,), max_model_len=2048))


# ------------------------------------------------ issue #24: use_aux_hidden_state, tie, RoPE


def test_use_aux_hidden_state_false_serves_without_fc(tmp_path):
    # spec_aux_hidden_state.py _resolve_eagle_aux_hidden_state: eagle_use_aux_hidden_state =
    # eagle_config.get("use_aux_hidden_state", True) -> False: the target captures no aux states
    # and hands the draft its own last hidden state, 64 wide (target H). llama_eagle3.py
    # LlamaModel.forward runs fc only `if hidden_states.shape[-1] != embeds.shape[-1]`: 64 == 64
    # (draft H), so the fc the draft builds is never used and a missing fc.weight harms nothing
    p = base_pair().drop("fc.weight")
    p.draft["eagle_config"] = {"use_aux_hidden_state": False}
    res = _run(p, tmp_path / "off")
    assert not find(res, "tensor.missing", engine=S)
    assert [f for f in errors(res) if f.engine == S] == []
    # the twin: aux states on (the default), fc [64, 3*64] is fed and must be loaded
    p = base_pair().drop("fc.weight")
    res = _run(p, tmp_path / "on")
    assert one(res, "tensor.missing", engine=S).evidence["missing"] == ["fc.weight"]


def test_use_aux_hidden_state_false_with_a_shipped_fc(tmp_path):
    # the same flag with fc.weight [64, 192] shipped: load_weights loads it, but forward never runs
    # fc (64 == 64): the draft runs without a weight it ships -> aux.fc_unused
    p = base_pair()
    p.draft["eagle_config"] = {"use_aux_hidden_state": False}
    f = one(_run(p, tmp_path), "aux.fc_unused", engine=S)
    assert (f.severity, f.evidence) == ("error", {"dropped": ["fc.weight"]})


def test_use_aux_hidden_state_false_narrow_target_still_needs_fc(tmp_path):
    # the same flag on a target of H 128 (draft 64): forward sees 128 != 64 and runs fc
    p = base_pair().drop("fc.weight")
    p.draft["eagle_config"] = {"use_aux_hidden_state": False}
    p.target = target_config(H=128)
    res = _run(p, tmp_path)
    assert "fc.weight" in one(res, "tensor.missing", engine=S).evidence["missing"]


def test_tie_reduced_vocab_on_sglang(tmp_path):
    # llama_eagle3.py LlamaForCausalLMEagle3.__init__: tie_word_embeddings -> lm_head is
    # model.embed_tokens ([640, 64]); load_weights finds no "lm_head.weight" parameter (it is
    # named model.embed_tokens.weight) and skips the draft's [128, 64] head; LogitsProcessor with
    # vocab_size = draft_vocab_size 128 keeps the embedding's first 128 rows' logits
    p = base_pair()
    p.draft["tie_word_embeddings"] = True
    f = one(_run(p, tmp_path), "tie.reduced_vocab", engine=S)
    assert (f.severity, f.tp, f.evidence) == ("error", None, {"Vd": 128, "V": 640})
    assert "the first 128 rows' logits" in f.message


def test_stale_t2d_is_an_info_on_sglang(tmp_path):
    # llama_eagle3.py LlamaForCausalLMEagle3.load_weights: `if "t2d" in name: continue`
    _, t2d = stride_map(640, 128)
    t2d[1] = True  # 129 ids marked, Vd 128
    p = base_pair().put("t2d", "BOOL", (640,), t2d)
    res = _run(p, tmp_path)
    f = one(res, "vocab.t2d_invalid", engine=S)
    assert (f.severity, f.evidence) == ("info", {"true_count": 129, "Vd": 128})
    assert res.ready_tps(S) == [1, 2, 4]


def test_rope_theta_differs_from_the_target(tmp_path):
    # models/llama.py LlamaDecoderLayer.__init__ reads the DRAFT config's rope_parameters (transformers
    # 5 standardises a missing rope_theta to the class default 10000.0) for get_rope; the target
    # says 500000.0: an info naming both (docs/check.md#severity: it serves as its config says)
    p = base_pair()
    p.target["rope_theta"] = 500000.0
    f = one(_run(p, tmp_path / "a"), "rope.mismatch", engine=S)
    assert (f.severity, f.evidence) == (
        "info",
        {"differences": {"rope_theta": [10000.0, 500000.0]}},
    )
    p.draft["rope_theta"] = 500000.0  # the fix the message names
    assert not find(_run(p, tmp_path / "b"), "rope.mismatch")
