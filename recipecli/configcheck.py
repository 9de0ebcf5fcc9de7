"""Validation of the numbers recipecli reads from a ``config.json`` (one clear error naming the file)."""

from __future__ import annotations

from typing import Any

from recipecli.checkpoint.model import Checkpoint
from recipecli.errors import CheckpointFormatError

#: config keys recipecli reads as numbers: positive integers, except ``rms_norm_eps`` (a positive float)
FLOAT_KEYS = frozenset({"rms_norm_eps"})


def config_file(ck: Checkpoint) -> str:
    """Where a checkpoint's config lives, for error messages."""
    if ck.kind in ("local", "hf-cache") and ck.root:
        return f"{ck.root.rstrip('/')}/config.json"
    return ck.root or ck.source


def checked_value(key: str, value: Any, where: str) -> Any:
    """Validate a geometry value read from a config: a positive int (a positive number for eps).

    Raises:
        CheckpointFormatError: naming the config file and key.
    """
    leaf = key.rsplit(".", 1)[-1]
    if leaf in FLOAT_KEYS:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise CheckpointFormatError(
                f"{key} must be a positive number, got {value!r}", path=where
            )
        return float(value)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise CheckpointFormatError(f"{key} must be a positive integer, got {value!r}", path=where)
    return value


#: text-config keys validated by :func:`validate_text_geometry`
TEXT_GEOMETRY_KEYS = (
    "hidden_size",
    "vocab_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "max_position_embeddings",
    "rms_norm_eps",
)


def validate_text_geometry(ck: Checkpoint) -> None:
    """Check the geometry keys of the TEXT config (when present) are positive numbers.

    Raises:
        CheckpointFormatError: naming the config file and the (dotted) key.
    """
    text = ck.text
    base = f"{text.path_str}." if text.path_str else ""
    where = config_file(ck)
    for key in TEXT_GEOMETRY_KEYS:
        if text.config.get(key) is not None:
            checked_value(base + key, text.config[key], where)
