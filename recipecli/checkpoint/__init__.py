"""Checkpoint sources → one typed, immutable checkpoint description.

    >>> from recipecli.checkpoint import open_checkpoint
    >>> ck = open_checkpoint("meta-llama/Llama-3.1-8B-Instruct")      # doctest: +SKIP
    >>> ck.text.config["hidden_size"], ck.tensors["lm_head.weight"].shape  # doctest: +SKIP

Names are imported lazily so that ``recipecli.checkpoint.textconfig`` (used by ``render``) does
not pull in numpy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what the lazy names are, for type checkers
    from recipecli.checkpoint.model import Checkpoint as Checkpoint
    from recipecli.checkpoint.resolve import open_checkpoint as open_checkpoint
    from recipecli.checkpoint.safetensors_format import IO_STATS as IO_STATS

_LAZY = {
    "Checkpoint": "recipecli.checkpoint.model",
    "open_checkpoint": "recipecli.checkpoint.resolve",
    "IO_STATS": "recipecli.checkpoint.safetensors_format",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'recipecli.checkpoint' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
