"""vLLM 0.33.0's layout rules (recipecli/engines/vllm/layout.py), expected values read from
vLLM's code at v0.33.0:

* vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py verify_supports_aux_hidden_states_over_pp
  raises ``ValueError(f"{type(model).__name__} does not support {method} with pipeline
  parallelism")`` when the inner decoder lacks ``supports_aux_hidden_states_over_pp``;
* vllm/model_executor/models/llama.py:358 ``LlamaModel.supports_aux_hidden_states_over_pp =
  True``; AfmoeModel (afmoe.py) sets nothing and inherits interfaces.py:1611's ``False``;
* vllm/v1/worker/gpu/model_runner.py GPUModelRunner.__init__ builds the speculator only
  ``if self.is_last_pp_rank``;
* vllm/distributed/utils.py get_pp_indices: ``num_layers // pp`` each, the remainder added to
  ``partitions[-i]`` for i in 2 .. remainder + 1;
* vllm/model_executor/models/llama.py LlamaModel.__init__ builds embed_tokens ``if
  is_first_rank or (tie_word_embeddings and is_last_rank) or
  spec_decode_needs_target_embed(vllm_config)``, and models/utils.py
  spec_decode_needs_target_embed is true for method eagle3 on the last rank of PP > 1: the
  target's embedding is on the draft's stage, and maybe_share_target_embed shares it with a
  draft whose checkpoint has no embed_tokens (yuhuili/EAGLE3-LLaMA3.1-Instruct-8B has none);
* vllm/distributed/parallel_state.py initialize_model_parallel: ranks laid out
  ``reshape(-1, dp, pp, pcp, tp)``, so the last stage of DP replica d holds ranks
  d*pp*tp + (pp-1)*tp + [0, tp).
"""

from __future__ import annotations

import dataclasses

import pytest

from recipecli.check.run import run_check
from recipecli.checkpoint import open_checkpoint
from recipecli.engines.base import PairContext
from recipecli.engines.layout import Layout
from recipecli.engines.vllm.layout import draft_ranks, layout_findings, pp_partitions
from recipecli.examples import example_pair


@pytest.fixture(scope="module")
def ctx() -> PairContext:
    target, draft = example_pair("llama3.1-8b-eagle3")
    res_t, res_d = open_checkpoint(target), open_checkpoint(draft)
    res = run_check(res_t, res_d, engines=("vllm",), tps=(1,))
    from recipecli.draft import canonical_draft

    return PairContext(res_t, res_d, res.target, canonical_draft(res_d), (1,))


def _as(ctx: PairContext, arch: str, layers: int = 32) -> PairContext:
    return dataclasses.replace(
        ctx, target=dataclasses.replace(ctx.target, architecture=arch, L=layers)
    )


def test_pp1_has_no_layout_finding(ctx):
    assert layout_findings(_as(ctx, "AfmoeForCausalLM"), Layout(4, 1)) == []


def test_llama_accepted_at_pp2_draft_on_last_stage(ctx):
    fs = layout_findings(ctx, Layout(4, 2))
    assert [f.code for f in fs] == ["layout.draft_stage"]
    assert fs[0].severity == "info"
    assert fs[0].evidence["stage"] == 1
    assert fs[0].evidence["layers_per_stage"] == [16, 16]
    assert fs[0].evidence["ranks"] == [[4, 5, 6, 7]]
    assert fs[0].evidence["embed"] == "share"
    assert fs[0].tp == 4


def test_draft_with_its_own_embedding_keeps_it(ctx):
    own = dataclasses.replace(ctx, draft=dataclasses.replace(ctx.draft, has_embed=True))
    fs = layout_findings(own, Layout(2, 4))
    assert [f.code for f in fs] == ["layout.draft_stage"]
    assert fs[0].evidence["embed"] == "own"
    assert fs[0].evidence["ranks"] == [[6, 7]]


@pytest.mark.parametrize(
    ("lay", "ranks"),
    [
        (Layout(4, 2), [[4, 5, 6, 7]]),
        (Layout(2, 2, 2), [[2, 3], [6, 7]]),  # replica 1 starts at 1*2*2 = 4
        (Layout(1, 4, 2), [[3], [7]]),
        (Layout(8, 1), [list(range(8))]),
    ],
)
def test_draft_ranks_follow_the_rank_order(lay, ranks):
    assert draft_ranks(lay) == ranks


def test_afmoe_refused_with_vllms_message(ctx):
    fs = layout_findings(_as(ctx, "AfmoeForCausalLM"), Layout(2, 2))
    refused = [f for f in fs if f.code == "layout.pp_refused"]
    assert len(refused) == 1
    assert refused[0].severity == "error"
    assert refused[0].evidence["quote"] == (
        "AfmoeForCausalLM does not support eagle3 with pipeline parallelism"
    )
    assert "verify_supports_aux_hidden_states_over_pp" in refused[0].source


def test_unknown_decoder_is_a_warning(ctx):
    # the data file records null for it: its decoder cannot be read statically
    fs = layout_findings(_as(ctx, "DeepseekV4ForConditionalGeneration", 61), Layout(8, 2))
    assert [f.code for f in fs][0] == "layout.pp_unknown"
    assert fs[0].severity == "warning"


def test_not_an_eagle3_target_gets_no_pp_verdict(ctx):
    # AXK1ForCausalLM does not implement SupportsEagle3: the model's own finding covers it
    fs = layout_findings(_as(ctx, "AXK1ForCausalLM"), Layout(1, 2))
    assert not {f.code for f in fs} & {"layout.pp_refused", "layout.pp_unknown"}


@pytest.mark.parametrize(
    ("layers", "pp", "split"),
    [
        (32, 2, [16, 16]),
        (32, 3, [11, 11, 10]),  # 10 each, remainder 2 on stages -2 and -3
        (61, 4, [15, 15, 16, 15]),  # remainder 1 on the second-to-last stage
        (80, 3, [27, 27, 26]),
        (5, 1, [5]),
    ],
)
def test_pp_partitions_follow_get_pp_indices(layers, pp, split):
    assert pp_partitions(layers, pp) == split
    assert sum(split) == layers


def test_uneven_split_is_said(ctx):
    fs = layout_findings(ctx, Layout(1, 3))
    assert "not divisible by 3" in fs[-1].message


def test_pp_partitions_refuses_pp0():
    with pytest.raises(ValueError):
        pp_partitions(32, 0)
