"""Checkpoint sources → one typed, immutable checkpoint description.

>>> from recipecli.checkpoint import open_checkpoint
>>> ck = open_checkpoint("meta-llama/Llama-3.1-8B-Instruct")      # doctest: +SKIP
>>> ck.text.config["hidden_size"], ck.tensors["lm_head.weight"].shape  # doctest: +SKIP
"""

from recipecli.checkpoint.model import Checkpoint, TensorInfo, decode_values
from recipecli.checkpoint.resolve import open_checkpoint
from recipecli.checkpoint.safetensors_header import IO_STATS
from recipecli.checkpoint.textconfig import TextConfig, resolve_text_config

__all__ = [
    "IO_STATS",
    "Checkpoint",
    "TensorInfo",
    "TextConfig",
    "decode_values",
    "open_checkpoint",
    "resolve_text_config",
]
