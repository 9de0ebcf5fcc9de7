"""recipecli's SGLang layout verdicts (issue #25) against SGLang 0.5.23's own code, on every
SGLang case of the layout corpus (tests/check/layout_corpus.json).

* Start-up: each case's layout (``--tp-size``, ``--pp-size``, ``--dp-size``,
  ``--enable-dp-attention``, ``--ep-size`` = the TP size with EP, ``--disaggregation-mode``)
  with EAGLE3 goes through SGLang's parser, its resolution pipeline on ``--device cpu`` and
  ``check_server_args`` on the local Llama target config. SGLang refuses it exactly when
  recipecli's pair-independent refusals (``REFUSALS`` of recipecli/engines/sglang/layout.py:
  ``layout.pp_refused``, ``layout.dp_indivisible``) do, and a ``layout.pp_refused`` quote is
  SGLang's message.
* EP size: ``_a2a_ep_size`` (arg_groups/overrides.py) sets an all-to-all backend's EP size to
  the TP size, the EP size recipecli divides the routed experts by.
* PD: ``MetadataBuffers.set_buf`` (disaggregation/utils.py) on the CPU buffers: a prefill
  request that did not run the draft (``hidden_states_tensor`` None) leaves the draft's top-k
  and hidden states the decode server reads at zero; one that did sends them
  (``layout.pd_spec_both``).
* DP attention: the idle-rank path sgl-project/sglang#29144 reports is in
  ``EagleDraftWorker.draft`` (speculative/eagle_worker_v2.py): an idle batch skips
  ``init_forward_metadata`` and still calls ``draft_forward`` (``layout.dp_attention_risk``
  reports it; read from the pinned source with ``ast``).
"""

from __future__ import annotations

import importlib
import json
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sgl_report import FIXTURES, REPO, TARGETS

pytestmark = pytest.mark.conformance_sglang

CORPUS = json.loads((REPO / "tests" / "check" / "layout_corpus.json").read_text())
CASES = [c for c in CORPUS["cases"] if c["engine"] == "sglang"]
LLAMA = "meta-llama__Llama-3.1-8B-Instruct"
DRAFT = FIXTURES / "sgl-project-SpecForge-template__llama3-8B-eagle3"
REFUSING = {"layout.pp_refused", "layout.dp_indivisible"}


def _flags(lay: dict[str, Any]) -> list[str]:
    out = ["--tp-size", str(lay["tp"]), "--pp-size", str(lay["pp"]), "--dp-size", str(lay["dp"])]
    if lay["dp_attention"]:
        out.append("--enable-dp-attention")
    if lay["ep"]:
        out += ["--ep-size", str(lay["tp"])]
    if lay["role"] != "both":
        out += ["--disaggregation-mode", lay["role"]]
    return out


def _sglang_outcome(lay: dict[str, Any]) -> str | None:
    """None when SGLang accepts the EAGLE3 layout, else ``<stage>: <Exception>: <message>``."""
    sgl_cli = importlib.import_module("sgl_cli")

    tmp = Path(tempfile.mkdtemp())
    (tmp / "config.json").write_text(
        json.dumps(json.loads((TARGETS / f"{LLAMA}.json").read_text())["config"])
    )
    argv = [*sgl_cli.LAUNCH, "--model-path", str(tmp), "--speculative-algorithm", "EAGLE3",
            "--speculative-draft-model-path", str(DRAFT), "--device", "cpu", *_flags(lay)]  # fmt: skip
    got = sgl_cli.parse_launch(argv)
    assert got["accepted"], got["error"]
    res = sgl_cli.resolve(got["args"])
    if not res["resolved"]:
        return f"resolution ({res['stopped_at']}): {res['error']}"
    try:
        got["args"].check_server_args()
    except (AssertionError, ValueError) as exc:
        return f"check_server_args: {type(exc).__name__}: {exc}"
    return None


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_start_up_refusal_is_sglangs(case):
    from recipecli.engines.layout import Layout
    from recipecli.engines.sglang.layout import refusals

    mine = refusals(Layout(**case["layout"]))
    assert {f.code for f in mine} == REFUSING & set(case["codes"])  # the corpus agrees
    outcome = _sglang_outcome(case["layout"])
    if not mine:
        assert outcome is None
        return
    assert outcome is not None
    first = mine[0]
    if first.code == "layout.pp_refused":
        assert first.evidence["quote"] in outcome
    else:  # handle_data_parallelism's bare assert tp_size % attn_dp_size == 0
        assert "AssertionError" in outcome


def test_a2a_backends_set_the_ep_size_to_the_tp_size():
    from sglang.srt.arg_groups import overrides

    from recipecli.engines.layout import Layout
    from recipecli.engines.sglang.layout import ep_size

    for tp in (4, 8, 16):
        view = SimpleNamespace(moe_a2a_backend="deepep", ep_size=1, tp_size=tp)
        assert overrides._a2a_ep_size(view) == {"ep_size": ep_size(Layout(tp, ep=True))}


def _req(hidden: Any, topk_p: Any = None, topk_index: Any = None) -> SimpleNamespace:
    return SimpleNamespace(
        metadata_buffer_index=0,
        output_ids=[7],
        cached_tokens=0,
        cached_tokens_device=0,
        cached_tokens_host=0,
        cached_tokens_storage=0,
        get_mm_token_counts=lambda: (0, 0, 0),
        return_logprob=False,
        return_sampling_mask=False,
        hidden_states_tensor=hidden,
        output_topk_p=topk_p,
        output_topk_index=topk_index,
        output_dsa_topk_indices=None,
        bootstrap_room=None,
    )


def test_decode_reads_the_prefill_drafts_outputs_only_when_it_ran_the_draft():
    import torch
    from sglang.srt.disaggregation.utils import MetadataBuffers

    def sent(req: SimpleNamespace) -> tuple[Any, ...]:
        buf = MetadataBuffers(4, 8, torch.float32, 1)
        buf.set_buf(req)
        got = buf.get_buf(0)
        return got[9], got[10], got[11]  # output_topk_p, output_topk_index, output_hidden_states

    topk_p, topk_index, hidden = sent(_req(None))  # a prefill server without EAGLE3
    assert not hidden.any() and not topk_p.any() and not topk_index.any()
    h = torch.arange(8, dtype=torch.float32) + 1
    topk_p, topk_index, hidden = sent(
        _req(h, torch.tensor([0.5]), torch.tensor([3], dtype=torch.int32))
    )
    assert torch.equal(hidden, h) and topk_index[0].item() == 3


def test_the_29144_idle_rank_path_is_in_the_pinned_draft_worker():
    # read, not imported: the module imports the scheduler (setproctitle, not in this env)
    import ast
    from importlib.util import find_spec

    spec = find_spec("sglang.srt.speculative.eagle_worker_v2")
    assert spec is not None and spec.origin
    text = Path(spec.origin).read_text()
    (cls,) = [n for n in ast.parse(text).body if getattr(n, "name", "") == "EagleDraftWorker"]
    (fn,) = [n for n in cls.body if getattr(n, "name", "") == "draft"]

    def calls(node: ast.AST, name: str) -> list[ast.Call]:
        return [
            c
            for c in ast.walk(node)
            if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == name
        ]

    # the if whose test asks is_idle() and whose body initialises the draft attention metadata
    (guard,) = [
        n
        for n in ast.walk(fn)
        if isinstance(n, ast.If) and calls(n.test, "is_idle") and calls(n, "init_forward_metadata")
    ]
    assert "not" in ast.unparse(guard.test)  # the init runs only on a non-idle batch
    # draft_forward is called by a statement right after that if, in the same block (not under
    # the guard): an idle rank runs it too
    (block,) = [
        b
        for n in ast.walk(fn)
        for b in (getattr(n, "body", None), getattr(n, "orelse", None))
        if isinstance(b, list) and guard in b
    ]
    following = block[block.index(guard) + 1 :]
    assert any(calls(stmt, "draft_forward") for stmt in following)


# ------------------------------------------------ DP attention: heads over the attention-TP group

HEADS_CASES = [c for c in CASES if "layout.heads_attn_tp" in c["codes"]]
#: the corpus targets' architectures (config.json of each pair) and one Llama-style control
GROUP_ARCHS = (
    "LlamaForCausalLM",
    "Qwen3MoeForCausalLM",
    "Llama4ForConditionalGeneration",
    "GptOssForCausalLM",
    "DeepseekV3ForCausalLM",
)


@pytest.mark.parametrize("case", HEADS_CASES, ids=[c["id"] for c in HEADS_CASES])
def test_attention_tp_size_is_sglangs(case):
    # SGLang's own width of the attention-TP group at the case's TP and DP, against the size
    # recipecli judges the target's heads at
    from sglang.srt.runtime_context import derive_attn_tp_size

    from recipecli.engines.layout import Layout
    from recipecli.engines.sglang.layout import _attn_heads

    lay = Layout(**case["layout"])
    arch = {"sglang-scout-47": "Llama4ForConditionalGeneration"}.get(
        case["id"], "Qwen3MoeForCausalLM"
    )
    heads = {"Llama4ForConditionalGeneration": (40, 8)}.get(arch, (32, 4))
    target = SimpleNamespace(architecture=arch, nh=heads[0], nkv=heads[1], mla=False)
    (f,) = _attn_heads(SimpleNamespace(target=target), lay)  # type: ignore[arg-type]
    want = derive_attn_tp_size(tp_size=lay.tp, attn_cp_size=1, attn_dp_size=lay.dp)
    assert f.evidence["tp_size"] == want


@pytest.mark.parametrize("arch", GROUP_ARCHS)
def test_attention_group_is_the_one_the_class_reads(arch):
    # the attention class the data names, imported from SGLang: its __init__ reads
    # get_parallel().attn_tp_size exactly when the data says attn_tp
    import inspect

    from recipecli.engines.sglang.layout import attention_group

    entry = attention_group(arch)
    assert entry is not None and entry["group"] in ("attn_tp", "tp")
    (where,) = entry["evidence"]
    path, cls = where.split(" ")[0].split(":")[0], where.split(" ")[1].split(".")[0]
    module = importlib.import_module(path[len("python/") : -3].replace("/", "."))
    src = inspect.getsource(getattr(module, cls).__init__)
    assert ("get_parallel().attn_tp_size" in src) is (entry["group"] == "attn_tp")
