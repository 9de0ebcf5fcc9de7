"""Tensor names of EAGLE3 drafts: the roles, how each naming spells them, and name parsing.

Two namings exist (docs/check.md#draft-formats): flat ``midlayer.*`` (original EAGLE release,
SpecForge/SGLang, ModelOpt; ``midlayer.{i}.*`` for later layers) and speculators ``layers.{i}.*``;
NeMo puts ``model.`` in front of both. Top-level roles (``fc``, ``norm``, ``lm_head``,
``d2t``/``t2d``, ``embed_tokens``, the Eagle 3.1 ``fc_norm.{i}`` …) keep their names everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

#: layer role -> name below the layer prefix
LAYER_ROLES: Mapping[str, str] = {
    "q_proj": "self_attn.q_proj.weight",
    "k_proj": "self_attn.k_proj.weight",
    "v_proj": "self_attn.v_proj.weight",
    "o_proj": "self_attn.o_proj.weight",
    "q_proj_bias": "self_attn.q_proj.bias",
    "k_proj_bias": "self_attn.k_proj.bias",
    "v_proj_bias": "self_attn.v_proj.bias",
    "gate_proj": "mlp.gate_proj.weight",
    "up_proj": "mlp.up_proj.weight",
    "down_proj": "mlp.down_proj.weight",
    "input_layernorm": "input_layernorm.weight",
    "hidden_norm": "hidden_norm.weight",
    "post_attention_layernorm": "post_attention_layernorm.weight",
}
#: top-level role -> name (below the tensor prefix; ``d2t``/``t2d`` never take one)
TOP_ROLES: Mapping[str, str] = {
    "fc": "fc.weight",
    "fc_bias": "fc.bias",
    "norm": "norm.weight",
    "lm_head": "lm_head.weight",
    "d2t": "d2t",
    "t2d": "t2d",
    "embed_tokens": "embed_tokens.weight",
    "input_norm": "input_norm.weight",
}
#: prefixes of decoder layer 0, in lookup order
LAYER0_PREFIXES: tuple[str, ...] = ("midlayer.", "midlayer.0.", "layers.0.")
#: prefixes in front of every role name except the vocabulary maps (NeMo: ``model.``)
TENSOR_PREFIXES: tuple[str, ...] = ("", "model.")
#: the prefix of a draft whose tensors say nothing (no layer-0 tensor found)
DEFAULT_LAYER_PREFIX = "midlayer."

#: names engines accept beyond the role table (``mask_hidden`` for parallel drafting)
_KNOWN_EXTRA = re.compile(r"^(mask_hidden|.*rotary_emb\.inv_freq)$")
#: a top-level name (without tensor prefix) that keeps its name in every naming
_TOP_NAME = re.compile(
    r"^(fc\.weight|fc\.bias|norm\.weight|lm_head\.weight|d2t|t2d|embed_tokens\.weight|"
    r"input_norm\.weight|fc_norm\.\d+\.weight|mask_hidden)$"
)
#: a layer name (without tensor prefix): ``midlayer.X``, ``midlayer.{i}.X`` or ``layers.{i}.X``
_LAYER_NAME = re.compile(r"^(?:midlayer\.(?:(\d+)\.)?|layers\.(\d+)\.)(.+)$")
#: names below a layer prefix that a conversion carries (the roles and a rotary buffer)
LAYER_SUFFIXES = frozenset(LAYER_ROLES.values()) | {"self_attn.rotary_emb.inv_freq"}


def role_name(role: str, layer_prefix: str, tensor_prefix: str = "") -> str:
    """Tensor name of ``role`` under the given naming (flat ``midlayer.*`` or speculators ``layers.0.*`` naming)."""
    if role in LAYER_ROLES:
        return f"{tensor_prefix}{layer_prefix}{LAYER_ROLES[role]}"
    if role.startswith("fc_norm."):
        return f"{tensor_prefix}{role}.weight"
    if role in ("d2t", "t2d"):
        return TOP_ROLES[role]
    return f"{tensor_prefix}{TOP_ROLES[role]}"


def layer_prefix(names: frozenset[str]) -> tuple[str, str]:
    """(tensor_prefix, layer_prefix) of a draft's tensor names: ``midlayer.``, ``midlayer.0.``
    or ``layers.0.`` (+ ``model.``); ``("", "midlayer.")`` when no layer-0 tensor is found."""
    candidates = [(t, lp) for t in TENSOR_PREFIXES for lp in LAYER0_PREFIXES]
    for tprefix, lp in candidates:  # exact probes first: O(1) each
        if f"{tprefix}{lp}{LAYER_ROLES['input_layernorm']}" in names:
            return tprefix, lp
    for tprefix, lp in candidates:
        if any(n.startswith(f"{tprefix}{lp}self_attn.") for n in names):
            return tprefix, lp
    return "", DEFAULT_LAYER_PREFIX


def role_names(layer_prefix: str, tensor_prefix: str, k: int) -> dict[str, str]:
    """Tensor name -> role for every role of a single-layer draft with ``k`` ``fc_norm`` chunks."""
    roles = list(LAYER_ROLES) + list(TOP_ROLES) + [f"fc_norm.{i}" for i in range(k)]
    return {role_name(r, layer_prefix, tensor_prefix): r for r in roles}


def is_known_extra(name: str) -> bool:
    """Names engines accept beyond the role table (``mask_hidden`` for parallel drafting)."""
    return bool(_KNOWN_EXTRA.match(name))


def strip_prefix(name: str, tensor_prefix: str) -> str:
    """``name`` without the draft's tensor prefix (NeMo ``model.``)."""
    return name[len(tensor_prefix) :] if tensor_prefix and name.startswith(tensor_prefix) else name


def is_top_name(bare: str) -> bool:
    """True for a top-level name (``fc.weight``, ``d2t``, ``fc_norm.2.weight``, ``mask_hidden`` …)
    given without tensor prefix."""
    return bool(_TOP_NAME.match(bare))


def split_layer_name(bare: str) -> tuple[int, str] | None:
    """(layer index, name below the layer prefix) of a layer tensor given without tensor prefix:
    ``midlayer.X`` is layer 0, ``midlayer.{i}.X`` / ``layers.{i}.X`` layer i; None otherwise."""
    m = _LAYER_NAME.match(bare)
    if not m:
        return None
    return int(m.group(1) or m.group(2) or 0), m.group(3)


def layer_indices(names: Iterable[str], tensor_prefix: str) -> set[int]:
    """Decoder layer indices that the tensor ``names`` hold (:func:`split_layer_name`)."""
    out = set()
    for n in names:
        parsed = split_layer_name(strip_prefix(n, tensor_prefix))
        if parsed:
            out.add(parsed[0])
    return out


_NUMBERED_LAYER = re.compile(r"^(?:midlayer|layers)\.(\d+)\.(.+)$")


def numbered_layer_name(bare: str) -> tuple[int, str] | None:
    """(layer index, name below the prefix) of an explicitly numbered layer tensor,
    ``midlayer.{i}.X`` or ``layers.{i}.X``, given without tensor prefix (later layers of
    multi-layer drafts); None otherwise (the flat ``midlayer.X`` included)."""
    m = _NUMBERED_LAYER.match(bare)
    return (int(m.group(1)), m.group(2)) if m else None
