"""The target model as the engines see it: text-config geometry and embedding/head tensors."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from recipecli.checkpoint.configcheck import validate_text_geometry
from recipecli.checkpoint.model import Checkpoint

#: Text-model architectures whose token embedding tokenspeed builds REPLICATED (no TP args) since
#: lightseekorg/tokenspeed PR #837 (MiniMaxM3Model.resolve_embed); every other target shards it
#: over attention TP (docs/engines/tokenspeed.md#sharing).
TOKENSPEED_REPLICATED_EMBED_MODEL_TYPES = frozenset({"minimax_m3", "minimax_m3_vl"})
TOKENSPEED_REPLICATED_EMBED_ARCH_PREFIXES = ("MiniMaxM3",)


@dataclass(frozen=True)
class TargetModel:
    """Target geometry from the TEXT config (wrapped targets: docs/engines/vllm.md#target-config).

    Attributes:
        H: text ``hidden_size``; V: text ``vocab_size``; L: ``num_hidden_layers``;
        nh / nkv: attention / KV heads (nkv defaults to nh); tie: ``tie_word_embeddings``.
        wrapper: dotted path of the text config (``text_config``) or ``""``.
        embed_name / lm_head_name: tensor names found for the embedding and head (None if absent).
        tokenspeed_embed_replicated: tokenspeed builds this target's embedding replicated.
    """

    architecture: str
    model_type: str
    H: int | None
    V: int | None
    L: int | None
    nh: int | None
    nkv: int | None
    tie: bool
    max_position_embeddings: int | None
    wrapper: str
    tensor_prefix: str
    embed_name: str | None
    lm_head_name: str | None
    embed_shape: tuple[int, ...] | None
    dtype: str | None
    mla: bool
    tokenspeed_embed_replicated: bool

    def to_dict(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


def _find(names: Mapping[str, Any], candidates: list[str]) -> str | None:
    for c in candidates:
        if c in names:
            return c
    return None


def target_model(ck: Checkpoint) -> TargetModel:
    """Summarise a target checkpoint's text model (works on config-only sources too)."""
    text = ck.text
    tc: Mapping[str, Any] = text.config
    validate_text_geometry(ck)
    arch = str((tc.get("architectures") or ck.config.get("architectures") or [""])[0])
    top_arch = str((ck.config.get("architectures") or [""])[0])
    model_type = str(tc.get("model_type") or ck.config.get("model_type") or "")
    nh = tc.get("num_attention_heads")
    nkv = tc.get("num_key_value_heads", nh)
    prefix = text.tensor_prefix
    embed_name = _find(
        ck.tensors,
        [
            f"{prefix}embed_tokens.weight",
            "model.embed_tokens.weight",
            "language_model.model.embed_tokens.weight",
            "model.language_model.embed_tokens.weight",
        ],
    )
    head_name = _find(
        ck.tensors,
        [
            "lm_head.weight",
            "language_model.lm_head.weight",
            f"{prefix.replace('model.', '')}lm_head.weight",
        ],
    )
    tie = bool(tc.get("tie_word_embeddings", ck.config.get("tie_word_embeddings", False)))
    dtype = (
        tc.get("torch_dtype")
        or tc.get("dtype")
        or ck.config.get("torch_dtype")
        or ck.config.get("dtype")
    )
    replicated = model_type in TOKENSPEED_REPLICATED_EMBED_MODEL_TYPES or any(
        a.startswith(TOKENSPEED_REPLICATED_EMBED_ARCH_PREFIXES) for a in (arch, top_arch)
    )
    return TargetModel(
        architecture=top_arch,
        model_type=model_type,
        H=tc.get("hidden_size"),
        V=tc.get("vocab_size"),
        L=tc.get("num_hidden_layers"),
        nh=nh,
        nkv=nkv,
        tie=tie,
        max_position_embeddings=tc.get("max_position_embeddings"),
        wrapper=text.path_str,
        tensor_prefix=prefix,
        embed_name=embed_name,
        lm_head_name=head_name,
        embed_shape=ck.tensors[embed_name].shape if embed_name else None,
        dtype=str(dtype) if dtype else None,
        mla="kv_lora_rank" in tc,
        tokenspeed_embed_replicated=replicated,
    )
