"""The three target kinds the override-placement tests render for: a flat Llama, the wrapped
MiniMax-M3 (bundled snapshot) and the wrapped Qwen3-VL (public fixture config)."""

from __future__ import annotations

import json
from typing import Any

from helpers.fixtures import FIXTURES, REPO_ROOT

#: bundled target snapshots (recipecli/data/targets/<org>__<model>.json, key "config")
SNAPSHOTS = REPO_ROOT / "recipecli/data/targets"
QWEN3_VL = FIXTURES / "Qwen__Qwen3-VL-30B-A3B-Instruct/config.json"


def snapshot(name: str) -> dict[str, Any]:
    """The ``config`` of bundled target snapshot ``name``."""
    return json.loads((SNAPSHOTS / f"{name}.json").read_text())["config"]


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
