"""`recipecli inspect` on the full-size sparse checkpoint of EVERY fixture config.

Expected values were read by hand from each fixture's config.json (text config for wrappers;
``transformer_layer_config`` for speculators templates). ModelOpt templates carry nulls that the
exporter fills from the base model: they are filled here with Llama-3.1-8B's values (H 4096,
32 / 8 heads, I 14336, V 128256, Vd 32000), as an export of a Llama-3.1-8B draft would be.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers.fixtures import load_fixture_config

from recipecli.testing.builder import write_checkpoint
from recipecli.testing.specs import draft_specs, valid_vocab_map

# name -> (hidden, layers, heads, kv heads, vocab, wrapper)
TARGETS = {
    "meta-llama__Meta-Llama-3.1-8B": (4096, 32, 32, 8, 128256, None),
    "meta-llama__Meta-Llama-3.1-70B": (8192, 80, 64, 8, 128256, None),
    "Qwen__Qwen3-8B": (4096, 36, 32, 8, 151936, None),
    "Qwen__Qwen3-30B-A3B": (2048, 48, 32, 4, 151936, None),
    "Qwen__Qwen3-VL-30B-A3B-Instruct": (2048, 48, 32, 4, 151936, "text_config"),
    "openai__gpt-oss-120b": (2880, 36, 64, 8, 201088, None),
    "deepseek-ai__DeepSeek-V3": (7168, 61, 128, 128, 129280, None),
    "MiniMaxAI__MiniMax-M3": (6144, 60, 64, 4, 200064, None),
    "nvidia__MiniMax-M3-NVFP4": (6144, 60, 64, 4, 200064, "text_config"),
}

LLAMA8B_FILL = {
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "num_hidden_layers": 1,
    "rms_norm_eps": 1e-5,
    "max_position_embeddings": 131072,
    "head_dim": 128,
    "torch_dtype": "bfloat16",
}

# name -> (format, hidden, Vd, k, aux ids, draft is EAGLE3)
DRAFTS = {
    "SafeAILab__EAGLE3-traineagle3-config": ("A", 4096, 32000, 3, None),
    "sgl-project-SpecForge-template__llama3-8B-eagle3": ("B", 4096, 32000, 3, None),
    "sgl-project-SpecForge-template__qwen3-8b-eagle3": ("B", 4096, 32000, 3, None),
    "sgl-project-SpecForge-template__qwen3-30B-A3B-eagle3": ("B", 2048, 32000, 3, None),
    "sgl-project-SpecForge-template__qwen3-30B-A3B-eagle3.1": ("B", 2048, 32000, 3, None),
    "sgl-project-SpecForge-template__gpt-oss-120B-eagle3": ("B", 2880, 32000, 3, [1, 17, 33]),
    "sgl-project-SpecForge-template__deepseek-v3-671b-eagle3": ("B", 7168, 32000, 3, [1, 29, 57]),
    "nvidia-modelopt-template__LlamaForCausalLMEagle3-export": ("C", 4096, 32000, 3, [1, 15, 28]),
    "nvidia-modelopt-template__vllm-Eagle3Speculator": ("D", 4096, 32000, 3, [2, 16, 29]),
}


def inspect_json(path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "recipecli", "inspect", str(path), "--json"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_inspect_every_fixture_target(full_size_target, name):
    H, L, nh, nkv, V, wrapper = TARGETS[name]
    s = inspect_json(full_size_target(name))
    assert (s["hidden_size"], s["num_hidden_layers"], s["num_attention_heads"]) == (H, L, nh)
    assert (s["num_key_value_heads"], s["vocab_size"], s["wrapper"]) == (nkv, V, wrapper)
    assert s["draft"] is None and s["num_shards"] == 7
    assert len(s["tensors"]) == s["num_tensors"]


def _filled(name: str) -> dict:
    cfg = load_fixture_config(name)
    if name.startswith("nvidia-modelopt-template__LlamaForCausalLMEagle3"):
        cfg = {k: (LLAMA8B_FILL.get(k) if v is None else v) for k, v in cfg.items()}
        cfg["draft_vocab_size"] = 32000
        cfg["eagle_config"] = {
            **cfg["eagle_config"],
            "eagle_aux_hidden_state_layer_ids": [1, 15, 28],
        }
    elif name.startswith("nvidia-modelopt-template__vllm"):
        layer = {
            k: (LLAMA8B_FILL.get(k) if v is None else v)
            for k, v in cfg["transformer_layer_config"].items()
        }
        layer["model_type"] = "llama"
        cfg = {
            **cfg,
            "transformer_layer_config": layer,
            "draft_vocab_size": 32000,
            "target_hidden_size": 4096,
        }
        cfg["eagle_aux_hidden_state_layer_ids"] = [2, 16, 29]
        cfg["torch_dtype"] = "bfloat16"
    return cfg


@pytest.mark.parametrize("name", sorted(DRAFTS))
def test_inspect_every_fixture_draft(tmp_path, name):
    fmt, H, Vd, k, ids = DRAFTS[name]
    cfg = _filled(name)
    V = (cfg.get("transformer_layer_config") or cfg)["vocab_size"]
    d2t, t2d = valid_vocab_map(V, Vd, seed=0)
    naming = "layers.0" if fmt == "D" else "midlayer"
    fc_norm = bool(cfg.get("fc_norm"))
    write_checkpoint(
        tmp_path, cfg, draft_specs(cfg, naming=naming, d2t=d2t, t2d=t2d, fc_norm=fc_norm)
    )
    s = inspect_json(tmp_path)
    d = s["draft"]
    assert d is not None, name
    assert (d["format"], s["hidden_size"], d["draft_vocab_size"], d["k"]) == (fmt, H, Vd, k)
    assert d["aux_layer_ids"] == ids
    assert (d["lm_head"], d["d2t"], d["t2d"], d["embed_tokens"]) == (True, True, True, False)
    assert d["fc_norm"] is fc_norm


def test_inspect_eagle1_draft_is_not_eagle3(tmp_path):
    # yuhuili/EAGLE-LLaMA3-Instruct-8B is EAGLE-1: LlamaForCausalLM, no draft_vocab_size.
    cfg = load_fixture_config("yuhuili__EAGLE-LLaMA3-Instruct-8B")
    write_checkpoint(tmp_path, cfg, draft_specs(cfg, k=2))
    s = inspect_json(tmp_path)
    assert s["draft"] is None and s["hidden_size"] == 4096
