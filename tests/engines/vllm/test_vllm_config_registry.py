"""vLLM builds a draft whose model_type it registers in ``_CONFIG_REGISTRY`` (issue #31).

vLLM 0.33.0 ``vllm/transformers_utils/config.py``: ``_CONFIG_REGISTRY = LazyConfigDict(...,
kimi_k2="DeepseekV3Config", ...)`` (line 141, "Kimi K2 uses same architecture as DeepSeek V3"),
and ``configs/__init__.py`` ``_CLASS_TO_MODULE["DeepseekV3Config"] = "transformers"``: the
draft config is transformers' own ``DeepseekV3Config``, whose defaults fill what the checkpoint
leaves out (transformers ``configuration_deepseek_v3.py``: ``rms_norm_eps`` 1e-6,
``max_position_embeddings`` 4096).
"""

from __future__ import annotations

from helpers.pairs import base_pair, find

from recipecli.engines.base import engine_data
from recipecli.engines.vllm.sources import SPEC

E = "vllm"


def _kimi(tmp_path, **drop: bool):
    p = base_pair()
    p.draft["model_type"] = "kimi_k2"
    for key in drop:
        p.draft.pop(key, None)
    return p.run(tmp_path, engines=(E,), tps=(1,))


def test_registry_maps_kimi_k2_to_transformers_deepseek_v3():
    reg = engine_data(SPEC)["config_registry"]
    assert reg["kimi_k2"]["class"] == "DeepseekV3Config"
    assert reg["kimi_k2"]["module"] == "transformers"
    assert reg["kimi_k2"]["transformers_model_type"] == "deepseek_v3"
    # kimi_k3 -> KimiK3Config(PreTrainedConfig) (configs/kimi_k3.py): vLLM's own defaults
    assert reg["kimi_k3"]["transformers_model_type"] is None


def test_kimi_k2_draft_is_built_not_refused(tmp_path):
    res = _kimi(tmp_path, rms_norm_eps=True)
    assert not find(res, "config.model_type", engine=E)
    eps = res.resolved[E]["eps"]
    assert eps["value"] == 1e-6
    assert "DeepseekV3Config" in eps["origin"] and "_CONFIG_REGISTRY" in eps["origin"]


def test_unregistered_model_type_still_refused(tmp_path):
    p = base_pair()
    p.draft["model_type"] = "kimi_k9_unknown"
    res = p.run(tmp_path, engines=(E,), tps=(1,))
    assert find(res, "config.model_type", engine=E)
