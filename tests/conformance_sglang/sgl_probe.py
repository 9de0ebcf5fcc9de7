"""SGLang 0.5.23's own answers for a draft/target pair, from its code (conformance env only).

- :func:`vocab_rows_per_rank`: ``VocabParallelEmbedding.__init__``
  (layers/vocab_parallel_embedding.py) built on the meta device, with the TP group its
  ``get_parallel()`` would return replaced by ``(rank 0, size tp)``; the rows one rank holds are
  its ``num_embeddings_per_partition``.
- :func:`draft_model_config`: ``ModelConfig(draft, is_draft_model=True, context_length=...)``
  (configs/model_config.py): the draft architecture after ``_config_draft_model`` and the
  context length ``_derive_context_length`` settles on, or its ``ValueError``.
- :func:`target_context_length`: ``get_context_length(get_hf_text_config(get_config(target)))``
  (utils/hf_transformers), the length ``ModelConfig`` derives for the target when none is given.
- :func:`aux_layers`: the ids ``_resolve_eagle_aux_hidden_state``
  (model_executor/model_runner_components/spec_aux_hidden_state.py) reads, only
  ``eagle_config["eagle_aux_hidden_state_layer_ids"]`` of the draft config (any exception ->
  ``None``), handed to the target class's own ``set_eagle3_layers_to_capture`` (the class its
  module's ``EntryClass`` exports for the target's architecture) on a stand-in object that holds
  what the method reads (``pp_group.is_last_rank``, ``config.num_hidden_layers``, ``model``).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import types
from pathlib import Path
from typing import Any

#: target architecture -> the sglang.srt.models module defining it (models/<name>.py)
TARGET_MODULES = {
    "LlamaForCausalLM": "llama",
    "Qwen3ForCausalLM": "qwen3",
    "Qwen3MoeForCausalLM": "qwen3_moe",
    "GptOssForCausalLM": "gpt_oss",
    "DeepseekV3ForCausalLM": "deepseek_v2",
}


def vocab_rows_per_rank(vocab: int, hidden: int, tp: int) -> int:
    """Rows of the embedding one TP rank holds in SGLang (padding included)."""
    import sglang.srt.layers.vocab_parallel_embedding as vpe
    import torch

    saved = vpe.get_parallel, vpe._resolve_linear_group
    vpe.get_parallel = lambda: types.SimpleNamespace(
        tp_rank=0, tp_size=tp, attn_tp_rank=0, attn_tp_size=tp
    )
    vpe._resolve_linear_group = lambda name: None
    try:
        with torch.device("meta"):
            emb = vpe.VocabParallelEmbedding(vocab, hidden)
    finally:
        vpe.get_parallel, vpe._resolve_linear_group = saved
    assert tuple(emb.weight.shape) == (emb.num_embeddings_per_partition, hidden)
    return int(emb.num_embeddings_per_partition)


def target_context_length(target: Path) -> int:
    from sglang.srt.utils.hf_transformers import get_config, get_context_length, get_hf_text_config

    return int(
        get_context_length(get_hf_text_config(get_config(str(target), trust_remote_code=False)))
    )


def draft_model_config(draft: Path, context_length: int | None) -> dict[str, Any]:
    """``{"architecture", "context_len", "error"}`` of SGLang's draft ModelConfig."""
    from sglang.srt.configs.model_config import ModelConfig

    try:
        with contextlib.redirect_stderr(io.StringIO()):
            mc = ModelConfig(
                str(draft),
                trust_remote_code=False,
                context_length=context_length,
                is_draft_model=True,
                speculative_algorithm="EAGLE3",
            )
    except Exception as exc:
        return {
            "architecture": None,
            "context_len": None,
            "error": f"{type(exc).__name__}: {exc}",
            "config": None,
        }
    return {
        "architecture": mc.hf_config.architectures[0],
        "context_len": int(mc.context_len),
        "error": None,
        "config": mc.hf_config,
    }


def draft_aux_ids(hf_config: Any) -> list[int] | None:
    """The ids SGLang reads from the draft (spec_aux_hidden_state.py, see the module doc)."""
    try:
        return list(getattr(hf_config, "eagle_config", None)["eagle_aux_hidden_state_layer_ids"])
    except Exception:
        return None


def aux_layers(target_arch: str, num_layers: int, ids: list[int] | None) -> list[int]:
    """What ``set_eagle3_layers_to_capture(ids)`` of the target class leaves in
    ``model.layers_to_capture``, sorted and unique (the layer loop visits each index once)."""
    module = importlib.import_module(f"sglang.srt.models.{TARGET_MODULES[target_arch]}")
    entry = module.EntryClass if isinstance(module.EntryClass, list) else [module.EntryClass]
    cls = getattr(module, target_arch)
    assert cls in entry, f"{target_arch} is not exported by models/{module.__name__}.py EntryClass"
    inner = types.SimpleNamespace(layers=[types.SimpleNamespace() for _ in range(num_layers)])
    inner_cls = getattr(module, target_arch.replace("ForCausalLM", "Model"), None)
    if inner_cls is not None and hasattr(inner_cls, "set_eagle3_layers_to_capture"):
        inner.set_eagle3_layers_to_capture = types.MethodType(
            inner_cls.set_eagle3_layers_to_capture, inner
        )
    stub = types.SimpleNamespace(
        pp_group=types.SimpleNamespace(is_last_rank=True),
        config=types.SimpleNamespace(num_hidden_layers=num_layers),
        model=inner,
    )
    cls.set_eagle3_layers_to_capture(stub, ids)
    return sorted(set(inner.layers_to_capture))
