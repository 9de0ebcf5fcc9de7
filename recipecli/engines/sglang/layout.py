"""SGLang's layout rules beyond TP (issue #25): EAGLE3 with pipeline parallelism is refused at
start-up by ``check_pipeline_parallel_compat``; the draft runs on the last PP stage. DP attention
splits the TP group (its size must divide it) and runs the EAGLE draft on idle DP ranks the way
sgl-project/sglang#29144 reports a deadlock on; EP needs the routed experts to divide by the EP
size; a PD decode server reads the prefill server's draft outputs.

Reads the ``layouts`` key ``scripts/engine_data_sglang.py`` writes into the data file: its
``refusals`` (each ``raise``/``assert`` of the server-args checks with its message) and
``draft_stage``. DP, DP attention, EP and PD roles carry no EAGLE3 refusal there
(docs/engines/layouts.md), beyond the rules below read from the pinned code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict, cast

from recipecli.codes import finding
from recipecli.engines.base import PairContext, SharingRow, engine_data
from recipecli.engines.common import heads_ok
from recipecli.engines.layout import (
    Layout,
    LayoutRuleDoc,
    LayoutSharing,
    experts_per_rank,
    kept,
    routed_experts,
)
from recipecli.engines.sglang.sources import NAME, src
from recipecli.engines.sglang.spec import SPEC
from recipecli.findings import Finding

#: asserts the speculative algorithm is EAGLE (non-multi-layer) when pp_size > 1; called by
#: check_server_args at engine start
PP_COMPAT = src("arg_groups/validation_hook.py", "check_pipeline_parallel_compat")
#: ``self._hosts_draft = get_parallel().pp_group.is_last_rank``
DRAFT_STAGE = src("speculative/eagle_worker_v2.py", "EAGLEWorkerV2.__init__")
#: with DP attention: ``assert cfg.tp_size % cfg.attn_dp_size == 0``
DP_SPLIT = src("arg_groups/parallel_hook.py", "handle_data_parallelism")
#: an idle DP rank skips ``draft_attn_backend.init_forward_metadata`` and still calls
#: ``draft_forward`` (the path sgl-project/sglang#29144 reports a collective deadlock on)
DP_IDLE_DRAFT = src(
    "speculative/eagle_worker_v2.py", "EagleDraftWorker.draft", "sgl-project/sglang#29144"
)
#: ``assert self._num_global_routed % storage_ep_size == 0`` (storage EP size = moe_ep_size)
EXPERTS = src("layers/moe/fused_moe_triton/layer.py", "FusedMoE.__init__")
#: the all-to-all MoE backends set ep_size to the TP size
EP_SIZE = src("arg_groups/overrides.py", "_a2a_ep_size")
#: the prefill server writes its draft's top-k and hidden states into the transfer metadata
#: only when it ran the EAGLE draft (``if req.hidden_states_tensor is not None``) ...
PD_SEND = src("disaggregation/utils.py", "MetadataBuffers.set_buf")
#: ... and a speculative decode server takes them as its first draft input
PD_RECV = src("disaggregation/decode.py", "DecodeTransferQueue._commit_transfer_to_req")


class Refusal(TypedDict):
    """One ``layouts.refusals`` entry (the keys these rules read)."""

    file: str
    function: str
    line: int
    exception: str
    message: str
    axes: list[str]
    algorithms: list[str]


def _layouts() -> Mapping[str, Any]:
    """The data file's ``layouts`` key."""
    return cast(Mapping[str, Any], engine_data(SPEC)["layouts"])


def pp_refusal() -> Refusal:
    """The ``check_pipeline_parallel_compat`` refusal that fires for EAGLE3 on every PD role
    (the one whose axes are only ``pp``).

    Raises:
        LookupError: the data file has no such refusal (a data file from another version).
    """
    for r in cast(list[Refusal], _layouts()["refusals"]):
        if (
            r["function"] == "check_pipeline_parallel_compat"
            and "EAGLE3" in r["algorithms"]
            and r["axes"] == ["pp"]
            and "SGLANG_ENABLE_PP_SPEC" not in r["message"]
        ):
            return r
    raise LookupError("no check_pipeline_parallel_compat refusal for EAGLE3 in SGLang's data")


def refusals(lay: Layout) -> list[Finding]:
    """The layouts SGLang refuses for EAGLE3 whatever the pair: PP > 1
    (``layout.pp_refused``) and DP attention whose DP size does not divide the TP size
    (``layout.dp_indivisible``)."""
    out: list[Finding] = []
    if lay.pp > 1:
        r = pp_refusal()
        out.append(
            finding(
                "layout.pp_refused",
                f"SGLang refuses EAGLE3 at PP {lay.pp} at start-up: {r['exception']}: "
                f"{r['message']} ({r['file']}:{r['line']}); use --pp-size 1",
                engine=NAME,
                tp=lay.tp,
                source=PP_COMPAT,
                quote=r["message"],
                role=lay.role,
            )
        )
    if lay.dp_attention and lay.tp % lay.dp:
        out.append(
            finding(
                "layout.dp_indivisible",
                f"SGLang DP attention: TP {lay.tp} is not divisible by DP {lay.dp} (the DP "
                "attention groups split the TP group: handle_data_parallelism asserts "
                "tp_size % attn_dp_size == 0); pick a DP size that divides the TP size",
                engine=NAME,
                tp=lay.tp,
                source=DP_SPLIT,
                dp=lay.dp,
            )
        )
    return out


def _draft_stage(lay: Layout) -> list[Finding]:
    """``layout.draft_stage``: the draft would run on the last PP stage."""
    stage = cast(Mapping[str, str], _layouts()["draft_stage"])
    return [
        finding(
            "layout.draft_stage",
            f"SGLang PP {lay.pp}: the EAGLE3 draft would run on the {stage['stage']} PP stage "
            f"({stage['evidence']})",
            engine=NAME,
            tp=lay.tp,
            source=DRAFT_STAGE,
            stage=lay.pp - 1,
        )
    ]


def _dp_attention(lay: Layout) -> list[Finding]:
    """``layout.dp_attention_risk`` (warning): the idle-rank draft path of #29144 is in the pin."""
    if not lay.dp_attention or lay.dp == 1 or lay.tp % lay.dp:
        return []
    return [
        finding(
            "layout.dp_attention_risk",
            f"SGLang DP attention (DP {lay.dp} in TP {lay.tp}) with EAGLE3: an idle DP rank skips "
            "the draft attention metadata but still runs draft_forward, the path "
            "sgl-project/sglang#29144 reports a collective deadlock on (closed, no fix; the code "
            "is unchanged at the pin); test this layout under load before serving it",
            engine=NAME,
            tp=lay.tp,
            source=DP_IDLE_DRAFT,
            attn_tp=lay.tp // lay.dp,
        )
    ]


#: under DP attention the attention-TP width is ``tp_size // attn_dp_size // attn_cp_size``
ATTN_TP = src("runtime_context.py", "derive_attn_tp_size")
#: the TP-size heads rule this layout rule replaces for such targets
TP_HEADS = src("models/llama.py", "LlamaAttention.__init__")


def attention_group(arch: str) -> Mapping[str, Any] | None:
    """The data file's ``layouts.attention_tp`` entry of ``arch`` (``group``: ``attn_tp`` /
    ``tp`` / None, ``evidence``: the attention ``__init__`` whose heads assert it read), None
    for an architecture not recorded there."""
    entry = _layouts().get("attention_tp", {}).get(arch)
    return cast("Mapping[str, Any] | None", entry)


def _attn_heads(ctx: PairContext, lay: Layout) -> list[Finding]:
    """Under DP attention (DP > 1 dividing TP), a target whose attention asserts its heads
    against ``attn_tp_size`` (TP / DP; data ``layouts.attention_tp``) is judged at that size:
    ``tp.heads_indivisible`` (error) when its heads or KV heads do not split over it, else
    ``layout.heads_attn_tp`` (info) when only the TP size fails. Either replaces the target's
    TP-size heads finding at this layout (evidence ``waives``); the draft's stays (the EAGLE3
    draft's ``LlamaAttention`` splits over the whole TP group)."""
    if not lay.dp_attention or lay.dp == 1 or lay.tp % lay.dp:
        return []
    t = ctx.target
    entry = attention_group(t.architecture)
    if entry is None or entry.get("group") != "attn_tp":
        return []
    n, nkv = lay.tp // lay.dp, None if t.mla else t.nkv
    if heads_ok(t.nh, nkv, lay.tp) and heads_ok(t.nh, nkv, n):
        return []
    where = ", ".join(entry["evidence"])
    ok = heads_ok(t.nh, nkv, n)
    head = f"SGLang DP attention (TP {lay.tp} / DP {lay.dp}): {where} splits the target's heads"
    msg = (
        f"{head} over the attention-TP group of {n}, where its {t.nh} heads / {nkv} KV heads "
        f"divide: the TP-{lay.tp} heads finding does not apply at this layout"
        if ok
        else f"{head} over the attention-TP group of {n}: its {t.nh} heads / {nkv} KV heads do "
        "not split over it (the assert fails at load); pick another TP or DP size"
    )
    return [
        finding(
            "layout.heads_attn_tp" if ok else "tp.heads_indivisible",
            msg,
            engine=NAME,
            tp=lay.tp,
            source=(ATTN_TP, TP_HEADS),
            what="target",
            heads=t.nh,
            kv_heads=nkv,
            tp_size=n,
            group="attn_tp",
            waives={"code": "tp.heads_indivisible", "what": "target"},
        )
    ]


def ep_size(lay: Layout) -> int:
    """SGLang's EP size for ``--ep``: the TP size (``--ep-size`` spans the TP group; the
    all-to-all MoE backends force it, ``_a2a_ep_size``); 1 without EP."""
    return lay.tp if lay.ep else 1


def _experts(ctx: PairContext, lay: Layout) -> list[Finding]:
    """``layout.experts_indivisible`` (FusedMoE asserts) or ``layout.experts_split`` (info)."""
    n = routed_experts(ctx.target_ck.text.config)
    size = ep_size(lay)
    if n is None or size == 1:
        return []
    if n % size:
        return [
            finding(
                "layout.experts_indivisible",
                f"SGLang EP size {size}: {n} routed experts do not divide by it (FusedMoE "
                "asserts num_experts % ep_size == 0 at load); pick a TP/EP size dividing "
                f"{n}",
                engine=NAME,
                tp=lay.tp,
                source=(EXPERTS, EP_SIZE),
                ep_size=size,
                experts=n,
            )
        ]
    return [
        finding(
            "layout.experts_split",
            f"SGLang EP size {size} (the TP size): {n} routed experts, {n // size} per rank",
            engine=NAME,
            tp=lay.tp,
            source=(EXPERTS, EP_SIZE),
            ep_size=size,
            experts=n,
            experts_per_rank=sorted(set(experts_per_rank(n, size))),
        )
    ]


def _pd_role(lay: Layout) -> list[Finding]:
    """``layout.pd_spec_both`` (info) on a prefill or decode server."""
    if lay.role == "both":
        return []
    other = "prefill" if lay.role == "decode" else "decode"
    return [
        finding(
            "layout.pd_spec_both",
            f"SGLang PD {lay.role} server: start the {other} server with the same EAGLE3 "
            "arguments too: the prefill server sends its draft's top-k and hidden states only "
            "when it ran the draft, and the decode server's first draft step starts from them",
            engine=NAME,
            tp=lay.tp,
            source=(PD_SEND, PD_RECV),
            role=lay.role,
        )
    ]


def layout_findings(ctx: PairContext, lay: Layout) -> list[Finding]:
    """SGLang's findings for ``lay``: :func:`refusals`, at PP > 1 ``layout.draft_stage``, DP
    attention's risk, the experts under EP and the PD role's note."""
    out = refusals(lay)
    if lay.pp > 1:
        out += _draft_stage(lay)
    return out + _dp_attention(lay) + _attn_heads(ctx, lay) + _experts(ctx, lay) + _pd_role(lay)


#: without DP attention each DP replica is its own TP group on the next tp x pp GPUs
DP_REPLICAS = src("managers/data_parallel_controller.py", "launch_dp_schedulers")
#: the EAGLE3 draft's embedding splits over the whole TP group (no use_attn_tp_group) ...
DRAFT_EMBED = src("models/llama_eagle3.py", "LlamaModel.__init__")
#: ... and ``VocabParallelEmbedding`` takes the attention-TP group only when asked
#: (``use_attn_tp_group``), which some targets set from ``is_dp_attention_enabled()``
EMBED_GROUP = src("layers/vocab_parallel_embedding.py", "VocabParallelEmbedding.__init__")


def layout_sharing(ctx: PairContext, lay: Layout, row: SharingRow) -> LayoutSharing:
    """The draft's embedding/head sharing at ``lay`` from the TP row ``row``. PP > 1 is refused
    for EAGLE3 (stage None). Without DP attention each DP replica is a TP group of its own
    (``launch_dp_schedulers``: the next TP x PP GPUs), where the TP row holds. With DP
    attention the DP ranks split the one TP group and the draft runs on all of its ranks; the
    draft's embedding still splits over the whole TP group (``llama_eagle3.py``), but some
    targets build theirs over the attention-TP group (TP / DP) under DP attention
    (``use_attn_tp_group=is_dp_attention_enabled()``), per model class: not modelled yet, so
    ``holds`` is None there."""
    if lay.pp > 1:
        return kept(lay, row, None, None, None, "SGLang refuses EAGLE3 here (layout.pp_refused)")
    tp = lay.tp
    if lay.dp_attention and lay.dp > 1:
        if tp % lay.dp:
            return kept(lay, row, None, None, None, "refused (layout.dp_indivisible)")
        note = (
            f"DP attention: the draft's embedding splits over the whole TP group ({tp}); the "
            f"target's splits over it or over the attention-TP group ({tp // lay.dp}) under DP "
            "attention, depending on its model class: not modelled yet"
        )
        return kept(lay, row, 0, [list(range(tp))], None, note)
    ranks = [[d * tp + r for r in range(tp)] for d in range(lay.dp)]
    note = "each DP replica is a TP group holding its own copy" if lay.dp > 1 else ""
    return kept(lay, row, 0, ranks, True, note)


RULES = layout_findings
REFUSALS = refusals
SHARING = layout_sharing

#: the rules above as SGLang's engine page lists them
DOC_RULES: tuple[LayoutRuleDoc, ...] = (
    LayoutRuleDoc(
        "PP > 1, any PD role",
        "refused at start-up: AssertionError: Pipeline parallelism currently only supports EAGLE "
        "(non-multi-layer) speculative decoding",
        ("layout.pp_refused",),
        (PP_COMPAT,),
    ),
    LayoutRuleDoc(
        "PP > 1",
        "the draft would run on the last PP stage only",
        ("layout.draft_stage",),
        (DRAFT_STAGE,),
    ),
    LayoutRuleDoc(
        "DP attention, TP not divisible by DP",
        "refused at start-up: handle_data_parallelism asserts tp_size % attn_dp_size == 0",
        ("layout.dp_indivisible",),
        (DP_SPLIT,),
    ),
    LayoutRuleDoc(
        "DP attention, DP > 1",
        "serves; an idle DP rank skips the draft attention metadata but still runs draft_forward, "
        "the path sgl-project/sglang#29144 reports a deadlock on (warning)",
        ("layout.dp_attention_risk",),
        (DP_IDLE_DRAFT,),
    ),
    LayoutRuleDoc(
        "DP attention, DP > 1, a target whose attention splits over attn_tp_size",
        "the target's heads and KV heads split over the attention-TP group (TP / DP), not the "
        "TP group: judged at that size, replacing the TP-size heads finding",
        ("layout.heads_attn_tp", "tp.heads_indivisible"),
        (ATTN_TP, TP_HEADS),
    ),
    LayoutRuleDoc(
        "EP on (EP size = TP), a MoE target",
        "the routed experts must divide by the EP size: FusedMoE asserts at load",
        ("layout.experts_indivisible", "layout.experts_split"),
        (EXPERTS, EP_SIZE),
    ),
    LayoutRuleDoc(
        "PD prefill or decode role",
        "both roles need the EAGLE3 arguments: the decode server's first draft step starts from "
        "the top-k and hidden states the prefill server's draft sends",
        ("layout.pd_spec_both",),
        (PD_SEND, PD_RECV),
    ),
)
