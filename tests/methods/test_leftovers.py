"""Issue #27 leftovers: tokenspeed's MiniMax-M2 draft rename, which engines report each method
code (docs/engines/codes.md), check's method-aware header, the EAGLE-1 fixture.

Expected values are read off the engines' code at their pins (cited per test).
"""

from __future__ import annotations

from pathlib import Path

from recipecli.check import run_check
from tests.methods.helpers import mtp_target


def test_tokenspeed_renames_minimax_m2_to_its_eagle3_head(tmp_path: Path):
    # tokenspeed runtime/utils/hf_transformers_utils.py get_config, draft worker:
    # `elif config.architectures[0] == "MiniMaxM2ForCausalLM":
    #      config.architectures[0] = "LlamaForCausalLMEagle3"` (not MiniMaxM2ForCausalLMNextN)
    t = mtp_target(tmp_path, model_type="minimax_m2", arch="MiniMaxM2ForCausalLM")
    res = run_check(t, t, tps=(1,), engines=("tokenspeed",), method="mtp")
    (f,) = [f for f in res.findings if f.code == "method.mtp_target"]
    assert "LlamaForCausalLMEagle3" in f.message and "NextN" not in f.message


def test_codes_page_names_the_engines_of_method_codes():
    from recipecli.engines import code_engines

    got = code_engines()
    # vLLM SpeculativeConfig.__post_init__ (use_dspark: block_size) and SGLang _handle_dflash
    # (inferred_block_size); tokenspeed's DFlash/DSpark drafters have no such rule
    assert got["method.block_size"] == ("vllm", "sglang")
    # only tokenspeed refuses a method: --speculative-algorithm choices lack EAGLE
    assert got["method.unsupported"] == ("tokenspeed",)
    # the n_predict multiple: vLLM __post_init__ only; the NextN layer bound: SGLang's
    # deepseek_nextn loader (assert num_nextn_layers == 1) only
    assert got["method.mtp_tokens"] == ("vllm",)
    assert got["method.mtp_layers"] == ("sglang",)
    assert set(got["method.mtp_target"]) == {"vllm", "sglang", "tokenspeed"}
    assert "method.detected" not in got  # auto's own line, engine "any"


def test_no_mtp_key_and_no_mtp_tensors_is_no_layers_not_weights_missing(tmp_path: Path):
    # SGLang configs/model_config.py _config_draft_model: Qwen3MoeForCausalLM ->
    # Qwen3MoeForCausalLMMTP with num_nextn_predict_layers = 1 set by SGLang; a Qwen3-30B-A3B
    # config declares no MTP key and its index has no mtp.* tensor: there is no layer to load
    t = mtp_target(tmp_path, model_type="qwen3_moe", arch="Qwen3MoeForCausalLM", declared={},
                   tensor_layers=())  # fmt: skip
    res = run_check(t, t, tps=(1,), engines=("sglang",), method="mtp")
    codes = [f.code for f in res.findings if f.code.startswith("method.")]
    assert "method.mtp_no_layers" in codes and "method.mtp_weights_missing" not in codes


def test_check_text_header_names_the_method(tmp_path: Path):
    from recipecli.check.text import format_result

    t = mtp_target(tmp_path)  # DeepSeek-V3, num_nextn_predict_layers 1
    text = format_result(run_check(t, t, tps=(1,), method="mtp"))
    assert "draft   none: method mtp, the target's own MTP layers" in text
    assert "not an EAGLE3 draft" not in text and "no rows" not in text
