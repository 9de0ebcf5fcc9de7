"""tokenspeed's pinned version, the engine code its model cites (``Source`` constants), its extracted
data, and the step list the step modules add to.
"""

from __future__ import annotations

from typing import Any, TypedDict, cast

from recipecli.engines.base import (
    Source,
    StepList,
    engine_data,
)
from recipecli.engines.tokenspeed.pin import PIN
from recipecli.engines.tokenspeed.spec import REPO, SPEC

NAME = PIN.engine
#: the pinned version as citations print it (``{REPO}@{VERSION}``)
VERSION = PIN.ref
COMMIT = PIN.version
DATA = PIN.data_file
#: transformers release the engine pins (tokenspeed/pin.py)
TRANSFORMERS = PIN.transformers

P = "python/tokenspeed/runtime/"


def src(file: str, function: str, *refs: str) -> Source:
    """A :class:`Source` in tokenspeed's repository at the pinned version (``file`` below ``P``)."""
    return Source(REPO, VERSION, P + file, function, tuple(refs))


GET_CONFIG = src("utils/hf_transformers_utils.py", "get_config")
MODEL_CONFIG = src("configs/model_config.py", "ModelConfig.__init__")
REGISTRY = src("models/registry.py", "ModelRegistry.resolve_model_cls / _raise_for_unsupported")
DRAFT_INIT = src("models/llama_eagle3.py", "LlamaForCausalLMEagle3.__init__")
DRAFT_MODEL = src("models/llama_eagle3.py", "LlamaModel.__init__ / forward")
DRAFT_LOAD = src("models/llama_eagle3.py", "LlamaForCausalLMEagle3.load_weights")
SET_EMBED = src(
    "models/llama_eagle3.py",
    "LlamaForCausalLMEagle3.set_embed_and_head",
    "lightseekorg/tokenspeed PR #837",
)
MLA_SET_EMBED = src(
    "models/deepseek_v3.py",
    "Eagle3DeepseekV2ForCausalLM.set_embed_and_head",
    "lightseekorg/tokenspeed PR #958",
    "lightseekorg/tokenspeed #913",
)
WIRE = src(
    "execution/factory.py",
    "_wire_draft_to_target_model / _eagle_aux_layer_ids",
    "lightseekorg/tokenspeed PR #526",
)
CAPTURE = src("models/base/causal_lm.py", "BaseCausalLM.set_eagle3_layers_to_capture")
CAPTURE_LOOP = src(
    "models/base/transformer_model.py",
    "BaseTransformerModel.forward",
    "lightseekorg/tokenspeed PR #526",
)
LOGITS = src(
    "layers/logits_processor.py", "LogitsProcessor.forward (hidden states for the drafter)"
)
VOCAB = src(
    "layers/vocab_parallel_embedding.py", "VocabParallelEmbedding.__init__ (pad_vocab_size, divide)"
)
HEADS = src("models/utils.py", "validate_attention_partition")
CONTEXT = src("configs/model_config.py", "ModelConfig.__init__ (context_length check)")

#: where the draft's rotary embedding is built (from the draft config alone)
ROPE = src(
    "models/llama.py",
    "LlamaAttention.__init__ (get_rope_theta(config), config.rope_scaling of the draft config)",
)

steps = StepList()


class TokenspeedTarget(TypedDict):
    """A ``targets`` entry: facts about one target class, read by hand and verified at the pin."""

    module: str
    #: its forward hands the draft the captured aux hidden states
    captures_aux: bool
    #: a ``BaseTransformerModel`` target (capture index L+1 is the final residual)
    final_residual: bool
    #: its embedding is replicated, not vocab-parallel
    embed_replicated: bool
    evidence: str


class _TokenspeedRequired(TypedDict):
    commit: str
    source: str
    #: architecture -> source file of the registry's ``EntryClass`` export
    architectures: dict[str, str]
    #: EAGLE3 draft architecture -> its source file
    eagle3_drafts: dict[str, str]
    targets: dict[str, TokenspeedTarget]


class TokenspeedData(_TokenspeedRequired, total=False):
    """tokenspeed's extracted data (``data/<Pin.data_file>``, written by
    ``scripts/engine_data_tokenspeed.py``)."""

    #: model type -> tokenspeed's own config class (``class``, ``defaults``, ``derived``)
    config_classes: dict[str, dict[str, Any]]


def _data() -> TokenspeedData:
    """tokenspeed's extracted data (:class:`TokenspeedData`), as a fresh top-level dict."""
    return cast(TokenspeedData, dict(engine_data(SPEC)))
