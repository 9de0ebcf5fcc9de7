"""Tiny checkpoints for the method tests (issue #27): MTP targets, EAGLE-1 heads, DFlash drafts.

Geometry is the base pair's (tests/helpers/pairs.py): H = 64, V = 640, L = 8 unless a case says.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recipecli.checkpoint import open_checkpoint
from recipecli.checkpoint.model import Checkpoint
from recipecli.testing.builder import TensorSpec, write_checkpoint
from tests.helpers.pairs import H, V, minimal_target_specs, target_config

#: the tensors of one DeepSeek MTP layer at index ``i`` (vLLM deepseek_mtp.py
#: DeepSeekMultiTokenPredictorLayer: enorm, hnorm, eh_proj [H, 2H], shared_head.norm)
MTP_LAYER_PARTS = (
    ("enorm.weight", (H,)),
    ("hnorm.weight", (H,)),
    ("eh_proj.weight", (H, 2 * H)),
    ("shared_head.norm.weight", (H,)),
    ("self_attn.o_proj.weight", (H, H)),
)


def mtp_target(
    root: Path,
    *,
    model_type: str = "deepseek_v3",
    arch: str = "DeepseekV3ForCausalLM",
    L: int = 2,
    declared: dict[str, Any] | None = None,
    tensor_layers: tuple[int, ...] = (0,),
    prefix: str = "layers",
) -> Checkpoint:
    """A target whose config declares ``declared`` (default ``num_nextn_predict_layers: 1``) and
    whose index has MTP tensors for ``tensor_layers``: ``model.layers.{L + i}.*`` (DeepSeek) or
    ``mtp.layers.{i}.*`` (``prefix="mtp"``, Qwen3-Next)."""
    cfg = target_config(L=L, model_type=model_type, architectures=[arch])
    cfg.update({"num_nextn_predict_layers": 1} if declared is None else declared)
    specs = minimal_target_specs(cfg)
    for i in tensor_layers:
        base = f"model.layers.{L + i}." if prefix == "layers" else f"mtp.layers.{i}."
        specs += [TensorSpec(base + n, "BF16", s) for n, s in MTP_LAYER_PARTS]
    return open_checkpoint(str(write_checkpoint(root / "target", cfg, specs)))


def llama_target(root: Path) -> Checkpoint:
    cfg = target_config()
    return open_checkpoint(str(write_checkpoint(root / "target", cfg, minimal_target_specs(cfg))))


def eagle1_head(root: Path, **extra: Any) -> Checkpoint:
    """An EAGLE-1 head as yuhuili/EAGLE-LLaMA3-Instruct-8B ships it: a Llama config, ``fc``
    [H, 2H] (vLLM llama_eagle.py LlamaModel.__init__: input_size = hidden_size * 2), one layer
    ``layers.0.*``, no d2t/t2d, no draft_vocab_size."""
    cfg = target_config(L=1, **extra)
    specs = [
        TensorSpec("fc.weight", "BF16", (H, 2 * H)),
        TensorSpec("layers.0.self_attn.q_proj.weight", "BF16", (H, H)),
        TensorSpec("layers.0.mlp.down_proj.weight", "BF16", (H, 128)),
        TensorSpec("embed_tokens.weight", "BF16", (V, H)),
    ]
    return open_checkpoint(str(write_checkpoint(root / "eagle1", cfg, specs)))


def dflash_draft(root: Path, **dflash: Any) -> Checkpoint:
    """A z-lab DFlash draft: ``DFlashDraftModel``, ``block_size``, ``dflash_config`` with
    ``target_layer_ids`` and ``mask_token_id`` (defaults: ids [1, 3, 5] of an 8-layer target,
    mask token 600 < V = 640)."""
    cfg = target_config(L=1, architectures=["DFlashDraftModel"], model_type="qwen3")
    cfg["block_size"] = 16
    cfg["dflash_config"] = {"target_layer_ids": [1, 3, 5], "mask_token_id": 600, **dflash}
    specs = [
        TensorSpec("fc.weight", "BF16", (H, 3 * H)),
        TensorSpec("layers.0.self_attn.q_proj.weight", "BF16", (H, H)),
    ]
    return open_checkpoint(str(write_checkpoint(root / "dflash", cfg, specs)))
