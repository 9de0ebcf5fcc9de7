"""SGLang 0.5.23's layout rules (recipecli/engines/sglang/layout.py), expected values read from
its code:

* python/sglang/srt/arg_groups/validation_hook.py check_pipeline_parallel_compat, lines 132-138:
  under ``pp_size > 1`` with a speculative algorithm other than DSPARK it asserts
  ``speculative_algorithm.upper() == "EAGLE" and not enable_multi_layer_eagle`` with the message
  "Pipeline parallelism currently only supports EAGLE (non-multi-layer) speculative decoding";
  nothing there looks at the PD role first, so EAGLE3 is refused on every role;
* python/sglang/srt/speculative/eagle_worker_v2.py:1334 ``self._hosts_draft =
  get_parallel().pp_group.is_last_rank``: the draft on the last stage;
* arg_groups/parallel_hook.py handle_data_parallelism (line 326): with DP attention
  ``assert cfg.tp_size % cfg.attn_dp_size == 0``;
* speculative/eagle_worker_v2.py EagleDraftWorker.draft (lines 704-715): an idle-mode batch skips
  ``draft_attn_backend.init_forward_metadata`` and still calls ``draft_forward``, the path of
  sgl-project/sglang#29144;
* disaggregation/utils.py MetadataBuffers.set_buf writes output_topk_p/index and hidden states
  only ``if req.hidden_states_tensor is not None`` (the prefill ran the draft), and
  disaggregation/decode.py _commit_transfer_to_req hands them to the speculative decode request.
"""

from __future__ import annotations

import pytest

from recipecli.check.run import run_check
from recipecli.checkpoint import open_checkpoint
from recipecli.draft import canonical_draft
from recipecli.engines.base import PairContext
from recipecli.engines.layout import Layout
from recipecli.engines.sglang.layout import layout_findings, pp_refusal
from recipecli.examples import example_pair

MESSAGE = (
    "Pipeline parallelism currently only supports EAGLE (non-multi-layer) speculative decoding"
)


@pytest.fixture(scope="module")
def ctx() -> PairContext:
    target, draft = example_pair("llama3.1-8b-eagle3")
    t, d = open_checkpoint(target), open_checkpoint(draft)
    res = run_check(t, d, engines=("sglang",), tps=(1,))
    return PairContext(t, d, res.target, canonical_draft(d), (1,))


def test_refusal_is_the_assert_at_line_132():
    r = pp_refusal()
    assert r["file"] == "python/sglang/srt/arg_groups/validation_hook.py"
    assert r["line"] == 132
    assert r["exception"] == "AssertionError"
    assert r["message"] == MESSAGE


@pytest.mark.parametrize("role", ["prefill", "decode", "both"])
@pytest.mark.parametrize("pp", [2, 4])
def test_pp_refused_on_every_role(ctx, role, pp):
    fs = layout_findings(ctx, Layout(2, pp, role=role))
    pd = [] if role == "both" else ["layout.pd_spec_both"]
    assert [f.code for f in fs] == ["layout.pp_refused", "layout.draft_stage", *pd]
    assert fs[0].severity == "error"
    assert fs[0].evidence["quote"] == MESSAGE
    assert "check_pipeline_parallel_compat" in fs[0].source
    assert fs[1].evidence["stage"] == pp - 1


@pytest.mark.parametrize(
    ("lay", "codes"),
    [
        # speculative_hook.py: DP attention refused only for STANDALONE; the #29144 path stays
        (Layout(2, 1, 2, dp_attention=True), ["layout.dp_attention_risk"]),
        (Layout(2, 1, ep=True), []),  # a dense target: no MoE layer to split
        (Layout(8, 1, role="decode"), ["layout.pd_spec_both"]),
        (
            Layout(8, 1, 4, dp_attention=True, ep=True, role="prefill"),
            ["layout.dp_attention_risk", "layout.pd_spec_both"],
        ),
        (Layout(4, 1, 2), []),  # plain DP replicas
    ],
)
def test_layouts_sglang_accepts(ctx, lay, codes):
    fs = layout_findings(ctx, lay)
    assert [f.code for f in fs] == codes
    assert all(f.severity != "error" for f in fs)


@pytest.mark.parametrize(("tp", "dp"), [(4, 3), (2, 4), (6, 4)])
def test_dp_attention_size_must_divide_tp(ctx, tp, dp):
    fs = layout_findings(ctx, Layout(tp, 1, dp, dp_attention=True))
    assert [f.code for f in fs] == ["layout.dp_indivisible"]
    assert fs[0].severity == "error"
    assert "handle_data_parallelism" in fs[0].source


def test_pd_note_names_the_other_role(ctx):
    (f,) = layout_findings(ctx, Layout(8, 1, role="decode"))
    assert "start the prefill server" in f.message
    assert "MetadataBuffers.set_buf" in f.source


def test_attention_group_extracted_per_target():
    # read by hand at the pin: Qwen3MoeAttention.__init__ (models/qwen3_moe.py:502-506) takes
    # attn_tp_size = get_parallel().attn_tp_size and asserts total_num_heads % attn_tp_size;
    # LlamaAttention.__init__ (models/llama.py:181-183) takes get_parallel().tp_size;
    # DeepseekV2AttentionMLA.__init__ (models/deepseek_v2.py:2051-2057) asserts
    # num_heads % attn_tp_size
    from recipecli.engines.sglang.layout import attention_group

    qwen = attention_group("Qwen3MoeForCausalLM")
    llama = attention_group("LlamaForCausalLM")
    dsv3 = attention_group("DeepseekV3ForCausalLM")
    assert qwen is not None and llama is not None and dsv3 is not None
    assert (qwen["group"], llama["group"], dsv3["group"]) == ("attn_tp", "tp", "attn_tp")
    assert qwen["evidence"] == [
        "python/sglang/srt/models/qwen3_moe.py:506 Qwen3MoeAttention.__init__"
    ]
    assert attention_group("NoSuchArch") is None
