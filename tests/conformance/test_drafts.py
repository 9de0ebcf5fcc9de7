"""Draft resolution: recipecli's vLLM model against vLLM 0.33.0's config classes, draft model
and ``load_weights`` (``vllm_probe.probe_pair``), for every pair of ``pairs.CASES``.

One test per (pair, field): vLLM's value is computed by vLLM, recipecli's is read from
``recipecli check --engine vllm --json`` (its ``resolved.vllm`` block and READY at TP 1).
Disagreements known today are listed in ``known_disagreements.json`` and run as
``xfail(strict=True)`` naming both values, so each flips to a failure the day recipecli is fixed
(then delete its entry). ``test_probe_*`` pin the probe itself to values worked out by hand from
vLLM's code, so a probe that stopped exercising vLLM would fail too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import compare
import pairs
import pytest
from conftest import REPORT

pytestmark = pytest.mark.conformance

KNOWN: dict[str, dict[str, str]] = json.loads(
    (Path(__file__).with_name("known_disagreements.json")).read_text()
)["drafts"]
_RESULTS: dict[str, dict[str, Any]] = {}


@pytest.fixture(scope="session")
def pair_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pairs")


def result(name: str, root: Path) -> dict[str, Any]:
    """vLLM's probe, recipecli's side and their disagreements for case ``name`` (cached)."""
    if name not in _RESULTS:
        from run_pairs import run_case

        _RESULTS[name] = run_case(pairs.CASES[name], root / name)
        REPORT["drafts"].append(_RESULTS[name])
    return _RESULTS[name]


def _params():
    for name in pairs.CASES:
        for field in compare.ALL_FIELDS:
            marks = []
            reason = KNOWN.get(name, {}).get(field)
            if reason:
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
            yield pytest.param(name, field, id=f"{name}-{field}", marks=marks)


@pytest.mark.parametrize(("name", "field"), list(_params()))
def test_recipecli_matches_vllm(name: str, field: str, pair_root: Path) -> None:
    r = result(name, pair_root)
    if r["vllm"]["verdict"] == "not_probed":
        pytest.skip(f"vLLM cannot build this target on CPU: {r['vllm']['error']['message']}")
    if field != "verdict" and field not in r["vllm"]["resolved"]:
        pytest.skip(f"vLLM stopped before resolving {field}: {r['vllm']['verdict']}")
    if (
        field != "verdict"
        and r["vllm"]["verdict"] == "raises"
        and r["recipecli"]["ok"] is False
        and field not in r["recipecli"]["resolved"]
    ):
        pytest.skip(f"both refuse the pair; recipecli stops before resolving {field}")
    diff = r["disagreements"].get(field)
    assert diff is None, f"{name} {field}: vLLM {diff[0]!r}, recipecli {diff[1]!r}"


# --------------------------------------------------------------------------- the probe itself
# Expected values by hand from vllm-project/vllm v0.33.0; base pair: SpecForge Qwen3-30B-A3B
# template (H 2048, V 151936, draft_vocab_size 32000) on Qwen3-30B-A3B (48 layers, H 2048).


def test_probe_base_values(pair_root: Path) -> None:
    res = result("syn-base", pair_root)["vllm"]
    assert res["verdict"] == "loads", res["error"]
    v = res["resolved"]
    # llama_eagle3.LlamaModel.__init__: k defaults to 3, fc_input_size = target_hidden_size * k
    assert (v["H"], v["k"], v["fc_in"], v["Vd"], v["V"]) == (2048, 3, 6144, 32000, 151936)
    # EAGLEConfig keeps an architecture ending in Eagle3; registry maps it to Eagle3LlamaForCausalLM
    assert v["architecture"] == "LlamaForCausalLMEagle3"
    assert v["model_class"].endswith("llama_eagle3.Eagle3LlamaForCausalLM")
    # interfaces.SupportsEagle3.get_eagle3_default_aux_hidden_state_layers: (2, L // 2, L - 3)
    assert v["aux_layers"] == [2, 24, 45]
    # SpecForge writes no embed_tokens: the proposer shares the target's
    assert res["shared"] == ["model.embed_tokens.weight"]


def test_probe_architecture_rename(pair_root: Path) -> None:
    # EAGLEConfig(method="eagle3"): LlamaForCausalLM -> Eagle3LlamaForCausalLM
    v = result("syn-arch-LlamaForCausalLM", pair_root)["vllm"]["resolved"]
    assert v["architecture"] == "Eagle3LlamaForCausalLM" and v["registered"] is True
    r = result("syn-arch-MistralForCausalLM", pair_root)["vllm"]
    assert r["verdict"] == "raises" and "Eagle3MistralForCausalLM" in r["error"]["text"]


def test_probe_fc_width_from_top_level_ids(pair_root: Path) -> None:
    # top-level ids are not counted for k: fc is [2048, 3*2048], the checkpoint's [2048, 4*2048]
    r = result("syn-aux-top-4", pair_root)["vllm"]
    assert r["verdict"] == "raises" and r["error"]["stage"] == "load"
    assert "8192" in r["error"]["text"] and "6144" in r["error"]["text"]
    # nested ids are counted: fc is [2048, 4*2048] and loads
    v = result("syn-aux-nested-4", pair_root)["vllm"]["resolved"]
    assert (v["k"], v["fc_in"]) == (4, 8192)


def test_probe_missing_vocab_map(pair_root: Path) -> None:
    # draft_vocab_size != target vocab: draft_id_to_target_id exists and stays zeros without d2t
    r = result("syn-no-d2t", pair_root)["vllm"]
    assert r["verdict"] == "loads_missing" and r["missing"] == ["draft_id_to_target_id"]


def test_probe_speculators_norm_before_residual_default(pair_root: Path) -> None:
    # speculators/algos.py update_eagle3: norm_before_residual defaults to True
    r = result("syn-speculators-nbr-default", pair_root)["vllm"]
    assert r["resolved"]["config_class"] == "SpeculatorsConfig"
    assert r["resolved"]["norm_before_residual"] is True
    # flat drafts: LlamaDecoderLayer reads getattr(config, "norm_before_residual", False)
    assert result("syn-base", pair_root)["vllm"]["resolved"]["norm_before_residual"] is False


def test_probe_qwen3_draft_counts_top_level_ids(pair_root: Path) -> None:
    # qwen3_eagle3.LlamaModel (Eagle3Qwen3ForCausalLM): k from num_aux_layers, num_aux_hidden_states,
    # then top-level OR eagle_config ids -- unlike llama_eagle3, top-level ids size fc
    r = result("syn-qwen3-draft-aux-top-4", pair_root)["vllm"]
    assert r["verdict"] == "loads", r["error"]
    v = r["resolved"]
    assert v["architecture"] == "Eagle3Qwen3ForCausalLM"
    assert (v["k"], v["fc_in"]) == (4, 8192)
    missing = result("syn-qwen3-draft-no-qk-norm", pair_root)["vllm"]["missing"]
    assert missing == [
        "model.layers.0.self_attn.k_norm.weight",
        "model.layers.0.self_attn.q_norm.weight",
    ]
