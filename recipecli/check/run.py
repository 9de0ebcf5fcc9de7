"""``run_check``: the checkpoint rules and the engine models on one pair, merged into a
:class:`CheckResult`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from recipecli.check.rules import RULES, _doc
from recipecli.checkpoint.model import Checkpoint
from recipecli.codes import finding
from recipecli.draft import DraftModel, StatedConvention, canonical_draft, ids_convention
from recipecli.engines import ENGINES, engine_model
from recipecli.engines.base import EngineModel, PairContext
from recipecli.engines.common import (
    SharingRow,
)
from recipecli.engines.layout import (
    Layout,
    LayoutDict,
    LayoutRequest,
    LayoutSharing,
    expand,
    layout_rules,
    layout_sharing,
)
from recipecli.findings import Finding, has_errors
from recipecli.target import TargetModel, target_model

# --------------------------------------------------------------------------- driver


@dataclass(frozen=True)
class CheckResult:
    """What `check` returns: models, findings, the sharing table and per-engine readiness.

    Attributes:
        resolved: engine -> value name -> ``{"value", "origin"}`` as that engine model resolved it
            (``H``, ``k``, ``aux_layers``, ``architecture`` …).
        engine_versions: engine -> ``{"repo", "version"}`` modelled.
    """

    target_source: str
    draft_source: str
    target: TargetModel
    draft: DraftModel
    findings: tuple[Finding, ...]
    embed_sharing: tuple[SharingRow, ...]
    engines: tuple[str, ...]
    tps: tuple[int, ...]
    resolved: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    engine_versions: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: the layouts checked (None: no layout option given, today's TP-only output)
    layouts: tuple[Layout, ...] | None = None
    #: the findings a layout causes, each with its layout (``layout.unfit`` ones included)
    layout_findings: tuple[tuple[Layout, Finding], ...] = ()
    #: the embedding/head sharing per layout checked (engine, then layout order; empty without
    #: a layout option): in the JSON, ``embed_sharing`` rows carrying a ``layout``
    layout_sharing: tuple[LayoutSharing, ...] = ()
    #: engine -> its accounting (``recipecli.engines.accounting.Accounting``), only with
    #: ``explain`` (``check --explain``); ``engines.<engine>.accounting`` in the JSON
    accounting: Mapping[str, Any] = field(default_factory=dict)

    def ok(self, strict: bool = False) -> bool:
        every = [*self.findings, *(f for _, f in self.layout_findings)]
        return not has_errors(every, strict=strict)

    def layout_verdict(self, engine: str, lay: Layout) -> tuple[bool, list[Finding]]:
        """(ready, the findings that decided it) for ``engine`` at ``lay``: ready when no error
        of the engine (general, at ``lay.tp`` or of ``lay``); the deciding findings are those
        errors (the layout's first), else the layout's own warnings and infos. A layout finding
        whose evidence ``waives`` ``{code, what}`` replaces that TP finding at ``lay.tp`` (SGLang's
        heads under DP attention)."""
        own = [f for la, f in self.layout_findings if la == lay and f.engine in (engine, "any")]
        mine = [f for f in self.findings if f.engine in (engine, "any")]
        waived = [w for f in own if isinstance(w := f.evidence.get("waives"), Mapping)]
        errs = [f for f in own if f.severity == "error"] + [
            f
            for f in mine
            if f.severity == "error"
            and f.tp in (None, lay.tp)
            and not any(
                f.tp == lay.tp and f.code == w["code"] and f.evidence.get("what") == w["what"]
                for w in waived
            )
        ]
        return (not errs, errs or own)

    def layout_rows(self, engine: str) -> list[dict[str, Any]]:
        """``engines.<engine>.layouts``: each checked layout with ``ready`` and ``codes``."""
        rows: list[dict[str, Any]] = []
        for lay in self.layouts or ():
            ready, why = self.layout_verdict(engine, lay)
            codes = list(dict.fromkeys(f.code for f in why))
            rows.append({**lay.to_dict(), "ready": ready, "codes": codes})
        return rows

    def _engine_dict(self, engine: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ready": bool(self.ready_tps(engine)),
            "ready_tp": self.ready_tps(engine),
        }
        if self.layouts is not None:
            out["layouts"] = self.layout_rows(engine)
        if engine in self.accounting:
            out["accounting"] = self.accounting[engine].to_dict()
        return out

    def _findings_dicts(self) -> list[dict[str, Any]]:
        out = [f.to_dict() for f in self.findings]
        for lay, f in self.layout_findings:
            layout: LayoutDict = lay.to_dict()
            out.append({**f.to_dict(), "layout": dict(layout)})
        return out

    def ready_tps(self, engine: str) -> list[int]:
        """TP sizes at which ``engine`` has no error finding (general or for that TP)."""
        errs = [f for f in self.findings if f.severity == "error" and f.engine in (engine, "any")]
        if any(f.tp is None for f in errs):
            return []
        bad = {f.tp for f in errs}
        return [tp for tp in self.tps if tp not in bad]

    def to_dict(self, strict: bool = False) -> dict[str, Any]:
        return {
            "target": {"source": self.target_source, **self.target.to_dict()},
            "draft": {"source": self.draft_source, **self.draft.to_dict()},
            "engines": {e: self._engine_dict(e) for e in self.engines},
            "findings": self._findings_dicts(),
            "embed_sharing": [r.to_dict() for r in self.embed_sharing]
            + [r.to_dict() for r in self.layout_sharing],
            "resolved": {e: dict(v) for e, v in self.resolved.items()},
            "engine_versions": {e: dict(v) for e, v in self.engine_versions.items()},
            "ok": self.ok(strict),
        }


def run_check(
    target_ck: Checkpoint,
    draft_ck: Checkpoint,
    *,
    engines: Sequence[str] = ENGINES,
    tps: Sequence[int] = (1, 2, 4, 8),
    draft_tp: int | None = None,
    max_model_len: int | None = None,
    kernel: str = "skip",
    layouts: LayoutRequest | None = None,
    method: str | None = None,  # None: the EAGLE3 check as before (issue #27)
    num_speculative_tokens: int | None = None,
    explain: bool = False,
    aux_id_convention: StatedConvention | None = None,
) -> CheckResult:
    """Run the checkpoint rules and every requested engine model on a target/draft pair.

    Args:
        target_ck, draft_ck: checkpoints from :func:`recipecli.checkpoint.open_checkpoint`.
        engines: engine names (:data:`recipecli.engines.ENGINES`).
        tps: target tensor-parallel sizes to check.
        draft_tp: vLLM ``draft_tensor_parallel_size`` (None = the target TP).
        max_model_len: serving length for ``maxpos.short`` (default: target max_position_embeddings).
        kernel: ``auto|cpu|cuda|skip``; anything but ``skip`` runs the fused-norm kernel check.
        layouts: the layout options (:class:`LayoutRequest`); None = TP only, as before.
        explain: keep each engine's accounting (``CheckResult.accounting``, ``check --explain``).
        method, num_speculative_tokens: see :func:`recipecli.engines.methods.run_methods`.
        aux_id_convention: the convention the draft's aux ids are written in, as the user states
            it (``check --aux-id-convention``; ``DraftModel.stated_convention``), read by the aux
            findings before the format's; None = the format's (docs/check.md#aux-layer-conventions).

    Returns:
        :class:`CheckResult`, with each engine model's resolved values in ``resolved``.

    Raises:
        UsageError: an unknown engine name.
    """
    draft = canonical_draft(draft_ck)
    if aux_id_convention is not None:
        draft = replace(draft, stated_convention=aux_id_convention)
    ctx = PairContext(target_ck, draft_ck, target_model(target_ck), draft,
                      tuple(tps), draft_tp, max_model_len)  # fmt: skip
    models = [engine_model(e) for e in engines]
    findings = _rule_findings(ctx)
    chosen, findings = _method_run(ctx, findings, method, engines, num_speculative_tokens)
    rows: list[SharingRow] = []
    resolved: dict[str, dict[str, Any]] = {}
    accounting: dict[str, Any] = {}
    if ctx.draft.is_eagle3 and chosen in (None, "eagle3"):
        findings += _run_models(ctx, models, rows, resolved, accounting if explain else None)
        findings.extend(_aux_summary(ctx, resolved))
        findings.extend(kernel_findings(draft_ck, kernel, tuple(engines)))
    findings.sort(key=_finding_order)
    return CheckResult(
        target_ck.display_name,
        draft_ck.display_name,
        ctx.target,
        ctx.draft,
        tuple(findings),
        tuple(rows),
        tuple(engines),
        ctx.tps,
        resolved,
        {m.name: m.version_info() for m in models},
        *_layout_run(ctx, engines, layouts, rows),
        accounting,
    )


def _method_run(
    ctx: PairContext,
    findings: list[Finding],
    method: str | None,
    engines: Sequence[str],
    tokens: int | None,
) -> tuple[str | None, list[Finding]]:
    """(the method checked, the findings with its ``method.*`` ones): None and ``findings``
    unchanged without ``method``; ``draft.not_eagle3`` dropped for a method other than EAGLE3."""
    if method is None:
        return None, findings
    from recipecli.engines.methods import run_methods

    chosen, more = run_methods(ctx.target_ck, ctx.draft_ck, ctx.draft, method, engines, tokens)
    if chosen not in (None, "eagle3"):  # the EAGLE3 contract is not this method's
        findings = [f for f in findings if f.code != "draft.not_eagle3"]
    return chosen, findings + more


def _layout_run(
    ctx: PairContext, engines: Sequence[str], req: LayoutRequest | None, rows: Sequence[SharingRow]
) -> tuple[
    tuple[Layout, ...] | None, tuple[tuple[Layout, Finding], ...], tuple[LayoutSharing, ...]
]:
    """The layouts of ``req`` that fit, every layout finding (one ``layout.unfit`` per layout
    too large for the GPUs given, then each engine's rules on each fitting layout, only for an
    EAGLE3 draft) and the sharing per layout (:func:`_layout_sharing`, from the TP ``rows``).
    (None, (), ()) without ``req``."""
    if req is None:
        return None, (), ()
    fit, unfit = expand(ctx.tps, req)
    out: list[tuple[Layout, Finding]] = [
        (
            lay,
            finding(
                "layout.unfit",
                f"{lay.label()} takes {lay.gpus} GPUs, more than the {req.gpus} of "
                f"{req.nodes} node(s) x {req.gpus_per_node}: not checked",
                gpus=lay.gpus,
                available=req.gpus,
            ),
        )
        for lay in unfit
    ]
    if ctx.draft.is_eagle3:
        for e in engines:
            rules = layout_rules(e)
            out += [(lay, f) for lay in fit for f in rules(ctx, lay)]
    return tuple(fit), tuple(out), _layout_sharing(ctx, engines, fit, rows)


def _layout_sharing(
    ctx: PairContext, engines: Sequence[str], fit: Sequence[Layout], rows: Sequence[SharingRow]
) -> tuple[LayoutSharing, ...]:
    """Each engine's sharing at each layout of ``fit`` (its layout module's ``SHARING`` on its
    TP row at the layout's TP size); none for an engine without a TP row there (its model
    stopped before the sharing step)."""
    out: list[LayoutSharing] = []
    for e in engines:
        rule = layout_sharing(e)
        by_tp = {r.tp: r for r in rows if r.engine == e}
        out += [rule(ctx, lay, by_tp[lay.tp]) for lay in fit if rule and lay.tp in by_tp]
    return tuple(out)


#: errors first, then warnings, then info
_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def _finding_order(f: Finding) -> tuple[int, str, str, int]:
    """The order of a result's findings: severity, code, engine, TP (general ones first)."""
    return (_SEVERITY_ORDER[f.severity], f.code, f.engine, f.tp or 0)


def _rule_findings(ctx: PairContext) -> list[Finding]:
    """The checkpoint rules' findings, in :data:`RULES` order (those that need an EAGLE3 draft
    only when it is one)."""
    findings: list[Finding] = []
    for r in RULES:
        if r.needs_eagle3 and not ctx.draft.is_eagle3:
            continue
        findings.extend(r.fn(ctx))
    return findings


def _run_models(
    ctx: PairContext,
    models: Sequence[EngineModel],
    rows: list[SharingRow],
    resolved: dict[str, dict[str, Any]],
    accounting: dict[str, Any] | None = None,
) -> list[Finding]:
    """Run each engine model on the pair: its findings (returned, in model order), its
    embedding-sharing rows (appended to ``rows``), its resolved values (``resolved[engine]``:
    value name -> ``{"value", "origin"}``) and, when ``accounting`` is given, its accounting
    (``EngineModel.explain``; none for a run that stopped early)."""
    findings: list[Finding] = []
    draft = ctx.draft.to_dict()
    written = {k: draft.get(k) for k in CONFIG_VALUES}
    for model in models:
        run = model.run(ctx)
        findings.extend(run.findings)
        rows.extend(run.sharing)
        resolved[model.name] = {
            k: _resolved_entry(v.value, v.origin, written.get(k)) for k, v in run.resolved.items()
        }
        explained = model.explain(run) if accounting is not None else None
        if accounting is not None and explained is not None:
            accounting[model.name] = explained
    return findings


#: resolved values the draft's config also writes (``DraftModel`` geometry): ``resolved`` gives
#: the config's beside the engine's where they differ (issue #24 item 7)
CONFIG_VALUES: tuple[str, ...] = (
    "H",
    "nh",
    "nkv",
    "hd",
    "I",
    "layers",
    "eps",
    "V",
    "Vd",
    "Ht",
    "k",
)


def _resolved_entry(value: Any, origin: str, written: Any) -> dict[str, Any]:
    """``resolved.<engine>.<name>``: ``{"value", "origin"}``, the engine's value and where it
    comes from, plus ``config_value`` when the draft's config writes another (e.g. the fc chunk
    count ``k``: the config's id count where the engine counts otherwise)."""
    out = {"value": value, "origin": origin}
    if written is not None and value is not None and written != value:
        out["config_value"] = written
    return out


def _aux_summary(ctx: PairContext, resolved: Mapping[str, Mapping[str, Any]]) -> list[Finding]:
    """``aux.convention`` (info): the ids as written, what each engine captures, what the ids'
    convention says the draft was trained on (the one stated with ``check --aux-id-convention``,
    else boundary ids when a layer-output list reaches L, else the format's), and why that
    convention. Engines that differ report ``aux.mismatch``."""
    from recipecli.engines.common import trained_layers

    d, L = ctx.draft, ctx.target.L
    if d.aux_ids is None or L is None:
        return []
    per_engine = {
        e: list(r["aux_layers"]["value"]) for e, r in resolved.items() if "aux_layers" in r
    }
    trained = trained_layers(d, L)
    conv, reason = ids_convention(d.format, d.aux_ids, L, d.stated_convention)
    named = d.stated_convention or ("boundary" if reason == "boundary" else conv) or "unknown"
    detail = "; ".join(f"{e} captures hidden_states{lay}" for e, lay in per_engine.items())
    why = _why_convention(d.format, named, reason, L)
    msg = f"explicit aux ids {list(d.aux_ids)} ({d.aux_ids_where}): " + "; ".join(
        x for x in (detail, why) if x
    )
    if trained is not None:
        msg += f", i.e. trained on hidden_states{trained}"
    differs = [
        e for e, lay in per_engine.items() if trained is not None and lay != sorted(set(trained))
    ]
    return [
        finding(
            "aux.convention",
            msg,
            source=_doc("aux-layer-conventions", "vLLM PR #43671", "SGLang PR #32334"),
            ids=list(d.aux_ids),
            captured=per_engine,
            trained_on=trained,
            convention=named,
            convention_reason=reason,
            differs=differs,
        )
    ]


def _why_convention(fmt: str | None, named: str, reason: str, L: int) -> str:
    """The clause of ``aux.convention`` that names the ids' convention ``named`` and its
    ``reason`` (``stated``, ``boundary`` or ``format``; ``L``: the target's layer count)."""
    if reason == "stated":
        return f"stated --aux-id-convention {named}"
    if reason == "boundary":
        return (
            f"format {fmt} writes layer-output ids, but the largest equals the target's {L} layers: "
            "boundary ids (0 = embedding output, L = last layer's output), hidden-state indices"
        )
    if named == "unknown":
        return (
            f"format {fmt} does not say which convention its ids are written in, so the states it "
            "was trained on cannot be known: state it with check --aux-id-convention "
            "layer-output|hidden-state|boundary"
        )
    return f"format {fmt} writes {named} ids"


def kernel_findings(draft_ck: Checkpoint, mode: str, engines: Sequence[str]) -> list[Finding]:
    """Fused-norm kernel findings (``kernel.*``) from :mod:`recipecli.kernelcheck`; nothing for
    ``skip`` (torch is not imported then)."""
    if mode == "skip":
        return []
    try:
        from recipecli import kernelcheck
    except ImportError:
        return [
            finding(
                "kernel.skipped",
                "kernel check unavailable in this build (install the kernels extra)",
                source="docs/verify-kernel.md",
            )
        ]
    return [f for f in kernelcheck.kernel_findings(draft_ck, mode) if f.engine in (*engines, "any")]
