"""``recipecli check --engine sglang`` against SGLang 0.5.23's own functions, pair by pair.

Pairs: the fixture drafts of ``tests/fixtures/configs`` with the targets they were made for, and a
few one-change variations of a base pair (``tests/conformance/pairs.py``, the pairs the vLLM suite
runs too; sparse checkpoints written by ``recipecli.testing``). For each pair recipecli's side is
``recipecli check T D --engine sglang --json --tp 1,2,3,4,6,8 --max-model-len N`` (N: the
target's context length as SGLang derives it), SGLang's side comes from ``sgl_probe`` (its
``VocabParallelEmbedding``, draft ``ModelConfig``, the target class's
``set_eagle3_layers_to_capture``). One test per (pair, field):

- ``vocab_rows``: embedding rows per rank at each TP (recipecli's ``embed_sharing`` target shape);
- ``architecture``: the draft architecture SGLang builds (``resolved.sglang.architecture``);
- ``context``: whether the draft's ModelConfig refuses the target's context length
  (recipecli: an error finding ``maxpos.short``), else the length it settles on
  (``resolved.sglang.context_len``);
- ``aux_layers``: the target layers captured (``resolved.sglang.aux_layers``).

Disagreements known today are in ``known_disagreements.json`` (section ``verdicts``, id
``<pair>-<field>``) and run as ``xfail(strict=True)``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sgl_probe
from sgl_report import REPO, REPORT, known

sys.path.insert(0, str(REPO / "tests" / "conformance"))
import pairs  # noqa: E402  (tests/conformance/pairs.py: imports neither torch nor an engine)

pytestmark = pytest.mark.conformance_sglang

TPS = (1, 2, 3, 4, 6, 8)
CASES = [
    "specforge-llama3-8B-eagle3",
    "specforge-qwen3-8b-eagle3",
    "specforge-qwen3-30B-A3B-eagle3",
    "specforge-gpt-oss-120B-eagle3",
    "specforge-deepseek-v3-671b-eagle3",
    "safeailab-eagle3-llama3.1-8b",
    "eagle1-llama3-8b-as-eagle3",
    "syn-base",
    "syn-aux-top-3",
    "syn-aux-nested-3",
    "syn-aux-nested-4",
    "syn-aux-top-4",
    "syn-aux-both-differ",
    "syn-arch-LlamaForCausalLM",
    "syn-arch-Eagle3LlamaForCausalLM",
    "syn-arch-MistralForCausalLM",
    "syn-qwen3-draft",
    "modelopt-export-llama3.1-8b",
]
FIELDS = ("vocab_rows", "architecture", "context", "aux_layers")
_CACHE: dict[str, dict[str, Any]] = {}


@pytest.fixture(scope="session")
def pair_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("sglang-pairs")


def _text(cfg: dict[str, Any]) -> dict[str, Any]:
    return cfg.get("text_config") or cfg


def sides(name: str, root: Path) -> dict[str, Any]:
    """Both sides of pair ``name`` (cached per session)."""
    if name in _CACHE:
        return _CACHE[name]
    case = pairs.CASES[name]
    target, draft = case.write(root / name)
    text = _text(case.target)
    ctx = sgl_probe.target_context_length(target)
    cmd = [
        sys.executable,
        "-m",
        "recipecli",
        "check",
        str(target),
        str(draft),
        "--engine",
        "sglang",
    ]
    cmd += [
        "--json",
        "--kernel",
        "skip",
        "--tp",
        ",".join(map(str, TPS)),
        "--max-model-len",
        str(ctx),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    assert proc.returncode in (0, 1), f"recipecli check {name}: {proc.stderr.strip()[-500:]}"
    rc = json.loads(proc.stdout)
    dm = sgl_probe.draft_model_config(draft, ctx)
    dm_free = dm if dm["config"] is not None else sgl_probe.draft_model_config(draft, None)
    ids = sgl_probe.draft_aux_ids(dm_free["config"]) if dm_free["config"] is not None else None
    arch = case.target["architectures"][0]
    sglang = {
        "vocab_rows": {
            tp: sgl_probe.vocab_rows_per_rank(int(text["vocab_size"]), int(text["hidden_size"]), tp)
            for tp in TPS
        },
        "architecture": dm_free["architecture"],
        "context": "ValueError"
        if dm["error"] and dm["error"].startswith("ValueError")
        else dm["context_len"],
        "aux_layers": sgl_probe.aux_layers(arch, int(text["num_hidden_layers"]), ids),
        "error": dm["error"],
    }
    resolved = {  # check --json: resolved.<engine>.<name> = {"value", "origin"}
        k: (v.get("value") if isinstance(v, dict) else v)
        for k, v in rc.get("resolved", {}).get("sglang", {}).items()
    }
    shorts = [f for f in rc["findings"] if f["code"] == "maxpos.short" and f["engine"] == "sglang"]
    recipecli = {
        "vocab_rows": {
            e["tp"]: e["target_shape"][0]
            for e in rc.get("embed_sharing", [])
            if e["engine"] == "sglang"
        }
        or None,
        "architecture": resolved.get("architecture"),
        "context": "ValueError"
        if any(f["severity"] == "error" for f in shorts)
        else resolved.get("context_len"),
        "aux_layers": sorted(set(resolved["aux_layers"]))
        if resolved.get("aux_layers") is not None
        else None,
    }
    errors = [f["code"] for f in rc["findings"] if f["severity"] == "error"]  # sglang or any
    _CACHE[name] = {"sglang": sglang, "recipecli": recipecli, "ctx": ctx, "errors": errors}
    return _CACHE[name]


def _params():
    for name in CASES:
        for field in FIELDS:
            pid = f"{name}-{field}"
            yield pytest.param(name, field, id=pid, marks=known("verdicts", pid))


@pytest.mark.parametrize(("name", "field"), list(_params()))
def test_check_matches_sglang(name: str, field: str, pair_root: Path) -> None:
    s = sides(name, pair_root)
    theirs, ours = s["sglang"][field], s["recipecli"][field]
    REPORT["verdicts"].append({"id": f"{name}-{field}", "sglang": theirs, "recipecli": ours})
    if ours is None and field == "vocab_rows":
        pytest.skip("recipecli check reports no embed_sharing rows for this pair")
    if ours is None and s["errors"]:
        pytest.skip(
            f"recipecli stops before resolving {field} for SGLang ({', '.join(s['errors'])})"
        )
    assert theirs == ours, f"{name} {field}: SGLang {theirs!r}, recipecli {ours!r}"


# --------------------------------------------------------------------------- the probe itself
# Values by hand from SGLang 0.5.23's code, so a probe that stopped calling it would fail.


def test_probe_vocab_padding() -> None:
    """vocab_parallel_embedding.py: pad to 64; if that does not divide by TP, pad to 64 x TP.
    151936 = 2374 x 64: TP 2/4/8 divide it (75968, 37984, 18992 rows); TP 3 and 6 do not:
    152064 = 792 x 192 = 396 x 384 -> 50688 and 25344 rows. 201088 at TP 6: 201088 / 6 is not
    whole, 384 x 524 = 201216 -> 33536."""
    rows = {tp: sgl_probe.vocab_rows_per_rank(151936, 64, tp) for tp in (1, 2, 3, 4, 6, 8)}
    assert rows == {1: 151936, 2: 75968, 3: 50688, 4: 37984, 6: 25344, 8: 18992}
    assert sgl_probe.vocab_rows_per_rank(201088, 64, 6) == 33536


def test_probe_aux_layers() -> None:
    """set_eagle3_layers_to_capture: llama/qwen3/qwen3_moe: default [2, L//2, L-3], explicit
    ids + 1; gpt_oss keeps ids whose max is L; deepseek_v2 adds 1 only when ids[0] == 1."""
    assert sgl_probe.aux_layers("Qwen3MoeForCausalLM", 48, None) == [2, 24, 45]
    assert sgl_probe.aux_layers("LlamaForCausalLM", 32, [1, 15, 28]) == [2, 16, 29]
    assert sgl_probe.aux_layers("GptOssForCausalLM", 36, [1, 17, 36]) == [1, 17, 36]
    assert sgl_probe.aux_layers("GptOssForCausalLM", 36, [1, 17, 33]) == [2, 18, 34]
    assert sgl_probe.aux_layers("DeepseekV3ForCausalLM", 61, [1, 29, 57]) == [2, 30, 58]
    assert sgl_probe.aux_layers("DeepseekV3ForCausalLM", 61, [2, 30, 58]) == [2, 30, 58]
    with pytest.raises(IndexError):  # qwen2_moe.py Qwen2MoeModel: setattr(self.layers[id], ...)
        sgl_probe.aux_layers("Qwen3MoeForCausalLM", 48, [1, 23, 47])


def test_probe_draft_context_length(pair_root: Path) -> None:
    """model_config.py _derive_context_length: a draft with max_position_embeddings 2048 and
    no rope scaling derives 2048; a target length of 40960 raises ValueError."""
    target, draft = pairs.CASES["syn-base"].write(pair_root / "probe-ctx")
    assert sgl_probe.draft_model_config(draft, None)["context_len"] == 2048
    assert sgl_probe.draft_model_config(draft, 40960)["error"].startswith("ValueError")
    assert sgl_probe.target_context_length(target) == 40960
