"""check --method (issue #27): method detection, support per engine, and each method's contract.

Expected verdicts are read off the engines' code at their pins, cited per test; nothing is read
from recipecli's method rules or its data files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from recipecli.check import run_check
from recipecli.checkpoint import open_checkpoint
from recipecli.findings import Finding
from tests.helpers.pairs import base_pair
from tests.methods.helpers import dflash_draft, eagle1_head, llama_target, mtp_target

ENGINES = ("vllm", "sglang", "tokenspeed")


def by_code(findings: tuple[Finding, ...] | list[Finding], code: str) -> dict[str, Finding]:
    return {f.engine: f for f in findings if f.code == code}


def test_method_choices_match_the_library():
    from recipecli.cli.commands.check import METHOD_CHOICES
    from recipecli.engines.methods import METHODS

    assert METHOD_CHOICES == ("auto", *METHODS)


def test_auto_on_an_eagle3_draft_changes_nothing(tmp_path: Path):
    p = base_pair()
    t, d = p.write(tmp_path)
    before = run_check(open_checkpoint(str(t)), open_checkpoint(str(d)), tps=(1, 2))
    after = run_check(open_checkpoint(str(t)), open_checkpoint(str(d)), tps=(1, 2), method="auto")
    assert after.to_dict() == before.to_dict()
    assert not [f for f in after.findings if f.code.startswith("method.")]


def test_eagle1_head_is_detected_and_refused_as_eagle3(tmp_path: Path):
    # fc.weight [64, 128] = [H, 2H]: vLLM llama_eagle.py LlamaModel.__init__ (input_size =
    # hidden_size * 2) is EAGLE-1; an EAGLE3 fc takes 3 x 64 = 192 (sgl-project/sglang#21272)
    target, head = llama_target(tmp_path), eagle1_head(tmp_path)
    res = run_check(target, head, tps=(1,), method="eagle3")
    bad = by_code(res.findings, "method.eagle1_as_eagle3")
    assert set(bad) == set(ENGINES) and all(f.severity == "error" for f in bad.values())
    assert not res.ok()


def test_eagle1_head_under_auto_is_checked_as_eagle(tmp_path: Path):
    # vLLM: "eagle" is in SpeculativeMethod; SGLang: SpeculativeAlgorithm.EAGLE; tokenspeed's
    # --speculative-algorithm choices are EAGLE3, MTP, DFLASH, DSPARK (server_args.py)
    res = run_check(llama_target(tmp_path), eagle1_head(tmp_path), tps=(1,), method="auto")
    assert by_code(res.findings, "method.detected")["any"].evidence["method"] == "eagle"
    assert set(by_code(res.findings, "method.supported")) == {"vllm", "sglang"}
    refused = by_code(res.findings, "method.unsupported")
    assert (
        set(refused) == {"tokenspeed"}
        and "invalid choice: 'EAGLE'" in refused["tokenspeed"].message
    )
    assert "draft.not_eagle3" not in {f.code for f in res.findings}
    assert res.ready_tps("vllm") == [1] and res.ready_tps("tokenspeed") == []


def test_deepseek_mtp_target_serves_on_every_engine(tmp_path: Path):
    # vLLM hf_config_override: deepseek_v3 -> deepseek_mtp, n_predict = num_nextn_predict_layers;
    # SGLang _config_draft_model: DeepseekV3ForCausalLM -> DeepseekV3ForCausalLMNextN; tokenspeed
    # get_config: <arch>NextN, and models/deepseek_nextn.py registers DeepseekV3ForCausalLMNextN
    target = mtp_target(tmp_path)
    res = run_check(target, target, tps=(1,), method="mtp")
    assert set(by_code(res.findings, "method.supported")) == set(ENGINES)
    assert [f for f in res.findings if f.severity == "error"] == []
    assert (
        "--speculative-algorithm NEXTN"
        in by_code(res.findings, "method.supported")["sglang"].message
    )


def test_mtp_with_no_layers_is_an_error(tmp_path: Path):
    target = mtp_target(tmp_path, declared={"num_nextn_predict_layers": 0}, tensor_layers=())
    res = run_check(target, target, tps=(1,), method="mtp")
    assert set(by_code(res.findings, "method.mtp_no_layers")) == set(ENGINES)


def test_mtp_weights_stripped_by_a_quantizer(tmp_path: Path):
    # 2 layers declared, tensors only for model.layers.2.* (L = 2): the second is missing
    target = mtp_target(tmp_path, declared={"num_nextn_predict_layers": 2}, tensor_layers=(0,))
    res = run_check(target, target, tps=(1,), method="mtp")
    missing = by_code(res.findings, "method.mtp_weights_missing")
    assert set(missing) == set(ENGINES)
    assert missing["vllm"].evidence == {"declared": 2, "found": [0]}
    # SGLang's DeepSeek NextN loader asserts one layer (deepseek_weight_loader.py
    # _initialize_nextn_conf: assert num_nextn_layers == 1)
    assert set(by_code(res.findings, "method.mtp_layers")) == {"sglang"}


@pytest.mark.parametrize(("tokens", "bad"), [(3, True), (4, False), (1, False), (2, False)])
def test_vllm_num_speculative_tokens_multiple_of_n_predict(tmp_path: Path, tokens: int, bad: bool):
    # SpeculativeConfig.__post_init__: tokens > n_predict and tokens % n_predict != 0 -> ValueError
    target = mtp_target(tmp_path, declared={"num_nextn_predict_layers": 2}, tensor_layers=(0, 1))
    res = run_check(target, target, tps=(1,), method="mtp", num_speculative_tokens=tokens)
    got = by_code(res.findings, "method.mtp_tokens")
    assert set(got) == ({"vllm"} if bad else set())


def test_llama_target_has_no_mtp_path(tmp_path: Path):
    target = llama_target(tmp_path)
    res = run_check(target, target, tps=(1,), method="mtp")
    refused = by_code(res.findings, "method.mtp_target")
    assert set(refused) == set(ENGINES)
    assert "Unsupported speculative method: 'mtp'" in refused["vllm"].message


def test_qwen3_next_mtp_per_engine(tmp_path: Path):
    # vLLM: qwen3_next -> qwen3_next_mtp (Qwen3NextMTP); SGLang: Qwen3NextForCausalLM ->
    # Qwen3NextForCausalLMMTP; tokenspeed registers no Qwen3NextForCausalLMNextN at the pin
    target = mtp_target(
        tmp_path, model_type="qwen3_next", arch="Qwen3NextForCausalLM", prefix="mtp"
    )
    res = run_check(target, target, tps=(1,), method="mtp")
    assert set(by_code(res.findings, "method.supported")) == set(ENGINES)
    assert set(by_code(res.findings, "method.mtp_target")) == {"tokenspeed"}
    assert not by_code(res.findings, "method.mtp_weights_missing")


def test_dflash_contract(tmp_path: Path):
    target = llama_target(tmp_path)
    ok = run_check(target, dflash_draft(tmp_path / "a"), tps=(1,), method="auto")
    assert by_code(ok.findings, "method.detected")["any"].evidence["method"] == "dflash"
    assert [f for f in ok.findings if f.severity == "error"] == []
    # [5, 3] decreases; 8 is past the last of the target's 8 layers (0..7)
    for ids in ([5, 3], [1, 8]):
        res = run_check(target, dflash_draft(tmp_path / str(ids), target_layer_ids=ids), tps=(1,),
                        method="dflash")  # fmt: skip
        assert set(by_code(res.findings, "method.layer_ids")) == set(ENGINES)
    # mask token 640 = V: no such embedding row (vLLM qwen3_dflash.py embeds mask_token_id)
    res = run_check(
        target, dflash_draft(tmp_path / "m", mask_token_id=640), tps=(1,), method="dflash"
    )
    assert set(by_code(res.findings, "method.mask_token")) == set(ENGINES)


def test_dflash_draft_given_as_eagle3_is_a_mismatch(tmp_path: Path):
    res = run_check(llama_target(tmp_path), dflash_draft(tmp_path), tps=(1,), method="eagle3")
    assert set(by_code(res.findings, "method.mismatch")) == set(ENGINES)


def test_eagle31_fc_norm_and_norm_before_fc_are_exclusive(tmp_path: Path):
    # vLLM llama_eagle3.py combine_hidden_states applies input_norm (norm_before_fc) and then
    # fc_norm per chunk; speculators#670: a draft is trained with one of them
    p = base_pair()
    p.draft.update({"fc_norm": True, "norm_before_fc": True})
    res = p.run(tmp_path, tps=(1,), method="eagle3")
    assert set(by_code(res.findings, "method.eagle31_exclusive")) == set(ENGINES)


def test_dflash_without_block_size_is_a_sglang_warning(tmp_path: Path):
    # SGLang arg_groups/speculative_hook.py _handle_dflash: no block_size in the draft config ->
    # speculative_num_draft_tokens defaults to 16 (logger.warning); vLLM and tokenspeed read none
    from recipecli.checkpoint import open_checkpoint as oc
    from recipecli.testing.builder import write_checkpoint

    ck = dflash_draft(tmp_path / "a")
    cfg = {k: v for k, v in ck.config.items() if k != "block_size"}
    d = oc(str(write_checkpoint(tmp_path / "b", cfg, [])))
    res = run_check(llama_target(tmp_path), d, tps=(1,), method="dflash")
    got = by_code(res.findings, "method.block_size")
    assert set(got) == {"sglang"} and got["sglang"].severity == "warning"


@pytest.mark.parametrize(("tokens", "bad"), [(None, True), (7, False)])
def test_vllm_dspark_needs_a_block_size_or_tokens(tmp_path: Path, tokens: int | None, bad: bool):
    # vLLM SpeculativeConfig.__post_init__: use_dspark() with num_speculative_tokens None takes
    # block_size, else dspark_block_size; neither -> ValueError "num_speculative_tokens was not
    # provided"
    from recipecli.checkpoint import open_checkpoint as oc
    from recipecli.testing.builder import write_checkpoint
    from tests.helpers.pairs import target_config

    cfg = target_config(L=1, architectures=["DSparkDraftModel"], model_type="qwen3")
    d = oc(str(write_checkpoint(tmp_path / "d", cfg, [])))
    res = run_check(
        llama_target(tmp_path), d, tps=(1,), method="dspark", num_speculative_tokens=tokens
    )
    assert set(by_code(res.findings, "method.block_size")) == ({"vllm"} if bad else set())
