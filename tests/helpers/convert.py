"""Builders shared by the convert tests (no tests here).

Drafts are small versions of real public configs (fixtures), with EVERY tensor holding real
random values (no sparse holes), so "bit-identical" comparisons mean something.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from recipecli.testing.builder import TensorSpec, write_checkpoint
from recipecli.testing.specs import draft_specs

#: tiny geometry laid over fixture configs: H 64, 4 heads of 16, 2 KV heads, I 128, V 1000, Vd 100
TINY = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 1000,
}

#: The target's config as ``save_pretrained`` writes it after ``from_pretrained(repo id)``:
#: transformers records the repo id in ``_name_or_path``, which convert writes as the
#: speculators verifier (never the target's local path).
TARGET_REPO = "meta-llama/Llama-3.1-8B-Instruct"
TARGET_CONFIG = {
    "_name_or_path": TARGET_REPO,
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 64,
    "intermediate_size": 256,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "num_hidden_layers": 40,
    "vocab_size": 1000,
    "max_position_embeddings": 2048,
    "torch_dtype": "bfloat16",
}


def filled(specs: list[TensorSpec], seed: int = 0) -> list[TensorSpec]:
    """Give every hole random N(0, 1) values (norms, d2t, t2d keep theirs)."""
    rng = np.random.default_rng(seed)
    out = []
    for s in specs:
        if s.value is None:
            s = TensorSpec(
                s.name, s.dtype, s.shape, rng.standard_normal(s.shape).astype(np.float32)
            )
        out.append(s)
    return out


def tiny(config: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A fixture config with the tiny geometry (and ``extra`` keys) laid over it."""
    cfg = {**config, **TINY, **extra}
    if cfg.get("draft_vocab_size") is not None:
        cfg["draft_vocab_size"] = extra.get("draft_vocab_size", 100)
    if "head_dim" in config:
        cfg["head_dim"] = 16
    return cfg


def write_draft(
    root: Path, config: dict[str, Any], *, seed: int = 0, num_shards: int = 1, **kw
) -> Path:
    """Write ``config`` + fully valued draft tensors (``draft_specs`` keywords in ``kw``)."""
    write_checkpoint(root, config, filled(draft_specs(config, **kw), seed), num_shards=num_shards)
    return root


def write_target(root: Path, config: dict[str, Any] | None = None) -> Path:
    """A target given as a bare config.json file (no weights): enough for verifier and check."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / "config.json"
    path.write_text(json.dumps(config or TARGET_CONFIG))
    return path


def raw_tensors(root: Path) -> dict[str, tuple[str, tuple[int, ...], bytes]]:
    """name -> (dtype, shape, raw bytes) of every tensor of a checkpoint directory."""
    from recipecli.checkpoint import open_checkpoint

    ck = open_checkpoint(str(root))
    return {n: (t.dtype, tuple(t.shape), ck.read_raw_bytes(n)) for n, t in ck.tensors.items()}


def config_of(root: Path) -> dict[str, Any]:
    return json.loads((root / "config.json").read_text())
