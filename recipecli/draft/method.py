"""Which speculative method a draft checkpoint is for, and what the non-EAGLE3 methods' draft
configs say (issue #27).

Detection reads the draft's config and tensor table only (no values), in this order:

1. DFlash: an architecture naming ``DFlash`` or a ``dflash_config`` (z-lab DFlash drafts:
   ``DFlashDraftModel``; vLLM ``SpeculativeConfig.__post_init__`` detects ``dflash`` from the
   name and ``MuseGlimmerAssistantModel``).
2. DSpark: an architecture naming ``DSpark`` (``Qwen3DSparkModel``, ``DSparkDraftModel`` …) or
   ``dspark_*`` keys.
3. EAGLE-1: an ``fc`` whose input is twice the hidden size (the token embedding and one target
   hidden state: vLLM ``model_executor/models/llama_eagle.py`` ``LlamaModel.__init__`` builds
   ``fc`` with ``input_size=hidden_size * 2``; SGLang ``srt/models/llama_eagle.py`` likewise),
   where an EAGLE3 ``fc`` takes ``k`` (3 by default) target hidden states, ``k * Ht``.
4. EAGLE3: recipecli's draft formats (:func:`recipecli.draft.canonical_draft`).

Anything else is left undetected (``None``): ``check`` then behaves as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from recipecli.checkpoint.model import Checkpoint
from recipecli.draft.model import DraftModel


@dataclass(frozen=True)
class MethodDraft:
    """A draft as the method rules read it.

    Attributes:
        method: ``eagle`` / ``eagle3`` / ``dflash`` / ``dspark``, or None when undetected.
        reason: what decided it (``architectures ['DFlashDraftModel']``, ``fc.weight [H, 2H]``).
        H: draft ``hidden_size``; fc_in: the ``fc`` weight's input width (None without ``fc``).
        vocab_size / draft_vocab_size: the draft's vocab rows (``draft_vocab_size`` None = V).
        target_layer_ids: DFlash ``dflash_config.target_layer_ids`` (else top-level
            ``target_layer_ids``) / DSpark ``dspark_target_layer_ids``; None when absent.
        block_size: ``block_size`` (DFlash) or ``dspark_block_size``; None when absent.
        mask_token_id: DFlash ``dflash_config.mask_token_id`` (else top-level); DSpark
            ``noise_token_id``/``mask_token_id``; None when absent.
        aux_ids: EAGLE3 aux ids as written (None when absent); fc_norm / norm_before_fc /
            norm_output: the Eagle 3.1 keys as written (None when absent).
    """

    method: str | None
    reason: str
    H: int | None
    fc_in: int | None
    vocab_size: int | None
    draft_vocab_size: int | None
    target_layer_ids: tuple[int, ...] | None
    block_size: int | None
    mask_token_id: int | None
    aux_ids: tuple[int, ...] | None
    fc_norm: bool | None
    norm_before_fc: bool | None
    norm_output: bool | None


def _ints(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, list | tuple) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        return tuple(value)
    return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _flag(cfg: Mapping[str, Any], key: str) -> bool | None:
    for where in (cfg, cfg.get("eagle_config") or {}):
        if isinstance(where, Mapping) and isinstance(where.get(key), bool):
            return bool(where[key])
    return None


def _fc_in(ck: Checkpoint) -> int | None:
    for name in ("fc.weight", "model.fc.weight", "midlayer.fc.weight"):
        info = ck.tensors.get(name)
        if info is not None and len(info.shape) == 2:
            return int(info.shape[1])
    return None


def _detect(
    cfg: Mapping[str, Any], H: int | None, fc_in: int | None, eagle3: bool
) -> tuple[str | None, str]:
    archs = [str(a) for a in cfg.get("architectures") or []]
    if any("DFlash" in a for a in archs) or "dflash_config" in cfg:
        return "dflash", f"architectures {archs}" if archs else "dflash_config"
    if any("DSpark" in a for a in archs) or any(str(k).startswith("dspark_") for k in cfg):
        return "dspark", f"architectures {archs}"
    if H and fc_in == 2 * H:
        return (
            "eagle",
            f"fc.weight takes {fc_in} = 2 x hidden_size {H} (EAGLE-1: embedding + one hidden state)",
        )
    if eagle3:
        return "eagle3", "an EAGLE3 draft format"
    return None, "no method recognised"


def method_draft(ck: Checkpoint, draft: DraftModel) -> MethodDraft:
    """Describe ``ck`` (its canonical EAGLE3 view ``draft``) for the method rules."""
    cfg = ck.config
    raw = cfg.get("dflash_config")
    dflash: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    H = _int(cfg.get("hidden_size")) or draft.H
    fc_in = _fc_in(ck)
    method, reason = _detect(cfg, H, fc_in, draft.is_eagle3)
    ids = _ints(dflash.get("target_layer_ids")) or _ints(cfg.get("dspark_target_layer_ids"))
    ids = ids or _ints(cfg.get("target_layer_ids"))
    mask = _int(dflash.get("mask_token_id"))
    for key in ("mask_token_id", "noise_token_id"):
        mask = mask if mask is not None else _int(cfg.get(key))
    return MethodDraft(
        method=method,
        reason=reason,
        H=H,
        fc_in=fc_in,
        vocab_size=_int(cfg.get("vocab_size")),
        draft_vocab_size=_int(cfg.get("draft_vocab_size")),
        target_layer_ids=ids,
        block_size=_int(cfg.get("block_size")) or _int(cfg.get("dspark_block_size")),
        mask_token_id=mask,
        aux_ids=draft.aux_ids,
        fc_norm=_flag(cfg, "fc_norm"),
        norm_before_fc=_flag(cfg, "norm_before_fc"),
        norm_output=_flag(cfg, "norm_output"),
    )
