"""tokenspeed's EAGLE3 load path at a pinned commit of lightseekorg/tokenspeed, step by step.

tokenspeed is not on PyPI, so this model is checked against data extracted from the pinned source
snapshot (``scripts/build_engine_data.py tokenspeed``): the architectures its registry exports,
which target classes hand the draft their aux hidden states, which build their embedding
replicated, and the config classes it builds for a ``model_type``. Paths are relative to the
repository root (``python/tokenspeed/...``).
"""

from __future__ import annotations

from recipecli.engines.base import EngineModel

# the step modules register their steps on ``steps`` when imported
from recipecli.engines.tokenspeed import config, target, tensors  # noqa: F401
from recipecli.engines.tokenspeed.accounting import accounting
from recipecli.engines.tokenspeed.sections import NOTES, SECTIONS
from recipecli.engines.tokenspeed.sources import steps
from recipecli.engines.tokenspeed.spec import SPEC

#: tokenspeed's EAGLE3 load path (:class:`~recipecli.engines.base.EngineModel`).
MODEL = EngineModel(
    spec=SPEC,
    steps=tuple(sorted(steps.items, key=lambda s: s.key)),
    notes=NOTES,
    sections=SECTIONS,
    accounting=accounting,
)
