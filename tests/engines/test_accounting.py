"""Each engine's accounting of a draft (recipecli/engines/accounting.py, issue #24 item 1) and the
findings it grades: expected names and statuses worked out by hand from the engines' code at the
pins (file and function in each comment) on tests/helpers/pairs.py's base pair (format B,
``midlayer.`` naming, one layer, lm_head, d2t and t2d, no embed_tokens, Vd 128 < V 640).
"""

from __future__ import annotations

import json

import pytest
from helpers.pairs import base_pair, find, one

from recipecli.check.text import accounting_lines

QKV = "model.layers.0.self_attn.qkv_proj.weight"


def _acc(res, engine):
    return res.accounting[engine]


def test_vllm_name_map_on_the_base_pair(tmp_path):
    res = base_pair().run(tmp_path, tps=(1,), engines=("vllm",), explain=True)
    acc = _acc(res, "vllm")
    use = {t.name: (t.status, t.param) for t in acc.tensors}
    # llama_eagle3.py LlamaModel.hf_to_vllm_mapper: midlayer. -> layers.0., q/k/v -> qkv_proj;
    # Eagle3LlamaForCausalLM.load_weights: "model." before every name but lm_head
    for p in "qkv":
        assert use[f"midlayer.self_attn.{p}_proj.weight"] == ("loaded", QKV)
    assert use["midlayer.mlp.up_proj.weight"] == (
        "loaded",
        "model.layers.0.mlp.gate_up_proj.weight",
    )
    assert use["lm_head.weight"] == ("loaded", "lm_head.weight")
    assert use["fc.weight"] == ("loaded", "model.fc.weight")
    # load_weights: d2t renamed draft_id_to_target_id (built since Vd 128 != V 640); t2d skipped
    assert use["d2t"] == ("loaded", "draft_id_to_target_id")
    assert use["t2d"] == ("skipped", None)
    params = {p.param: p.status for p in acc.params}
    # no embed_tokens in the draft: the proposer shares the target's
    assert params["model.embed_tokens.weight"] == "from target"
    assert acc.params_by("left at init") == []
    assert params[QKV] == "filled"


def test_vllm_unfilled_parameter_is_left_at_init(tmp_path):
    res = base_pair().drop("norm.weight").run(tmp_path, tps=(1,), engines=("vllm",), explain=True)
    # LlamaModel.__init__ builds model.norm [H]; nothing loads it (load_weights returns None,
    # so DefaultModelLoader does not check): left at init, and tensor.missing says so
    assert _acc(res, "vllm").params_by("left at init") == ["model.norm.weight"]
    assert find(res, "tensor.missing", engine="vllm")


def test_input_norm_without_norm_before_fc_is_dropped_on_every_engine(tmp_path):
    # fc input k*Ht = 3*64 = 192; no norm_before_fc anywhere. vLLM: LlamaModel.__init__ builds no
    # input_norm, load_weights maps "input_norm." to None. SGLang and tokenspeed: no parameter of
    # that name, load_weights passes over it. A trained weight the draft runs without: error.
    p = base_pair().put("input_norm.weight", "BF16", (192,))
    res = p.run(tmp_path, tps=(1,), explain=True)
    for engine in ("vllm", "sglang", "tokenspeed"):
        f = one(res, "tensor.dropped", engine=engine)
        assert f.severity == "error"
        assert f.evidence == {"dropped": ["input_norm.weight"]}
        assert _acc(res, engine).tensors_by("dropped") == ["input_norm.weight"]


def test_input_norm_with_nested_norm_before_fc(tmp_path):
    # vLLM and SGLang read eagle_config.norm_before_fc first (LlamaModel.__init__), so
    # input_norm [192] is built and loaded; tokenspeed reads the top level only:
    # norm.flag_ignored (step a) reports it, not a second tensor.dropped
    p = base_pair().put("input_norm.weight", "BF16", (192,))
    p.draft.setdefault("eagle_config", {})["norm_before_fc"] = True
    res = p.run(tmp_path, tps=(1,), explain=True)
    assert not find(res, "tensor.dropped")
    for engine in ("vllm", "sglang"):
        use = {t.name: (t.status, t.param) for t in _acc(res, engine).tensors}
        assert use["input_norm.weight"] == ("loaded", "model.input_norm.weight")
        keys = {k.key: (k.status, k.value, k.where) for k in _acc(res, engine).keys}
        assert keys["eagle_config.norm_before_fc"] == ("read", True, "eagle_config")
    assert _acc(res, "tokenspeed").tensors_by("dropped") == ["input_norm.weight"]
    assert find(res, "norm.flag_ignored", engine="tokenspeed")


def test_tokenspeed_and_sglang_module_names(tmp_path):
    res = base_pair().run(tmp_path, tps=(1,), engines=("sglang", "tokenspeed"), explain=True)
    # SGLang load_weights legacy_name_map: midlayer -> layers.0, then "model." + name;
    # tokenspeed keeps midlayer. (it maps a leading layers.0. to midlayer.); both d2t -> hot_token_id
    sg = {t.name: t.param for t in _acc(res, "sglang").tensors}
    ts = {t.name: t.param for t in _acc(res, "tokenspeed").tensors}
    assert sg["midlayer.self_attn.q_proj.weight"] == QKV
    assert ts["midlayer.self_attn.q_proj.weight"] == "model.midlayer.self_attn.qkv_proj.weight"
    assert sg["d2t"] == ts["d2t"] == "hot_token_id"
    # init_lm_head / set_embed_and_head swap the target's embedding in (target_hidden_size absent)
    for engine in ("sglang", "tokenspeed"):
        params = {p.param: p.status for p in _acc(res, engine).params}
        assert params["model.embed_tokens.weight"] == "from target"


def test_ignored_key_and_nested_flag(tmp_path):
    # vLLM's Eagle3LlamaForCausalLM never reads tie_word_embeddings; fc_norm is read from the top
    # level only (LlamaModel.__init__: getattr(config, "fc_norm", False))
    p = base_pair()
    p.draft.setdefault("eagle_config", {})["fc_norm"] = False
    res = p.run(tmp_path, tps=(1,), engines=("vllm",), explain=True)
    keys = {k.key: k.status for k in _acc(res, "vllm").keys}
    assert keys["eagle_config.fc_norm"] == "ignored"
    assert keys["fc_norm"] == "defaulted"
    assert keys["hidden_size"] == "read"


def test_accounting_only_with_explain(tmp_path):
    res = base_pair().run(tmp_path, tps=(1,))
    doc = res.to_dict()
    assert all("accounting" not in e for e in doc["engines"].values())
    assert accounting_lines(res) == []
    res = base_pair().run(tmp_path / "x", tps=(1,), explain=True)
    doc = json.loads(json.dumps(res.to_dict(), default=str))
    acc = doc["engines"]["vllm"]["accounting"]
    assert set(acc) == {"keys", "tensors", "params", "target_keys"}
    assert {"name": "t2d", "status": "skipped", "param": None} == {
        k: acc["tensors"][-1][k] for k in ("name", "status", "param")
    }
    assert any(line.startswith("Accounting (sglang)") for line in accounting_lines(res))


def test_resolved_keeps_the_engines_value_and_adds_the_configs(tmp_path):
    # four top-level ids on a format B draft: vLLM's LlamaModel.__init__ counts only
    # num_aux_hidden_states or eagle_config's ids, else 3, so its fc takes k = 3 while the
    # config writes 4 ids (issue #24 item 7: resolved shows the engine's, config_value beside)
    p = base_pair()
    p.draft["eagle_aux_hidden_state_layer_ids"] = [1, 2, 3, 4]
    res = p.run(tmp_path, tps=(1,), engines=("vllm",))
    k = res.to_dict()["resolved"]["vllm"]["k"]
    assert (k["value"], k["config_value"]) == (3, 4)
    # H agrees with the config (64): no config_value
    assert "config_value" not in res.to_dict()["resolved"]["vllm"]["H"]


# ------------------------------------------------------------ the target's text-config keys (item 2)
# The keys each engine reads from the target's text config on the EAGLE3 path: hidden_size (the
# width of the aux states fc takes: vLLM ModelConfig.get_hidden_size, SGLang/tokenspeed
# ModelConfig), vocab_size (vLLM Eagle3LlamaForCausalLM.__init__ builds draft_id_to_target_id
# when draft_vocab_size differs; SGLang/tokenspeed's d2t maps into it), num_hidden_layers (the
# default aux layers (2, L // 2, L - 3)), max_position_embeddings (the serving length) and
# architectures (the capturing target class). Values are the target config the helper writes.

TARGET_READS = ("hidden_size", "vocab_size", "num_hidden_layers", "max_position_embeddings",
                "architectures")  # fmt: skip


def test_target_keys_on_every_engine(tmp_path):
    p = base_pair()
    p.target["rope_theta"] = 500000.0
    res = p.run(tmp_path, tps=(1,), explain=True)
    for engine in ("vllm", "sglang", "tokenspeed"):
        keys = {k.key: (k.status, k.value, k.where) for k in _acc(res, engine).target_keys}
        assert list(keys)[: len(TARGET_READS)] == list(TARGET_READS), engine
        assert keys["hidden_size"] == ("read", 64, "top level")
        assert keys["vocab_size"] == ("read", 640, "top level")
        assert keys["num_hidden_layers"] == ("read", 8, "top level")
        assert keys["max_position_embeddings"] == ("read", 2048, "top level")
        assert keys["architectures"] == ("read", ["LlamaForCausalLM"], "top level")
        # every engine builds the draft's rotary embedding from the draft config alone
        assert keys["rope_theta"] == ("ignored", None, "top level")
        assert "rope_scaling" not in keys  # not in the target config


def test_target_keys_of_a_wrapped_target(tmp_path):
    p = base_pair()
    text = p.target
    p.target = {"architectures": ["LlavaForConditionalGeneration"], "model_type": "llava",
                "text_config": text}  # fmt: skip
    del text["max_position_embeddings"]
    p.target_tensors = []
    res = p.run(tmp_path, tps=(1,), engines=("vllm",), explain=True)
    keys = {k.key: (k.status, k.value, k.where) for k in _acc(res, "vllm").target_keys}
    assert keys["hidden_size"] == ("read", 64, "text_config")
    assert keys["max_position_embeddings"] == ("defaulted", None, "default")
    doc = json.loads(json.dumps(res.to_dict(), default=str))
    rows = doc["engines"]["vllm"]["accounting"]["target_keys"]
    assert {"key": "vocab_size", "status": "read", "value": 640, "where": "text_config"} == {
        k: rows[1][k] for k in ("key", "status", "value", "where")
    }
    text_lines = accounting_lines(res)
    assert "Accounting (vllm): target text-config keys" in text_lines


def test_check_recipe_explain(capsys):
    from recipecli.cli import main

    # check --recipe --explain: every run keeps its accounting (text and --json)
    args = ["check", "--recipe", "llama3.1-8b-eagle3", "--engine", "vllm", "--kernel", "skip"]
    with pytest.raises(SystemExit):
        main([*args, "--explain", "--json"])
    doc = json.loads(capsys.readouterr().out)
    acc = doc["checks"][0]["engines"]["vllm"]["accounting"]
    keys = {k["key"]: k["value"] for k in acc["target_keys"]}
    # the bundled Llama-3.1-8B-Instruct target: H 4096, vocab 128256, 32 layers
    assert (keys["hidden_size"], keys["vocab_size"], keys["num_hidden_layers"]) == (
        4096,
        128256,
        32,
    )
    with pytest.raises(SystemExit):
        main([*args, "--explain"])
    assert "Accounting (vllm): checkpoint tensors" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main([*args, "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert "accounting" not in doc["checks"][0]["engines"]["vllm"]


def test_engine_pages_map_names():
    from recipecli.docsgen.engine_pages import engine_page
    from recipecli.engines import engine_model

    # the bundled Llama-3.1-8B draft with input_norm, fc.bias, o_proj.bias and an unknown name
    # added; vLLM (llama_eagle3.py load_weights, utils.py AutoWeightsLoader._load_module): the
    # first three dropped, the unknown name raises; SGLang/tokenspeed load_weights pass over all
    page = engine_page(engine_model("vllm"))
    assert "## How vLLM maps names" in page
    assert "| `midlayer.self_attn.o_proj.bias` | dropped |" in page
    assert "| `extra_head.weight` | refused |" in page
    assert "| `t2d` | skipped |" in page
    assert "| `model.embed_tokens.weight` | from target |" in page
    page = engine_page(engine_model("tokenspeed"))
    assert "| `extra_head.weight` | dropped |" in page
    assert (
        "| `midlayer.self_attn.q_proj.weight` | loaded | `model.midlayer.self_attn.qkv_proj" in page
    )


# ------------------------------------------------------------ vLLM's unexpected .bias (item 1)
# utils.py AutoWeightsLoader.load_weights adds ".bias" to ignore_unexpected_suffixes, and
# _load_module checks it only under a module it found: a bias of a layer vLLM builds without one
# is dropped (linear.py QKVParallelLinear / MergedColumnParallelLinear.load_weights also skip a
# bias they lack), a bias outside every layer raises like any unknown name. The conformance
# pairs syn-o_proj-bias, syn-q_proj-bias, syn-norm-bias and syn-stray-bias show vLLM doing so.


def test_vllm_bias_inside_a_built_layer_is_dropped(tmp_path):
    p = base_pair().put("midlayer.self_attn.o_proj.bias", "BF16", (64,))
    p.put("midlayer.self_attn.q_proj.bias", "BF16", (64,)).put("norm.bias", "BF16", (64,))
    res = p.run(tmp_path, tps=(1,), engines=("vllm",), explain=True)
    assert not find(res, "tensor.unexpected", engine="vllm")
    f = one(res, "tensor.dropped", engine="vllm")
    assert f.severity == "error"
    dropped = ["midlayer.self_attn.o_proj.bias", "midlayer.self_attn.q_proj.bias", "norm.bias"]
    assert f.evidence == {"dropped": dropped}
    assert _acc(res, "vllm").tensors_by("dropped") == dropped


def test_vllm_bias_outside_every_layer_is_refused(tmp_path):
    p = base_pair().put("foo.bias", "BF16", (64,))
    res = p.run(tmp_path, tps=(1,), engines=("vllm",), explain=True)
    assert one(res, "tensor.unexpected", engine="vllm").evidence == {"unexpected": ["foo.bias"]}
    assert _acc(res, "vllm").tensors_by("refused") == ["foo.bias"]


def test_vllm_o_proj_bias_with_attention_bias(tmp_path):
    # llama.py LlamaDecoderLayer.__init__: bias_o_proj = attention_bias (or config.bias), so
    # o_proj.bias [H] is built beside the q/k/v biases llama_eagle3.py gives qkv_proj
    p = base_pair()
    p.draft["attention_bias"] = True
    for name, rows in (("q", 64), ("k", 32), ("v", 32)):  # nh*hd = 4*16, nkv*hd = 2*16
        p.put(f"midlayer.self_attn.{name}_proj.bias", "BF16", (rows,))
    res = p.run(tmp_path, tps=(1,), engines=("vllm",), explain=True)
    assert _acc(res, "vllm").params_by("left at init") == ["model.layers.0.self_attn.o_proj.bias"]
    assert find(res, "tensor.missing", engine="vllm")
