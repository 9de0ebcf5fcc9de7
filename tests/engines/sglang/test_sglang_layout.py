"""SGLang 0.5.23's layout rules (recipecli/engines/sglang/layout.py), expected values read from
its code:

* python/sglang/srt/arg_groups/validation_hook.py check_pipeline_parallel_compat, lines 132-138:
  under ``pp_size > 1`` with a speculative algorithm other than DSPARK it asserts
  ``speculative_algorithm.upper() == "EAGLE" and not enable_multi_layer_eagle`` with the message
  "Pipeline parallelism currently only supports EAGLE (non-multi-layer) speculative decoding";
  nothing there looks at the PD role first, so EAGLE3 is refused on every role;
* python/sglang/srt/speculative/eagle_worker_v2.py:1334 ``self._hosts_draft =
  get_parallel().pp_group.is_last_rank``: the draft on the last stage.
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
    assert [f.code for f in fs] == ["layout.pp_refused", "layout.draft_stage"]
    assert fs[0].severity == "error"
    assert fs[0].evidence["quote"] == MESSAGE
    assert "check_pipeline_parallel_compat" in fs[0].source
    assert fs[1].evidence["stage"] == pp - 1


@pytest.mark.parametrize(
    "lay",
    [
        Layout(
            2, 1, 2, dp_attention=True
        ),  # speculative_hook.py: DP attention refused only for STANDALONE
        Layout(2, 1, ep=True),
        Layout(8, 1, role="decode"),
        Layout(8, 1, 4, dp_attention=True, ep=True, role="prefill"),
    ],
)
def test_layouts_sglang_accepts_add_nothing(ctx, lay):
    assert layout_findings(ctx, lay) == []
