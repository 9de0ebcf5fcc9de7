"""tokenspeed's EAGLE3 load path at a pinned commit of lightseekorg/tokenspeed, step by step.

tokenspeed is not on PyPI, so this model is checked against data extracted from the pinned source
snapshot (``scripts/build_engine_data.py tokenspeed``): the architectures its registry exports,
which target classes hand the draft their aux hidden states, which build their embedding
replicated, and the config classes it builds for a ``model_type``. Paths are relative to the
repository root (``python/tokenspeed/...``).
"""

from __future__ import annotations

from recipecli.engines.base import EngineModel
from recipecli.engines.tokenspeed.config import (
    draft_architecture,
    step_architecture,
    step_config,
)
from recipecli.engines.tokenspeed.sections import (
    NOTES,
    SECTIONS,
)
from recipecli.engines.tokenspeed.sources import (
    CAPTURE,
    CAPTURE_LOOP,
    COMMIT,
    CONTEXT,
    DATA,
    DRAFT_INIT,
    DRAFT_LOAD,
    DRAFT_MODEL,
    GET_CONFIG,
    HEADS,
    LOGITS,
    MLA_SET_EMBED,
    MODEL_CONFIG,
    NAME,
    REGISTRY,
    REPO,
    SET_EMBED,
    TRANSFORMERS,
    VERSION,
    VOCAB,
    WIRE,
    P,
    src,
    steps,
)
from recipecli.engines.tokenspeed.target import (
    captured_layers,
    step_aux,
    step_target,
)
from recipecli.engines.tokenspeed.tensors import (
    allocated,
    step_positions,
    step_sharing,
    step_tensors,
)

MODEL = EngineModel(
    name=NAME,
    title="tokenspeed",
    repo=REPO,
    version=VERSION,
    steps=tuple(sorted(steps.items, key=lambda s: s.key)),
    notes=NOTES,
    sections=SECTIONS,
    data=(DATA, f"transformers-{TRANSFORMERS}-defaults.json"),
)

__all__ = [
    "CAPTURE",
    "CAPTURE_LOOP",
    "COMMIT",
    "CONTEXT",
    "DATA",
    "DRAFT_INIT",
    "DRAFT_LOAD",
    "DRAFT_MODEL",
    "GET_CONFIG",
    "HEADS",
    "LOGITS",
    "MLA_SET_EMBED",
    "MODEL",
    "MODEL_CONFIG",
    "NAME",
    "NOTES",
    "P",
    "REGISTRY",
    "REPO",
    "SECTIONS",
    "SET_EMBED",
    "TRANSFORMERS",
    "VERSION",
    "VOCAB",
    "WIRE",
    "allocated",
    "captured_layers",
    "draft_architecture",
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
