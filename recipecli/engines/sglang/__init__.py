"""SGLang 0.5.23's EAGLE3 load path, step by step (the PyPI wheel's source).

Each step is a function of SGLang 0.5.23 that decides whether a target + EAGLE3 draft pair starts
and drafts what it was trained for. The registry (the architectures ``EntryClass`` exports, which
target classes have ``set_eagle3_layers_to_capture`` and which id rule each applies, the draft
architecture renames) is data extracted from the wheel by ``scripts/build_engine_data.py sglang``;
transformers' config defaults (5.19.0, the release SGLang 0.5.23 pins) by
``scripts/build_engine_data.py transformers``. Paths are relative to the repository root
(``python/sglang/srt/...``).

Where SGLang differs from the engines it shares ancestry with: aux ids are read only from the
draft's ``eagle_config`` (never the top-level list), the id shift depends on the target family,
a vocabulary TP does not divide is padded further instead of refused, the target's embedding is
swapped into the draft without a shape check, a draft without ``draft_vocab_size`` fails at
start-up, and a draft whose context length is shorter than the target's refuses to start.
"""

from __future__ import annotations

from recipecli.engines.base import EngineModel
from recipecli.engines.sglang.config import (
    draft_architecture,
    step_architecture,
    step_config,
)
from recipecli.engines.sglang.sections import (
    NOTES,
    SECTIONS,
)
from recipecli.engines.sglang.sources import (
    ARCH_WIRING,
    AUX_IDS,
    AUX_SETUP,
    CAPTURE,
    CAPTURE_LOOP,
    CONTEXT,
    CONTEXT_LEN,
    DATA,
    DRAFT_INIT,
    DRAFT_LAYER,
    DRAFT_LOAD,
    DRAFT_MODEL,
    DRAFT_RENAME,
    DRAFT_WORKER,
    GET_CONFIG,
    HEADS,
    INIT_LM_HEAD,
    MLA_DRAFT,
    MODEL_CONFIG,
    NAME,
    REGISTRY,
    REPO,
    SET_EMBED,
    TEXT_CONFIG,
    TRANSFORMERS,
    VERSION,
    VOCAB,
    P,
    pad_vocab,
    src,
    steps,
)
from recipecli.engines.sglang.target import (
    DELEGATES,
    RULE_TEXT,
    capture_indices,
    draft_ids,
    step_aux,
    step_target,
)
from recipecli.engines.sglang.tensors import (
    allocated,
    context_length,
    step_positions,
    step_sharing,
    step_tensors,
)

MODEL = EngineModel(
    name=NAME,
    title="SGLang",
    repo=REPO,
    version=VERSION,
    steps=tuple(sorted(steps.items, key=lambda s: s.key)),
    notes=NOTES,
    sections=SECTIONS,
    data=(DATA, f"transformers-{TRANSFORMERS}-defaults.json"),
)

__all__ = [
    "DELEGATES",
    "RULE_TEXT",
    "ARCH_WIRING",
    "AUX_IDS",
    "AUX_SETUP",
    "CAPTURE",
    "CAPTURE_LOOP",
    "CONTEXT",
    "CONTEXT_LEN",
    "DATA",
    "DRAFT_INIT",
    "DRAFT_LAYER",
    "DRAFT_LOAD",
    "DRAFT_MODEL",
    "DRAFT_RENAME",
    "DRAFT_WORKER",
    "GET_CONFIG",
    "HEADS",
    "INIT_LM_HEAD",
    "MLA_DRAFT",
    "MODEL",
    "MODEL_CONFIG",
    "NAME",
    "NOTES",
    "P",
    "REGISTRY",
    "REPO",
    "SECTIONS",
    "SET_EMBED",
    "TEXT_CONFIG",
    "TRANSFORMERS",
    "VERSION",
    "VOCAB",
    "allocated",
    "capture_indices",
    "context_length",
    "draft_architecture",
    "draft_ids",
    "pad_vocab",
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
