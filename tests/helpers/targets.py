"""The three target kinds the override-placement tests render for: a flat Llama, the wrapped
MiniMax-M3 (bundled snapshot) and the wrapped Qwen3-VL (public fixture config)."""

from __future__ import annotations

import gzip
import json
from typing import Any

from helpers.fixtures import FIXTURES, REPO_ROOT

#: bundled target snapshots (recipecli/data/targets/<org>__<model>.json, key "config")
SNAPSHOTS = REPO_ROOT / "recipecli/data/targets"
QWEN3_VL = FIXTURES / "Qwen__Qwen3-VL-30B-A3B-Instruct/config.json"


def snapshot(name: str) -> dict[str, Any]:
    """The ``config`` of bundled target snapshot ``name``: ``<name>.json`` (the config snapshot),
    else ``<name>.snapshot.json.gz`` (the metadata snapshot scripts/build_bundled.py writes)."""
    plain = SNAPSHOTS / f"{name}.json"
    if plain.is_file():
        return json.loads(plain.read_text())["config"]
    return bundled_snapshot(name)["config"]


def bundled_snapshot(name: str, folder: str = "targets") -> dict[str, Any]:
    """The whole gzip metadata snapshot ``recipecli/data/<folder>/<name>.snapshot.json.gz``
    (keys ``config``, ``tensors``, ``source``...), read with gzip + json, not recipecli."""
    path = REPO_ROOT / "recipecli/data" / folder / f"{name}.snapshot.json.gz"
    data: dict[str, Any] = json.loads(gzip.decompress(path.read_bytes()))
    return data


#: name -> (target id, recipe extras, config)
TARGETS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "flat-llama": (
        "meta-llama/Llama-3.1-8B-Instruct",
        {},
        snapshot("meta-llama__Llama-3.1-8B-Instruct"),
    ),
    "wrapped-minimax": ("nvidia/MiniMax-M3-NVFP4", {}, snapshot("nvidia__MiniMax-M3-NVFP4")),
    "wrapped-qwen3vl": (
        "Qwen/Qwen3-VL-30B-A3B-Instruct",
        {"target_config": str(QWEN3_VL)},
        json.loads(QWEN3_VL.read_text()),
    ),
}
