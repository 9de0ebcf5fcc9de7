"""Find the TEXT model config inside a (possibly wrapped) HF config.

Multimodal and VL targets keep the language model under a wrapper key (vLLM get_hf_text_config, tokenspeed get_hf_text_config; docs/engines/vllm.md#target-config):
``text_config`` (MiniMax-M3-VL, Qwen3-VL), ``thinker_config.text_config`` (Qwen-Omni),
``llm_config`` (InternVL), ``language_config`` (DeepSeek-VL). H, V and L must come from the text
config, and its tensors carry a name prefix (``language_model.model.`` …).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# (path to the text config, tensor-name prefix of the language model's decoder)
WRAPPER_PATHS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("thinker_config", "text_config"), "thinker.model."),
    (("text_config",), "language_model.model."),
    (("llm_config",), "language_model.model."),
    (("language_config",), "language_model.model."),
)


@dataclass(frozen=True)
class TextConfig:
    """The resolved text-model config of a checkpoint.

    Attributes:
        config: the text model's config mapping (the whole config when not wrapped).
        path: keys leading from the top-level config to it; ``()`` when not wrapped.
        tensor_prefix: prefix of decoder tensor names implied by the wrapper (``""`` when flat),
            e.g. ``language_model.model.`` so the embedding is
            ``language_model.model.embed_tokens.weight``.
    """

    config: Mapping[str, Any]
    path: tuple[str, ...] = ()
    tensor_prefix: str = ""

    @property
    def wrapped(self) -> bool:
        return bool(self.path)

    @property
    def path_str(self) -> str:
        return ".".join(self.path)


def _get(config: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = config
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def resolve_text_config(config: Mapping[str, Any]) -> TextConfig:
    """Return the text config of ``config``, unwrapping the known wrapper keys.

    A wrapper only counts when its value is a mapping that looks like a decoder config
    (has ``hidden_size`` or ``vocab_size``); otherwise the top-level config is the text config.

    Args:
        config: a parsed ``config.json``.

    Returns:
        :class:`TextConfig` with the unwrapped mapping, its key path and tensor-name prefix.
    """
    for path, prefix in WRAPPER_PATHS:
        node = _get(config, path)
        if isinstance(node, Mapping) and ("hidden_size" in node or "vocab_size" in node):
            return TextConfig(config=node, path=path, tensor_prefix=prefix)
    return TextConfig(config=config, path=(), tensor_prefix="")
