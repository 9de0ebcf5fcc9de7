"""tokenspeed's layout rules beyond TP (issue #25): it has no pipeline parallelism, and with
expert parallelism the routed experts must divide by its EP size (the world size).

Reads ``layouts.axes.pp`` of the data file (``scripts/engine_data_tokenspeed.py``: no pipeline
field in ``ServerArgs``, no ``--pp`` flag in ``add_cli_args``). Its DP is attention DP, and
neither DP nor a PD role carries an EAGLE3 refusal (docs/engines/layouts.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from recipecli.codes import finding
from recipecli.engines.base import PairContext, SharingRow, engine_data
from recipecli.engines.layout import Layout, LayoutRuleDoc, LayoutSharing, kept, routed_experts
from recipecli.engines.tokenspeed.sources import NAME, src
from recipecli.engines.tokenspeed.spec import SPEC
from recipecli.findings import Finding

#: the server arguments: no pipeline-parallel field, no --pp flag
SERVER_ARGS = src("utils/server_args.py", "ServerArgs / ServerArgs.add_cli_args")
#: world size = attn TP x attn DP; ``--enable-expert-parallel`` sets ep_size = world_size
EP_SIZE = src("utils/server_args.py", "ServerArgs.resolve_parallelism")
#: ``num_experts (N) must be divisible by ep_size (E) for contiguous expert ownership``
EXPERTS = src("layers/moe/expert.py", "MoELayer.__init__")


def pp_axis() -> Mapping[str, Any]:
    """The data file's ``layouts.axes.pp`` (``supported``, ``fields``, ``flags``)."""
    return cast(Mapping[str, Any], engine_data(SPEC)["layouts"]["axes"]["pp"])


def refusals(lay: Layout) -> list[Finding]:
    """The layouts tokenspeed refuses whatever the pair: ``layout.no_pp`` at PP > 1."""
    if lay.pp == 1 or pp_axis()["supported"]:
        return []
    return [
        finding(
            "layout.no_pp",
            f"tokenspeed has no pipeline parallelism (no pipeline field or --pp flag in its "
            f"server arguments): PP {lay.pp} cannot be asked for; use PP 1",
            engine=NAME,
            tp=lay.tp,
            source=SERVER_ARGS,
        )
    ]


def ep_size(lay: Layout) -> int:
    """tokenspeed's EP size with ``--enable-expert-parallel``: the world size, attention TP x
    attention DP (its DP is attention DP); 1 without EP."""
    return lay.tp * lay.dp if lay.ep else 1


def _experts(ctx: PairContext, lay: Layout) -> list[Finding]:
    """``layout.experts_indivisible`` (MoELayer raises) or ``layout.experts_split`` (info)."""
    n = routed_experts(ctx.target_ck.text.config)
    size = ep_size(lay)
    if n is None or size == 1:
        return []
    if n % size:
        msg = f"num_experts ({n}) must be divisible by ep_size ({size}) for contiguous expert ownership"
        return [
            finding(
                "layout.experts_indivisible",
                f"tokenspeed EP size {size} (TP {lay.tp} x DP {lay.dp}): loading raises "
                f"ValueError: {msg}; pick a layout whose world size divides {n}",
                engine=NAME,
                tp=lay.tp,
                source=(EXPERTS, EP_SIZE),
                quote=msg,
                ep_size=size,
                experts=n,
            )
        ]
    return [
        finding(
            "layout.experts_split",
            f"tokenspeed EP size {size} (TP {lay.tp} x DP {lay.dp}): {n} routed experts, "
            f"{n // size} per rank",
            engine=NAME,
            tp=lay.tp,
            source=(EXPERTS, EP_SIZE),
            ep_size=size,
            experts=n,
            experts_per_rank=[n // size],
        )
    ]


def layout_findings(ctx: PairContext, lay: Layout) -> list[Finding]:
    """tokenspeed's findings for ``lay``: :func:`refusals`, then the experts under EP."""
    return refusals(lay) + _experts(ctx, lay)


#: attention ranks: TP stride 1, DP stride TP x CP (``AttentionLayerMapping.dp_rank``)
ATTN_RANKS = src("distributed/mapping.py", "AttentionLayerMapping.dp_rank / dp_group")
#: the target's embedding (``resolve_embed``) and the draft's embedding and head all split
#: over ``mapping.attn``'s TP group
TARGET_EMBED = src("models/base/transformer_model.py", "BaseTransformerModel.resolve_embed")


def layout_sharing(ctx: PairContext, lay: Layout, row: SharingRow) -> LayoutSharing:
    """The draft's embedding/head sharing at ``lay`` from the TP row ``row``: no PP (stage
    None at PP > 1); its DP is attention DP, each attention-DP rank an attention-TP group of
    ``--tp-size`` ranks (``AttentionLayerMapping``: ranks ``d * TP + r``), and the target's
    embedding and the draft's embedding and head all split over that group, so the TP row holds
    on every group."""
    if lay.pp > 1:
        return kept(lay, row, None, None, None, "tokenspeed has no PP (layout.no_pp)")
    tp = lay.tp
    ranks = [[d * tp + r for r in range(tp)] for d in range(lay.dp)]
    note = (
        "attention DP: each DP rank's attention-TP group holds the target's embedding and the "
        "draft's, split the same way"
        if lay.dp > 1
        else ""
    )
    return kept(lay, row, 0, ranks, True, note)


RULES = layout_findings
REFUSALS = refusals
SHARING = layout_sharing

#: the rules above as tokenspeed's engine page lists them
DOC_RULES: tuple[LayoutRuleDoc, ...] = (
    LayoutRuleDoc(
        "PP > 1",
        "no pipeline parallelism: no pipeline field or --pp flag in the server arguments",
        ("layout.no_pp",),
        (SERVER_ARGS,),
    ),
    LayoutRuleDoc(
        "EP on (EP size = TP x DP, the world size), a MoE target",
        "the routed experts must divide by the EP size: MoELayer raises ValueError at load",
        ("layout.experts_indivisible", "layout.experts_split"),
        (EXPERTS, EP_SIZE),
    ),
)
