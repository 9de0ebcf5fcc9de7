"""Deployment layouts beyond tensor parallelism (issue #25): the :class:`Layout` type, the
product of ``check``'s layout options, which layouts fit the GPUs given, and the rules
interface each engine's layout module provides.

Each engine's own layout rules live in ``recipecli/engines/<engine>/layout.py``
(:attr:`recipecli.engines.spec.EngineSpec.layout_rules` names that module).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict

if TYPE_CHECKING:
    from recipecli.engines.base import PairContext, SharingRow, Source
    from recipecli.findings import Finding

#: a prefill/decode disaggregation role; ``both`` = an aggregate (non-PD) server
Role = Literal["prefill", "decode", "both"]
ROLES: tuple[Role, ...] = ("prefill", "decode", "both")


class LayoutDict(TypedDict):
    """A layout as JSON writes it (``engines.<engine>.layouts[]`` and a finding's ``layout``)."""

    tp: int
    pp: int
    dp: int
    dp_attention: bool
    ep: bool
    role: Role


@dataclass(frozen=True, order=True)
class Layout:
    """One deployment shape of the target.

    Attributes:
        tp: target tensor-parallel size.
        pp: pipeline-parallel size (stages).
        dp: data-parallel size (replicas, or attention DP ranks with ``dp_attention``).
        dp_attention: DP attention (SGLang ``--enable-dp-attention``; vLLM's DP for MoE).
        ep: expert parallelism on.
        role: PD role.
    """

    tp: int
    pp: int = 1
    dp: int = 1
    dp_attention: bool = False
    ep: bool = False
    role: Role = "both"

    @property
    def gpus(self) -> int:
        """GPUs the layout takes: ``tp * pp * dp`` (each DP rank a TP x PP group, as vLLM and
        tokenspeed count ranks; with SGLang's DP attention the DP ranks split the TP group, so
        this is an upper bound there)."""
        return self.tp * self.pp * self.dp

    @property
    def plain_tp(self) -> bool:
        """True for the layouts ``ready_tp`` describes: PP 1, DP 1, no EP."""
        return self.pp == 1 and self.dp == 1 and not self.ep

    def to_dict(self) -> LayoutDict:
        return {
            "tp": self.tp,
            "pp": self.pp,
            "dp": self.dp,
            "dp_attention": self.dp_attention,
            "ep": self.ep,
            "role": self.role,
        }

    def label(self) -> str:
        """Short text form: ``TP 4 PP 2 DP 1`` plus ``dp-attn``, ``EP``, the role when PD."""
        parts = [f"TP {self.tp}", f"PP {self.pp}", f"DP {self.dp}"]
        if self.dp_attention:
            parts.append("dp-attn")
        if self.ep:
            parts.append("EP")
        if self.role != "both":
            parts.append(self.role)
        return " ".join(parts)


@dataclass(frozen=True)
class LayoutRequest:
    """``check``'s layout options.

    Attributes:
        pps: pipeline-parallel sizes (a list, like ``--tp``).
        dp, dp_attention, ep, role: as :class:`Layout`.
        nodes, gpus_per_node: the GPUs available (``nodes`` None = no limit).
    """

    pps: tuple[int, ...] = (1,)
    dp: int = 1
    dp_attention: bool = False
    ep: bool = False
    role: Role = "both"
    nodes: int | None = None
    gpus_per_node: int = 8

    @property
    def gpus(self) -> int | None:
        """GPUs available: ``nodes * gpus_per_node``, None without ``nodes``."""
        return None if self.nodes is None else self.nodes * self.gpus_per_node


def expand(tps: Sequence[int], req: LayoutRequest) -> tuple[list[Layout], list[Layout]]:
    """The layouts to check: the product of ``tps`` and ``req.pps`` with ``req``'s DP, DP
    attention, EP and role, split into (fitting, not fitting the GPUs given).

    Returns:
        two lists in (tp, pp) order; the second is empty when ``req.nodes`` is None.
    """
    fit: list[Layout] = []
    unfit: list[Layout] = []
    cap = req.gpus
    for tp, pp in itertools.product(tps, req.pps):
        lay = Layout(tp, pp, req.dp, req.dp_attention, req.ep, req.role)
        (unfit if cap is not None and lay.gpus > cap else fit).append(lay)
    return fit, unfit


@dataclass(frozen=True)
class LayoutRuleDoc:
    """One layout rule as an engine page lists it (``DOC_RULES`` of an engine's layout module).

    Attributes:
        layout: the layouts it covers (``PP > 1``).
        verdict: what the engine does there, in one sentence.
        codes: the finding codes it reports.
        sources: the engine code it comes from (:class:`recipecli.engines.base.Source`).
    """

    layout: str
    verdict: str
    codes: tuple[str, ...]
    sources: tuple[Source, ...]


class LayoutRules(Protocol):
    """What ``recipecli/engines/<engine>/layout.py`` provides as ``RULES``."""

    def __call__(self, ctx: PairContext, layout: Layout) -> list[Finding]:
        """The engine's findings for ``layout`` (only those the layout itself causes: the
        engine model's TP findings are not repeated); each finding's ``tp`` is ``layout.tp``."""
        ...


def layout_rules(engine: str) -> LayoutRules:
    """The layout rules of ``engine`` (the module its spec's ``layout_rules`` names).

    Raises:
        UsageError: an unknown engine name.
    """
    from recipecli.engines import engine_spec

    rules: LayoutRules = import_module(engine_spec(engine).layout_rules).RULES
    return rules


def layout_docs(engine: str) -> tuple[LayoutRuleDoc, ...]:
    """The ``DOC_RULES`` of ``engine``'s layout module (what its engine page lists).

    Raises:
        UsageError: an unknown engine name.
    """
    from recipecli.engines import engine_spec

    docs: tuple[LayoutRuleDoc, ...] = import_module(engine_spec(engine).layout_rules).DOC_RULES
    return docs


#: what ``recipecli/engines/<engine>/layout.py`` provides as ``REFUSALS``: the findings of a
#: layout the engine refuses for EAGLE3 whatever the pair (no checkpoint needed: ``lint`` runs
#: them on a recipe's serve layout); ``RULES`` reports them too
LayoutRefusals = Callable[[Layout], "list[Finding]"]


def layout_refusals(engine: str) -> LayoutRefusals:
    """The pair-independent layout refusals of ``engine`` (its layout module's ``REFUSALS``).

    Raises:
        UsageError: an unknown engine name.
    """
    from recipecli.engines import engine_spec

    refusals: LayoutRefusals = import_module(engine_spec(engine).layout_rules).REFUSALS
    return refusals


@dataclass(frozen=True)
class LayoutSharing:
    """The embedding/head sharing of one engine at one layout: the draft's ranks there and
    whether the sharing of its TP row (``check``'s per-TP sharing table) still holds on them.

    Attributes:
        layout: the layout.
        row: the engine's TP row at ``layout.tp`` (per-rank shapes [rows, H] and bytes).
        stage: the PP stage (0-based) the draft runs on; None when the engine refuses the layout.
        ranks: the draft's global ranks, one list per group the engine runs it in (a DP replica,
            or the one TP group SGLang's DP attention splits); None when refused.
        embed, head: the embedding and head verdicts on those ranks (``SharingRow``'s words, or
            ``refused``).
        holds: True when the TP row's sharing holds there, False when the layout breaks it,
            None when the engine refuses the layout or the pinned code leaves it open.
        note: what the engine does there, in words.
    """

    layout: Layout
    row: SharingRow
    stage: int | None
    ranks: list[list[int]] | None
    embed: str
    head: str
    holds: bool | None
    note: str

    def to_dict(self) -> dict[str, Any]:
        """The row as ``check --json`` writes it in ``embed_sharing``: the TP row's keys (its
        verdicts replaced by the layout's), then ``layout``, ``stage``, ``draft_ranks`` and
        ``holds``."""
        return {
            **self.row.to_dict(),
            "verdict": self.embed,
            "head_verdict": self.head,
            "note": self.note,
            "layout": dict(self.layout.to_dict()),
            "stage": self.stage,
            "draft_ranks": self.ranks,
            "holds": self.holds,
        }


#: what ``recipecli/engines/<engine>/layout.py`` provides as ``SHARING``: the sharing at a
#: layout from the engine's TP row at that layout's TP size
LayoutSharingRule = Callable[["PairContext", Layout, "SharingRow"], LayoutSharing]


def layout_sharing(engine: str) -> LayoutSharingRule | None:
    """The ``SHARING`` of ``engine``'s layout module, None when it has none (a plug-in engine).

    Raises:
        UsageError: an unknown engine name.
    """
    from recipecli.engines import engine_spec

    rule: LayoutSharingRule | None = getattr(
        import_module(engine_spec(engine).layout_rules), "SHARING", None
    )
    return rule


def kept(
    lay: Layout,
    row: SharingRow,
    stage: int | None,
    ranks: list[list[int]] | None,
    holds: bool | None,
    note: str,
) -> LayoutSharing:
    """A :class:`LayoutSharing` with the TP row's verdicts (``refused`` both when ``stage`` is
    None: the engine does not start the layout)."""
    if stage is None:
        return LayoutSharing(lay, row, None, None, "refused", "refused", None, note)
    return LayoutSharing(lay, row, stage, ranks, row.verdict, row.head_verdict, holds, note)


def rank_text(ranks: Sequence[Sequence[int]] | None) -> str:
    """Ranks as ``check`` prints them: each group a range when contiguous (``8-15``), groups
    joined by ``; `` (``-`` for None)."""
    if not ranks:
        return "-"
    out = []
    for g in ranks:
        contiguous = list(g) == list(range(g[0], g[0] + len(g)))
        out.append(f"{g[0]}-{g[-1]}" if contiguous and len(g) > 1 else ",".join(map(str, g)))
    return "; ".join(out)


#: text-config keys holding a MoE target's routed-expert count, as the HF config classes name
#: it: DeepSeek-V2/V3 ``n_routed_experts``, Qwen2/Qwen3-MoE ``num_experts``, Mixtral, gpt-oss
#: and MiniMax ``num_local_experts``
EXPERT_KEYS: tuple[str, ...] = ("n_routed_experts", "num_experts", "num_local_experts")


def routed_experts(text_config: Mapping[str, Any]) -> int | None:
    """The target's routed experts (the first of :data:`EXPERT_KEYS` set to an int > 1), None
    for a dense target."""
    for key in EXPERT_KEYS:
        n = text_config.get(key)
        if isinstance(n, int) and not isinstance(n, bool) and n > 1:
            return n
    return None


def experts_per_rank(experts: int, ep_size: int) -> list[int]:
    """Routed experts on each EP rank when ``experts`` are dealt out as evenly as possible, the
    remainder one each to the first ranks (vLLM ``determine_expert_map``, linear placement).

    Raises:
        ValueError: ``ep_size`` < 1.
    """
    if ep_size < 1:
        raise ValueError(f"need ep_size >= 1, got {ep_size}")
    base, extra = divmod(experts, ep_size)
    return [base + (1 if r < extra else 0) for r in range(ep_size)]
