"""Every `recipecli check` finding code of issue 3 on the smallest pair that triggers it.

Each test builds a tiny target/draft pair (tests/helpers/pairs.py: target H 64, nh 4, nkv 2, V 640,
L 8; draft format B, H = Ht = 64, hd 16, I 128, Vd 128, d2t keeps target ids 5*i), mutates ONE
thing, and asserts code, severity, engine, tp and the evidence worked out by hand from the engines'
code (vLLM v0.33.0, lightseekorg/tokenspeed@f4d8ec6e, SGLang v0.5.23; file and function in
comments, arithmetic too). Each has a passing twin that differs minimally and does not trigger the
code. Findings that only one engine's model reports are tested with that model, in
tests/engines/<engine>/.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers.pairs import (
    MAXPOS,
    Pair,
    base_pair,
    base_pair_d,
    codes,
    draft_config_b,
    errors,
    find,
    one,
    stride_map,
    target_config,
)

from recipecli.engines import ENGINES
from recipecli.testing.specs import draft_specs

REPO = Path(__file__).resolve().parents[2]


def _run(pair: Pair, tmp_path: Path, **kw):
    return pair.run(tmp_path, **kw)


# --------------------------------------------------------------------------- the base pair


def test_base_pair_has_no_errors_and_shares(tmp_path):
    res = _run(base_pair(), tmp_path)
    assert errors(res) == []
    # no aux ids: every engine captures its default (2, L//2, L-3) = (2, 4, 5) for L = 8, the
    # hidden states SpecForge (format B) trains on by default (resolve_eagle_capture_layers:
    # layer outputs 1, L//2-1, L-4 = 1, 3, 4, i.e. hidden states 2, 4, 5): no warning at all
    assert [(f.code, f.engine) for f in res.findings if f.severity == "warning"] == []
    assert {(f.engine, f.severity) for f in find(res, "aux.default")} == {
        ("vllm", "info"),
        ("tokenspeed", "info"),
        ("sglang", "info"),
    }
    assert res.ready_tps("vllm") == [1, 2, 4]
    assert res.ready_tps("tokenspeed") == [1, 2, 4]
    rows = {(r.engine, r.tp): r for r in res.embed_sharing}
    # target embed per rank = pad64(640)/tp = 640/2 = 320 rows; draft sharded the same -> share
    assert rows["tokenspeed", 2].target_shape == (320, 64)
    assert rows["tokenspeed", 2].draft_sharded_shape == (320, 64)
    assert rows["tokenspeed", 2].draft_replicated_shape == (640, 64)
    assert rows["tokenspeed", 2].verdict == "share"
    # tokenspeed shares the head only without draft_vocab_size: the draft keeps its own lm_head
    assert rows["tokenspeed", 2].head_verdict == "own"
    assert rows["vllm", 4].verdict == "share"
    assert rows["vllm", 4].target_shape == (160, 64)


@pytest.mark.parametrize("engine", ENGINES)
def test_engine_filter_runs_one_model(tmp_path, engine):
    res = base_pair().run(tmp_path, engines=(engine,))
    assert set(res.resolved) == {engine}
    assert {f.engine for f in res.findings} <= {engine, "any"}
    assert "draft.format" in codes(res)
    assert np.isfinite(res.resolved[engine]["H"]["value"])


# --------------------------------------------------------------------------- draft.format / not_eagle3


@pytest.mark.parametrize(
    ("make", "fmt"),
    [
        (base_pair, "B"),
        (base_pair_d, "D"),
    ],
)
def test_draft_format_detected(tmp_path, make, fmt):
    res = _run(make(), tmp_path)
    f = one(res, "draft.format")
    assert (f.severity, f.engine, f.tp) == ("info", "any", None)
    assert f.evidence["format"] == fmt


def test_draft_format_a_and_f(tmp_path):
    # A: one-layer LlamaForCausalLM with draft_vocab_size (docs/check.md#draft-formats)
    p = base_pair()
    p.draft["architectures"] = ["LlamaForCausalLM"]
    assert one(_run(p, tmp_path / "a"), "draft.format").evidence["format"] == "A"
    # F: Eagle3LlamaForCausalLM
    p = base_pair()
    p.draft["architectures"] = ["Eagle3LlamaForCausalLM"]
    assert one(_run(p, tmp_path / "f"), "draft.format").evidence["format"] == "F"


def test_not_eagle3(tmp_path):
    # a one-layer LlamaForCausalLM WITHOUT draft_vocab_size and no Eagle3 architecture
    p = base_pair()
    p.draft["architectures"] = ["LlamaForCausalLM"]
    del p.draft["draft_vocab_size"]
    res = _run(p, tmp_path)
    f = one(res, "draft.not_eagle3")
    assert (f.severity, f.engine, f.tp) == ("error", "any", None)
    assert f.evidence["architecture"] == "LlamaForCausalLM"
    assert "draft.format" not in codes(res)
    assert res.embed_sharing == ()
    assert not res.ok()


def test_not_eagle3_twin(tmp_path):
    p = base_pair()
    p.draft["architectures"] = ["LlamaForCausalLM"]  # keeps draft_vocab_size -> format A
    res = _run(p, tmp_path)
    assert "draft.not_eagle3" not in codes(res)


# --------------------------------------------------------------------------- draft.layers / arch_name


def test_draft_layers(tmp_path):
    p = base_pair()
    p.draft["num_hidden_layers"] = 2
    res = _run(p, tmp_path)
    f = one(res, "draft.layers")
    # tokenspeed llama_eagle3.py LlamaForCausalLMEagle3.__init__: "EAGLE3 currently only supports 1 layer"
    assert (f.severity, f.engine, f.tp) == ("error", "tokenspeed", None)
    assert f.evidence["num_hidden_layers"] == 2
    assert res.ready_tps("tokenspeed") == []
    # vLLM llama_eagle3.py LlamaModel.__init__ builds range(num_hidden_layers) = 2 layers; layer 1
    # (H-wide q/k/v) loads only as layers.1.*, which this one-layer export lacks -> left uninitialised
    v = one(res, "tensor.missing", engine="vllm")
    assert v.evidence["missing"][:3] == [
        "layers.1.self_attn.q_proj.weight",
        "layers.1.self_attn.k_proj.weight",
        "layers.1.self_attn.v_proj.weight",
    ]
    assert res.ready_tps("vllm") == []


def test_draft_layers_twin(tmp_path):
    assert "draft.layers" not in codes(_run(base_pair(), tmp_path))


def test_draft_arch_name(tmp_path):
    p = base_pair()
    p.draft["architectures"] = ["LlamaForCausalLM"]  # format A: no "Eagle" in the name
    res = _run(p, tmp_path)
    f = one(res, "draft.arch_name", engine="tokenspeed")
    # SGLang configs/model_config.py _config_draft_model keeps the name; models/registry.py
    # registers LlamaForCausalLM as a target class, not an EAGLE3 draft
    sg = one(res, "draft.arch_name", engine="sglang")
    assert sg.evidence == {"architecture": "LlamaForCausalLM", "looked_up": "LlamaForCausalLM"}
    # tokenspeed hf_transformers_utils.py get_config appends "NextN" to a draft architecture with
    # none of NextN/Eagle/DFlash/DSpark; registry.py registers no LlamaForCausalLMNextN -> load fails
    assert (f.severity, f.engine, f.tp) == ("error", "tokenspeed", None)
    assert f.evidence == {"architecture": "LlamaForCausalLM", "looked_up": "LlamaForCausalLMNextN"}
    assert res.ready_tps("tokenspeed") == []
    # vLLM eagle.py EAGLEConfig prefixes "Eagle3": Eagle3LlamaForCausalLM is registered
    assert res.resolved["vllm"]["architecture"]["value"] == "Eagle3LlamaForCausalLM"
    assert res.ready_tps("vllm") == [1, 2, 4]


def test_draft_arch_name_twin(tmp_path):
    # LlamaForCausalLMEagle3 is registered by both engines (vLLM registry.py
    # _SPECULATIVE_DECODING_MODELS; tokenspeed llama_eagle3.py EntryClass)
    assert "draft.arch_name" not in codes(_run(base_pair(), tmp_path))


# --------------------------------------------------------------------------- tensor.missing / unexpected


def test_tensor_missing(tmp_path):
    p = base_pair().drop("midlayer.hidden_norm.weight")
    res = _run(p, tmp_path)
    # neither engine's load_weights checks for missing weights (vLLM's returns None, so the
    # loader's strict check is skipped; tokenspeed's skips silently): both leave it uninitialised
    for engine in ("vllm", "tokenspeed"):
        f = one(res, "tensor.missing", engine=engine)
        assert (f.severity, f.tp) == ("error", None)
        assert f.evidence["missing"] == ["midlayer.hidden_norm.weight"]


def test_tensor_missing_fc_norm(tmp_path):
    # Eagle 3.1 fc_norm: k = 3 norms fc_norm.{0,1,2}.weight [Ht] required (docs/engines/vllm.md#tensors)
    p = base_pair()
    p.draft["fc_norm"] = True
    res = _run(p, tmp_path)
    for engine in ("vllm", "tokenspeed"):
        assert one(res, "tensor.missing", engine=engine).evidence["missing"] == [
            "fc_norm.0.weight",
            "fc_norm.1.weight",
            "fc_norm.2.weight",
        ]


def test_tensor_missing_twin(tmp_path):
    p = base_pair()
    p.draft["fc_norm"] = True
    for i in range(3):
        p.put(f"fc_norm.{i}.weight", "BF16", (64,), np.ones(64, dtype=np.float32))
    assert "tensor.missing" not in codes(_run(p, tmp_path))


def test_tensor_unexpected(tmp_path):
    p = base_pair().put("midlayer.extra_proj.weight", "BF16", (64, 64))
    res = _run(p, tmp_path)
    v = one(res, "tensor.unexpected", engine="vllm")
    t = one(res, "tensor.unexpected", engine="tokenspeed")
    # vLLM's weights loader errors on unknown names; tokenspeed ignores them (docs/engines/vllm.md, docs/engines/tokenspeed.md)
    assert (v.severity, v.tp) == ("error", None)
    assert (t.severity, t.tp) == ("warning", None)
    assert v.evidence["unexpected"] == ["midlayer.extra_proj.weight"]
    assert t.evidence["unexpected"] == ["midlayer.extra_proj.weight"]
    assert res.ready_tps("vllm") == []
    assert res.ready_tps("tokenspeed") == [1, 2, 4]


def test_tensor_unexpected_twin_mask_hidden(tmp_path):
    # mask_hidden (numel k*Ht = 3*64 = 192) is loaded by vLLM for parallel drafting (docs/engines/vllm.md#tensors)
    p = base_pair().put("mask_hidden", "BF16", (1, 192))
    assert "tensor.unexpected" not in codes(_run(p, tmp_path))


# --------------------------------------------------------------------------- shape.*


@pytest.mark.parametrize(
    ("name", "bad", "code", "expected"),
    [
        # fc [H, k*Ht] = [64, 3*64] = [64, 192]; 100 is not a multiple of Ht (else aux.count)
        ("fc.weight", (64, 100), "shape.fc", [64, 192]),
        # q [nh*hd, 2H] = [4*16, 2*64] = [64, 128]; [64, 64] is the later-layer (H-input) layout
        ("midlayer.self_attn.q_proj.weight", (64, 64), "shape.q_proj", [64, 128]),
        # lm_head [Vd, H] = [128, 64]; a full-vocab head copied from the base (ModelOpt) is [640, 64]
        ("lm_head.weight", (640, 64), "shape.lm_head", [128, 64]),
        # k_proj [nkv*hd, 2H] = [2*16, 128] = [32, 128]
        ("midlayer.self_attn.k_proj.weight", (64, 128), "shape.k_proj", [32, 128]),
    ],
)
def test_shape(tmp_path, name, bad, code, expected):
    p = base_pair().reshape(name, bad)
    res = _run(p, tmp_path)
    for engine in ("vllm", "tokenspeed"):  # both allocate these shapes for this config
        f = one(res, code, engine=engine)
        assert (f.severity, f.tp) == ("error", None)
        assert f.evidence["tensor"] == name
        assert f.evidence["expected"] == expected
        assert f.evidence["found"] == list(bad)
    assert not [x for x in res.findings if x.code.startswith("shape.") and x.code != code]


def test_shape_embed_tokens(tmp_path):
    # embed_tokens [V, H] = [640, 64]; a [640, 32] one disagrees
    p = base_pair().put("embed_tokens.weight", "BF16", (640, 32))
    res = _run(p, tmp_path)
    for engine in ("vllm", "tokenspeed"):  # VocabParallelEmbedding(vocab_size, H) loads it first
        f = one(res, "shape.embed_tokens", engine=engine)
        assert f.severity == "error"
        assert (f.evidence["expected"], f.evidence["found"]) == ([640, 64], [640, 32])


def test_shape_embed_tokens_twin(tmp_path):
    p = base_pair().put("embed_tokens.weight", "BF16", (640, 64))
    assert not [c for c in codes(_run(p, tmp_path)) if c.startswith("shape.")]


def test_shape_d2t(tmp_path):
    # d2t [Vd] = [128]; one entry short -> exactly one shape.d2t finding
    d2t, _ = stride_map(640, 128)
    p = base_pair().set_d2t(d2t[:127])
    res = _run(p, tmp_path)
    f = one(res, "shape.d2t")
    assert (f.severity, f.engine, f.tp) == ("error", "any", None)
    assert f.evidence["expected"] == [128]
    assert f.evidence["found"] == [127]


def test_shape_twin_base(tmp_path):
    assert not [c for c in codes(_run(base_pair(), tmp_path)) if c.startswith("shape.")]


# --------------------------------------------------------------------------- hidden.*, embed.width_mismatch


def _draft_h32(*, target_hidden_size: int | None, with_embed: bool) -> Pair:
    """Draft H = 32 (nh 4, hd 8), Ht = target_hidden_size: the Llama-3.3-70B-style head (docs/engines/vllm.md#sharing)."""
    cfg = draft_config_b(H=32, hd=8)
    cfg["intermediate_size"] = 64
    if target_hidden_size is not None:
        cfg["target_hidden_size"] = target_hidden_size
    d2t, t2d = stride_map(640, 128)
    specs = draft_specs(cfg, d2t=d2t, t2d=t2d, with_embed=with_embed)
    return Pair(target_config(), cfg, {s.name: s for s in specs})


def test_hidden_mismatch(tmp_path):
    # draft trained for a target of hidden 96: target_hidden_size 96, fc [64, 3*96] = [64, 288]
    p = base_pair()
    p.draft["target_hidden_size"] = 96
    p.reshape("fc.weight", (64, 288))
    res = _run(p, tmp_path)
    for engine in ("vllm", "tokenspeed"):
        f = one(res, "hidden.mismatch", engine=engine)
        assert (f.severity, f.tp) == ("error", None)
        assert f.evidence == {"draft_target_hidden": 96, "target_hidden": 64}
    # vLLM sizes fc [H, k*Ht] = [64, 288]: matches the export
    assert not find(res, "shape.fc", engine="vllm")


def test_hidden_mismatch_twin(tmp_path):
    p = base_pair()
    p.draft["target_hidden_size"] = 64  # declared, equal to the target's hidden
    res = _run(p, tmp_path)
    assert "hidden.mismatch" not in codes(res)
    assert "hidden.tokenspeed_target_hidden" not in codes(res)


def test_hidden_tokenspeed_target_hidden(tmp_path):
    # H = 32 != Ht = 64 (= target hidden): vLLM serves it (fc [32, 3*64] = [32, 192] and its own
    # embed_tokens [640, 32]); tokenspeed builds fc [H, k*H] and ignores Ht (docs/engines/tokenspeed.md)
    res = _run(_draft_h32(target_hidden_size=64, with_embed=True), tmp_path)
    f = one(res, "hidden.tokenspeed_target_hidden")
    assert (f.severity, f.engine, f.tp) == ("error", "tokenspeed", None)
    assert f.evidence == {"H": 32, "Ht": 64}
    assert "hidden.mismatch" not in codes(res)
    assert errors(res) == [f]
    assert res.ready_tps("vllm") == [1, 2, 4]
    # set_embed_and_head step 1: target_hidden_size != hidden_size -> shares nothing
    row = next(r for r in res.embed_sharing if r.engine == "tokenspeed" and r.tp == 2)
    assert (row.verdict, row.head_verdict) == ("own", "own")


def test_hidden_tokenspeed_target_hidden_twin(tmp_path):
    assert "hidden.tokenspeed_target_hidden" not in codes(_run(base_pair(), tmp_path))


def test_embed_width_mismatch(tmp_path):
    # same H = 32 draft without embed_tokens: the borrowed target embedding is 64 wide (vLLM #18906)
    res = _run(_draft_h32(target_hidden_size=64, with_embed=False), tmp_path)
    # vLLM's V2 runner (eagle/utils.py maybe_share_target_embed) shares the 64-wide target
    # embedding into the 32-wide draft; tokenspeed shares nothing (target_hidden_size != H) and
    # already refuses the draft (hidden.tokenspeed_target_hidden)
    f = one(res, "embed.width_mismatch", engine="vllm")
    assert (f.severity, f.engine, f.tp) == ("error", "vllm", None)
    # SGLang models/llama.py LlamaForCausalLM.set_embed returns early (target_hidden_size 64 !=
    # hidden_size 32): the draft keeps its own embedding, which it does not ship
    assert one(res, "embed.width_mismatch", engine="sglang").severity == "error"
    assert f.evidence == {"H": 32, "target_hidden": 64}
    row = next(r for r in res.embed_sharing if r.engine == "vllm" and r.tp == 1)
    assert row.verdict == "error"


def test_embed_width_mismatch_twin(tmp_path):
    res = _run(_draft_h32(target_hidden_size=64, with_embed=True), tmp_path)
    assert "embed.width_mismatch" not in codes(res)


# --------------------------------------------------------------------------- vocab.*


def test_vocab_mismatch(tmp_path):
    # draft vocab_size 768 (another tokenizer) vs target 640; t2d stays [640]
    p = base_pair()
    p.draft["vocab_size"] = 768
    res = _run(p, tmp_path)
    f = one(res, "vocab.mismatch")
    assert (f.severity, f.engine, f.tp) == ("error", "any", None)
    assert f.evidence == {"draft_vocab": 768, "target_vocab": 640}


def test_vocab_mismatch_twin(tmp_path):
    assert "vocab.mismatch" not in codes(_run(base_pair(), tmp_path))


def test_vocab_draft_larger(tmp_path):
    # Vd 704 > V 640 (lm_head [704, 64], no maps)
    p = base_pair(Vd=640).drop("d2t", "t2d")
    p.draft["draft_vocab_size"] = 704
    p.reshape("lm_head.weight", (704, 64))
    res = _run(p, tmp_path)
    f = one(res, "vocab.draft_larger")
    assert (f.severity, f.engine, f.tp) == ("error", "any", None)
    assert f.evidence == {"Vd": 704, "V": 640}


def test_vocab_draft_larger_twin(tmp_path):
    # Vd == V = 640, full head [640, 64], no maps needed (d2t only when Vd != V, docs/check.md#draft-formats)
    p = base_pair(Vd=640).drop("d2t", "t2d")
    res = _run(p, tmp_path)
    assert "vocab.draft_larger" not in codes(res)
    assert errors(res) == []


def test_vocab_d2t_missing(tmp_path):
    # Vd 128 < V 640 and no d2t: vLLM maps draft ids onto 0..127 (docs/check.md#vocabulary-maps)
    p = base_pair().drop("d2t")
    res = _run(p, tmp_path)
    # vLLM llama_eagle3.py: draft_id_to_target_id allocated as zeros (Vd != V) and never loaded;
    # tokenspeed: no d2t -> no hot_token_id, draft ids used as target ids
    for engine in ("vllm", "tokenspeed"):
        f = one(res, "vocab.d2t_missing", engine=engine)
        assert (f.severity, f.tp) == ("error", None)
        assert f.evidence == {"Vd": 128, "V": 640}


def test_vocab_d2t_missing_twin(tmp_path):
    # Vd == V: no d2t needed
    p = base_pair(Vd=640).drop("d2t", "t2d")
    assert "vocab.d2t_missing" not in codes(_run(p, tmp_path))


def test_vocab_d2t_invalid_dtype(tmp_path):
    d2t, _ = stride_map(640, 128)
    p = base_pair().set_d2t(d2t.astype(np.int32), dtype="I32")
    f = one(_run(p, tmp_path), "vocab.d2t_invalid")
    assert (f.severity, f.engine, f.tp) == ("error", "any", None)
    assert f.evidence == {"reason": "dtype", "dtype": "I32"}


def test_vocab_d2t_invalid_out_of_range(tmp_path):
    # d2t[127] = 4*127 = 508 -> target 635; set 513 -> 127 + 513 = 640 = V, outside [0, 640)
    d2t, _ = stride_map(640, 128)
    d2t[127] = 513
    res = _run(base_pair().set_d2t(d2t), tmp_path)
    f = one(res, "vocab.d2t_invalid")
    assert (f.severity, f.engine) == ("error", "any")
    assert f.evidence == {
        "reason": "target id out of range",
        "draft_id": 127,
        "target_id": 640,
        "V": 640,
        "count": 1,
    }


def test_vocab_d2t_invalid_negative(tmp_path):
    # d2t[0] = -1 -> target id 0 + (-1) = -1
    d2t, _ = stride_map(640, 128)
    d2t[0] = -1
    f = one(_run(base_pair().set_d2t(d2t), tmp_path), "vocab.d2t_invalid")
    assert (f.evidence["draft_id"], f.evidence["target_id"]) == (0, -1)


def test_vocab_d2t_invalid_not_increasing(tmp_path):
    # targets 5*i: 0, 5, 10, ...; d2t[2] = 3 -> 2 + 3 = 5 = target of draft id 1: not strictly
    # increasing at draft id 2; t2d[5] is True and sum(t2d) stays 128, so t2d is still consistent
    d2t, _ = stride_map(640, 128)
    d2t[2] = 3
    res = _run(base_pair().set_d2t(d2t), tmp_path)
    f = one(res, "vocab.d2t_invalid")
    assert f.evidence == {
        "reason": "not strictly increasing",
        "draft_id": 2,
        "target_ids": [5, 5],
    }
    assert "vocab.t2d_invalid" not in codes(res)


def test_vocab_d2t_valid_twin(tmp_path):
    res = _run(base_pair(), tmp_path)
    assert not {"vocab.d2t_invalid", "vocab.d2t_absolute", "vocab.t2d_invalid"} & codes(res)


def test_vocab_d2t_absolute(tmp_path):
    # d2t = arange(128): absolute ids written as offsets, maps i -> 2i (verl-SpeCo PR #67).
    # t2d marks 5*i: 2i is marked only when 5 | 2i, i.e. 5 | i: i in {0, 5, ..., 125} = 26 ids,
    # so 128 - 26 = 102 draft ids disagree with t2d, the first is i = 1 (-> 2)
    p = base_pair().set_d2t(np.arange(128, dtype=np.int64))
    res = _run(p, tmp_path)
    f = one(res, "vocab.d2t_absolute")
    assert (f.severity, f.engine, f.tp) == ("error", "any", None)
    assert f.evidence == {"first": [0, 1, 2, 3]}
    t = one(res, "vocab.t2d_invalid", engine="vllm")
    assert (t.evidence["count"], t.evidence["draft_id"]) == (102, 1)


def test_vocab_d2t_identity_extra(tmp_path):
    # all-zero d2t means identity: valid only when Vd == V (docs/check.md#vocabulary-maps)
    p = base_pair().set_d2t(np.zeros(128, dtype=np.int64)).drop("t2d")
    f = one(_run(p, tmp_path), "vocab.d2t_identity")
    assert (f.severity, f.engine) == ("error", "any")
    assert f.evidence == {"Vd": 128, "V": 640}
    twin = base_pair(Vd=640).drop("t2d").set_d2t(np.zeros(640, dtype=np.int64))
    res = _run(twin, tmp_path / "twin")
    assert not {"vocab.d2t_identity", "vocab.d2t_invalid", "vocab.d2t_absolute"} & codes(res)


def test_vocab_t2d_invalid_sum(tmp_path):
    # one extra True: sum(t2d) = 129 != Vd 128
    _, t2d = stride_map(640, 128)
    t2d[1] = True
    res = _run(base_pair().set_t2d(t2d), tmp_path)
    # every engine's load_weights skips t2d (`if "t2d" in name: continue`: vLLM
    # llama_eagle3.py Eagle3LlamaForCausalLM.load_weights, SGLang and tokenspeed
    # llama_eagle3.py LlamaForCausalLMEagle3.load_weights): serving is unaffected, an info each
    got = sorted((f.engine, f.severity, f.tp) for f in find(res, "vocab.t2d_invalid"))
    assert got == [("sglang", "info", None), ("tokenspeed", "info", None), ("vllm", "info", None)]
    f = one(res, "vocab.t2d_invalid", engine="sglang")
    assert f.evidence == {"true_count": 129, "Vd": 128}
    assert res.ready_tps("vllm") == res.ready_tps("tokenspeed") == [1, 2, 4]


def test_vocab_t2d_invalid_disagrees(tmp_path):
    # move target 5 -> 6: sum stays 128 but d2t maps draft id 1 to 1 + 4 = 5, and t2d[5] is False
    _, t2d = stride_map(640, 128)
    t2d[5], t2d[6] = False, True
    f = one(_run(base_pair().set_t2d(t2d), tmp_path), "vocab.t2d_invalid", engine="tokenspeed")
    assert f.evidence == {"count": 1, "draft_id": 1}


def test_vocab_t2d_invalid_dtype(tmp_path):
    _, t2d = stride_map(640, 128)
    f = one(
        _run(base_pair().set_t2d(t2d.astype(np.uint8), dtype="U8"), tmp_path),
        "vocab.t2d_invalid",
        engine="vllm",
    )
    assert f.evidence == {"dtype": "U8", "shape": [640], "expected": [640]}


def test_vocab_t2d_invalid_length(tmp_path):
    # t2d must be [V] = [640]; one short
    _, t2d = stride_map(640, 128)
    f = one(_run(base_pair().set_t2d(t2d[:639]), tmp_path), "vocab.t2d_invalid", engine="vllm")
    assert f.evidence == {"dtype": "BOOL", "shape": [639], "expected": [640]}


def test_vocab_t2d_twin_absent(tmp_path):
    # ModelOpt writes d2t but never t2d (docs/check.md#draft-formats): absence is fine
    assert "vocab.t2d_invalid" not in codes(_run(base_pair().drop("t2d"), tmp_path))


# --------------------------------------------------------------------------- lm_head.missing, tie


def test_lm_head_missing_vllm_reduced_vocab(tmp_path):
    # Vd 128 < V 640 and no lm_head: vLLM cannot borrow the [640, 64] target head (docs/engines/tokenspeed.md#tensors, docs/engines/vllm.md);
    # tokenspeed also not (draft_vocab_size is set, docs/engines/tokenspeed.md step 4)
    res = _run(base_pair().drop("lm_head.weight"), tmp_path)
    v = one(res, "lm_head.missing", engine="vllm")
    assert (v.severity, v.tp) == ("error", None)
    assert v.evidence == {"Vd": 128, "V": 640}
    t = one(res, "lm_head.missing", engine="tokenspeed")
    assert t.evidence["Vd"] == 128


def test_lm_head_missing_tokenspeed_only(tmp_path):
    # Vd == V = 640 but draft_vocab_size is written: vLLM borrows the target head, tokenspeed
    # shares the head only when draft_vocab_size is absent -> random head there
    p = base_pair(Vd=640).drop("lm_head.weight", "d2t", "t2d")
    res = _run(p, tmp_path)
    f = one(res, "lm_head.missing", engine="tokenspeed")
    assert (f.severity, f.engine, f.tp) == ("error", "tokenspeed", None)
    assert f.evidence == {"Vd": 640}
    # SGLang llama_eagle3.py LlamaForCausalLMEagle3.__init__ borrows the head only for a null
    # draft_vocab_size: the same uninitialised head
    assert one(res, "lm_head.missing", engine="sglang").evidence == {"Vd": 640}
    assert res.ready_tps("vllm") == [1, 2, 4]


def test_lm_head_missing_twin(tmp_path):
    # the same draft without the draft_vocab_size key: both engines borrow the target head
    p = base_pair(Vd=640).drop("lm_head.weight", "d2t", "t2d")
    del p.draft["draft_vocab_size"]
    res = _run(p, tmp_path)
    assert "lm_head.missing" not in codes(res)
    row = next(r for r in res.embed_sharing if r.engine == "tokenspeed" and r.tp == 2)
    assert row.head_verdict == "share"
    # SGLang reads config.draft_vocab_size as an attribute (llama_eagle3.py
    # LlamaForCausalLMEagle3.__init__): a config without the key fails at start-up
    assert [(f.code, f.engine) for f in errors(res)] == [
        ("config.draft_vocab_size_absent", "sglang")
    ]


def test_tie_reduced_vocab(tmp_path):
    p = base_pair()
    p.draft["tie_word_embeddings"] = True
    res = _run(p, tmp_path)
    # vLLM llama_eagle3.py Eagle3LlamaForCausalLM.__init__ calls nn.Module.__init__ and builds
    # ParallelLMHead(draft_vocab_size, H) without tying: the draft's lm_head [128, 64] loads (info).
    # SGLang / tokenspeed llama_eagle3.py LlamaForCausalLMEagle3.__init__: `if
    # self.config.tie_word_embeddings: self.lm_head = self.model.embed_tokens` -> the [128, 64]
    # lm_head.weight has no parameter and load_weights skips it (error)
    got = {f.engine: f.severity for f in find(res, "tie.reduced_vocab")}
    assert got == {"vllm": "info", "sglang": "error", "tokenspeed": "error"}
    assert one(res, "tie.reduced_vocab", engine="sglang").evidence == {"Vd": 128, "V": 640}
    assert res.ready_tps("vllm") == [1, 2, 4]
    assert res.ready_tps("sglang") == res.ready_tps("tokenspeed") == []


def test_tie_reduced_vocab_fix_applied(tmp_path):
    # the fix the SGLang/tokenspeed finding gives (tie_word_embeddings false; the draft ships its
    # lm_head), applied: the finding goes and no error takes its place
    p = base_pair()
    p.draft["tie_word_embeddings"] = True
    res = _run(p, tmp_path / "a")
    assert (
        "set tie_word_embeddings to false" in one(res, "tie.reduced_vocab", engine="sglang").message
    )
    p.draft["tie_word_embeddings"] = False
    fixed = _run(p, tmp_path / "b")
    assert "tie.reduced_vocab" not in codes(fixed)
    assert errors(fixed) == []


def test_tie_reduced_vocab_twin(tmp_path):
    # tied with Vd == V is fine
    p = base_pair(Vd=640).drop("d2t", "t2d")
    p.draft["tie_word_embeddings"] = True
    assert "tie.reduced_vocab" not in codes(_run(p, tmp_path))


# --------------------------------------------------------------------------- aux.*


def test_aux_out_of_range_tokenspeed(tmp_path):
    # explicit ids [2, 4, 7], L = 8. tokenspeed causal_lm.py BaseCausalLM.set_eagle3_layers_to_capture
    # adds 1 -> capture indices [3, 5, 8]; base/transformer_model.py captures indices 0..L-1 in the
    # layer loop and L+1 (the final residual), never L = 8 -> id 7 is dropped: 2 states for k = 3.
    # vLLM captures hidden_states[2, 4, 7] (valid 0..L)
    p = base_pair()
    p.draft["eagle_aux_hidden_state_layer_ids"] = [2, 4, 7]
    res = _run(p, tmp_path)
    f = one(res, "aux.out_of_range")
    assert (f.severity, f.engine, f.tp) == ("error", "tokenspeed", None)
    assert f.evidence == {"captured": [3, 5], "L": 8, "ids": [2, 4, 7]}
    # the count problem is said once, by aux.out_of_range
    assert not find(res, "aux.count", engine="tokenspeed")
    assert res.resolved["vllm"]["aux_layers"]["value"] == [2, 4, 7]


def test_aux_out_of_range_twin(tmp_path):
    # id 0 (embedding output) and id L are valid for vLLM (hidden_states[0] and [8]); tokenspeed
    # +1 -> [1, 5, 9]: 9 = L+1 is the final residual on a BaseTransformerModel target (Llama)
    p = base_pair()
    p.draft["eagle_aux_hidden_state_layer_ids"] = [0, 4, 8]
    res = _run(p, tmp_path)
    assert "aux.out_of_range" not in codes(res)
    assert res.resolved["vllm"]["aux_layers"]["value"] == [0, 4, 8]
    assert res.resolved["tokenspeed"]["aux_layers"]["value"] == [1, 5, 8]


def test_aux_count_fc_width(tmp_path):
    # no ids -> k = 3 in both engines, allocated fc [64, 192]; the export has fc [64, 256] = 4 x 64
    p = base_pair().reshape("fc.weight", (64, 256))
    res = _run(p, tmp_path)
    for engine in ("vllm", "tokenspeed"):
        f = one(res, "aux.count", engine=engine)
        assert (f.severity, f.tp) == ("error", None)
        assert f.evidence["expected"] == [64, 192]
        assert f.evidence["found"] == [64, 256]
        assert (f.evidence["k"], f.evidence["fc_k"]) == (3, 4)
    assert "shape.fc" not in codes(res)


def test_aux_count_top_level_ids_vllm(tmp_path):
    # four TOP-LEVEL ids and fc [64, 256]: vLLM llama_eagle3.py LlamaModel.__init__ takes k from
    # num_aux_hidden_states, else len(eagle_config ids), else 3 -> fc [64, 192]: the load fails.
    # tokenspeed sizes fc from the top-level list: k = 4, [64, 256] matches.
    p = base_pair().reshape("fc.weight", (64, 256))
    p.draft["eagle_aux_hidden_state_layer_ids"] = [1, 2, 4, 5]
    res = _run(p, tmp_path)
    f = one(res, "aux.count", engine="vllm")
    assert (f.evidence["k"], f.evidence["fc_k"]) == (3, 4)
    assert not find(res, "aux.count", engine="tokenspeed")


def test_aux_count_twin(tmp_path):
    # the same draft with num_aux_hidden_states 4: vLLM k = 4 too
    p = base_pair().reshape("fc.weight", (64, 256))
    p.draft["eagle_aux_hidden_state_layer_ids"] = [1, 2, 4, 5]
    p.draft["num_aux_hidden_states"] = 4
    res = _run(p, tmp_path)
    assert not find(res, "aux.count", engine="vllm") and not find(
        res, "aux.count", engine="tokenspeed"
    )
    # SGLang sizes fc for num_aux_hidden_states = 4 but never reads top-level ids
    # (spec_aux_hidden_state.py _resolve_eagle_aux_hidden_state): the default 3 states
    assert one(res, "aux.count", engine="sglang").evidence == {"captured": [2, 4, 5], "k": 4}


def test_aux_count_nested_ids(tmp_path):
    # 4 ids only under eagle_config, fc [64, 256].
    # tokenspeed: factory.py _eagle_aux_layer_ids reads the nested list (config has eagle_config):
    #   capture [2, 3, 5, 6]; llama_eagle3.py sizes fc from the TOP-LEVEL list only: k = 3
    # vLLM: LlamaModel.__init__ k = len(eagle_config ids) = 4 (fc matches); the V2 runner
    #   (eagle3_utils.py get_eagle3_aux_layers_from_config) does not read the nested ids: it
    #   captures the default (2, L//2, L-3) = [2, 4, 5]: 3 states for k = 4
    p = base_pair().reshape("fc.weight", (64, 256))
    p.draft["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": [1, 2, 4, 5]}
    res = _run(p, tmp_path)
    assert one(res, "aux.count", engine="vllm").evidence == {"captured": [2, 4, 5], "k": 4}
    # tokenspeed: the export's fc [64, 256] does not fit k = 3 (said once, as the fc shape)
    ts = one(res, "aux.count", engine="tokenspeed")
    assert (ts.evidence["k"], ts.evidence["fc_k"]) == (3, 4)
    nested = one(res, "aux.default", engine="vllm")
    # format B ids are layer outputs: trained on hidden_states[2, 3, 5, 6] != the default
    assert nested.severity == "error"
    assert nested.evidence["nested_ids"] == [1, 2, 4, 5]


def test_aux_default(tmp_path):
    res = _run(base_pair(), tmp_path)
    for engine in ("vllm", "tokenspeed"):
        f = one(res, "aux.default", engine=engine)
        # a SpecForge (format B) draft without ids trains on its trainer's default layers:
        # layer outputs (1, L//2-1, L-4) = hidden states [2, 4, 5] for L = 8, which is what the
        # engine captures by default, (2, L//2, L-3) -> an info, not a warning
        assert (f.severity, f.tp) == ("info", None)
        assert f.evidence["layers"] == [2, 4, 5]
        assert f.evidence["trained_on"] == [2, 4, 5]


def test_aux_default_twin(tmp_path):
    p = base_pair()
    p.draft["eagle_aux_hidden_state_layer_ids"] = [1, 3, 5]
    res = _run(p, tmp_path)
    assert {f.engine for f in find(res, "aux.default")} == {"sglang"}
    # SGLang ignores the top-level ids; format B [1, 3, 5] was trained on [2, 4, 6] != [2, 4, 5]
    assert one(res, "aux.default", engine="sglang").severity == "error"


def test_aux_convention_layer_output_format(tmp_path):
    # format B (SpecForge) writes layer-output ids: [1, 3, 5] trained on hidden_states[2, 4, 6].
    # vLLM captures [1, 3, 5] (no +1) -> differs; tokenspeed [2, 4, 6] -> matches
    p = base_pair()
    p.draft["eagle_aux_hidden_state_layer_ids"] = [1, 3, 5]
    res = _run(p, tmp_path)
    f = one(res, "aux.convention")
    assert (f.severity, f.engine, f.tp) == ("info", "any", None)
    assert f.evidence["ids"] == [1, 3, 5]
    # SGLang reads no top-level ids: the default [2, 4, 5]
    assert f.evidence["captured"] == {
        "vllm": [1, 3, 5],
        "tokenspeed": [2, 4, 6],
        "sglang": [2, 4, 5],
    }
    assert f.evidence["trained_on"] == [2, 4, 6]
    assert f.evidence["differs"] == ["vllm", "sglang"]
    # the engine that differs says so itself
    assert one(res, "aux.mismatch", engine="vllm").severity == "warning"
    assert not find(res, "aux.mismatch", engine="tokenspeed")


def test_aux_convention_hidden_state_format(tmp_path):
    # format D (speculators) writes hidden-state ids: [2, 4, 5] -> vLLM [2, 4, 5] matches,
    # tokenspeed [3, 5, 6] differs
    # (tokenspeed stops at the architecture: Eagle3Speculator is not registered there)
    p = base_pair_d(eagle_aux_hidden_state_layer_ids=[2, 4, 5])
    f = one(_run(p, tmp_path), "aux.convention")
    assert f.evidence["captured"] == {"vllm": [2, 4, 5]}
    assert f.evidence["differs"] == []


def test_aux_convention_twin(tmp_path):
    assert "aux.convention" not in codes(_run(base_pair(), tmp_path))


# --------------------------------------------------------------------------- norm.*, maxpos


def test_norm_residual_unsupported(tmp_path):
    p = base_pair()
    p.draft["norm_before_residual"] = True
    res = _run(p, tmp_path)
    f = one(res, "norm.residual_unsupported", engine="tokenspeed")
    assert (f.severity, f.engine, f.tp) == ("error", "tokenspeed", None)
    # SGLang llama_eagle3.py LlamaDecoderLayer.forward never reads it either
    assert one(res, "norm.residual_unsupported", engine="sglang").severity == "error"
    assert f.evidence["source_key"] == "norm_before_residual"
    assert res.ready_tps("vllm") == [1, 2, 4]


def test_norm_residual_unsupported_twin(tmp_path):
    p = base_pair()
    p.draft["norm_before_residual"] = False
    assert "norm.residual_unsupported" not in codes(_run(p, tmp_path))


def test_maxpos_short_target(tmp_path):
    # draft 1024 < target max_position_embeddings 2048 (the serving length by default)
    p = base_pair()
    p.draft["max_position_embeddings"] = 1024
    res = _run(p, tmp_path)
    t = one(res, "maxpos.short", engine="tokenspeed")
    assert (t.severity, t.tp) == ("warning", None)
    assert t.evidence == {"draft": 1024, "serving": 2048}
    # vLLM raises the draft's limit itself (vLLM #48894): info only
    assert one(res, "maxpos.short", engine="vllm").severity == "info"


def test_maxpos_short_twin(tmp_path):
    res = _run(base_pair(), tmp_path, max_model_len=MAXPOS)
    assert "maxpos.short" not in codes(res)


# --------------------------------------------------------------------------- tp.*, draft_tp


def _heads6_pair(V: int) -> Pair:
    """H 96, nh 6, nkv 3, hd 16 (target and draft), Vd 192: heads split over TP 3, so only the
    vocab can fail. (H 96 = 6 * 16: LlamaConfig.validate_architecture wants H % nh == 0.)"""
    cfg = draft_config_b(H=96, nh=6, nkv=3, V=V, Vd=192)
    d2t, t2d = stride_map(V, 192)
    specs = draft_specs(cfg, d2t=d2t, t2d=t2d)
    return Pair(target_config(H=96, nh=6, nkv=3, V=V), cfg, {s.name: s for s in specs})


def test_tp_vocab_indivisible(tmp_path):
    # pad64(640) = 640 and 640 % 3 = 1 -> the target embedding cannot be split over TP 3 (vLLM
    # and tokenspeed vocab_parallel_embedding.py VocabParallelEmbedding: divide() raises). The draft head:
    # pad64(192) = 192 = 3 * 64, fine. tokenspeed also builds the draft embedding sharded
    # (vocab 640) -> a second finding there; vLLM shares the target's (no draft embed_tokens).
    res = _run(_heads6_pair(640), tmp_path, tps=(3,))
    v = one(res, "tp.vocab_indivisible", engine="vllm")
    assert (v.severity, v.tp) == ("error", 3)
    assert v.evidence == {
        "what": "target embedding",
        "vocab": 640,
        "padded": 640,
        "tp_size": 3,
    }
    ts = find(res, "tp.vocab_indivisible", engine="tokenspeed", tp=3)
    assert sorted(f.evidence["what"] for f in ts) == ["draft embedding", "target embedding"]
    assert "tp.heads_indivisible" not in codes(res)
    assert res.ready_tps("vllm") == []


def test_tp_vocab_indivisible_padding(tmp_path):
    # vocab 650 is not even, but pad64(650) = 11 * 64 = 704 = 2 * 352: TP 2 works
    p = base_pair()
    p.target["vocab_size"] = 650
    p.draft["vocab_size"] = 650
    d2t, t2d = stride_map(650, 128)
    p.set_d2t(d2t).set_t2d(t2d)
    res = _run(p, tmp_path, tps=(2,))
    assert "tp.vocab_indivisible" not in codes(res)
    assert errors(res) == []


def test_tp_vocab_indivisible_twin(tmp_path):
    # vocab 768: pad64 = 768 = 3 * 256
    assert "tp.vocab_indivisible" not in codes(_run(_heads6_pair(768), tmp_path, tps=(3,)))


def test_tp_heads_indivisible_heads(tmp_path):
    # nh 4 % 8 = 4: neither target nor draft attention splits over TP 8; at TP 4 both do
    # (nkv 2 divides 4: KV heads replicated)
    res = _run(base_pair(), tmp_path, tps=(4, 8))
    for engine in ("vllm", "tokenspeed"):
        got = find(res, "tp.heads_indivisible", engine=engine)
        assert {(f.tp, f.severity, f.evidence["what"]) for f in got} == {
            (8, "error", "target"),
            (8, "error", "draft"),
        }
        tgt = next(f for f in got if f.evidence["what"] == "target")
        assert tgt.evidence == {"what": "target", "heads": 4, "kv_heads": 2, "tp_size": 8}
    assert res.ready_tps("vllm") == [4]
    assert res.ready_tps("tokenspeed") == [4]


def test_tp_heads_indivisible_twin(tmp_path):
    assert "tp.heads_indivisible" not in codes(_run(base_pair(), tmp_path, tps=(1, 2, 4)))


def test_draft_tp_invalid(tmp_path):
    # vLLM draft_tensor_parallel_size must be 1 or the target TP (docs/engines/vllm.md):
    # draft TP 2 is invalid at TP 1 and TP 4, valid at TP 2
    res = _run(base_pair(), tmp_path, tps=(1, 2, 4), draft_tp=2)
    got = find(res, "draft_tp.invalid")
    assert {(f.engine, f.severity, f.tp) for f in got} == {
        ("vllm", "error", 1),
        ("vllm", "error", 4),
    }
    assert all(f.evidence == {"draft_tp": 2} for f in got)
    assert res.ready_tps("vllm") == [2]
    assert res.ready_tps("tokenspeed") == [1, 2, 4]


def test_draft_tp_invalid_twin(tmp_path):
    res = _run(base_pair(), tmp_path, tps=(1, 2, 4), draft_tp=1)
    assert "draft_tp.invalid" not in codes(res)


# --------------------------------------------------------------------------- embed.share_error / tied_stale


# --------------------------------------------------------------------------- CLI


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "recipecli", "check", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.fixture
def written(tmp_path):
    def make(pair: Pair) -> tuple[str, str]:
        t, d = pair.write(tmp_path)
        return str(t), str(d)

    return make


def test_cli_json_ok(written):
    t, d = written(base_pair())
    r = _cli(t, d, "--json", "--tp", "1,2")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert {"target", "draft", "engines", "findings", "embed_sharing", "ok"} <= set(doc)
    assert doc["ok"] is True
    assert doc["draft"]["format"] == "B"
    assert doc["draft"]["Vd"] == 128
    assert doc["draft"]["sources"]["Vd"] == "draft_vocab_size"
    assert doc["engines"]["vllm"] == {"ready": True, "ready_tp": [1, 2]}
    row = next(x for x in doc["embed_sharing"] if x["engine"] == "tokenspeed" and x["tp"] == 2)
    assert row["target_shape"] == [320, 64]
    assert row["verdict"] == "share"


def test_cli_findings_exit_1(written):
    t, d = written(base_pair().drop("d2t"))
    r = _cli(t, d, "--json", "--tp", "1")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["ok"] is False
    assert "vocab.d2t_missing" in {f["code"] for f in doc["findings"]}


def test_cli_strict(written):
    # an extra draft tensor: tokenspeed ignores it, a warning (vLLM's loader errors: left out)
    t, d = written(base_pair().put("midlayer.extra_proj.weight", "BF16", (64, 64)))
    args = ("--tp", "1", "--engine", "tokenspeed")
    assert _cli(t, d, *args).returncode == 0
    r = _cli(t, d, *args, "--strict", "--json")
    assert r.returncode == 1
    assert json.loads(r.stdout)["ok"] is False


def test_cli_engine_filter(written):
    p = base_pair()
    p.draft["norm_before_residual"] = True  # norm.residual_unsupported: tokenspeed only
    t, d = written(p)
    r = _cli(t, d, "--engine", "vllm", "--tp", "1", "--json")
    assert r.returncode == 0, r.stdout
    doc = json.loads(r.stdout)
    assert set(doc["engines"]) == {"vllm"}
    assert all(f["engine"] in ("vllm", "any") for f in doc["findings"])
    assert _cli(t, d, "--engine", "tokenspeed", "--tp", "1").returncode == 1


def test_cli_draft_tp(written):
    t, d = written(base_pair())
    r = _cli(t, d, "--engine", "vllm", "--tp", "4", "--draft-tp", "2", "--json")
    assert r.returncode == 1
    assert [
        (f["code"], f["tp"]) for f in json.loads(r.stdout)["findings"] if f["severity"] == "error"
    ] == [("draft_tp.invalid", 4)]


@pytest.mark.parametrize("bad", ["a,b", "0", "", "2,-1"])
def test_cli_bad_tp_exit_2(written, bad):
    t, d = written(base_pair())
    r = _cli(t, d, "--tp", bad)
    assert r.returncode == 2
    assert "--tp" in r.stderr
    assert "Traceback" not in r.stderr
    assert r.stdout == ""


def test_cli_bad_engine_exit_2(written):
    t, d = written(base_pair())
    r = _cli(t, d, "--engine", "trtllm")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr


def test_cli_missing_draft_exit_2(written, tmp_path):
    t, _ = written(base_pair())
    missing = str(tmp_path / "no-such-draft")
    r = _cli(t, missing)
    assert r.returncode == 2
    assert "no-such-draft" in r.stderr
    assert "Traceback" not in r.stderr


def test_cli_broken_draft_config_exit_2(written):
    t, d = written(base_pair())
    Path(d, "config.json").write_text("{not json")
    r = _cli(t, d)
    assert r.returncode == 2
    assert "config.json" in r.stderr
    assert "Traceback" not in r.stderr


def test_cli_example_and_pair_exit_2(written):
    t, d = written(base_pair())
    r = _cli(t, d, "--example", "llama3.1-8b-eagle3")
    assert r.returncode == 2
    assert "--example" in r.stderr


def test_cli_example_ready_on_vllm_not_on_tokenspeed():
    # yuhuili/EAGLE3-LLaMA3.1-Instruct-8B says architectures ["LlamaForCausalLM"]: vLLM serves it
    # as Eagle3LlamaForCausalLM; tokenspeed looks up LlamaForCausalLMNextN, which it does not
    # register (get_config; registry.py) -> exit 1, with the fix
    r = _cli("--example", "llama3.1-8b-eagle3", "--kernel", "skip")
    assert r.returncode == 1, r.stderr
    assert "vllm        READY      at TP 1, 2, 4, 8" in r.stdout
    assert "tokenspeed  NOT READY" in r.stdout
    assert "recipecli convert DRAFT OUT --to eagle3" in r.stdout


def test_cli_kernel_skip_does_not_import_torch(written):
    t, d = written(base_pair())
    code = (
        "import sys\n"
        "from recipecli.cli import main\n"
        f"sys.argv = ['recipecli', 'check', {t!r}, {d!r}, '--kernel', 'skip', '--tp', '1', '--json']\n"
        "try:\n    main()\nexcept SystemExit as e:\n    rc = e.code\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
        "print('rc', rc, file=sys.stderr)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "rc 0" in r.stderr


# --------------------------------------------------------------------------- docs


ISSUE_CODES = """draft.format draft.not_eagle3 draft.layers draft.arch_name tensor.missing
tensor.unexpected shape.fc shape.q_proj shape.lm_head shape.embed_tokens shape.d2t hidden.mismatch
hidden.tokenspeed_target_hidden vocab.mismatch vocab.draft_larger vocab.d2t_missing
vocab.d2t_invalid vocab.d2t_absolute vocab.t2d_invalid lm_head.missing tie.reduced_vocab
embed.width_mismatch aux.out_of_range aux.count aux.default aux.convention
norm.residual_unsupported norm.residual_default maxpos.short tp.vocab_indivisible
tp.heads_indivisible draft_tp.invalid embed.share_error embed.tied_stale""".split()


def test_docs_name_every_code():
    from recipecli.check import RULES
    from recipecli.engines import engine_models

    # docs/engines/codes.md is generated from recipecli/codes/ and the models; test_engine_models
    # checks that every emitted code is in that catalog, this that the page shows it
    doc = (REPO / "docs" / "engines" / "codes.md").read_text()
    registered = {c for r in RULES for c in r.codes if c != "shape.*"}
    registered |= {c for m in engine_models() for s in m.steps for c in s.codes if c != "shape.*"}
    from recipecli.codes import catalog_code

    wanted = {catalog_code(c) for c in set(ISSUE_CODES) | registered}
    missing = [c for c in sorted(wanted) if f"### `{c}`" not in doc]
    assert missing == []


# ------------------------------------------------ the one-layer aux shift, graded alike (#24)


def test_one_layer_aux_shift_is_a_warning_on_every_engine(tmp_path):
    # format B (SpecForge) writes layer-output ids: [2, 4, 5] means trained on hidden_states
    # [3, 5, 6]. Target L 8: the default capture is (2, L//2, L-3) = [2, 4, 5].
    # Top level: vLLM reads the ids as hidden-state indices (eagle3_utils.py
    # get_eagle3_aux_layers_from_config) -> captures [2, 4, 5]: aux.mismatch, a warning.
    p = base_pair()
    p.draft["eagle_aux_hidden_state_layer_ids"] = [2, 4, 5]
    res = _run(p, tmp_path / "top")
    assert one(res, "aux.mismatch", engine="vllm").severity == "warning"
    # SGLang reads only eagle_config's ids (spec_aux_hidden_state.py
    # _resolve_eagle_aux_hidden_state): the Llama default [2, 4, 5] is the same one-layer shift
    # of those ignored ids -> the same warning (it was an error)
    assert one(res, "aux.default", engine="sglang").severity == "warning"
    # Only under eagle_config: vLLM's V2 runner reads no nested ids and captures the default
    # [2, 4, 5], the same shift again -> a warning (it was an error)
    p = base_pair()
    p.draft["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": [2, 4, 5]}
    assert one(_run(p, tmp_path / "nested"), "aux.default", engine="vllm").severity == "warning"


def test_aux_default_no_convention_explains_stays_an_error(tmp_path):
    # ids [1, 3, 6] (trained on [2, 4, 7]): the default [2, 4, 5] is neither the ids as written
    # nor the ids + 1, so the draft certainly gets other states -> an error on vLLM (nested ids
    # ignored) and on SGLang (top-level ids ignored)
    p = base_pair()
    p.draft["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": [1, 3, 6]}
    assert one(_run(p, tmp_path / "nested"), "aux.default", engine="vllm").severity == "error"
    p = base_pair()
    p.draft["eagle_aux_hidden_state_layer_ids"] = [1, 3, 6]
    assert one(_run(p, tmp_path / "top"), "aux.default", engine="sglang").severity == "error"
