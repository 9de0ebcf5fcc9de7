"""vLLM 0.33.0's EAGLE3 load path, step by step (the released wheel's source).

Each step below is a function of vLLM 0.33.0 that decides whether a target + EAGLE3 draft pair
loads and drafts what it was trained for; the step's ``sources`` name file and function, and every
finding it yields carries them. The registry (which draft architectures vLLM registers, which
target classes implement ``SupportsEagle3``) is data extracted from the wheel by
``scripts/build_engine_data.py vllm``; transformers' config defaults come from
``scripts/build_engine_data.py transformers``. ``tests/conformance/`` runs vLLM's own config classes,
draft model and ``load_weights`` on the same pairs and compares.
"""

from __future__ import annotations

from recipecli.engines.base import EngineModel
from recipecli.engines.vllm.config import (
    draft_architecture,
    speculators_hf_config,
    step_architecture,
    step_config,
)
from recipecli.engines.vllm.sections import (
    NOTES,
    SECTIONS,
)
from recipecli.engines.vllm.sources import (
    AUX_CAPTURE,
    AUX_DEFAULT,
    AUX_FROM_CONFIG,
    AUX_FROM_CONFIG_V1,
    AUX_SETUP,
    CACHE_ONLY_ROPE_TYPES,
    DATA,
    DRAFT_TP,
    EAGLE3_CAUSAL,
    EAGLE3_LAYER,
    EAGLE3_LOAD,
    EAGLE3_MODEL,
    EAGLE_CFG,
    LOGITS,
    MAXPOS,
    MTP_REWRITTEN,
    NAME,
    REGISTRY,
    REPO,
    RUNNER,
    SHARE_EMBED,
    SHARE_HEAD,
    SPEC_ALGOS,
    SPEC_BASE,
    SPEC_CFG,
    SPECULATORS_REQUIRED,
    TRANSFORMERS,
    VERSION,
    VOCAB_PARALLEL,
    WEIGHTS_LOADER,
    src,
    steps,
)
from recipecli.engines.vllm.target import (
    captured_layers,
    step_aux,
    step_target,
)
from recipecli.engines.vllm.tensors import (
    allocated,
    step_positions,
    step_sharing,
    step_tensors,
)

MODEL = EngineModel(
    name=NAME,
    title="vLLM",
    repo=REPO,
    version=VERSION,
    steps=tuple(sorted(steps.items, key=lambda s: s.key)),
    notes=NOTES,
    sections=SECTIONS,
    data=(DATA, f"transformers-{TRANSFORMERS}-defaults.json"),
)

__all__ = [
    "AUX_CAPTURE",
    "AUX_DEFAULT",
    "AUX_FROM_CONFIG",
    "AUX_FROM_CONFIG_V1",
    "AUX_SETUP",
    "CACHE_ONLY_ROPE_TYPES",
    "DATA",
    "DRAFT_TP",
    "EAGLE3_CAUSAL",
    "EAGLE3_LAYER",
    "EAGLE3_LOAD",
    "EAGLE3_MODEL",
    "EAGLE_CFG",
    "LOGITS",
    "MAXPOS",
    "MODEL",
    "MTP_REWRITTEN",
    "NAME",
    "NOTES",
    "REGISTRY",
    "REPO",
    "RUNNER",
    "SECTIONS",
    "SHARE_EMBED",
    "SHARE_HEAD",
    "SPECULATORS_REQUIRED",
    "SPEC_ALGOS",
    "SPEC_BASE",
    "SPEC_CFG",
    "TRANSFORMERS",
    "VERSION",
    "VOCAB_PARALLEL",
    "WEIGHTS_LOADER",
    "allocated",
    "captured_layers",
    "draft_architecture",
    "speculators_hf_config",
    "src",
    "step_architecture",
    "step_aux",
    "step_config",
    "step_positions",
    "step_sharing",
    "step_target",
    "step_tensors",
    "steps",
]
