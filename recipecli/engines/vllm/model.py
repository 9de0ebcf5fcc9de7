"""vLLM 0.33.0's EAGLE3 load path, step by step (the released wheel's source).

Each step below is a function of vLLM 0.33.0 that decides whether a target + EAGLE3 draft pair
loads and drafts what it was trained for; the step's ``sources`` name file and function, and every
finding it yields carries them. The registry (which draft architectures vLLM registers, which
target classes implement ``SupportsEagle3``) is data extracted from the wheel by
``scripts/build_engine_data.py vllm``; transformers' config defaults come from
``scripts/extract_transformers_fields.py``. ``tests/conformance/`` runs vLLM's own config classes,
draft model and ``load_weights`` on the same pairs and compares.
"""

from __future__ import annotations

from recipecli.engines.base import EngineModel

# the step modules register their steps on ``steps`` when imported
from recipecli.engines.vllm import config, target, tensors  # noqa: F401
from recipecli.engines.vllm.accounting import accounting
from recipecli.engines.vllm.sections import NOTES, SECTIONS
from recipecli.engines.vllm.sources import steps
from recipecli.engines.vllm.spec import SPEC

#: vllm's EAGLE3 load path (:class:`~recipecli.engines.base.EngineModel`).
MODEL = EngineModel(
    spec=SPEC,
    steps=tuple(sorted(steps.items, key=lambda s: s.key)),
    notes=NOTES,
    sections=SECTIONS,
    accounting=accounting,
)
