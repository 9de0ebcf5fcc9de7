"""tokenspeed f4d8ec6e's layout rules (recipecli/engines/tokenspeed/layout.py). tokenspeed is not
installable here; the expected values were read by hand from its code at the pinned commit:
python/tokenspeed/runtime/utils/server_args.py ``ServerArgs`` has no pipeline field and
``add_cli_args`` no ``--pp``/``--pipeline-*`` flag; ``resolve_speculative_decoding`` refuses only
``speculative_eagle_topk != 1`` (no layout condition), so DP, EP and PD roles add nothing.
"""

from __future__ import annotations

import pytest

from recipecli.check.run import run_check
from recipecli.checkpoint import open_checkpoint
from recipecli.draft import canonical_draft
from recipecli.engines.base import PairContext
from recipecli.engines.layout import Layout
from recipecli.engines.tokenspeed.layout import layout_findings, pp_axis
from recipecli.examples import example_pair


@pytest.fixture(scope="module")
def ctx() -> PairContext:
    target, draft = example_pair("llama3.1-8b-eagle3")
    t, d = open_checkpoint(target), open_checkpoint(draft)
    res = run_check(t, d, engines=("tokenspeed",), tps=(1,))
    return PairContext(t, d, res.target, canonical_draft(d), (1,))


def test_data_says_no_pp():
    assert pp_axis()["supported"] is False
    assert pp_axis()["fields"] == []


@pytest.mark.parametrize("pp", [2, 3, 8])
def test_any_pp_above_1_is_no_pp(ctx, pp):
    fs = layout_findings(ctx, Layout(4, pp))
    assert [(f.code, f.severity, f.tp) for f in fs] == [("layout.no_pp", "error", 4)]


@pytest.mark.parametrize(
    "lay",
    [Layout(4, 1), Layout(2, 1, 4, dp_attention=True), Layout(8, 1, ep=True, role="decode")],
)
def test_pp1_layouts_add_nothing(ctx, lay):
    assert layout_findings(ctx, lay) == []
