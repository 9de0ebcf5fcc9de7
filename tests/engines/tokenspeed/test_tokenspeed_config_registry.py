"""tokenspeed builds a draft whose model_type it registers in ``_CONFIG_REGISTRY`` (issue #31).

tokenspeed f4d8ec6e039c ``python/tokenspeed/runtime/utils/hf_transformers_utils.py``:
``_CONFIG_REGISTRY = {..., KimiK2Config.model_type: KimiK2Config, ...}`` (line 80), and
``runtime/configs/kimi_k2_config.py``: ``class KimiK2Config(DeepseekV3Config): model_type =
"kimi_k2"`` ("only overrides the registered model_type"): transformers' ``DeepseekV3Config``
defaults fill what the checkpoint leaves out (``configuration_deepseek_v3.py``: ``rms_norm_eps``
1e-6). ``config_classes`` (tokenspeed's classes with their own ``__init__`` defaults) is unchanged.
"""

from __future__ import annotations

from helpers.pairs import base_pair, find

from recipecli.engines.base import engine_data
from recipecli.engines.tokenspeed.sources import SPEC

E = "tokenspeed"


def test_registry_maps_kimi_k2_to_its_deepseek_v3_subclass():
    data = engine_data(SPEC)
    reg = data["config_registry"]
    assert reg["kimi_k2"]["class"] == "KimiK2Config"
    assert reg["kimi_k2"]["transformers_class"] == "DeepseekV3Config"
    assert reg["kimi_k2"]["transformers_model_type"] == "deepseek_v3"
    assert "kimi_k2" not in data["config_classes"]  # no __init__ of its own
    # qwen3_config.py: Qwen3Config(PretrainedConfig) with its own __init__ defaults
    assert reg["qwen3"]["transformers_model_type"] is None


def test_kimi_k2_draft_is_built_not_refused(tmp_path):
    p = base_pair()
    p.draft["model_type"] = "kimi_k2"
    p.draft.pop("rms_norm_eps", None)
    res = p.run(tmp_path, engines=(E,), tps=(1,))
    assert not find(res, "config.model_type", engine=E)
    eps = res.resolved[E]["eps"]
    assert eps["value"] == 1e-6
    assert "KimiK2Config" in eps["origin"] and "_CONFIG_REGISTRY" in eps["origin"]


def test_unregistered_model_type_still_refused(tmp_path):
    p = base_pair()
    p.draft["model_type"] = "kimi_k9_unknown"
    res = p.run(tmp_path, engines=(E,), tps=(1,))
    assert find(res, "config.model_type", engine=E)
