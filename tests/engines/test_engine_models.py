"""The engine models together (recipecli/engines/): what every engine does alike with a missing or
invalid config value (transformers' config classes), their data files, the codes and citations of
every step, and public reports that concern several engines, rebuilt as tiny pairs. What one
engine alone does is tested in tests/engines/<engine>/.

Expected values come from reading the engines' code at the pinned versions — vLLM v0.33.0 (the
wheel), lightseekorg/tokenspeed@f4d8ec6e and SGLang v0.5.23 — and from transformers' config
classes (file and function in each comment); the pair geometry is tests/helpers/pairs.py's
(target H 64, nh 4, nkv 2, V 640, L 8; draft format B, H = Ht = 64, hd 16, I 128, Vd 128).
"""

from __future__ import annotations

import re

from helpers.pairs import (
    base_pair,
    find,
    one,
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
    from recipecli.codes import CATALOG, catalog_code
    from recipecli.engines import engine_models

    emitted = {c for r in RULES for c in r.codes} | set(SUMMARY_CODES)
    emitted |= {c for m in engine_models() for s in m.steps for c in s.codes}
    missing = sorted(c for c in emitted if catalog_code(c.replace("*", "<role>")) not in CATALOG)
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


def test_nemo_automodel_pr_2447_no_d2t(tmp_path):
    # NeMo Automodel PR #2447: Vd < V without d2t serves and accepts nothing (every engine;
    # SGLang llama_eagle3.py load_weights sets hot_token_id only from d2t)
    res = base_pair().drop("d2t").run(tmp_path)
    assert {f.engine for f in find(res, "vocab.d2t_missing")} == {"vllm", "tokenspeed", "sglang"}


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
