"""The methods data files (scripts/engine_methods.py, issue #27) against the engines' code: values
read by hand at the pins, and a re-extraction when the pinned sources are on this machine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "recipecli" / "engines"


def load(engine: str, name: str) -> dict:
    return json.loads((DATA / engine / "data" / name).read_text())


def test_vllm_methods_as_its_literal_reads():
    # vllm/config/speculative.py: SpeculativeMethod = Literal["ngram", "draft_model", "suffix",
    # "custom_class", EagleModelTypes, NgramGPUTypes, DSparkModelTypes]; EagleModelTypes =
    # Literal["eagle", "eagle3", "extract_hidden_states", MTPModelTypes, DFlashModelTypes]
    d = load("vllm", "vllm-0.33.0-methods.json")
    assert {"eagle", "eagle3", "mtp", "dflash", "dspark", "ngram", "suffix"} <= set(d["methods"])
    assert "deepseek_mtp" in d["mtp_model_types"] and "qwen3_next_mtp" in d["mtp_model_types"]
    # hf_config_override: deepseek_v3 -> deepseek_mtp reading num_nextn_predict_layers;
    # qwen3_5* -> qwen3_5_mtp reading mtp_num_hidden_layers
    assert d["mtp_targets"]["deepseek_v3"]["mtp_type"] == "deepseek_mtp"
    assert d["mtp_layers"]["deepseek_mtp"]["key"] == "num_nextn_predict_layers"
    assert d["mtp_layers"]["qwen3_5_mtp"]["key"] == "mtp_num_hidden_layers"
    assert d["mtp_targets"]["nemotron_h"]["needs_layers"] is True


def test_sglang_algorithms_and_nextn_alias():
    # spec_info.py SpeculativeAlgorithm: DFLASH UNO DSPARK EAGLE EAGLE3 FROZEN_KV_MTP STANDALONE
    # NGRAM NONE; spec_registry._RESERVED_ALIASES = frozenset({"NEXTN"}) -> EAGLE
    d = load("sglang", "sglang-0.5.23-methods.json")
    assert d["algorithms"] == [
        "DFLASH", "UNO", "DSPARK", "EAGLE", "EAGLE3", "FROZEN_KV_MTP", "STANDALONE", "NGRAM"
    ]  # fmt: skip
    assert d["aliases"] == {"NEXTN": "EAGLE"}
    arch = d["draft_architectures"]["DeepseekV3ForCausalLM"]
    assert arch == {"draft_class": "DeepseekV3ForCausalLMNextN", "forced_layers": None}
    assert d["max_layers"] == {"DeepseekV3ForCausalLMNextN": 1}


def test_tokenspeed_choices_and_drafters():
    # server_args.py --speculative-algorithm choices; drafter/__init__.py DRAFTER_MAPPING
    d = load("tokenspeed", "tokenspeed-f4d8ec6e039c-methods.json")
    assert d["algorithms"] == ["EAGLE3", "MTP", "DFLASH", "DSPARK"]
    assert d["drafters"] == {
        "EAGLE3": "Eagle",
        "MTP": "Eagle",
        "DFLASH": "DFlash",
        "DSPARK": "DSpark",
    }
    assert "DeepseekV3ForCausalLMNextN" in d["nextn_classes"]


SOURCES = {
    "vllm": [
        str(p)
        for p in Path.home().glob(".cache/recipecli/vllm-0.33.0-*/lib/python3.11/site-packages")
    ],
    "sglang": [
        str(p)
        for p in Path.home().glob(".cache/recipecli/sglang-0.5.23-*/lib/python3.11/site-packages")
    ],
    "tokenspeed": [str(p) for p in Path("/work/.mirror").glob("lightseekorg+tokenspeed/repo")],
}


@pytest.mark.slow
@pytest.mark.parametrize("engine", sorted(SOURCES))
def test_re_extraction_is_the_committed_file(engine: str):
    if not SOURCES[engine]:
        pytest.skip(f"the pinned {engine} source is not on this machine")
    extra = (
        ["--commit", "f4d8ec6e039c028c7ee71317ccfb84e56ae2b45c"] if engine == "tokenspeed" else []
    )
    cmd = [sys.executable, str(REPO / "scripts" / "engine_methods.py"), engine, SOURCES[engine][0]]
    proc = subprocess.run([*cmd, *extra, "--check"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
