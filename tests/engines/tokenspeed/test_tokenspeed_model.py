"""The tokenspeed engine model (recipecli/engines/tokenspeed/, lightseekorg/tokenspeed@f4d8ec6e):
what tokenspeed alone reports on a tiny pair, its own config defaults, and public reports rebuilt
as tiny pairs.

Expected values come from reading tokenspeed's code at the pinned commit (file and function in each
comment, arithmetic too) and transformers' config classes; the pair geometry is
tests/helpers/pairs.py's (target H 64, nh 4, nkv 2, V 640, L 8; draft format B, H = Ht = 64, hd 16,
I 128, Vd 128, d2t keeping target ids 5*i). Findings tests have a passing twin where one differs
minimally (tests/check/test_check_codes.py holds the codes several engines report).
"""

from __future__ import annotations

from helpers.pairs import (
    MAXPOS,
    Pair,
    base_pair,
    base_pair_d,
    codes,
    draft_config_b,
    errors,
    find,
    minimal_target_specs,
    one,
    stride_map,
    target_config,
)

from recipecli.testing.specs import draft_specs

# -------------------------------------------------------------------- findings on the smallest pair


def test_draft_arch_name_speculators_on_tokenspeed(tmp_path):
    # "Eagle3Speculator" (format D) contains "Eagle": kept by get_config, but tokenspeed registers
    # only LlamaForCausalLMEagle3 and Eagle3DeepseekV2ForCausalLM as EAGLE3 drafts
    # this speculators config has no top-level model_type: get_config falls to transformers'
    # AutoConfig, which cannot build it; with one, the architecture is the next wall
    p = base_pair_d()
    res = p.run(tmp_path / "a")
    assert one(res, "config.model_type", engine="tokenspeed").severity == "error"
    p.draft["model_type"] = "llama"
    f = one(p.run(tmp_path / "b"), "draft.arch_name")
    assert (f.engine, f.evidence["looked_up"]) == ("tokenspeed", "Eagle3Speculator")


def test_maxpos_short_max_model_len(tmp_path):
    res = base_pair().run(tmp_path, max_model_len=4096)
    t = one(res, "maxpos.short", engine="tokenspeed")
    assert t.evidence == {"draft": MAXPOS, "serving": 4096}


def test_embed_share_error(tmp_path):
    # draft vocab_size 768 vs target 640, tokenspeed TP 2: target embed per rank
    # [pad64(640)/2, 64] = [320, 64]; draft sharded [pad64(768)/2, 64] = [384, 64], replicated
    # [768, 64]: equal to neither -> set_embed_and_head raises (docs/engines/tokenspeed.md 2)
    p = base_pair()
    p.draft["vocab_size"] = 768
    res = p.run(tmp_path, tps=(2,))
    f = one(res, "embed.share_error")
    assert (f.severity, f.engine, f.tp) == ("error", "tokenspeed", 2)
    assert f.evidence == {
        "target_shape": [320, 64],
        "draft_sharded_shape": [384, 64],
        "draft_replicated_shape": [768, 64],
    }
    assert (
        "Cannot share target embed of shape (320, 64): draft expects (384, 64) (sharded) "
        "or (768, 64) (replicated)." in f.message
    )
    row = next(r for r in res.embed_sharing if r.engine == "tokenspeed")
    assert row.verdict == "error"


def test_embed_share_error_twin(tmp_path):
    assert "embed.share_error" not in codes(base_pair().run(tmp_path, tps=(2,)))


def _minimax_tied_pair(*, tie: bool) -> Pair:
    """MiniMax-M3 target (tokenspeed builds its embedding REPLICATED since #837) + a Vd == V
    draft without lm_head (tied or borrowed) and without draft_vocab_size."""
    # tokenspeed registers MiniMaxM3SparseForConditionalGeneration (minimax_m3.py EntryClass)
    tcfg = target_config(
        architectures=["MiniMaxM3SparseForConditionalGeneration"], model_type="minimax_m3_vl"
    )
    cfg = draft_config_b(Vd=None)
    cfg["tie_word_embeddings"] = tie
    specs = draft_specs(cfg, with_lm_head=False)
    return Pair(tcfg, cfg, {s.name: s for s in specs}, minimal_target_specs(tcfg))


def test_embed_tied_stale(tmp_path):
    # TP 2: target embed replicated [640, 64] != draft sharded [320, 64] but == replicated
    # [640, 64] -> rebuild replicated and share; the tied head keeps the stale sharded weight
    res = _minimax_tied_pair(tie=True).run(tmp_path, tps=(1, 2))
    f = one(res, "embed.tied_stale")
    # the draft ships no embed_tokens: the old module the tied head keeps
    # (LlamaForCausalLMEagle3.__init__: lm_head = model.embed_tokens) is filled by nothing in
    # load_weights, and set_embed_and_head swaps only model.embed_tokens -> left at init: error
    assert (f.severity, f.engine, f.tp) == ("error", "tokenspeed", 2)
    assert f.evidence == {"head_weight": "left at init"}
    rows = {(r.engine, r.tp): r for r in res.embed_sharing}
    assert rows["tokenspeed", 2].target_shape == (640, 64)
    assert rows["tokenspeed", 2].verdict == "share-replicated"
    # TP 1: sharded == replicated == [640, 64] -> plain share, no rebuild, no warning
    assert rows["tokenspeed", 1].verdict == "share"


def test_embed_tied_stale_with_own_embedding_is_a_warning(tmp_path):
    # with the draft's embed_tokens [640, 64] shipped, load_weights fills the old module first,
    # so the stale tied head holds the draft's own trained embedding: a warning
    p = _minimax_tied_pair(tie=True).put("embed_tokens.weight", "BF16", (640, 64))
    f = one(p.run(tmp_path, tps=(2,)), "embed.tied_stale")
    assert (f.severity, f.evidence) == ("warning", {"head_weight": "draft embed_tokens"})


def test_embed_tied_stale_twin(tmp_path):
    res = _minimax_tied_pair(tie=False).run(tmp_path, tps=(2,))
    assert "embed.tied_stale" not in codes(res)
    row = next(r for r in res.embed_sharing if r.engine == "tokenspeed")
    assert (row.verdict, row.head_verdict) == ("share-replicated", "share")


# --------------------------------------------------------------------------- config defaults


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


# --------------------------------------------------------------------------- public reports


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


# ------------------------------------------------ issue #24: nested norm flags, tie, t2d


def _nested_norm_before_fc_pair() -> Pair:
    """NVIDIA-style: ``norm_before_fc`` only under ``eagle_config``, with its trained
    ``input_norm.weight`` [k*H] = [3*64] = [192]."""
    cfg = draft_config_b()
    cfg["eagle_config"] = {"norm_before_fc": True}
    d2t, t2d = stride_map(640, 128)
    specs = draft_specs(cfg, norm_before_fc=True, d2t=d2t, t2d=t2d)
    return Pair(target_config(), cfg, {s.name: s for s in specs})


def test_norm_before_fc_under_eagle_config_is_lost_on_tokenspeed(tmp_path):
    # llama_eagle3.py Eagle3LlamaModel.__init__: input_norm only
    # `if getattr(config, "norm_before_fc", False)` (top level); get_config does not flatten
    # eagle_config, so no input_norm is built and load_weights finds no parameter for
    # input_norm.weight (skipped): fc gets the aux states unnormalised -> error
    res = _nested_norm_before_fc_pair().run(tmp_path)
    f = one(res, "norm.flag_ignored", engine="tokenspeed")
    assert (f.severity, f.evidence) == (
        "error",
        {"flag": "norm_before_fc", "nested": True, "used": False},
    )
    assert "input_norm" in f.message
    # vLLM and SGLang read eagle_config.get("norm_before_fc", getattr(config, ...)) first:
    # input_norm [192] is built and loaded there
    assert not find(res, "norm.flag_ignored", engine="vllm")
    assert not find(res, "norm.flag_ignored", engine="sglang")
    assert res.resolved["vllm"]["norm_before_fc"]["value"] is True


def test_norm_before_fc_fix_applied(tmp_path):
    # the fix the finding names: a top-level copy; tokenspeed then builds input_norm [192] and
    # loads the draft's; vLLM and SGLang still read the nested true; no engine has an error
    p = _nested_norm_before_fc_pair()
    p.draft["norm_before_fc"] = True
    res = p.run(tmp_path)
    assert "norm.flag_ignored" not in codes(res)
    assert res.resolved["tokenspeed"]["norm_before_fc"]["value"] is True
    assert errors(res) == []


def test_tie_reduced_vocab_on_tokenspeed(tmp_path):
    # llama_eagle3.py LlamaForCausalLMEagle3.__init__: tie_word_embeddings -> lm_head is
    # model.embed_tokens; load_weights skips "lm_head.weight" (no such parameter); the logits
    # processor keeps config.vocab_size 640 logits, indexing a hot_token_id of 128 entries
    p = base_pair()
    p.draft["tie_word_embeddings"] = True
    f = one(p.run(tmp_path), "tie.reduced_vocab", engine="tokenspeed")
    assert (f.severity, f.evidence) == ("error", {"Vd": 128, "V": 640})
    assert "its 640 logits index a hot_token_id of 128 entries" in f.message


def test_stale_t2d_is_an_info_on_tokenspeed(tmp_path):
    # llama_eagle3.py LlamaForCausalLMEagle3.load_weights: `if "t2d" in name: continue`
    _, t2d = stride_map(640, 128)
    t2d[5], t2d[6] = False, True  # d2t maps draft id 1 to 5, now unmarked
    res = base_pair().put("t2d", "BOOL", (640,), t2d).run(tmp_path)
    f = one(res, "vocab.t2d_invalid", engine="tokenspeed")
    assert (f.severity, f.evidence) == ("info", {"count": 1, "draft_id": 1})
    assert res.ready_tps("tokenspeed") == [1, 2, 4]


def test_use_aux_hidden_state_false_is_not_read_by_tokenspeed(tmp_path):
    # tokenspeed reads use_aux_hidden_state nowhere (git grep at the pin): execution/factory.py
    # _wire_draft_to_target_model always calls set_eagle3_layers_to_capture, and
    # llama_eagle3.py Eagle3LlamaModel.forward runs fc when the width (3*64) != 64; the head
    # ships no fc (it was trained without aux states)
    p = base_pair().drop("fc.weight")
    p.draft["eagle_config"] = {"use_aux_hidden_state": False}
    res = p.run(tmp_path)
    f = one(res, "aux.use_aux_ignored", engine="tokenspeed")
    assert (f.severity, f.evidence) == ("error", {"k": 3})
    # vLLM and SGLang honour it (llama_eagle3.py LlamaModel.__init__; spec_aux_hidden_state.py)
    assert not find(res, "aux.use_aux_ignored", engine="vllm")
    assert res.ready_tps("sglang") == [1, 2, 4]
