"""vLLM's layout rules beyond TP (issue #25): EAGLE3 with pipeline parallelism under Model
Runner V2 (the default runner at the pin: ``VllmConfig.use_v2_model_runner``), where the draft
runs and on which ranks, which embedding it uses there, how the target's layers split
by stage, and how expert parallelism deals out the routed experts.

Reads the ``aux_over_pp`` / ``decoder`` / ``aux_over_pp_evidence`` keys that
``scripts/engine_data_vllm.py`` writes into each EAGLE3 target of the data file.
"""

from __future__ import annotations

from typing import TypedDict, cast

from recipecli.codes import finding
from recipecli.engines.base import PairContext, SharingRow, engine_data
from recipecli.engines.layout import (
    Layout,
    LayoutRuleDoc,
    LayoutSharing,
    experts_per_rank,
    kept,
    routed_experts,
)
from recipecli.engines.vllm.sources import NAME, src
from recipecli.engines.vllm.spec import SPEC
from recipecli.findings import Finding

#: Model Runner V2 runs this under PP and raises ValueError when the inner decoder lacks
#: ``supports_aux_hidden_states_over_pp`` (called from set_eagle3_aux_hidden_state_layers)
VERIFY_PP = src(
    "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py",
    "verify_supports_aux_hidden_states_over_pp",
)
#: the speculator (the draft) is built only when ``self.is_last_pp_rank``
DRAFT_STAGE = src("vllm/v1/worker/gpu/model_runner.py", "GPUModelRunner.__init__ (speculator)")
#: layers per PP stage (without VLLM_PP_LAYER_PARTITION)
PP_SPLIT = src("vllm/distributed/utils.py", "get_pp_indices")
#: under PP with EAGLE3 the target builds its embedding on the last PP stage too (LlamaModel and
#: Qwen2Model ``__init__`` call it, and the decoders that accept aux capture over PP derive from
#: them or call it), so a draft without embed_tokens still borrows it there
TARGET_EMBED = src("vllm/model_executor/models/utils.py", "spec_decode_needs_target_embed")
#: the sharing itself: ``maybe_share_target_embed``
PP_SHARE = src("vllm/v1/worker/gpu/spec_decode/eagle/utils.py", "maybe_share_target_embed")
#: rank order ExternalDP x DP x PP x PCP x TP
RANKS = src("vllm/distributed/parallel_state.py", "initialize_model_parallel")
#: with --enable-expert-parallel the MoE layers flatten TP across DP: EP size = TP x DP
EP_SIZE = src("vllm/model_executor/layers/fused_moe/config.py", "FusedMoEParallelConfig.make")
#: experts dealt out evenly, the remainder one each to the first EP ranks (no divisibility)
EXPERT_MAP = src(
    "vllm/model_executor/layers/fused_moe/expert_map_manager.py", "determine_expert_map"
)


class _PpTarget(TypedDict, total=False):
    """The keys of a vLLM ``targets`` entry these rules read."""

    class_: str
    supports_eagle3: bool
    aux_over_pp: bool | None
    decoder: str | None
    aux_over_pp_evidence: str


def _target(arch: str) -> _PpTarget | None:
    """The data file's entry for ``arch`` (``class`` read into ``class_``), None if absent."""
    raw = engine_data(SPEC)["targets"].get(arch)
    if raw is None:
        return None
    entry = cast(_PpTarget, {k: v for k, v in raw.items() if k != "class"})
    entry["class_"] = str(raw["class"])
    return entry


def pp_partitions(num_layers: int, pp: int) -> list[int]:
    """Decoder layers per pipeline stage as vLLM's ``get_pp_indices`` splits them without
    ``VLLM_PP_LAYER_PARTITION``: ``num_layers // pp`` each, the remainder one layer each on
    the stages before the last, from the second-to-last backwards. The layers need not
    divide by ``pp`` (vLLM logs the uneven split and goes on).

    Raises:
        ValueError: ``pp`` < 1 or ``num_layers`` < 0.
    """
    if pp < 1 or num_layers < 0:
        raise ValueError(f"need pp >= 1 and num_layers >= 0, got pp={pp}, layers={num_layers}")
    parts = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        parts[-i] += 1
    return parts


def _pp_verdict(ctx: PairContext, lay: Layout) -> list[Finding]:
    """``layout.pp_refused`` / ``layout.pp_unknown`` for an EAGLE3 target under PP; nothing
    when vLLM accepts it, or when the target is not an EAGLE3 target (the model says so)."""
    arch = ctx.target.architecture
    t = _target(arch)
    if t is None or not t.get("supports_eagle3"):
        return []
    ok = t.get("aux_over_pp")
    decoder = t.get("decoder")
    where = t.get("aux_over_pp_evidence", "")
    if ok is None:
        return [
            finding(
                "layout.pp_unknown",
                f"vLLM PP {lay.pp}: whether {arch}'s decoder declares "
                "supports_aux_hidden_states_over_pp cannot be known statically; Model Runner V2 "
                "refuses EAGLE3 with PP at start-up when it does not",
                engine=NAME,
                tp=lay.tp,
                source=VERIFY_PP,
                architecture=arch,
                decoder=decoder,
                aux_over_pp=ok,
            )
        ]
    if ok:
        return []
    quote = f"{t['class_']} does not support eagle3 with pipeline parallelism"
    return [
        finding(
            "layout.pp_refused",
            f"vLLM refuses EAGLE3 at PP {lay.pp} at start-up: ValueError: {quote} (decoder "
            f"{decoder} lacks supports_aux_hidden_states_over_pp, {where}); "
            "use PP 1",
            engine=NAME,
            tp=lay.tp,
            source=VERIFY_PP,
            quote=quote,
            architecture=arch,
            decoder=decoder,
            aux_over_pp=ok,
        )
    ]


def draft_ranks(lay: Layout) -> list[list[int]]:
    """Global ranks of the draft per DP replica: the TP ranks of the last PP stage, in vLLM's
    rank order DP x PP x TP (``initialize_model_parallel``, PCP 1)."""
    tp, pp = lay.tp, lay.pp
    return [[d * pp * tp + (pp - 1) * tp + r for r in range(tp)] for d in range(lay.dp)]


def _draft_stage(ctx: PairContext, lay: Layout) -> list[Finding]:
    """``layout.draft_stage``: the draft on the last of ``lay.pp`` stages (its ranks), the layer
    split, and which embedding it uses there."""
    L = ctx.target.L
    split = pp_partitions(L, lay.pp) if L is not None else None
    ranks = draft_ranks(lay)
    msg = f"vLLM PP {lay.pp}: the EAGLE3 draft runs on the last PP stage only (ranks {ranks[0]}"
    msg += f" of DP replica 0 of {lay.dp})" if lay.dp > 1 else ")"
    if split is not None:
        msg += f"; the target's {L} layers split {split} by stage"
        if L is not None and L % lay.pp:
            msg += f" ({L} not divisible by {lay.pp}: vLLM splits unevenly and goes on)"
    embed: str | None = None
    if ctx.draft.has_embed:
        embed = "own"
        msg += "; the draft keeps its own embed_tokens there"
    elif ctx.draft_ck.tensors and (_target(ctx.target.architecture) or {}).get("aux_over_pp"):
        # every decoder that accepts aux capture over PP builds its embedding on the last stage
        # for EAGLE3 (LlamaModel / Qwen2Model or spec_decode_needs_target_embed itself)
        embed = "share"
        msg += "; it shares the target's embedding, which the target builds on the last stage too"
    return [
        finding(
            "layout.draft_stage",
            msg,
            engine=NAME,
            tp=lay.tp,
            source=(DRAFT_STAGE, PP_SPLIT, RANKS, TARGET_EMBED, PP_SHARE),
            stage=lay.pp - 1,
            layers_per_stage=split,
            ranks=ranks,
            embed=embed,
        )
    ]


def ep_size(lay: Layout) -> int:
    """vLLM's EP size with --enable-expert-parallel: TP x DP (1 = EP off: ``use_ep`` needs
    TP x DP > 1)."""
    return lay.tp * lay.dp if lay.ep else 1


def _experts(ctx: PairContext, lay: Layout) -> list[Finding]:
    """``layout.experts_split`` (info): the EP size and the routed experts per EP rank."""
    n = routed_experts(ctx.target_ck.text.config)
    size = ep_size(lay)
    if n is None or size == 1:
        return []
    per = experts_per_rank(n, size)
    msg = f"vLLM EP size {size} (TP {lay.tp} x DP {lay.dp}): {n} routed experts, "
    if len(set(per)) == 1:
        msg += f"{per[0]} per rank"
    elif min(per) == 0:  # fewer experts than EP ranks: no refusal outside EPLB
        msg += (
            f"one on each of the first {n} ranks and none on the other {size - n}: "
            "determine_expert_map gives those ranks no local expert and vLLM starts (no check "
            "of the expert count against the EP size outside EPLB); those ranks hold no expert "
            "weights, so a smaller EP size holds the same experts on fewer GPUs"
        )
    else:
        msg += (
            f"{max(per)} on the first {n % size} ranks and {min(per)} on the rest (uneven: "
            "vLLM allows it)"
        )
    return [
        finding(
            "layout.experts_split",
            msg,
            engine=NAME,
            tp=lay.tp,
            source=(EP_SIZE, EXPERT_MAP),
            ep_size=size,
            experts=n,
            experts_per_rank=sorted(set(per), reverse=True),
        )
    ]


def refusals(lay: Layout) -> list[Finding]:
    """vLLM refuses no layout for EAGLE3 whatever the pair (its PP verdict reads the target)."""
    return []


def layout_findings(ctx: PairContext, lay: Layout) -> list[Finding]:
    """vLLM's findings for ``lay``: under PP the aux-capture verdict and where the draft runs
    (its ranks, its embedding there); with EP the experts per rank. DP, DP attention and
    PD roles add no EAGLE3-specific refusal (docs/engines/layouts.md)."""
    out = _experts(ctx, lay)
    if lay.pp == 1:
        return out
    return _pp_verdict(ctx, lay) + _draft_stage(ctx, lay) + out


#: the target's lm_head is built on the last PP stage only (``PPMissingLayer`` elsewhere)
TARGET_HEAD = src("vllm/model_executor/models/llama.py", "LlamaForCausalLM.__init__")


def layout_sharing(ctx: PairContext, lay: Layout, row: SharingRow) -> LayoutSharing:
    """The draft's embedding/head sharing at ``lay`` from the TP row ``row``: the draft runs on
    the last PP stage's TP ranks of each DP replica (:func:`draft_ranks`), each replica a TP
    group with its own copy, so the TP row's shapes hold there. Under PP the target builds its
    lm_head on the last stage, and its embedding there too for EAGLE3 when its decoder accepts
    aux capture over PP (``spec_decode_needs_target_embed``); a decoder without that attribute
    is refused at start-up (stage None), one built at run time is left open (``holds`` None)."""
    stage, ranks = lay.pp - 1, draft_ranks(lay)
    if lay.pp == 1:
        note = "each DP replica is a TP group holding its own copy" if lay.dp > 1 else ""
        return kept(lay, row, stage, ranks, True, note)
    t = _target(ctx.target.architecture) or {}
    ok = t.get("aux_over_pp")
    if ok is False:
        return kept(lay, row, None, None, None, "vLLM refuses EAGLE3 here (layout.pp_refused)")
    if ok is None:
        note = (
            "whether the target builds its embedding on the last stage is not known statically "
            "(layout.pp_unknown)"
        )
        return kept(lay, row, stage, ranks, None, note)
    note = (
        "the target builds its lm_head, and for EAGLE3 its embedding, on the last stage too "
        "(spec_decode_needs_target_embed): the sharing finds them on the draft's ranks"
    )
    return kept(lay, row, stage, ranks, True, note)


RULES = layout_findings
REFUSALS = refusals
SHARING = layout_sharing

#: the rules above as vLLM's engine page lists them
DOC_RULES: tuple[LayoutRuleDoc, ...] = (
    LayoutRuleDoc(
        "PP > 1, the target's inner decoder lacks supports_aux_hidden_states_over_pp",
        "Model Runner V2 refuses EAGLE3 at start-up: ValueError: <target class> does not support "
        "eagle3 with pipeline parallelism (null in the data file: cannot be known statically)",
        ("layout.pp_refused", "layout.pp_unknown"),
        (VERIFY_PP,),
    ),
    LayoutRuleDoc(
        "PP > 1",
        "the draft (the speculator) runs on the last PP stage only, on its TP ranks of each DP "
        "replica; the target's layers split L // PP per stage, the remainder one each on the "
        "stages before the last (no divisibility needed); a draft without embed_tokens shares "
        "the target's, which the target builds on the last stage too for EAGLE3",
        ("layout.draft_stage",),
        (DRAFT_STAGE, PP_SPLIT, TARGET_EMBED),
    ),
    LayoutRuleDoc(
        "EP on, a MoE target",
        "EP size = TP x DP; the routed experts are dealt out evenly, the remainder one each to "
        "the first EP ranks (no divisibility needed)",
        ("layout.experts_split",),
        (EP_SIZE, EXPERT_MAP),
    ),
)
