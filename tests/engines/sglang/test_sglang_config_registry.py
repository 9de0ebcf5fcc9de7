"""SGLang builds a draft whose model_type it registers in ``_CONFIG_REGISTRY`` (issue #31).

SGLang 0.5.23 ``srt/utils/hf_transformers/common.py``: ``from transformers import
DeepseekV3Config as _HFDeepseekV3Config``; "# For kimi_k25_eagle3" ``class
_KimiK2ConfigAlias(_HFDeepseekV3Config): model_type = "kimi_k2"`` and
``_CONFIG_REGISTRY["kimi_k2"] = _KimiK2ConfigAlias`` (lines 230-233): the class changes only
``model_type``, so transformers' ``DeepseekV3Config`` defaults fill what the checkpoint leaves
out (``configuration_deepseek_v3.py``: ``rms_norm_eps`` 1e-6).
"""

from __future__ import annotations

from helpers.pairs import base_pair, find

from recipecli.engines.base import engine_data
from recipecli.engines.sglang.sources import SPEC

E = "sglang"


def test_registry_maps_kimi_k2_to_the_deepseek_v3_alias():
    reg = engine_data(SPEC)["config_registry"]
    assert reg["kimi_k2"]["class"] == "_KimiK2ConfigAlias"
    assert reg["kimi_k2"]["transformers_class"] == "DeepseekV3Config"
    assert reg["kimi_k2"]["transformers_model_type"] == "deepseek_v3"
    # common.py: mellum is transformers' MellumConfig or a Qwen3MoeConfig alias with its own
    # __post_init__, depending on the transformers version: no fixed defaults
    assert reg["mellum"]["transformers_model_type"] is None


def test_kimi_k2_draft_is_built_not_refused(tmp_path):
    p = base_pair()
    p.draft["model_type"] = "kimi_k2"
    p.draft.pop("rms_norm_eps", None)
    res = p.run(tmp_path, engines=(E,), tps=(1,))
    assert not find(res, "config.model_type", engine=E)
    eps = res.resolved[E]["eps"]
    assert eps["value"] == 1e-6
    assert "_KimiK2ConfigAlias" in eps["origin"] and "_CONFIG_REGISTRY" in eps["origin"]


def test_unregistered_model_type_still_refused(tmp_path):
    p = base_pair()
    p.draft["model_type"] = "kimi_k9_unknown"
    res = p.run(tmp_path, engines=(E,), tps=(1,))
    assert find(res, "config.model_type", engine=E)
