"""The engine models (recipecli/engines/): defaults for missing values, the engines' own config
translations, their data files, and public reports rebuilt as tiny pairs.

Expected values come from reading the engines' code at the pinned versions — vLLM v0.33.0 (the
wheel) and lightseekorg/tokenspeed@f4d8ec6e — and from transformers' config classes (file and
function in each comment); the pair geometry is tests/helpers/pairs.py's (target H 64, nh 4,
nkv 2, V 640, L 8; draft format B, H = Ht = 64, hd 16, I 128, Vd 128).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from helpers.pairs import (
    base_pair,
    base_pair_d,
    codes,
    errors,
    find,
    one,
    stride_map,
    target_config,
)

from recipecli.engines import ENGINES, engine_model
from recipecli.engines.base import load_data


def _no_none(res) -> None:
    """No finding message reads 'None' (every value is resolved to what the engine uses)."""
    bad = [f.to_dict() for f in res.findings if re.search(r"\bNone\b", f.message)]
    assert bad == []


# --------------------------------------------------------------------------- missing values


def test_missing_hidden_size_takes_the_llama_default(tmp_path):
    # transformers configuration_llama.py LlamaConfig: hidden_size: int = 4096. Both engines build
    # the draft from it (vLLM EAGLEConfig(model=AutoConfig...), tokenspeed get_config ->
    # AutoConfig), so q_proj is allocated [nh*hd, 2*4096] = [64, 8192] while the checkpoint's is
    # [64, 128]: the load fails on the shape. Before, recipecli printed "H None" and READY.
    p = base_pair()
    del p.draft["hidden_size"]
    res = p.run(tmp_path)
    for engine in ENGINES:
        v = res.resolved[engine]["H"]
        assert v["value"] == 4096
        assert "LlamaConfig default" in v["origin"]
        f = one(res, "shape.q_proj", engine=engine)
        assert (f.evidence["expected"], f.evidence["found"]) == ([64, 8192], [64, 128])
        assert res.ready_tps(engine) == []
    _no_none(res)


def test_null_num_attention_heads_is_refused_by_the_strict_config_class(tmp_path):
    # transformers configuration_llama.py: `@strict class LlamaConfig`, `num_attention_heads: int
    # = 32` (not Optional): huggingface_hub's strict dataclass raises for None
    # (StrictDataclassFieldValidationError) in 5.20.2 (vLLM) and 5.12.0 (tokenspeed) alike
    p = base_pair()
    p.draft["num_attention_heads"] = None
    res = p.run(tmp_path)
    for engine in ENGINES:
        f = one(res, "config.null_value", engine=engine)
        assert f.evidence == {"key": "num_attention_heads"}
        assert res.ready_tps(engine) == []
    _no_none(res)


def test_missing_num_attention_heads_takes_the_default(tmp_path):
    # absent (not null): LlamaConfig's 32; head_dim stays 16 (given): q [32*16, 128]
    p = base_pair()
    del p.draft["num_attention_heads"]
    res = p.run(tmp_path)
    for engine in ENGINES:
        assert res.resolved[engine]["nh"]["value"] == 32
        assert one(res, "shape.q_proj", engine=engine).evidence["expected"] == [512, 128]
    _no_none(res)


def test_hidden_not_divisible_by_heads_is_refused(tmp_path):
    # LlamaConfig.validate_architecture: hidden_size % num_attention_heads must be 0 (64 % 6 = 4)
    p = base_pair()
    p.draft["num_attention_heads"] = 6
    res = p.run(tmp_path)
    for engine in ENGINES:
        assert one(res, "config.invalid", engine=engine).evidence == {"H": 64, "nh": 6}


def test_missing_num_hidden_layers_is_32_on_tokenspeed(tmp_path):
    # LlamaConfig num_hidden_layers default 32 -> tokenspeed LlamaForCausalLMEagle3.__init__
    # raises "EAGLE3 currently only supports 1 layer"
    p = base_pair()
    del p.draft["num_hidden_layers"]
    res = p.run(tmp_path)
    f = one(res, "draft.layers", engine="tokenspeed")
    assert f.evidence["num_hidden_layers"] == 32
    assert "32 (transformers 5.12.0 LlamaConfig default" in f.message


def test_qwen3_draft_head_dim_default_is_tokenspeeds_own(tmp_path):
    # tokenspeed get_config builds its own Qwen3Config for model_type qwen3 (configs/qwen3_config.py:
    # head_dim 128); vLLM takes transformers 5.20.2 Qwen3Config (head_dim 128 too)
    p = base_pair()
    p.draft["model_type"] = "qwen3"
    del p.draft["head_dim"]
    res = p.run(tmp_path)
    assert res.resolved["tokenspeed"]["hd"]["value"] == 128
    assert "tokenspeed Qwen3Config" in res.resolved["tokenspeed"]["hd"]["origin"]
    assert res.resolved["vllm"]["hd"]["value"] == 128


def test_target_hidden_size_null_raises_on_vllm(tmp_path):
    # vLLM llama_eagle3.py LlamaModel.__init__: getattr(config, "target_hidden_size", hidden_size)
    # returns None for a present null key; None * k raises TypeError
    p = base_pair()
    p.draft["target_hidden_size"] = None
    res = p.run(tmp_path)
    assert one(res, "config.target_hidden_null", engine="vllm").severity == "error"
    assert res.ready_tps("vllm") == []


# --------------------------------------------------------------------------- speculators translation


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


# --------------------------------------------------------------------------- data files


def test_engine_data_matches_the_pinned_versions():
    # every data file an engine model reads records the version its pin names (written once,
    # in recipecli/engines/<engine>/pin.py: vLLM 0.33.0, tokenspeed f4d8ec6e039c, SGLang 0.5.23)
    from recipecli.engines import engine_spec

    assert load_data("vllm-0.33.0.json")["version"] == "0.33.0"
    assert load_data("sglang-0.5.23.json")["version"] == "0.5.23"
    assert load_data("tokenspeed-f4d8ec6e039c.json")["commit"].startswith("f4d8ec6e039c")
    for engine in ENGINES:
        pin = engine_spec(engine).pin
        data = load_data(pin.data_file)
        assert data.get("version", data.get("commit")) == pin.version
        assert load_data(pin.transformers_file)["version"] == pin.transformers
        assert engine_model(engine).data == (pin.data_file, pin.transformers_file)


def test_engine_data_facts_read_by_hand():
    # vLLM registry.py _SPECULATIVE_DECODING_MODELS: LlamaForCausalLMEagle3 -> llama_eagle3
    v = load_data("vllm-0.33.0.json")
    assert v["eagle3_drafts"]["LlamaForCausalLMEagle3"] == [
        "vllm.model_executor.models.llama_eagle3",
        "Eagle3LlamaForCausalLM",
    ]
    # qwen3.py Qwen3ForCausalLM(..., SupportsEagle3, ...); mixtral.py MixtralForCausalLM does not
    assert v["targets"]["Qwen3ForCausalLM"]["supports_eagle3"] is True
    assert v["targets"]["MixtralForCausalLM"]["supports_eagle3"] is False
    t = load_data(engine_model("tokenspeed").data[0])
    # exactly two EAGLE3 draft classes (llama_eagle3.py, deepseek_v3.py EntryClass)
    assert sorted(t["eagle3_drafts"]) == ["Eagle3DeepseekV2ForCausalLM", "LlamaForCausalLMEagle3"]
    assert "LlamaForCausalLMNextN" not in t["architectures"]
    assert t["targets"]["Qwen3ForCausalLM"]["captures_aux"] is False
    assert t["targets"]["LlamaForCausalLM"]["captures_aux"] is True
    assert t["targets"]["DeepseekV3ForCausalLM"]["embed_replicated"] is True
    # transformers 5.12.0 configuration_llama.py LlamaConfig defaults
    llama = load_data("transformers-5.12.0-defaults.json")["models"]["llama"]["defaults"]
    assert (llama["hidden_size"], llama["num_hidden_layers"], llama["rms_norm_eps"]) == (
        4096,
        32,
        1e-6,
    )


def test_every_emitted_code_is_in_the_catalog():
    from recipecli.check import RULES, SUMMARY_CODES
    from recipecli.codes import CODES, catalog_code
    from recipecli.engines import engine_models

    emitted = {c for r in RULES for c in r.codes} | set(SUMMARY_CODES)
    emitted |= {c for m in engine_models() for s in m.steps for c in s.codes}
    missing = sorted(c for c in emitted if catalog_code(c.replace("*", "<role>")) not in CODES)
    assert missing == []


def test_every_step_and_finding_cites_the_pinned_engine(tmp_path):
    for model in (engine_model(e) for e in ENGINES):
        for step in model.steps:
            assert step.sources and step.doc, (model.name, step.key)
            assert all(s.version == model.version for s in step.sources)
    p = base_pair()
    p.draft["architectures"] = ["LlamaForCausalLM"]
    p.drop("d2t")
    res = p.run(tmp_path)
    for f in res.findings:
        if f.engine == "vllm":
            assert "vllm-project/vllm@v0.33.0 " in f.source
        elif f.engine == "tokenspeed":
            assert "lightseekorg/tokenspeed@f4d8ec6e039c " in f.source


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


def test_nemo_automodel_pr_2447_no_d2t(tmp_path):
    # NeMo Automodel PR #2447: Vd < V without d2t serves and accepts nothing (every engine;
    # SGLang llama_eagle3.py load_weights sets hot_token_id only from d2t)
    res = base_pair().drop("d2t").run(tmp_path)
    assert {f.engine for f in find(res, "vocab.d2t_missing")} == {"vllm", "tokenspeed", "sglang"}


def test_sglang_pr_27908_declared_draft_vocab_without_head(tmp_path):
    # SGLang PR #27908 ("accept len 1.00"): draft_vocab_size set, no lm_head. tokenspeed
    # llama_eagle3.py: load_lm_head_from_target only when draft_vocab_size is None -> the head
    # keeps uninitialised memory
    p = base_pair(Vd=640).drop("lm_head.weight", "d2t", "t2d")
    res = p.run(tmp_path)
    assert one(res, "lm_head.missing", engine="tokenspeed").severity == "error"
    # vLLM: Vd == V, so borrowing the target head (eagle/utils.py) is right
    assert not find(res, "lm_head.missing", engine="vllm")


def test_tokenspeed_913_mla_draft_with_sharded_target_embedding(tmp_path):
    # lightseekorg/tokenspeed #913 / PR #958: an MLA draft (replicated embedding) cannot take a
    # sharded target embedding; deepseek_v3.py Eagle3DeepseekV2ForCausalLM.set_embed_and_head
    # shares only on an exact match and raises without an own embed_tokens. Llama target at TP2:
    # target [pad64(640)/2, 64] = [320, 64] != draft replicated [640, 64]
    p = base_pair()
    p.draft["architectures"] = ["Eagle3DeepseekV2ForCausalLM"]
    p.draft["kv_lora_rank"] = 16
    res = p.run(tmp_path, tps=(1, 2), engines=("tokenspeed",))
    f = one(res, "embed.share_error", engine="tokenspeed")
    assert f.tp == 2
    assert f.evidence["target_shape"] == [320, 64]
    # TP1: [640, 64] == replicated -> shared
    assert not find(res, "embed.share_error", tp=1)


def test_vllm_18906_narrow_draft_without_embedding(tmp_path):
    # vLLM #18906: a draft narrower than the target needs its own embed_tokens; the V2 runner
    # (eagle/utils.py maybe_share_target_embed) shares the target's regardless of width
    from helpers.pairs import Pair, draft_config_b

    from recipecli.testing.specs import draft_specs

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


def test_vllm_31474_vocab_that_tp_does_not_divide(tmp_path):
    # vLLM #31474 (GLM-4.7 at TP6): pad64(151552) = 151552 = 2368 * 64; 151552 / 6 is not whole.
    # Both engines' VocabParallelEmbedding divide the padded vocab by TP.
    from helpers.pairs import Pair, draft_config_b

    from recipecli.testing.specs import draft_specs

    cfg = draft_config_b(H=96, nh=6, nkv=6, V=151552, Vd=151552)
    cfg.pop("draft_vocab_size")
    specs = draft_specs(cfg, with_embed=False)
    tcfg = target_config(H=96, nh=6, nkv=6, V=151552)
    res = Pair(tcfg, cfg, {s.name: s for s in specs}).run(tmp_path, tps=(6,))
    for engine in ("vllm", "tokenspeed"):
        f = find(res, "tp.vocab_indivisible", engine=engine, tp=6)
        assert f and f[0].evidence["padded"] == 151552
    # SGLang vocab_parallel_embedding.py VocabParallelEmbedding.__init__: 151552 % 6 != 0, so
    # padding_size = 64 * 6 = 384: ceil(151552 / 384) * 384 = 395 * 384 = 151680, 25280 per rank
    assert not find(res, "tp.vocab_indivisible", engine="sglang")
    row = next(r for r in res.embed_sharing if r.engine == "sglang" and r.tp == 6)
    assert row.target_shape == (25280, 96) and row.verdict == "share"


def test_llama_eagle3_release_on_tokenspeed_after_convert(tmp_path):
    # yuhuili/EAGLE3-LLaMA3.1-Instruct-8B has architectures ["LlamaForCausalLM"]: tokenspeed looks
    # up LlamaForCausalLMNextN (not registered). `recipecli convert --to eagle3` writes
    # LlamaForCausalLMEagle3 (registered) and keeps the midlayer.* tensors: it loads.
    from recipecli.check import run_check
    from recipecli.checkpoint import open_checkpoint
    from recipecli.convert import ConvertOptions, convert

    p = base_pair()
    p.draft["architectures"] = ["LlamaForCausalLM"]
    t, d = p.write(tmp_path)
    before = run_check(open_checkpoint(str(t)), open_checkpoint(str(d)), tps=(1,))
    # SGLang (model_config.py _config_draft_model) keeps LlamaForCausalLM, a target class there
    assert sorted((f.code, f.engine) for f in errors(before)) == [
        ("draft.arch_name", "sglang"),
        ("draft.arch_name", "tokenspeed"),
    ]
    out = tmp_path / "eagle3"
    opts = ConvertOptions(to="eagle3", norm_before_residual=False)
    convert(str(d), out, opts, progress=False, fsync=False, run_target_check=False)
    after = run_check(open_checkpoint(str(t)), open_checkpoint(str(out)), tps=(1,))
    assert errors(after) == []
    assert after.resolved["tokenspeed"]["architecture"]["value"] == "LlamaForCausalLMEagle3"


@pytest.mark.parametrize("engine", ENGINES)
def test_engine_filter_runs_one_model(tmp_path, engine):
    res = base_pair().run(tmp_path, engines=(engine,))
    assert set(res.resolved) == {engine}
    assert {f.engine for f in res.findings} <= {engine, "any"}
    assert "draft.format" in codes(res)
    assert np.isfinite(res.resolved[engine]["H"]["value"])


def test_every_cited_engine_page_anchor_exists():
    # every `docs/engines/<page>.md#<anchor>` cited in the package, templates, docs and README
    # must lead somewhere on the generated page
    import pathlib

    from recipecli.docsgen.engine_pages import engine_pages

    repo = pathlib.Path(__file__).resolve().parents[2]
    pages = engine_pages()
    anchors = {name: set(re.findall(r'<a id="([^"]+)"></a>', text)) for name, text in pages.items()}
    cited = set()
    for root in ("recipecli", "templates", "docs", "README.md"):
        paths = [repo / root] if root.endswith(".md") else (repo / root).rglob("*")
        for path in paths:
            if path.suffix not in (".py", ".md", ".yaml", ".j2", ".json") or not path.is_file():
                continue
            for page, anchor in re.findall(
                r"docs/engines/([a-z]+\.md)#([a-z0-9-]+)", path.read_text()
            ):
                cited.add((page, anchor))
            if path.parent.name == "engines" and path.parent.parent.name == "docs":
                for page, anchor in re.findall(r"\(([a-z]+\.md)#([a-z0-9-]+)\)", path.read_text()):
                    cited.add((page, anchor))
    missing = sorted((p, a) for p, a in cited if a not in anchors.get(p, set()))
    assert cited and missing == []


def test_qwen3_draft_qk_norms(tmp_path):
    # vLLM registry: Eagle3Qwen3ForCausalLM -> qwen3_eagle3.py, whose Qwen3Eagle3DecoderLayer
    # (Qwen3Attention) has q_norm/k_norm [head_dim]; tokenspeed registers no Qwen3 EAGLE3 draft,
    # its LlamaForCausalLMEagle3 has no such parameters and load_weights skips them silently
    p = base_pair()
    p.draft["architectures"] = ["Eagle3Qwen3ForCausalLM"]
    for n in ("q_norm", "k_norm"):
        p.put(f"midlayer.self_attn.{n}.weight", "BF16", (16,))
    res = p.run(tmp_path)
    assert not find(res, "tensor.unexpected", engine="vllm")
    assert not find(res, "tensor.missing", engine="vllm")
    assert res.resolved["vllm"]["qwen3_layer"]["value"] is True
    # tokenspeed stops at the architecture (contains "Eagle": kept, not registered)
    assert (
        one(res, "draft.arch_name", engine="tokenspeed").evidence["looked_up"]
        == "Eagle3Qwen3ForCausalLM"
    )
    # as LlamaForCausalLMEagle3 tokenspeed loads it and drops the QK norms
    p.draft["architectures"] = ["LlamaForCausalLMEagle3"]
    res = p.run(tmp_path / "llama-name")
    f = one(res, "norm.qk_dropped", engine="tokenspeed")
    assert f.evidence["dropped"] == [
        "midlayer.self_attn.q_norm.weight",
        "midlayer.self_attn.k_norm.weight",
    ]
    # vLLM's Eagle3LlamaForCausalLM has no parameter for them: the weights loader raises
    assert one(res, "tensor.unexpected", engine="vllm").severity == "error"


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
