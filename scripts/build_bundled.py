"""Build the bundled metadata snapshots of every bundled recipe's target and draft.

    python scripts/build_bundled.py [--fixtures tests/fixtures/configs]

Writes ``recipecli/data/targets/<org>__<name>.snapshot.json.gz`` and
``recipecli/data/drafts/<org>__<name>.snapshot.json.gz``: recipecli snapshots (version 1, as
``recipecli inspect --save-metadata`` writes them, gzip-compressed, no weights) with three more
keys: ``bundled_kind`` (target | draft), ``config_from`` (where the config.json text comes from)
and ``tensors_from`` (``header``: a real safetensors header; ``config-derived``: built from the
config with :func:`recipecli.testing.specs.target_specs` / ``draft_specs``, as
``scripts/build_examples.py`` builds the bundled example pair).

Targets: the bundled target configs of ``recipecli/data/targets/<org>__<name>.json`` (each names
its public source in ``note``). Drafts: no public copy of the three drafts' Hub config.json is
in any code index this project can read, so each is the public trainer template of its format
filled from its target's config the way that trainer's export fills it (the snapshot's
``config_from`` says which). Meta-Llama-3.1-8B-Instruct and yuhuili/EAGLE3-LLaMA3.1-Instruct-8B
ship as the example pair (``scripts/build_examples.py``).
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from recipecli.checkpoint.snapshot import SNAPSHOT_KEY, SNAPSHOT_VERSION
from recipecli.testing.builder import TensorSpec, encode_values
from recipecli.testing.specs import draft_specs, target_specs, valid_vocab_map

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "recipecli" / "data"
SHARD = "model.safetensors"

#: geometry a trainer template takes from the target's (text) config at export
GEOMETRY = (
    "hidden_size",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "intermediate_size",
    "vocab_size",
    "rms_norm_eps",
    "rope_theta",
    "max_position_embeddings",
    "hidden_act",
)


def _text(config: Mapping[str, Any]) -> dict[str, Any]:
    return dict(config.get("text_config") or config)


def _fixture(fx: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((fx / name / "config.json").read_text())
    return data


def _target_config(repo: str) -> dict[str, Any]:
    path = DATA / "targets" / (repo.replace("/", "__") + ".json")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def gpt_oss_v2(fx: Path) -> tuple[dict[str, Any], list[TensorSpec], str]:
    """nvidia/gpt-oss-120b-Eagle3-v2: ModelOpt's export template (format C) with its nulls
    filled from openai/gpt-oss-120b (export_spec_ckpt_config fills them from the base model),
    one layer, and ``eagle_config.use_aux_hidden_state`` false: vLLM 0.33.0 names this draft
    as one that feeds the last layer's output, not aux states
    (v1/spec_decode/llm_base_proposer.py _get_eagle3_use_aux_hidden_state_from_config), so no
    ``fc``."""
    target = _target_config("openai/gpt-oss-120b")["config"]
    cfg = _fixture(fx, "nvidia-modelopt-template__LlamaForCausalLMEagle3-export")
    for key, value in list(cfg.items()):
        if value is None and key in target:
            cfg[key] = target[key]
    cfg.update(num_hidden_layers=1, draft_vocab_size=target["vocab_size"], torch_dtype="bfloat16")
    # the draft's own layer: no biases (as tests/conformance/pairs.py fills this template)
    cfg.update(attention_bias=False, mlp_bias=False, attention_dropout=0.0, pretraining_tp=1)
    cfg["eagle_config"] = {"use_aux_hidden_state": False, "next_layer_regular": True}
    cfg = {k: v for k, v in cfg.items() if v is not None}
    specs = [s for s in draft_specs(cfg) if s.name != "fc.weight"]
    note = (
        "config: NVIDIA Model-Optimizer's LlamaForCausalLMEagle3 export template "
        "(tests/fixtures/configs/nvidia-modelopt-template__LlamaForCausalLMEagle3-export) filled "
        "from openai/gpt-oss-120b's config; use_aux_hidden_state false per vLLM 0.33.0 "
        "llm_base_proposer.py; the Hub config.json itself was not available"
    )
    return cfg, specs, note


def qwen3_speculator(fx: Path) -> tuple[dict[str, Any], list[TensorSpec], str]:
    """RedHatAI/Qwen3-30B-A3B-speculator.eagle3: the speculators Eagle3Speculator template
    (format D, ``norm_before_residual`` true) with ``transformer_layer_config`` filled from
    Qwen/Qwen3-30B-A3B, one Llama layer, verifier Qwen/Qwen3-30B-A3B, draft vocabulary 32000
    with a valid synthetic d2t/t2d map (seed 0)."""
    target = _target_config("Qwen/Qwen3-30B-A3B")["config"]
    cfg = _fixture(fx, "nvidia-modelopt-template__vllm-Eagle3Speculator")
    layer = cfg["transformer_layer_config"]
    for key in list(layer):
        if layer[key] is None and key in target:
            layer[key] = target[key]
    layer.update(num_hidden_layers=1, model_type="llama", mlp_bias=False, pretraining_tp=1)
    cfg["transformer_layer_config"] = {k: v for k, v in layer.items() if v is not None}
    cfg.update(
        draft_vocab_size=32000,
        target_hidden_size=target["hidden_size"],
        torch_dtype="bfloat16",
        transformers_version=target.get("transformers_version"),
    )
    cfg["speculators_config"]["verifier"] = {
        "architectures": target["architectures"],
        "name_or_path": "Qwen/Qwen3-30B-A3B",
    }
    d2t, t2d = valid_vocab_map(target["vocab_size"], 32000, seed=0)
    specs = draft_specs(cfg, naming="layers.0", d2t=d2t, t2d=t2d)
    note = (
        "config: the speculators Eagle3Speculator template (tests/fixtures/configs/"
        "nvidia-modelopt-template__vllm-Eagle3Speculator) filled from Qwen/Qwen3-30B-A3B's "
        "config; synthetic valid d2t/t2d (Vd 32000); the Hub config.json itself was not available"
    )
    return cfg, specs, note


def minimax_eagle3(fx: Path) -> tuple[dict[str, Any], list[TensorSpec], str]:
    """Inferact/MiniMax-M3-EAGLE3: SpecForge's one-layer LlamaForCausalLMEagle3 template
    (format B) with the target's text geometry, attention heads as many as query heads (an MHA
    head: the -GQA sibling exists for GQA), and Eagle 3.1's per-aux ``fc_norm`` (tokenspeed PR
    #751 added fc_norm/norm_output for this checkpoint); draft vocabulary 32000 with a valid
    synthetic d2t/t2d map (seed 0)."""
    text = _text(_target_config("nvidia/MiniMax-M3-NVFP4")["config"])
    cfg = _fixture(fx, "sgl-project-SpecForge-template__llama3-8B-eagle3")
    cfg.update({k: text[k] for k in GEOMETRY if k in text})
    cfg.update(
        num_key_value_heads=text["num_attention_heads"],
        torch_dtype="bfloat16",
        norm_output=True,
        eos_token_id=None,
        bos_token_id=None,
    )
    cfg = {k: v for k, v in cfg.items() if v is not None}
    d2t, t2d = valid_vocab_map(text["vocab_size"], 32000, seed=0)
    specs = draft_specs(cfg, d2t=d2t, t2d=t2d, fc_norm=True)
    note = (
        "config: SpecForge's llama3-8B-eagle3 template (tests/fixtures/configs/"
        "sgl-project-SpecForge-template__llama3-8B-eagle3) with nvidia/MiniMax-M3-NVFP4's text "
        "geometry, MHA, Eagle 3.1 fc_norm/norm_output (lightseekorg/tokenspeed PR #751); "
        "synthetic valid d2t/t2d (Vd 32000); the Hub config.json itself was not available"
    )
    return cfg, specs, note


#: draft repo id -> builder
DRAFTS: dict[str, Callable[[Path], tuple[dict[str, Any], list[TensorSpec], str]]] = {
    "nvidia/gpt-oss-120b-Eagle3-v2": gpt_oss_v2,
    "RedHatAI/Qwen3-30B-A3B-speculator.eagle3": qwen3_speculator,
    "Inferact/MiniMax-M3-EAGLE3": minimax_eagle3,
}
#: bundled targets with a table built here (the Llama target is the example's)
TARGETS = (
    "openai/gpt-oss-120b",
    "Qwen/Qwen3-30B-A3B",
    "nvidia/MiniMax-M3-NVFP4",
    "amd/MiniMax-M3-MXFP4",
)


def snapshot(
    repo: str, kind: str, config: Mapping[str, Any], specs: list[TensorSpec], config_from: str
) -> dict[str, Any]:
    """A version-1 snapshot of ``specs`` (values kept for tensors that carry them)."""
    tensors = {
        s.name: {"dtype": s.dtype, "shape": list(s.shape), "bytes": s.nbytes, "shard": SHARD}
        for s in specs
    }
    values = {
        s.name: base64.b64encode(encode_values(s.value, s.dtype, s.shape)).decode("ascii")
        for s in specs
        if s.value is not None
    }
    return {
        SNAPSHOT_KEY: SNAPSHOT_VERSION,
        "source": repo,
        "revision": None,
        "kind": "bundled",
        "bundled_kind": kind,
        "config_from": config_from,
        "tensors_from": "config-derived",
        "weight_format": "safetensors",
        "shards": [SHARD],
        "config": dict(config),
        "tensors": tensors,
        "values": values,
        "note": f"bundled {kind} snapshot built by scripts/build_bundled.py; weights are not "
        f"included; tensor table derived from the config; {config_from}",
    }


def write(path: Path, snap: dict[str, Any]) -> None:
    raw = json.dumps(snap, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(raw, compresslevel=9, mtime=0))
    print(
        f"wrote {path.relative_to(ROOT)} ({path.stat().st_size} bytes, {len(snap['tensors'])} "
        "tensors)"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixtures", default=str(ROOT / "tests" / "fixtures" / "configs"))
    fx = Path(ap.parse_args().fixtures)
    for repo in TARGETS:
        data = _target_config(repo)
        cfg = data["config"]
        config_from = "config: " + str(data.get("note") or "recipecli/data/targets")
        out = DATA / "targets" / (repo.replace("/", "__") + ".snapshot.json.gz")
        write(out, snapshot(repo, "target", cfg, target_specs(cfg), config_from))
    for repo, build in DRAFTS.items():
        cfg, specs, config_from = build(fx)
        out = DATA / "drafts" / (repo.replace("/", "__") + ".snapshot.json.gz")
        write(out, snapshot(repo, "draft", cfg, specs, config_from))


if __name__ == "__main__":
    main()
