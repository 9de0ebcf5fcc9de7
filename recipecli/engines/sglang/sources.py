"""SGLang's pinned version, the engine code its model cites (``Source`` constants), its extracted
data, and the step list the step modules add to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict, cast

from recipecli.engines.base import (
    Source,
    StepList,
    engine_data,
)
from recipecli.engines.sglang.pin import PIN
from recipecli.engines.sglang.spec import REPO, SPEC

NAME = PIN.engine
#: the pinned version as citations print it (``{REPO}@{VERSION}``)
VERSION = PIN.ref
DATA = PIN.data_file
#: transformers release the engine pins (sglang/pin.py)
TRANSFORMERS = PIN.transformers

P = "python/sglang/srt/"


def src(file: str, function: str, *refs: str) -> Source:
    """A :class:`Source` in SGLang's repository at the pinned version (``file`` below ``P``)."""
    return Source(REPO, VERSION, P + file, function, tuple(refs))


MODEL_CONFIG = src("configs/model_config.py", "ModelConfig.__init__ / from_server_args")
GET_CONFIG = src("utils/hf_transformers/config.py", "get_config (model_override_args)")
TEXT_CONFIG = src("utils/hf_transformers/common.py", "get_hf_text_config")
DRAFT_RENAME = src("configs/model_config.py", "ModelConfig._config_draft_model")
REGISTRY = src("models/registry.py", "_ModelRegistry.resolve_model_cls / _raise_for_unsupported")
DRAFT_MODEL = src("models/llama_eagle3.py", "LlamaModel.__init__ / forward")
DRAFT_LAYER = src("models/llama_eagle3.py", "LlamaDecoderLayer.__init__ / forward")
DRAFT_INIT = src("models/llama_eagle3.py", "LlamaForCausalLMEagle3.__init__")
DRAFT_LOAD = src("models/llama_eagle3.py", "LlamaForCausalLMEagle3.load_weights")
MLA_DRAFT = src(
    "models/kimi_k25_eagle3.py", "Eagle3MLAModel.__init__ / Eagle3DeepseekV2ForCausalLM.__init__"
)
AUX_IDS = src(
    "model_executor/model_runner_components/spec_aux_hidden_state.py",
    "_resolve_eagle_aux_hidden_state",
)
AUX_SETUP = src(
    "model_executor/model_runner_components/attention_backend_setup.py",
    "configure_aux_hidden_state_capture",
)
CAPTURE = src("models/llama.py", "LlamaForCausalLM.set_eagle3_layers_to_capture")
CAPTURE_LOOP = src("models/llama.py", "LlamaModel.forward")
INIT_LM_HEAD = src("speculative/eagle_worker_v2.py", "EagleDraftWorker.init_lm_head")
ARCH_WIRING = src(
    "speculative/eagle_worker_v2.py", "EagleDraftWorker.init_lm_head", "SGLang #36528"
)
SET_EMBED = src("models/llama.py", "LlamaForCausalLM.set_embed / set_embed_and_head")
VOCAB = src(
    "layers/vocab_parallel_embedding.py",
    "VocabParallelEmbedding.__init__ (padding_size *= tp_size)",
)
HEADS = src("models/llama.py", "LlamaAttention.__init__")
CONTEXT = src(
    "configs/model_config.py",
    "ModelConfig._derive_context_length",
    "SGLang PR #9388",
    "SGLang #18220",
)
DRAFT_WORKER = src("speculative/eagle_worker_v2.py", "EagleDraftWorker.__init__ (context_length)")
CONTEXT_LEN = src("utils/hf_transformers/common.py", "get_context_length")

#: where the draft's rotary embedding is built (from the draft config alone)
ROPE = src(
    "models/llama.py",
    "LlamaDecoderLayer.__init__ (rope_theta / rope_scaling from the draft config) / LlamaAttention.__init__",
)

steps = StepList()


class _SglangTargetRequired(TypedDict):
    #: source file of the target class
    module: str
    #: the class has ``set_eagle3_layers_to_capture``
    captures_aux: bool
    evidence: str


class SglangTarget(_SglangTargetRequired, total=False):
    """A ``targets`` entry; the capture facts only for classes that capture (``rule``) and the
    target families read by hand (the others)."""

    #: how ids become capture indices (``plus1``, ``plus1_if_first_is_1`` …, ``delegates``)
    rule: str
    capture: str
    #: index L (the last layer's output) is captured
    final_index: bool
    #: what an id outside the captured range does (``dropped``, ``raises_forward`` …)
    not_captured: str
    capture_evidence: str


class SglangData(TypedDict):
    """SGLang's extracted data (``data/<Pin.data_file>``, ``scripts/engine_data_sglang.py``)."""

    package: str
    version: str
    source: str
    #: architecture -> source file of the registry's ``EntryClass`` export
    architectures: dict[str, str]
    #: EAGLE3 draft architecture -> its source file
    eagle3_drafts: dict[str, str]
    #: target architecture -> the draft architecture ``_config_draft_model`` renames it to
    draft_renames: dict[str, str]
    targets: dict[str, SglangTarget]


def _data() -> SglangData:
    """SGLang's extracted data (:class:`SglangData`), cached by :func:`engine_data`."""
    return cast(SglangData, engine_data(SPEC))


def _eagle_config(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the draft config's ``eagle_config`` mapping, or an empty dict when it has none
    (or not a mapping)."""
    ec = cfg.get("eagle_config")
    return dict(ec) if isinstance(ec, dict) else {}


def pad_vocab(v: int, tp: int) -> int:
    """Vocabulary rows after ``VocabParallelEmbedding``'s padding at TP ``tp``: a multiple of 64,
    or of 64 x TP when the 64-padded size does not divide by TP (so it always splits)."""
    pad = 64 if (-(-v // 64) * 64) % tp == 0 else 64 * tp
    return -(-v // pad) * pad
