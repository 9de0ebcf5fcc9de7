"""recipecli's vLLM layout verdicts (issue #25) against vLLM 0.33.0's own code, on every vLLM
case of the layout corpus (tests/check/layout_corpus.json).

For each case:

* the serve argv of the layout (``--tensor-parallel-size``, ``--pipeline-parallel-size``,
  ``--data-parallel-size``, ``--enable-expert-parallel``, an EAGLE3 ``--speculative-config``)
  goes through vLLM's CLI parser and its serve validation (:func:`vllm_cli.parse`), then the
  sizes build vLLM's ``ParallelConfig`` (vllm/config/parallel.py, its ``__post_init__``
  validation): vLLM refuses none of the corpus layouts there, and its GPU count
  (``world_size`` x DP) is the layout's;
* under PP, vLLM's ``verify_supports_aux_hidden_states_over_pp``
  (vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py) runs on a stand-in target whose inner
  decoder is an instance of the real decoder class (``object.__new__``: the check reads a class
  attribute): it raises ``ValueError`` with recipecli's quote exactly when recipecli reports
  ``layout.pp_refused``; a decoder built at run time (no importable class) is recipecli's
  ``layout.pp_unknown``;
* under PP, ``spec_decode_needs_target_embed`` (models/utils.py) on the last rank of a stand-in PP
  group says whether the target builds its embedding on the draft's stage, and
  ``maybe_share_target_embed`` (eagle/utils.py) on stand-in modules shares it with a draft
  without embed_tokens: recipecli's ``embed`` evidence;
* with EP, ``FusedMoEParallelConfig.make`` (fused_moe/config.py; its process-group lookups
  replaced by rank 0 stand-ins) gives the EP size, and ``determine_expert_map``
  (expert_map_manager.py) on every EP rank the experts per rank: recipecli's
  ``layout.experts_split`` evidence.
"""

from __future__ import annotations

import importlib
import json
import types
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.conformance

REPO = Path(__file__).resolve().parents[2]
CORPUS = json.loads((REPO / "tests" / "check" / "layout_corpus.json").read_text())
CASES = [c for c in CORPUS["cases"] if c["engine"] == "vllm"]
_OPENED: dict[str, Any] = {}


def _open(pair: dict[str, str], which: str) -> Any:
    from recipecli.checkpoint import open_checkpoint
    from recipecli.examples import example_pair, open_source

    key = f"{pair[which]}|{pair['open']}"
    if key not in _OPENED:
        if pair["open"].startswith("example:"):
            t, d = example_pair(pair["open"].split(":", 1)[1])
            _OPENED[key] = open_checkpoint(t if which == "target" else d)
        elif pair["open"] == "bundled":
            _OPENED[key] = open_source(pair[which], None)
        else:
            _OPENED[key] = open_checkpoint(str(REPO / pair[which]))
    return _OPENED[key]


def _verdict(case: dict[str, Any]) -> tuple[Any, Any, list[Any]]:
    """(layout, CheckResult, recipecli's vLLM findings of that layout)."""
    from recipecli.check.run import run_check
    from recipecli.engines.layout import Layout, LayoutRequest

    pair = CORPUS["pairs"][case["pair"]]
    lay = Layout(**case["layout"])
    req = LayoutRequest((lay.pp,), lay.dp, lay.dp_attention, lay.ep, lay.role)
    res = run_check(
        _open(pair, "target"),
        _open(pair, "draft"),
        engines=("vllm",),
        tps=(lay.tp,),
        layouts=req,
    )
    return lay, res, [f for la, f in res.layout_findings if la == lay and f.engine == "vllm"]


def _argv(case: dict[str, Any]) -> list[str]:
    lay = case["layout"]
    pair = CORPUS["pairs"][case["pair"]]
    spec = {"method": "eagle3", "model": pair["draft"], "num_speculative_tokens": 3}
    argv = ["vllm", "serve", pair["target"], "--tensor-parallel-size", str(lay["tp"])]
    argv += ["--pipeline-parallel-size", str(lay["pp"]), "--data-parallel-size", str(lay["dp"])]
    if lay["ep"]:
        argv.append("--enable-expert-parallel")
    return argv + ["--speculative-config", json.dumps(spec)]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_layout_parses_and_validates_as_vllm_says(case):
    from vllm.config import ParallelConfig
    from vllm_cli import parse

    lay, _, _ = _verdict(case)
    got = parse(_argv(case))
    assert got["accepted"], got["error"]
    ns = got["namespace"]
    assert (ns["tensor_parallel_size"], ns["pipeline_parallel_size"]) == (lay.tp, lay.pp)
    assert (ns["data_parallel_size"], bool(ns["enable_expert_parallel"])) == (lay.dp, lay.ep)
    pc = ParallelConfig(
        tensor_parallel_size=lay.tp,
        pipeline_parallel_size=lay.pp,
        data_parallel_size=lay.dp,
        enable_expert_parallel=lay.ep,
    )
    assert pc.world_size * pc.data_parallel_size == lay.gpus


def _decoder_class(arch: str) -> type | None:
    """The inner decoder class the data file names for ``arch``, None when it is built at run
    time or its module does not import here."""
    from recipecli.engines.base import engine_data
    from recipecli.engines.vllm.spec import SPEC

    decoder = (engine_data(SPEC)["targets"].get(arch) or {}).get("decoder") or ""
    module, _, name = decoder.rpartition(": ")[2].rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except Exception:  # run-time decoder ("language_model: initialize_model"), CUDA-only module
        return None


PP_CASES = [c for c in CASES if c["layout"]["pp"] > 1]


@pytest.mark.parametrize("case", PP_CASES, ids=[c["id"] for c in PP_CASES])
def test_pp_verdict_is_verify_supports_aux_hidden_states_over_pp(case):
    import torch.nn as nn
    from vllm.v1.worker.gpu.spec_decode.eagle.eagle3_utils import (
        verify_supports_aux_hidden_states_over_pp,
    )

    _, res, mine = _verdict(case)
    codes = [f.code for f in mine]
    arch = res.target.architecture
    decoder = _decoder_class(arch)
    if decoder is None:
        assert "layout.pp_unknown" in codes
        return
    target = type(arch, (nn.Module,), {})()
    target.model = object.__new__(decoder)
    refused = [f for f in mine if f.code == "layout.pp_refused"]
    try:
        verify_supports_aux_hidden_states_over_pp(target, "eagle3")
    except ValueError as exc:
        assert refused and str(exc) == refused[0].evidence["quote"]
    else:
        assert not refused and "layout.pp_unknown" not in codes


@pytest.mark.parametrize("case", PP_CASES, ids=[c["id"] for c in PP_CASES])
def test_draft_embedding_on_the_last_stage(case, monkeypatch):
    import torch.nn as nn
    import vllm.distributed.parallel_state as ps
    import vllm.v1.worker.gpu.spec_decode.eagle.utils as eagle_utils
    from vllm.model_executor.models.utils import spec_decode_needs_target_embed

    _, res, mine = _verdict(case)
    (stage,) = [f for f in mine if f.code == "layout.draft_stage"]
    last = types.SimpleNamespace(world_size=case["layout"]["pp"], is_last_rank=True)
    monkeypatch.setattr(ps, "get_pp_group", lambda: last)
    monkeypatch.setattr(eagle_utils, "get_pp_group", lambda: last)
    cfg = types.SimpleNamespace(speculative_config=types.SimpleNamespace(method="eagle3"))
    assert spec_decode_needs_target_embed(cfg) is True  # the target builds it on this stage
    if stage.evidence["embed"] is None:  # a config-only draft: its tensors are unknown
        return
    target_inner, draft_inner = nn.Module(), nn.Module()
    target_inner.embed_tokens = nn.Embedding(4, 2)
    draft_inner.embed_tokens = nn.Embedding(4, 2)
    draft = type("Eagle3Draft", (nn.Module,), {"has_own_embed_tokens": res.draft.has_embed})()
    eagle_utils.maybe_share_target_embed(draft, draft_inner, target_inner)
    shared = draft_inner.embed_tokens is target_inner.embed_tokens
    assert stage.evidence["embed"] == ("share" if shared else "own")


EP_CASES = [c for c in CASES if c["layout"]["ep"]]


@pytest.mark.parametrize("case", EP_CASES, ids=[c["id"] for c in EP_CASES])
def test_ep_size_and_experts_per_rank(case, monkeypatch):
    from vllm.config import ParallelConfig
    from vllm.model_executor.layers.fused_moe import config as moe_config
    from vllm.model_executor.layers.fused_moe.expert_map_manager import determine_expert_map

    lay, _, mine = _verdict(case)
    rank0 = types.SimpleNamespace(rank_in_group=0)
    monkeypatch.setattr(moe_config, "get_tensor_model_parallel_rank", lambda: 0)
    monkeypatch.setattr(moe_config, "get_dp_group", lambda: rank0)
    monkeypatch.setattr(moe_config, "get_pcp_group", lambda: rank0)
    pc = ParallelConfig(
        tensor_parallel_size=lay.tp, data_parallel_size=lay.dp, enable_expert_parallel=True
    )
    moe = moe_config.FusedMoEParallelConfig.make(lay.tp, 1, lay.dp, 1, pc)
    split = [f for f in mine if f.code == "layout.experts_split"]
    if not split:  # a dense target: no MoE layer
        assert case["codes"] == []
        return
    (f,) = split
    assert (moe.use_ep, moe.ep_size) == (True, f.evidence["ep_size"])
    per = [
        determine_expert_map(moe.ep_size, r, f.evidence["experts"])[0] for r in range(moe.ep_size)
    ]
    assert sorted(set(per), reverse=True) == f.evidence["experts_per_rank"]
