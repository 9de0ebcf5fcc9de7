"""`recipecli inspect` output: summary values, JSON keys, compact tables, snapshots round trip."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from recipecli.checkpoint import open_checkpoint
from recipecli.inspect import summarize, tensor_table, tensor_table_json
from recipecli.testing.builder import TensorSpec, write_checkpoint

REPO = Path(__file__).resolve().parents[2]


def test_tensor_table_json_equals_the_dict_form_with_awkward_names(tmp_path):
    specs = [
        TensorSpec('we"ird\\name', "F16", (2, 3)),
        TensorSpec("ünïcode.weight", "BF16", (4,), np.ones(4)),
        TensorSpec("scalar", "F32", ()),
    ]
    write_checkpoint(tmp_path, {"architectures": ["X"], "hidden_size": 4}, specs)
    ck = open_checkpoint(str(tmp_path))
    table = json.loads(tensor_table_json(ck))
    assert table == tensor_table(ck)
    assert table["scalar"] == {
        "dtype": "F32",
        "shape": [],
        "bytes": 4,
        "shard": "model.safetensors",
    }
    assert table['we"ird\\name']["bytes"] == 12  # 2 * 3 fp16 elements


def test_summary_of_a_wrapped_target(tmp_path, fixture_config):
    from recipecli.testing.specs import target_specs

    cfg = fixture_config("Qwen__Qwen3-VL-30B-A3B-Instruct")
    write_checkpoint(tmp_path, cfg, target_specs(cfg), num_shards=3)
    s = summarize(open_checkpoint(str(tmp_path)))
    # text model under text_config: hidden 2048, 48 layers, 32 q / 4 kv heads, vocab 151936
    assert (s.wrapper, s.hidden_size, s.num_hidden_layers) == ("text_config", 2048, 48)
    assert (s.num_attention_heads, s.num_key_value_heads, s.vocab_size) == (32, 4, 151936)
    assert s.tensor_prefix == "language_model.model." and s.num_shards == 3
    assert s.draft is None


def test_snapshot_round_trip_keeps_small_values_bit_exact(tmp_path):
    d2t = np.array([0, 3, 3, 7], dtype=np.int64)
    specs = [
        TensorSpec("midlayer.input_layernorm.weight", "BF16", (8,), np.linspace(0.5, 1.5, 8)),
        TensorSpec("d2t", "I64", (4,), d2t),
        TensorSpec("big", "F16", (1024, 1024)),  # 2 MiB: above the 1 MiB snapshot cap
    ]
    write_checkpoint(tmp_path / "ck", {"architectures": ["X"]}, specs)
    snap = tmp_path / "snap.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "recipecli",
            "inspect",
            str(tmp_path / "ck"),
            "--save-metadata",
            str(snap),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    a, b = open_checkpoint(str(tmp_path / "ck")), open_checkpoint(str(snap))
    assert dict(a.tensors) == dict(b.tensors)
    assert b.read_raw_bytes("d2t") == a.read_raw_bytes("d2t")
    assert b.read_raw_bytes("midlayer.input_layernorm.weight") == a.read_raw_bytes(
        "midlayer.input_layernorm.weight"
    )
    assert not b.has_values("big")
    assert list(b.read_tensor("d2t")) == [0, 3, 3, 7]


#: the --json keys of docs/inspect.md's table, in the order the document lists them
JSON_KEYS = [
    "source",
    "kind",
    "revision",
    "architecture",
    "model_type",
    "wrapper",
    "tensor_prefix",
    "text_architecture",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "head_dim_from",
    "vocab_size",
    "config_dtype",
    "tensor_dtypes",
    "quantization",
    "tie_word_embeddings",
    "weight_format",
    "total_parameters",
    "total_bytes",
    "num_tensors",
    "num_shards",
    "draft",
    "tensors",
]
DRAFT_KEYS = (
    "format, format_name, k, aux_layer_ids, aux_ids_where, draft_vocab_size, target_hidden_size, "
    "embed_tokens, lm_head, d2t, t2d, fc_norm, input_norm, norm_before_residual, norm_output, "
    "attention"
).split(", ")


def test_summary_is_a_frozen_result_serialised_in_the_documented_key_order():
    from recipecli.output import to_jsonable

    draft = str(REPO / "recipecli/data/examples/eagle3-llama3.1-instruct-8b.draft.json")
    s = summarize(open_checkpoint(draft))
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.hidden_size = 1
    doc = to_jsonable(s)
    assert list(doc) == JSON_KEYS[:-1] and list(doc["draft"]) == DRAFT_KEYS
    # yuhuili/EAGLE3-LLaMA3.1-Instruct-8B: hidden 4096, 1 layer, Vd 32000, format A (its
    # config.json; no aux ids in it)
    assert (doc["hidden_size"], doc["num_hidden_layers"]) == (4096, 1)
    assert (doc["draft"]["format"], doc["draft"]["draft_vocab_size"]) == ("A", 32000)
    proc = subprocess.run(
        [sys.executable, "-m", "recipecli", "inspect", draft, "--json"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    # the --json envelope (docs/json.md) comes first
    assert list(json.loads(proc.stdout)) == ["schema_version", "ok", *JSON_KEYS]
