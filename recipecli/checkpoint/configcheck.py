"""Validation of the values recipecli reads from a ``config.json`` (one clear error naming the
file).

Lives in the checkpoint package because the readers (:mod:`~recipecli.checkpoint.local`,
:mod:`~recipecli.checkpoint.snapshot`) validate every config they load with it; the draft and
target descriptions use it for the geometry they read.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from recipecli.errors import CheckpointFormatError

if TYPE_CHECKING:
    from recipecli.checkpoint.model import Checkpoint

#: config keys recipecli reads as numbers: positive integers, except ``rms_norm_eps`` (a positive
#: float)
FLOAT_KEYS = frozenset({"rms_norm_eps"})


def config_file(ck: Checkpoint) -> str:
    """Where a checkpoint's config lives, for error messages."""
    if ck.kind in ("local", "hf-cache") and ck.root:
        return f"{ck.root.rstrip('/')}/config.json"
    return ck.root or ck.source


def _short(value: Any, limit: int = 40) -> str:
    """``repr(value)`` cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


#: (key, wanted type, phrase) of the config values every command reads as a given type
_TYPED_KEYS: tuple[tuple[str, type | tuple[type, ...], str], ...] = (
    ("model_type", str, "a string"),
    ("torch_dtype", str, "a string"),
    ("dtype", str, "a string"),
    ("tie_word_embeddings", bool, "true or false"),
    ("quantization_config", dict, "an object"),
)
#: wrapper keys whose value, when present, is the text model's config (see textconfig)
_WRAPPERS = ("text_config", "llm_config", "language_config", "thinker_config")


def _check_typed(config: Mapping[str, Any], prefix: str, where: str) -> None:
    archs = config.get("architectures")
    if archs is not None and (
        not isinstance(archs, list) or not all(isinstance(a, str) for a in archs)
    ):
        raise CheckpointFormatError(
            f'{prefix}architectures must be a list of strings (e.g. ["LlamaForCausalLM"]), '
            f"got {_short(archs)}",
            path=where,
        )
    for key, want, phrase in _TYPED_KEYS:
        value = config.get(key)
        if value is not None and not isinstance(value, want):
            raise CheckpointFormatError(
                f"{prefix}{key} must be {phrase}, got {_short(value)}", path=where
            )


def validate_config_types(config: Mapping[str, Any], where: str) -> None:
    """Check the types of the config values every command reads, before any rule sees them.

    ``architectures`` must be a list of strings (transformers reads ``architectures[0]`` as the
    model class name: a bare string would be read as its first letter), ``model_type`` and the
    dtype keys strings, ``tie_word_embeddings`` a boolean, ``quantization_config`` and the text
    config wrappers (``text_config`` …) objects. Absent keys and nulls pass. The numbers are
    checked where they are read (:func:`checked_value`).

    Raises:
        CheckpointFormatError: naming ``where`` and the (dotted) key.
    """
    _check_typed(config, "", where)
    for key in _WRAPPERS:
        sub = config.get(key)
        if sub is None:
            continue
        if not isinstance(sub, dict):
            raise CheckpointFormatError(f"{key} must be an object, got {_short(sub)}", path=where)
        _check_typed(sub, f"{key}.", where)
        inner = sub.get("text_config")
        if isinstance(inner, dict):
            _check_typed(inner, f"{key}.text_config.", where)


def checked_value(key: str, value: Any, where: str) -> Any:
    """Validate a geometry value read from a config: a positive int (a positive number for eps).

    Raises:
        CheckpointFormatError: naming the config file and key.
    """
    leaf = key.rsplit(".", 1)[-1]
    if leaf in FLOAT_KEYS:
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or not value > 0
        ):
            raise CheckpointFormatError(
                f"{key} must be a positive number, got {_short(value)}", path=where
            )
        return float(value)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise CheckpointFormatError(
            f"{key} must be a positive integer, got {_short(value)}", path=where
        )
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
