"""vLLM's pinned version, the engine code its model cites (``Source`` constants), its extracted
data, and the step list the step modules add to.
"""

from __future__ import annotations

from typing import TypedDict, cast

from recipecli.engines.base import (
    Source,
    StepList,
    engine_data,
)
from recipecli.engines.vllm.pin import PIN
from recipecli.engines.vllm.spec import REPO, SPEC

NAME = PIN.engine
#: the pinned version as citations print it (``{REPO}@{VERSION}``)
VERSION = PIN.ref
DATA = PIN.data_file
#: transformers release the engine pins (vllm/pin.py)
TRANSFORMERS = PIN.transformers


def src(file: str, function: str, *refs: str) -> Source:
    """A :class:`Source` in vLLM's repository at the pinned version (``file`` from the repo root)."""
    return Source(REPO, VERSION, file, function, tuple(refs))


EAGLE_CFG = src("vllm/transformers_utils/configs/eagle.py", "EAGLEConfig.__init__")
SPEC_ALGOS = src("vllm/transformers_utils/configs/speculators/algos.py", "update_eagle3")
SPEC_CFG = src("vllm/config/speculative.py", "SpeculativeConfig.__post_init__")
SPEC_BASE = src(
    "vllm/transformers_utils/configs/speculators/base.py",
    "SpeculatorsConfig.extract_transformers_pre_trained_config",
)
#: transformer_layer_config keys vLLM's Llama layers read with plain attribute access
SPECULATORS_REQUIRED = (
    "hidden_size",
    "intermediate_size",
    "num_attention_heads",
    "num_hidden_layers",
    "rms_norm_eps",
    "vocab_size",
    "hidden_act",
)
REGISTRY = src("vllm/model_executor/models/registry.py", "_SPECULATIVE_DECODING_MODELS")
EAGLE3_MODEL = src("vllm/model_executor/models/llama_eagle3.py", "LlamaModel.__init__")
EAGLE3_LAYER = src("vllm/model_executor/models/llama_eagle3.py", "LlamaDecoderLayer.__init__")
EAGLE3_CAUSAL = src("vllm/model_executor/models/llama_eagle3.py", "Eagle3LlamaForCausalLM.__init__")
EAGLE3_LOAD = src(
    "vllm/model_executor/models/llama_eagle3.py", "Eagle3LlamaForCausalLM.load_weights"
)
WEIGHTS_LOADER = src("vllm/model_executor/models/utils.py", "AutoWeightsLoader._load_module")
AUX_FROM_CONFIG = src(
    "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py",
    "get_eagle3_aux_layers_from_config",
    "vLLM PR #25961",
)
AUX_FROM_CONFIG_V1 = src(
    "vllm/v1/worker/gpu_model_runner.py", "GPUModelRunner._get_eagle3_aux_layers_from_config"
)
RUNNER = src(
    "vllm/config/vllm.py", "VllmConfig (VLLM_USE_V2_MODEL_RUNNER: the V2 runner is the default)"
)
AUX_SETUP = src(
    "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py",
    "set_eagle3_aux_hidden_state_layers (supports_eagle3 check)",
)
AUX_CAPTURE = src(
    "vllm/model_executor/models/interfaces.py",
    "EagleModelMixin._set_aux_hidden_state_layers / _maybe_add_hidden_state",
)
AUX_DEFAULT = src(
    "vllm/model_executor/models/interfaces.py",
    "SupportsEagle3.get_eagle3_default_aux_hidden_state_layers",
    "vLLM PR #50170",
)
SHARE_EMBED = src(
    "vllm/v1/worker/gpu/spec_decode/eagle/utils.py",
    "maybe_share_target_embed / _should_share",
    "vLLM #18906",
    "vLLM #50158",
)
SHARE_HEAD = src(
    "vllm/v1/worker/gpu/spec_decode/eagle/utils.py", "load_eagle_model (lm_head, _should_share)"
)
VOCAB_PARALLEL = src(
    "vllm/model_executor/layers/vocab_parallel_embedding.py",
    "VocabParallelEmbedding.__init__ (pad_vocab_size, divide)",
    "vLLM #31474",
)
DRAFT_TP = src("vllm/config/speculative.py", "SpeculativeConfig._verify_and_get_draft_tp")
MAXPOS = src(
    "vllm/config/speculative.py",
    "SpeculativeConfig._maybe_override_draft_max_position_embeddings",
    "vLLM #48894",
)
LOGITS = src("vllm/model_executor/models/llama_eagle3.py", "Eagle3LlamaForCausalLM.compute_logits")

#: speculative.py SpeculativeConfig.hf_config_override: draft model types rewritten to deepseek_mtp
MTP_REWRITTEN = frozenset({"deepseek_v3", "deepseek_v32", "glm_moe_dsa"})

#: speculative.py _CACHE_ONLY_ROPE_TYPES: RoPE types whose cache vLLM may simply resize
CACHE_ONLY_ROPE_TYPES = frozenset({"default", "linear", "llama3", "ntk", "proportional"})

#: where the draft's rotary embedding is built (from the draft config alone)
ROPE = src(
    "vllm/model_executor/models/llama.py",
    "LlamaAttention._init_rotary_emb (get_rope with the draft config's rope_parameters)",
)

steps = StepList()


#: A ``targets`` entry: the model class vLLM registers for an architecture, whether it
#: implements ``SupportsEagle3``, and the file:line that shows it.
VllmTarget = TypedDict(
    "VllmTarget", {"module": str, "class": str, "supports_eagle3": bool, "evidence": str}
)


class VllmData(TypedDict):
    """vLLM's extracted data (``data/<Pin.data_file>``, ``scripts/engine_data_vllm.py``)."""

    version: str
    source: str
    #: architecture -> [module, class] of ``_SPECULATIVE_DECODING_MODELS``' EAGLE3 drafts
    eagle3_drafts: dict[str, list[str]]
    #: architecture -> its registered target class
    targets: dict[str, VllmTarget]


def _registry() -> VllmData:
    """vLLM's extracted data (:class:`VllmData`), as a fresh top-level dict."""
    return cast(VllmData, dict(engine_data(SPEC)))
