"""aux.default compares what each engine captures with what the draft was trained on (issue #31).

A draft that names no aux ids was trained on its format's trainer default (tests/draft/
test_trainers.py derives those from the tools' code). On the base pair (L = 8) every engine
captures the target default (2, L//2, L-3) = [2, 4, 5] (vLLM get_eagle3_default_aux_hidden_state_
layers; tokenspeed BaseCausalLM; SGLang's Llama set_eagle3_layers_to_capture with no ids), and
SpecForge trains on ids [1, 8 // 2 - 1, 8 - 4] = [1, 3, 4], layer outputs = hidden states [2, 4, 5].
"""

from __future__ import annotations

from helpers.pairs import base_pair, base_pair_d, one

ENGINES = ("vllm", "tokenspeed", "sglang")


def test_specforge_draft_without_ids_is_trained_on_the_captured_default(tmp_path):
    res = base_pair().run(tmp_path, tps=(1,))
    for engine in ENGINES:
        f = one(res, "aux.default", engine=engine)
        assert f.severity == "info", engine
        assert f.evidence["trained_on"] == [2, 4, 5]
        assert f.evidence["trainer"].startswith("sgl-project/SpecForge@")
    assert not [f for f in res.findings if f.severity == "warning"]


def test_speculators_draft_without_ids_is_trained_on_the_captured_default(tmp_path):
    # speculators resolve_target_layer_ids: [2, 8 // 2, 8 - 3] = [2, 4, 5] hidden-state indices
    res = base_pair_d().run(tmp_path, tps=(1,), engines=("vllm",))
    f = one(res, "aux.default", engine="vllm")
    assert (f.severity, f.evidence["trained_on"]) == ("info", [2, 4, 5])


def test_unknown_training_layers_are_one_info_saying_how_to_state_them(tmp_path):
    # format F (vLLM-internal / AngelSlim Eagle3LlamaForCausalLM) has no recorded trainer
    p = base_pair()
    p.draft["architectures"] = ["Eagle3LlamaForCausalLM"]
    res = p.run(tmp_path, tps=(1,), engines=("vllm",))
    f = one(res, "aux.default", engine="vllm")
    assert f.severity == "info"
    assert f.evidence["trained_on"] is None and f.evidence["trainer"] is None
    assert "cannot be known" in f.message
    assert "top-level eagle_aux_hidden_state_layer_ids" in f.message
    assert "eagle_config.eagle_aux_hidden_state_layer_ids" in f.message


def test_modelopt_default_that_differs_from_the_capture_is_an_error(tmp_path):
    # a 3-layer target: vLLM captures (2, 3 // 2, 0) = hidden states {0, 1, 2}; ModelOpt trains on
    # [1, max(0, 0), max(0, -1)] = ids {0, 1}, layer outputs = hidden states [1, 2]: no one-layer
    # shift explains the difference, so the draft drafts from other layers (docs/check.md#severity)
    p = base_pair()
    p.target["num_hidden_layers"] = 3
    p.draft["eagle_config"] = {"use_last_layernorm": True}
    res = p.run(tmp_path, tps=(1,), engines=("vllm",))
    f = one(res, "aux.default", engine="vllm")
    assert f.severity == "error"
    assert f.evidence["layers"] == [0, 1, 2]
    assert f.evidence["trained_on"] == [1, 2]
    assert f.evidence["trainer"].startswith("NVIDIA/TensorRT-Model-Optimizer@")
    assert "eagle_aux_hidden_state_layer_ids [1, 2]" in f.message


def test_vllm_draft_without_aux_states_captures_nothing(tmp_path):
    # eagle_config.use_aux_hidden_state false (nvidia/gpt-oss-120b-Eagle3-v2): vLLM 0.33.0
    # eagle3_utils.py requires_aux_hidden_states returns the flag, so nothing is captured and
    # no aux finding applies; the draft ships no fc.weight (vLLM builds none)
    p = base_pair().drop("fc.weight")
    p.draft["eagle_config"] = {"use_aux_hidden_state": False}
    res = p.run(tmp_path, tps=(1,), engines=("vllm",))
    assert "aux_layers" not in res.resolved["vllm"]
    assert not [f for f in res.findings if f.code.startswith("aux.") and f.engine == "vllm"]
