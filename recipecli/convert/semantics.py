"""The format-independent meaning of a draft: what a conversion must preserve, and how two
meanings differ."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recipecli.draft import TRAINED_CONVENTION, DraftModel, to_hidden_state


def draft_semantics(d: DraftModel, *, norm_output_meaning: str | None = None) -> dict[str, Any]:
    """The format-independent meaning of a draft: what a conversion must preserve.

    Names, prefixes, where keys sit and ``norm_output``'s spelling are left out; aux ids are
    expressed as hidden-state indices and ``norm_output`` as two booleans (see the module
    docstring): ``norm_before_head`` and ``post_norm_chaining``.

    Args:
        d: canonical draft.
        norm_output_meaning: override the format's reading of ``norm_output`` (convert writes
            every output in the chaining meaning; ``eagle3`` output detects as format B).

    Returns:
        A flat dict of plain values.
    """
    meaning = norm_output_meaning or d.norm_output_meaning
    if meaning == "norm-before-head":
        chaining, before_head = False, d.norm_output is not False
    else:
        chaining, before_head = bool(d.norm_output), True
    conv = TRAINED_CONVENTION.get(d.format or "")
    if d.aux_ids is None:
        aux: Any = None
    elif conv is None:
        aux = {"unknown-convention": list(d.aux_ids)}
    else:
        aux = list(to_hidden_state(d.aux_ids, conv))
    return {
        "H": d.H,
        "nh": d.nh,
        "nkv": d.nkv,
        "hd": d.hd,
        "I": d.I,
        "layers": d.layers,
        "eps": d.eps,
        "V": d.V,
        "Vd": d.Vd,
        "Ht": d.Ht,
        "k": d.k,
        "attention": d.attention,
        "attention_bias": d.attention_bias,
        "max_position_embeddings": d.max_position_embeddings,
        "aux_hidden_states": aux,
        "fc_norm": d.fc_norm,
        "norm_before_fc": d.norm_before_fc,
        "norm_before_residual": d.norm_before_residual,
        "norm_before_head": before_head,
        "post_norm_chaining": chaining,
        "has_embed": d.has_embed,
        "has_lm_head": d.has_lm_head,
        "has_d2t": d.has_d2t,
        "has_t2d": d.has_t2d,
        "has_fc_bias": d.has_fc_bias,
        "tie_word_embeddings": d.tie_word_embeddings,
        "dtype": d.dtype,
    }


def semantic_diff(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Fields whose values differ between two :func:`draft_semantics` views."""
    return {k: (a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)}
