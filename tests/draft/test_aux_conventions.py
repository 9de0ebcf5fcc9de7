"""Aux ids in the conventions public drafts use, read the way each engine reads them (issue #31,
issue #24 item 6).

Worked out by hand on the tiny pair of tests/helpers/pairs.py (L = 8 target layers):

* a layer-output id names a decoder layer 0..7, so a ModelOpt (format C) list whose largest id
  is 8 = L names boundaries: [4, 6, 8] are the hidden states 4, 6, 8 (8 = the last layer's
  output), as NVIDIA's nvidia/gpt-oss-120b-Eagle3-v3 writes [24, 30, 36] on 36 layers (SGLang
  PR #32334);
* vLLM 0.33 reads a top-level list as hidden-state indices (``eagle3_utils.py``
  ``get_eagle3_aux_layers_from_config``) and captures 4, 6, 8;
* SGLang's gpt-oss target keeps a list whose largest id is ``num_hidden_layers`` as written
  (``models/gpt_oss.py`` ``set_eagle3_layers_to_capture``): 4, 6, 8, and captures the final
  boundary; its Llama target adds 1 to every id (9 is past the last layer: never captured);
* tokenspeed adds 1 to every explicit id (``models/base/causal_lm.py``
  ``BaseCausalLM.set_eagle3_layers_to_capture``): capture indices 5, 7, 9, where 9 = L + 1 is
  the final residual, hidden state 8: hidden states 5, 7, 8, a one-layer shift of two states.
"""

from __future__ import annotations

from helpers.pairs import base_pair, find

from recipecli.draft import ids_convention


def test_layer_output_ids_up_to_L_are_boundary_ids():
    assert ids_convention("C", [4, 6, 8], 8) == ("hidden-state", "boundary")
    assert ids_convention("B", [1, 3, 8], 8) == ("hidden-state", "boundary")
    # largest id below L: the format's own convention
    assert ids_convention("C", [1, 3, 4], 8) == ("layer-output", "format")
    # no L known: the format's own convention
    assert ids_convention("C", [4, 6, 8], None) == ("layer-output", "format")
    # hidden-state formats already count boundaries
    assert ids_convention("D", [2, 4, 8], 8) == ("hidden-state", "format")
    assert ids_convention("nemo", [2, 4, 8], 8) == (None, "format")


def _boundary_pair(arch: str, model_type: str):
    p = base_pair()
    p.target["architectures"] = [arch]
    p.target["model_type"] = model_type
    p.draft["eagle_aux_hidden_state_layer_ids"] = [4, 6, 8]
    p.draft["eagle_config"] = {
        "use_last_layernorm": True,  # a ModelOpt-only key: format C
        "eagle_aux_hidden_state_layer_ids": [4, 6, 8],
    }
    return p


def test_boundary_ids_are_no_mismatch_on_engines_that_read_them_as_written(tmp_path):
    res = _boundary_pair("GptOssForCausalLM", "gpt_oss").run(tmp_path, tps=(1,))
    assert res.resolved["vllm"]["aux_layers"]["value"] == [4, 6, 8]
    assert res.resolved["sglang"]["aux_layers"]["value"] == [4, 6, 8]
    assert not find(res, "aux.mismatch", engine="vllm")
    assert not find(res, "aux.mismatch", engine="sglang")


def test_boundary_ids_shifted_by_tokenspeed_are_its_mismatch(tmp_path):
    res = _boundary_pair("GptOssForCausalLM", "gpt_oss").run(tmp_path, tps=(1,))
    (f,) = find(res, "aux.mismatch", engine="tokenspeed")
    assert f.severity == "warning"
    assert f.evidence["captured"] == [5, 7, 8]
    assert f.evidence["trained_on"] == [4, 6, 8]


def test_boundary_ids_past_a_llama_targets_layers_on_sglang(tmp_path):
    # SGLang's Llama target adds 1: capture indices 5, 7, 9; 9 lies past index 7 and is dropped
    res = _boundary_pair("LlamaForCausalLM", "llama").run(tmp_path, tps=(1,))
    (f,) = find(res, "aux.out_of_range", engine="sglang")
    assert f.severity == "error"
    assert f.evidence["captured"] == [5, 7]


# tokenspeed reads eagle_config's list when the config has eagle_config (execution/factory.py
# _eagle_aux_layer_ids) and ignores the top-level one; ignoring it matters only when the two
# name other hidden states.


def _modelopt_pair(top: list[int], nested: list[int] | None):
    p = base_pair()
    p.draft["eagle_aux_hidden_state_layer_ids"] = top
    p.draft["eagle_config"] = {"use_last_layernorm": True}
    if nested is not None:
        p.draft["eagle_config"]["eagle_aux_hidden_state_layer_ids"] = nested
    return p


def test_top_level_ids_equal_in_effect_are_no_finding_on_tokenspeed(tmp_path):
    # nested layer-output ids [1, 3, 4] + 1 = hidden states [2, 4, 5]; the top-level [2, 4, 5]
    # are those hidden states as vLLM reads a top-level list
    res = _modelopt_pair([2, 4, 5], [1, 3, 4]).run(tmp_path, tps=(1,), engines=("tokenspeed",))
    assert res.resolved["tokenspeed"]["aux_layers"]["value"] == [2, 4, 5]
    assert not find(res, "aux.top_level_ignored")


def test_top_level_ids_equal_to_the_default_are_no_finding_on_tokenspeed(tmp_path):
    # eagle_config without ids: tokenspeed captures its default (2, 8 // 2, 8 - 3) = [2, 4, 5]
    res = _modelopt_pair([2, 4, 5], None).run(tmp_path, tps=(1,), engines=("tokenspeed",))
    assert res.resolved["tokenspeed"]["aux_layers"]["value"] == [2, 4, 5]
    assert not find(res, "aux.top_level_ignored")


def test_top_level_ids_naming_other_states_are_still_reported_on_tokenspeed(tmp_path):
    # top-level [1, 3, 5]: hidden states [1, 3, 5] (vLLM's reading) or [2, 4, 6] (layer-output);
    # tokenspeed captures [2, 4, 5] from the nested list: neither reading
    res = _modelopt_pair([1, 3, 5], [1, 3, 4]).run(tmp_path, tps=(1,), engines=("tokenspeed",))
    (f,) = find(res, "aux.top_level_ignored")
    assert (f.severity, f.evidence["captured"]) == ("warning", [2, 4, 5])


def test_tokenspeed_mismatch_names_ids_that_capture_the_trained_states(tmp_path):
    # trained on hidden states [4, 6, 8]: ids 3, 5 (+1 = capture indices 4, 6) and 8 (+1 = 9 =
    # L + 1, the final residual, hidden state 8)
    res = _boundary_pair("GptOssForCausalLM", "gpt_oss").run(tmp_path, tps=(1,))
    (f,) = find(res, "aux.mismatch", engine="tokenspeed")
    assert f.evidence["fix_ids"] == [3, 5, 8]
    fixed = _boundary_pair("GptOssForCausalLM", "gpt_oss")
    fixed.draft["eagle_config"]["eagle_aux_hidden_state_layer_ids"] = [3, 5, 8]
    res = fixed.run(tmp_path / "fixed", tps=(1,), engines=("tokenspeed",))
    assert res.resolved["tokenspeed"]["aux_layers"]["value"] == [4, 6, 8]
    assert not find(res, "aux.mismatch") and not find(res, "aux.top_level_ignored")
