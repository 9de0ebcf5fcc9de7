"""EAGLE3 draft formats and the canonical draft: the one place draft-format knowledge lives.

- :mod:`~recipecli.draft.formats`: one registered :class:`FormatSpec` per format (A, B, C, D, F,
  NeMo, nebius): detection, the aux-id convention, what ``norm_output`` means, where the config
  keeps the geometry and the draft vocabulary size.
- :mod:`~recipecli.draft.fields`: the config keys that carry EAGLE meaning, and their meanings.
- :mod:`~recipecli.draft.tensors`: tensor roles, the two namings (``midlayer.*`` and
  ``layers.{i}.*``) and name parsing.
- :mod:`~recipecli.draft.model`: :class:`DraftModel` and :func:`canonical_draft`, which
  normalises any format into it, and the expected tensor shapes.

``check``, ``convert``, the engine models and the kernel check read draft formats only through
this package.
"""

from recipecli.draft.fields import EAGLE_KEYS
from recipecli.draft.formats import (
    FORMATS,
    STATED_CONVENTIONS,
    TRAINED_CONVENTION,
    Convention,
    DraftFormat,
    FormatSpec,
    NormOutputMeaning,
    StatedConvention,
    detect_format,
    format_spec,
    from_hidden_state,
    ids_convention,
    register,
    to_hidden_state,
)
from recipecli.draft.model import (
    DraftModel,
    canonical_draft,
    known_roles,
    layer_config,
)
from recipecli.draft.tensors import (
    LAYER_ROLES,
    is_known_extra,
    layer_indices,
    numbered_layer_name,
    split_layer_name,
    strip_prefix,
)

__all__ = [
    "EAGLE_KEYS",
    "FORMATS",
    "LAYER_ROLES",
    "STATED_CONVENTIONS",
    "TRAINED_CONVENTION",
    "Convention",
    "DraftFormat",
    "DraftModel",
    "FormatSpec",
    "NormOutputMeaning",
    "StatedConvention",
    "canonical_draft",
    "detect_format",
    "format_spec",
    "from_hidden_state",
    "ids_convention",
    "is_known_extra",
    "known_roles",
    "layer_config",
    "layer_indices",
    "numbered_layer_name",
    "register",
    "split_layer_name",
    "strip_prefix",
    "to_hidden_state",
]
