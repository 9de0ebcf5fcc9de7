"""Resolution order of a repo id (issue #28 item 2 follow-up): a local path, then the user's HF
cache (offline, that exact id), then recipecli's bundled snapshot, then the Hub; the output
says which one was used.

The HF cache is laid out as huggingface_hub lays it out (blobs, snapshot symlinks, refs/main),
holding a tiny Llama whose hidden size (64) differs from the bundled snapshot's (4096, the
published config.json of meta-llama/Llama-3.1-8B-Instruct), so the output shows which was read.
No network: HF_HUB_OFFLINE=1.
"""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

from tests.inspect.test_bundled import run

REPO_ID = "meta-llama/Llama-3.1-8B-Instruct"
SHA = "d" * 40
TINY = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 64,
    "num_hidden_layers": 1,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "intermediate_size": 128,
    "vocab_size": 32,
    "torch_dtype": "bfloat16",
}


def _safetensors_bytes() -> bytes:
    """One BF16 [32, 64] lm_head: 32 * 64 * 2 = 4096 bytes of data after the header."""
    header = {"lm_head.weight": {"dtype": "BF16", "shape": [32, 64], "data_offsets": [0, 4096]}}
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + bytes(4096)


def _cache_file(repo: Path, name: str, data: bytes) -> None:
    blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_bytes(data)
    link = repo / "snapshots" / SHA / name
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(Path("../../blobs") / blob.name)


def cache_repo(tmp_path: Path, *, weights: bool) -> None:
    """``REPO_ID`` in the HF cache of :func:`run`'s environment (``HF_HOME=tmp/hf``)."""
    repo = tmp_path / "hf" / "hub" / f"models--{REPO_ID.replace('/', '--')}"
    _cache_file(repo, "config.json", json.dumps(TINY).encode())
    if weights:
        _cache_file(repo, "model.safetensors", _safetensors_bytes())
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(SHA)


def test_a_complete_hf_cache_copy_wins_over_the_bundled_snapshot(tmp_path):
    cache_repo(tmp_path, weights=True)
    proc = run(tmp_path, "inspect", REPO_ID, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["kind"] == "hf-cache"
    assert doc["hidden_size"] == 64  # the cached config, not the bundled 4096
    assert "bundled snapshot" not in proc.stderr
    text = run(tmp_path, "inspect", REPO_ID)
    assert text.returncode == 0
    assert text.stdout.splitlines()[0].endswith("(hf-cache)")


def test_a_cached_config_without_weights_falls_back_to_the_bundled_snapshot(tmp_path):
    # inspect needs the tensor table; the cache has only config.json, so the bundled one serves
    cache_repo(tmp_path, weights=False)
    proc = run(tmp_path, "inspect", REPO_ID, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["kind"] == "snapshot" and doc["hidden_size"] == 4096
    assert f"bundled snapshot of {REPO_ID} used (not in the HF cache;" in proc.stderr


def test_an_empty_cache_opens_the_bundled_snapshot(tmp_path):
    proc = run(tmp_path, "inspect", REPO_ID, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["hidden_size"] == 4096
    assert "bundled snapshot of" in proc.stderr


def test_a_local_directory_of_that_name_wins_over_everything(tmp_path):
    cache_repo(tmp_path, weights=True)
    local = tmp_path / "meta-llama" / "Llama-3.1-8B-Instruct"
    local.mkdir(parents=True)
    (local / "config.json").write_text(json.dumps({**TINY, "hidden_size": 32}))
    (local / "model.safetensors").write_bytes(_safetensors_bytes())
    proc = run(tmp_path, "inspect", REPO_ID, "--json")  # cwd is tmp_path
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["kind"] == "local" and doc["hidden_size"] == 32


def test_render_reads_the_target_config_from_the_hf_cache_first(tmp_path, monkeypatch):
    # render places config overrides against the target's config: the user's cached copy
    # (hidden 64) before recipecli's bundled one (4096)
    from recipecli.recipes.targets import load_target_config

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    config, where = load_target_config(REPO_ID)
    assert config["hidden_size"] == 4096 and where.startswith("bundled snapshot")
    cache_repo(tmp_path, weights=False)  # a config alone is enough for render
    config, where = load_target_config(REPO_ID)
    assert config["hidden_size"] == 64 and where == f"{REPO_ID} (HF cache)"
