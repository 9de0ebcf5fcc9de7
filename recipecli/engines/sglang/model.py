"""SGLang 0.5.23's EAGLE3 load path, step by step (the PyPI wheel's source).

Each step is a function of SGLang 0.5.23 that decides whether a target + EAGLE3 draft pair starts
and drafts what it was trained for. The registry (the architectures ``EntryClass`` exports, which
target classes have ``set_eagle3_layers_to_capture`` and which id rule each applies, the draft
architecture renames) is data extracted from the wheel by ``scripts/build_engine_data.py sglang``;
transformers' config defaults (5.19.0, the release SGLang 0.5.23 pins) by
``scripts/extract_transformers_fields.py``. Paths are relative to the repository root
(``python/sglang/srt/...``).

Where SGLang differs from the engines it shares ancestry with: aux ids are read only from the
draft's ``eagle_config`` (never the top-level list), the id shift depends on the target family,
a vocabulary TP does not divide is padded further instead of refused, the target's embedding is
swapped into the draft without a shape check, a draft without ``draft_vocab_size`` fails at
start-up, and a draft whose context length is shorter than the target's refuses to start.
"""

from __future__ import annotations

from recipecli.engines.base import EngineModel

# the step modules register their steps on ``steps`` when imported
from recipecli.engines.sglang import config, target, tensors  # noqa: F401
from recipecli.engines.sglang.accounting import accounting
from recipecli.engines.sglang.sections import NOTES, SECTIONS
from recipecli.engines.sglang.sources import steps
from recipecli.engines.sglang.spec import SPEC

#: sglang's EAGLE3 load path (:class:`~recipecli.engines.base.EngineModel`).
MODEL = EngineModel(
    spec=SPEC,
    steps=tuple(sorted(steps.items, key=lambda s: s.key)),
    notes=NOTES,
    sections=SECTIONS,
    accounting=accounting,
)
