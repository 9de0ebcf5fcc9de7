"""The ``layouts`` keys of the SGLang and tokenspeed engine data (issue #25, item 3), against
values read by hand from the engines' pinned code, and the extractor's guard reading on small
hand-written sources.

SGLang: the 0.5.23 wheel (``python/sglang/srt/...`` in the repository). tokenspeed:
lightseekorg/tokenspeed at f4d8ec6e039c (``recipecli/engines/tokenspeed/pin.py``). Line numbers
are the pinned files' own.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path
from typing import Any

import pytest

from recipecli.engines.base import load_data

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
SG = "python/sglang/srt/"
TS = "python/tokenspeed/runtime/"


@pytest.fixture(scope="module")
def sglang() -> dict[str, Any]:
    layouts: dict[str, Any] = load_data("sglang-0.5.23.json")["layouts"]
    return layouts


@pytest.fixture(scope="module")
def tokenspeed() -> dict[str, Any]:
    layouts: dict[str, Any] = load_data("tokenspeed-f4d8ec6e039c.json")["layouts"]
    return layouts


def _one(refusals: list[dict[str, Any]], message: str) -> dict[str, Any]:
    found = [r for r in refusals if r["message"] == message]
    assert len(found) == 1, (message, found)
    return found[0]


# --------------------------------------------------------------------------- SGLang 0.5.23


def test_sglang_pp_refuses_eagle3(sglang: dict[str, Any]) -> None:
    # arg_groups/validation_hook.py:131-138 check_pipeline_parallel_compat, in the branch
    # `elif cfg.speculative_algorithm is not None:` (after `if ... == "DSPARK":`):
    #   assert (cfg.speculative_algorithm.upper() == "EAGLE" and not cfg.enable_multi_layer_eagle)
    # called from check_server_args (validation_hook.py:196-197) under `if cfg.pp_size > 1:`
    r = _one(
        sglang["refusals"],
        "Pipeline parallelism currently only supports EAGLE (non-multi-layer) speculative decoding",
    )
    assert (r["file"], r["function"], r["line"]) == (
        SG + "arg_groups/validation_hook.py",
        "check_pipeline_parallel_compat",
        132,
    )
    assert r["exception"] == "AssertionError"
    assert r["called_from"] == SG + "arg_groups/validation_hook.py:197 check_server_args"
    assert r["guards"] == [
        "cfg.pp_size > 1",
        "not (cfg.speculative_algorithm == 'DSPARK')",
        "cfg.speculative_algorithm is not None",
    ]
    assert r["axes"] == ["pp"]
    assert "EAGLE3" in r["algorithms"] and "DSPARK" not in r["algorithms"]


def test_sglang_pp_eagle_needs_a_prefill_server(sglang: dict[str, Any]) -> None:
    # validation_hook.py:160-164: without SGLANG_ENABLE_PP_SPEC (the else of line 139),
    #   assert cfg.disaggregation_mode == "prefill", "PP + speculative decoding (MTP) is only ..."
    r = _one(
        sglang["refusals"],
        "PP + speculative decoding (MTP) is only supported on prefill nodes "
        "(disaggregation-mode=prefill)",
    )
    assert r["assert"] == "cfg.disaggregation_mode == 'prefill'"
    assert r["guards"][-1] == "not (envs.SGLANG_ENABLE_PP_SPEC.get())"
    assert r["axes"] == ["pp", "pd"]
    assert {"EAGLE", "EAGLE3"} <= set(r["algorithms"])


def test_sglang_dflash_and_standalone_refusals(sglang: dict[str, Any]) -> None:
    # arg_groups/speculative_hook.py:319-322 _handle_dflash: `if cfg.pp_size != 1: raise
    # ValueError("Currently DFLASH speculative decoding only supports pp_size == 1.")`
    r = _one(
        sglang["refusals"], "Currently DFLASH speculative decoding only supports pp_size == 1."
    )
    assert (r["function"], r["line"], r["algorithms"], r["axes"]) == (
        "_handle_dflash",
        320,
        ["DFLASH"],
        ["pp"],
    )
    # speculative_hook.py:1078-1084 _handle_eagle_family: STANDALONE with attn_dp_enabled_of(...)
    r = _one(
        sglang["refusals"],
        "Currently standalone speculative decoding does not support dp attention.",
    )
    assert (r["function"], r["line"], r["algorithms"], r["axes"]) == (
        "_handle_eagle_family",
        1082,
        ["STANDALONE"],
        ["dp_attention"],
    )


def test_sglang_no_refusal_for_eagle3_under_dp_attention_or_ep(sglang: dict[str, Any]) -> None:
    # _handle_eagle_family refuses DP attention for STANDALONE only (speculative_hook.py:1078);
    # no EP check names EAGLE3 (the deepep one, overrides.py:871, is for the DeepSeek NVFP4 MTP
    # MoE runner, guarded by SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE)
    for r in sglang["refusals"]:
        if set(r["axes"]) & {"dp_attention", "dp"} and "EAGLE3" in r["algorithms"]:
            assert "pp" in r["axes"] or "SGLANG_ENABLE_PP_SPEC" in " ".join(r["guards"]), r
    assert not any(r["axes"] == ["dp"] for r in sglang["refusals"])


def test_sglang_dispatch(sglang: dict[str, Any]) -> None:
    # speculative/spec_info.py:255-266 handle_server_args: is_dflash, is_uno, is_dspark,
    # is_frozen_kv_mtp, then `is_eagle() or is_standalone()` (is_eagle: EAGLE, EAGLE3,
    # FROZEN_KV_MTP, spec_info.py:102-108, but FROZEN_KV_MTP took the earlier branch), is_ngram
    assert sglang["dispatch"] == {
        "_handle_dflash": ["DFLASH"],
        "_handle_uno": ["UNO"],
        "_handle_dspark": ["DSPARK"],
        "_handle_eagle_family": ["EAGLE", "EAGLE3", "STANDALONE"],
        "_handle_frozen_kv_mtp": ["FROZEN_KV_MTP"],
        "_handle_ngram": ["NGRAM"],
    }


def test_sglang_draft_on_the_last_stage(sglang: dict[str, Any]) -> None:
    # speculative/eagle_worker_v2.py:1334 EAGLEWorkerV2.__init__:
    #   self._hosts_draft = get_parallel().pp_group.is_last_rank
    assert sglang["draft_stage"] == {
        "stage": "last",
        "value": "get_parallel().pp_group.is_last_rank",
        "evidence": SG + "speculative/eagle_worker_v2.py:1334",
    }


@pytest.mark.parametrize(
    ("arch", "stages", "gate", "relay"),
    [
        # llama.py:929-931 `if not self.pp_group.is_last_rank: return`; LlamaModel.forward
        # llama.py:496-497 returns residual_batch.to_pp(hidden_states, forward_batch), no aux
        ("LlamaForCausalLM", "last", "llama.py:929 LlamaForCausalLM", "llama.py:497"),
        # minimax_m2.py:1067-1069 `if not get_parallel().pp_group.is_last_rank: return`;
        # MiniMaxM2Model.forward minimax_m2.py:1008 returns to_pp(hidden_states, ...)
        ("MiniMaxM2ForCausalLM", "last", "minimax_m2.py:1067 MiniMaxM2ForCausalLM",
         "minimax_m2.py:1008"),
        # deepseek_v2.py:3458-3460 gate; DeepseekV2Model.forward deepseek_v2.py:3235
        # `return proxy_tensors` (hidden states, residual, DSA topk indices: no aux)
        ("DeepseekV3ForCausalLM", "last", "deepseek_v2.py:3458 DeepseekV2ForCausalLM",
         "deepseek_v2.py:3235"),
        # gpt_oss.py:1337 gate; GptOssModel.forward gpt_oss.py:722-723: the non-last branch
        # returns to_pp(...); the final-norm capture of end_layer is in its else branch
        ("GptOssForCausalLM", "last", "gpt_oss.py:1337 GptOssForCausalLM", "gpt_oss.py:723"),
    ],
)  # fmt: skip
def test_sglang_targets_capture_on_the_last_stage_and_relay_nothing(
    sglang: dict[str, Any], arch: str, stages: str, gate: str, relay: str
) -> None:
    e = sglang["targets"][arch]
    assert e["capture_stages"] == stages
    assert e["gate_evidence"] == SG + "models/" + gate
    assert e["relays_aux"] is False
    assert e["relay_evidence"].startswith(SG + "models/" + relay)


def test_sglang_kimi_k25_delegates_to_deepseek(sglang: dict[str, Any]) -> None:
    # kimi_k25.py:928 set_eagle3_layers_to_capture calls
    # self.language_model.set_eagle3_layers_to_capture(layer_ids); kimi_k25.py:693
    # self.language_model = DeepseekV3ForCausalLM(...)
    e = sglang["targets"]["KimiK25ForConditionalGeneration"]
    assert e["delegates_to"] == "deepseek_v2.DeepseekV3ForCausalLM"
    assert (e["capture_stages"], e["relays_aux"]) == ("last", False)


def test_sglang_gemma3_captures_on_every_stage(sglang: dict[str, Any]) -> None:
    # gemma3_causal.py:917 Gemma3ForCausalLM.set_eagle3_layers_to_capture has no
    # pp_group.is_last_rank check; Gemma3TextModel.forward has no non-last-stage branch
    e = sglang["targets"]["Gemma3ForCausalLM"]
    assert e["capture_stages"] == "all"
    assert e["relays_aux"] is None and "no 'if not" in e["relay_evidence"]


# --------------------------------------------------------------------------- tokenspeed f4d8ec6e


def test_tokenspeed_has_no_pipeline_parallelism(tokenspeed: dict[str, Any]) -> None:
    # runtime/utils/server_args.py ServerArgs: no pipeline/pp field; add_cli_args: no --pp* or
    # --pipeline* flag (the only pipeline_parallel_size, runtime/engine/zmq_wire.py:85, is a wire
    # record's field, not an option)
    assert tokenspeed["axes"]["pp"]["supported"] is False
    assert tokenspeed["axes"]["pp"]["fields"] == [] and tokenspeed["axes"]["pp"]["flags"] == {}
    assert (
        tokenspeed["aux_over_pp"] is None
        and "no pipeline-parallel" in (tokenspeed["aux_over_pp_reason"])
    )


def test_tokenspeed_axes(tokenspeed: dict[str, Any]) -> None:
    # server_args.py:185 data_parallel_size, :190 ep_size, :341 enable_expert_parallel,
    # :328 disaggregation_mode; flags :1336 --data-parallel-size, :1363 --ep-size,
    # :1916 --enable-expert-parallel, :2011-2014 --disaggregation-mode with choices
    axes = tokenspeed["axes"]
    assert axes["dp_attention"]["fields"] == ["data_parallel_size"]
    assert "--data-parallel-size" in axes["dp_attention"]["flags"]
    assert {"ep_size", "enable_expert_parallel"} <= set(axes["ep"]["fields"])
    assert {"--ep-size", "--enable-expert-parallel"} <= set(axes["ep"]["flags"])
    assert axes["pd"]["flags"]["--disaggregation-mode"] == ["null", "prefill", "decode", "encode"]
    # server_args.py:563 resolve_parallelism: attn_dp_size = self.data_parallel_size
    assert tokenspeed["dp_is_attention_dp"] == TS + "utils/server_args.py:563"


def test_tokenspeed_refusals(tokenspeed: dict[str, Any]) -> None:
    # server_args.py:651-652 resolve_parallelism
    r = _one(tokenspeed["refusals"], "MoE TP and EP cannot be both > 1")
    assert (r["function"], r["line"], r["axes"], r["speculative"]) == (
        "ServerArgs.resolve_parallelism",
        652,
        ["ep"],
        False,
    )
    # execution/drafter/mtp.py:266-268 Mtp.__init__: dp_size > 1 -> NotImplementedError
    (r,) = [x for x in tokenspeed["refusals"] if x["function"] == "Mtp.__init__"]
    assert (r["line"], r["exception"], r["axes"], r["speculative"]) == (
        268,
        "NotImplementedError",
        ["dp_attention"],
        True,
    )


def test_tokenspeed_eagle3_drafter_runs_with_attention_dp(tokenspeed: dict[str, Any]) -> None:
    # execution/drafter/__init__.py get_drafter_impl DRAFTER_MAPPING: "EAGLE3": Eagle;
    # drafter/eagle.py:111 self.dp_size = draft_model_runner.mapping.attn.dp_size, :329
    # `if self.dp_size > 1:` (per-rank token counts), and no raise on dp_size
    assert tokenspeed["drafters"]["EAGLE3"] == "Eagle"
    d = tokenspeed["eagle_drafter_dp"]
    assert d["reads_dp_size"] == TS + "execution/drafter/eagle.py:111"
    assert TS + "execution/drafter/eagle.py:329 self.dp_size > 1" in d["branches"]
    assert d["refusals"] == []


# --------------------------------------------------------------------------- the extractor


@pytest.fixture(scope="module")
def extractor() -> Any:
    sys.path.insert(0, str(SCRIPTS))  # scripts/ is no package; build_engine_data.py does the same
    return importlib.import_module("engine_data_sglang")


def _expr(src: str) -> ast.expr:
    node = ast.parse(src, mode="eval").body
    assert isinstance(node, ast.expr)
    return node


@pytest.mark.parametrize(
    ("src", "algo", "value"),
    [
        ("cfg.speculative_algorithm == 'DSPARK'", "EAGLE3", False),
        ("cfg.speculative_algorithm.upper() == 'EAGLE' and not cfg.x", "EAGLE3", False),
        ("cfg.speculative_algorithm.upper() == 'EAGLE' and not cfg.x", "EAGLE", None),
        ("cfg.speculative_algorithm not in (None, 'DSPARK', 'EAGLE', 'EAGLE3')", "NGRAM", True),
        ("cfg.pp_size > 1 or cfg.speculative_algorithm is not None", "EAGLE3", True),
        ("cfg.pp_size > 1", "EAGLE3", None),
    ],
)
def test_algo_value(extractor: Any, src: str, algo: str, value: bool | None) -> None:
    assert extractor._algo_value(_expr(src), algo) is value


class _Tree:
    """A two-file stand-in for the wheel (``read`` / ``glob`` as build_engine_data.Tree)."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def read(self, name: str) -> str:
        return self.files[name]

    def glob(self, pattern: str) -> list[str]:
        import re

        return sorted(n for n in self.files if re.fullmatch(pattern, n))


SPEC_INFO = """
class SpeculativeAlgorithm(Enum):
    EAGLE = auto()
    EAGLE3 = auto()
    NONE = auto()
    def is_eagle(self):
        return self in (SpeculativeAlgorithm.EAGLE, SpeculativeAlgorithm.EAGLE3)
    def handle_server_args(self, server_args):
        if self.is_eagle():
            _handle_eagle_family(server_args)
"""
HOOKS = """
def check(cfg):
    if cfg.pp_size > 1:
        pp_checks(cfg)
    assert cfg.base_gpu_id >= 0, "base_gpu_id must be non-negative"

def pp_checks(cfg):
    if cfg.speculative_algorithm is not None:
        assert cfg.speculative_algorithm == "EAGLE", "PP speculative needs EAGLE"
    else:
        raise ValueError("never about speculative decoding")

def _handle_eagle_family(cfg):
    if cfg.disaggregation_mode == "decode":
        raise ValueError(f"no {cfg.x}")
"""


def test_layout_refusals_on_a_small_source(extractor: Any) -> None:
    tree = _Tree({
        "sglang/srt/speculative/spec_info.py": SPEC_INFO,
        "sglang/srt/arg_groups/hooks.py": HOOKS,
    })  # fmt: skip
    got = extractor.layout_refusals(tree)
    assert got["algorithms"] == ["EAGLE", "EAGLE3"]
    assert got["dispatch"] == {"_handle_eagle_family": ["EAGLE", "EAGLE3"]}
    pp, pd = got["refusals"]  # base_gpu_id names no axis; the else raise is not speculative
    assert pp["guards"] == ["cfg.pp_size > 1", "cfg.speculative_algorithm is not None"]
    assert pp["called_from"] == "python/sglang/srt/arg_groups/hooks.py:4 check"
    assert (pp["message"], pp["axes"], pp["algorithms"]) == (
        "PP speculative needs EAGLE",
        ["pp"],
        ["EAGLE3"],
    )
    # a handler's refusal applies to the algorithms dispatched to it; an f-string is kept as code
    assert (pd["function"], pd["axes"], pd["algorithms"]) == (
        "_handle_eagle_family",
        ["pd"],
        ["EAGLE", "EAGLE3"],
    )
    assert pd["message"] == "f'no {cfg.x}'" and pd["called_from"] is None
