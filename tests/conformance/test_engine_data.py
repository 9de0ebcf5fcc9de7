"""The data recipecli's vLLM model reads, re-extracted from the installed vLLM 0.33.0 and compared.

``recipecli/engines/vllm/data/vllm-<pin>.json`` is written by ``scripts/build_engine_data.py vllm``
from the wheel; here the same extractor runs on the vLLM package this environment imports, and
the draft registry is also checked against vLLM's own ``ModelRegistry`` (without importing model
modules). ``transformers-<ver>-defaults.json`` is checked against the installed transformers'
config classes themselves.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

from recipecli.engines import engine_spec

pytestmark = pytest.mark.conformance

REPO = Path(__file__).resolve().parents[2]
PIN = engine_spec("vllm").pin
DATA = REPO / "recipecli" / "engines" / "vllm" / "data"
TRANSFORMERS = REPO / "recipecli" / "data" / "transformers"


def test_vllm_registry_data_matches_the_installed_vllm():
    import vllm

    sys.path.insert(0, str(REPO / "scripts"))
    from engine_data_vllm import vllm_registry

    root = Path(vllm.__file__).resolve().parents[1]
    fresh = vllm_registry(root, PIN.version)
    committed = json.loads((DATA / PIN.data_file).read_text())
    assert fresh["eagle3_drafts"] == committed["eagle3_drafts"]
    assert {a: t["supports_eagle3"] for a, t in fresh["targets"].items()} == {
        a: t["supports_eagle3"] for a, t in committed["targets"].items()
    }


def test_vllm_draft_registry_by_vllm_itself():
    from vllm.model_executor.models.registry import _SPECULATIVE_DECODING_MODELS

    committed = json.loads((DATA / PIN.data_file).read_text())["eagle3_drafts"]
    for arch, (module, cls) in committed.items():
        got = _SPECULATIVE_DECODING_MODELS[arch]
        assert (f"vllm.model_executor.models.{got[0]}", got[1]) == (module, cls)


@pytest.mark.parametrize("model_type", ["llama", "qwen3", "qwen2", "mistral", "phi3"])
def test_transformers_defaults_match_the_installed_config_classes(model_type):
    import transformers
    from transformers import AutoConfig

    assert transformers.__version__ == PIN.transformers
    entry = json.loads((TRANSFORMERS / PIN.transformers_file).read_text())["models"][model_type]
    cfg = AutoConfig.for_model(model_type)
    for key, value in entry["defaults"].items():
        if value is None:
            continue  # None defaults are filled from other fields in __post_init__
        assert getattr(cfg, key) == value, key
    assert importlib.import_module(type(cfg).__module__)


def test_aux_over_pp_matches_the_decoder_classes_vllm_imports():
    # Model Runner V2 runs EAGLE3 with pipeline parallelism only when the target's inner decoder
    # declares supports_aux_hidden_states_over_pp (vllm/v1/worker/gpu/spec_decode/eagle/
    # eagle3_utils.py verify_supports_aux_hidden_states_over_pp; EagleModelMixin's default is
    # False). The extractor reads it statically; here vLLM's own classes answer.
    committed = json.loads((DATA / PIN.data_file).read_text())["targets"]
    checked = 0
    for arch, entry in sorted(committed.items()):
        decoder = entry.get("decoder")
        if entry.get("aux_over_pp") is None or not decoder:
            continue
        module, _, cls = decoder.rpartition(": ")[2].rpartition(".")
        try:
            decoder_cls = getattr(importlib.import_module(module), cls)
        except Exception:  # a model module that needs a CUDA-only dependency to import
            continue
        got = bool(getattr(decoder_cls, "supports_aux_hidden_states_over_pp", False))
        assert got == entry["aux_over_pp"], arch
        checked += 1
    assert checked >= 30
