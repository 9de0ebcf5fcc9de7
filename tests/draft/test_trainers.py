"""Trainer default aux layers (recipecli/data/trainers/aux_defaults.json, issue #31 item 2).

Expected values are worked out by hand from each tool's code at the recorded commit:
- SpecForge a6b6b023 specforge/algorithms/model_providers.py resolve_eagle_capture_layers:
  ``[1, num_layers // 2 - 1, num_layers - 4]``, ids passed to SGLang's
  ``set_eagle3_layers_to_capture`` (layer output, hidden_states[id + 1]);
- ModelOpt 5a4242fa modelopt/torch/speculative/plugins/transformers.py
  _set_default_aux_hidden_state_layers: ``[1, max(0, n // 2 - 1), max(0, n - 4)]``, forward hooks
  on those layers (layer output);
- speculators c05b95b3 src/speculators/models/utils.py resolve_target_layer_ids:
  ``[2, n // 2, n - 3]``, read by vLLM's extract_hidden_states as hidden-state indices;
- EAGLE cb7e0841 eagle/traineagle3/modeling_llama_kv.py LlamaModel.forward: appends the state
  entering layer idx for idx in (L - 3, L // 2, 2) (hidden-state indices).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from recipecli.draft.trainers import (
    default_ids,
    trainer_default,
    trainer_default_states,
    trainer_defaults,
)

REPO = Path(__file__).resolve().parents[2]
MIRRORS = {
    "SafeAILab/EAGLE": "SafeAILab+EAGLE",
    "sgl-project/SpecForge": "sgl-project+SpecForge",
    "NVIDIA/TensorRT-Model-Optimizer": "NVIDIA+TensorRT-Model-Optimizer",
    "vllm-project/speculators": "vllm-project+speculators",
}


def test_every_trained_format_has_a_cited_default():
    recs = trainer_defaults()
    assert set(recs) == {"A", "B", "C", "D"}
    for rec in recs.values():
        assert re.fullmatch(r"[0-9a-f]{40}", rec["commit"])
        assert rec["file"].endswith(".py") and rec["function"] and rec["line"] > 0
        assert rec["convention"] in ("hidden-state", "layer-output")
    assert trainer_default("F") is None and trainer_default("nemo") is None
    assert trainer_default(None) is None


def test_specforge_default_on_llama_8b_and_deepseek_v3():
    # Llama-3.1-8B, 32 layers: ids [1, 15, 28] -> hidden states [2, 16, 29] = vLLM's (2, L//2, L-3)
    expr = trainer_default("B")
    assert expr is not None
    assert default_ids(expr["default_ids"], 32) == [1, 15, 28]
    assert trainer_default_states("B", 32) == [2, 16, 29]
    # DeepSeek-V3, 61 layers: ids [1, 29, 57] -> [2, 30, 58] = (2, 61 // 2, 58)
    assert trainer_default_states("B", 61) == [2, 30, 58]


def test_modelopt_default_clamps_on_a_tiny_target():
    # 3 layers: [1, max(0, 0), max(0, -1)] = [1, 0, 0] -> layer outputs -> hidden states {1, 2}
    assert trainer_default_states("C", 3) == [1, 2]
    assert trainer_default_states("C", 32) == [2, 16, 29]


def test_speculators_and_original_release_are_hidden_state_indices():
    # both write (2, L//2, L-3) directly as hidden-state indices; EAGLE in the order L-3, L//2, 2
    assert trainer_default_states("D", 8) == [2, 4, 5]
    assert trainer_default_states("A", 8) == [2, 4, 5]
    rec = trainer_default("A")
    assert rec is not None and default_ids(rec["default_ids"], 8) == [5, 4, 2]


@pytest.mark.parametrize("expr", ["[L ** 2]", "[__import__('os')]", "L", "[L.real]"])
def test_default_expression_outside_the_grammar_is_refused(expr):
    with pytest.raises(ValueError):
        default_ids(expr, 8)


def test_data_file_is_what_the_script_extracts():
    mirrors = {r: Path("/work/.mirror") / d / "repo" for r, d in MIRRORS.items()}
    if not all(p.is_dir() for p in mirrors.values()):
        pytest.skip("the tools' git mirrors are not on this machine")
    recs = trainer_defaults()
    args = []
    for repo, path in mirrors.items():
        commit = next(r["commit"] for r in recs.values() if r["repo"] == repo)
        args += ["--mirror", f"{repo}={path}@{commit}"]
    script = REPO / "scripts" / "extract_trainer_defaults.py"
    r = subprocess.run([sys.executable, str(script), "--check", *args], capture_output=True)
    assert r.returncode == 0, r.stderr
