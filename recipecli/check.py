"""`recipecli check TARGET DRAFT`: will this EAGLE3 draft serve with this target?

Two kinds of rules. Checkpoint rules (this module, :data:`RULES`) judge the draft itself and hold
for every engine: is it an EAGLE3 draft, is its ``d2t``/``t2d`` a valid map, was it trained for this
target's vocabulary. Engine rules are the steps of each engine's load path at a pinned version
(:mod:`recipecli.engines`): config resolution with the engine's defaults, draft architecture,
target support, aux hidden states, tensors, sharing and TP, positions. ``run_check`` runs both and
merges their findings and sharing tables. Rules read only config values, tensor headers, and the
values of ``d2t`` / ``t2d`` (never the weights).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from recipecli.checkpoint.model import Checkpoint
from recipecli.codes import finding
from recipecli.draft import TRAINED_CONVENTION, DraftModel, canonical_draft, detect_format
from recipecli.engines import ENGINES, engine_model
from recipecli.engines.base import PairContext
from recipecli.engines.common import (
    SharingRow,
    classify_d2t,
    default_aux_layers,
    pad64,
)
from recipecli.errors import UsageError
from recipecli.findings import Finding, has_errors
from recipecli.target import TargetModel, target_model

__all__ = [
    "ENGINES",
    "RULES",
    "TRAINED_CONVENTION",
    "CheckContext",
    "CheckResult",
    "SharingRow",
    "default_aux_layers",
    "format_result",
    "pad64",
    "parse_tps",
    "run_check",
]

#: Backwards-compatible name of the pair context the rules read.
CheckContext = PairContext

DOCS = "docs/check.md"

#: Codes reported from the engines' results together (not by one rule or step).
SUMMARY_CODES: tuple[str, ...] = ("aux.convention",)


def _doc(section: str, *refs: str) -> str:
    return f"{DOCS}#{section}" + (f"; {', '.join(refs)}" if refs else "")


@dataclass(frozen=True)
class Rule:
    """A checkpoint rule: the codes it may emit, its source, and its function."""

    codes: tuple[str, ...]
    source: str
    fn: Callable[[PairContext], Iterable[Finding]]
    needs_eagle3: bool = True


RULES: list[Rule] = []


def rule(
    *codes: str, source: str, needs_eagle3: bool = True
) -> Callable[
    [Callable[[PairContext], Iterable[Finding]]], Callable[[PairContext], Iterable[Finding]]
]:
    """Register a checkpoint rule emitting ``codes``; ``source`` cites where the fact comes from."""

    def deco(
        fn: Callable[[PairContext], Iterable[Finding]],
    ) -> Callable[[PairContext], Iterable[Finding]]:
        RULES.append(Rule(codes, source, fn, needs_eagle3))
        return fn

    return deco


# --------------------------------------------------------------------------- format


@rule("draft.format", "draft.not_eagle3", source=_doc("draft-formats"), needs_eagle3=False)
def rule_format(ctx: PairContext) -> Iterable[Finding]:
    d = ctx.draft
    if not d.is_eagle3:
        swapped = detect_format(ctx.target_ck.config, frozenset(ctx.target_ck.tensors)) is not None
        yield finding(
            "draft.not_eagle3",
            f"draft is not an EAGLE3 draft (architectures {list(ctx.draft_ck.config.get('architectures') or [])}, "
            "no speculators_model_type, no draft_vocab_size): "
            + (
                "the TARGET argument is an EAGLE3 draft — did you swap TARGET and DRAFT?"
                if swapped
                else "use an EAGLE3 checkpoint, or serve it with method 'eagle' if it is an EAGLE-1 head"
            ),
            source=_doc("draft-formats", "SGLang PR #21272"),
            architecture=d.architecture,
        )
        return
    yield finding(
        "draft.format",
        f"detected format {d.format}: {d.format_name}",
        source=_doc("draft-formats"),
        format=d.format,
        architecture=d.architecture,
    )


@rule("norm.output_meaning", source=_doc("norm-flags", "speculators PR #610"))
def rule_norm_output(ctx: PairContext) -> Iterable[Finding]:
    """``norm_output`` has two meanings: SpecForge's "norm before the head" and Eagle 3.1's
    post-norm chaining, which is how vLLM (``LlamaModel.forward``) and tokenspeed read it."""
    d = ctx.draft
    if d.norm_output is not None:
        yield finding(
            "norm.output_meaning",
            f"norm_output={d.norm_output} read as '{d.norm_output_meaning}' for format {d.format}; vLLM and "
            "tokenspeed read it as Eagle 3.1 post-norm chaining",
            source=_doc("norm-flags", "speculators PR #610"),
            norm_output=d.norm_output,
            meaning=d.norm_output_meaning,
        )


@rule("target.no_weights", "target.unchecked", source=_doc("checks-of-the-draft-itself"))
def rule_target_weights(ctx: PairContext) -> Iterable[Finding]:
    """A local target folder without weight files cannot be served; a bare config says nothing
    about the target's tensors (the sharing table then has no embedding bytes)."""
    ck = ctx.target_ck
    if ck.tensors:
        return
    if ck.kind in ("config", "snapshot"):
        yield finding(
            "target.unchecked",
            f"target source {ck.kind!r} has no tensor table: its embedding and head were not checked",
            source=_doc("checks-of-the-draft-itself"),
            kind=ck.kind,
        )
    else:
        yield finding(
            "target.no_weights",
            "target has no weight files (no model.safetensors, index or pytorch_model.bin next to "
            "config.json): its embedding and head were not checked, and there is nothing to serve "
            "yet; download the weights, or check a snapshot of them",
            source=_doc("checks-of-the-draft-itself"),
            root=ck.root,
        )


# --------------------------------------------------------------------------- vocabulary


@rule(
    "vocab.mismatch",
    "vocab.draft_larger",
    "vocab.d2t_invalid",
    "vocab.d2t_absolute",
    "vocab.d2t_identity",
    "vocab.t2d_invalid",
    "shape.d2t",
    source=_doc("vocabulary-maps"),
)
def rule_vocab(ctx: PairContext) -> Iterable[Finding]:
    """The draft's vocabulary against the target's, and its maps as maps (any engine)."""
    d, t = ctx.draft, ctx.target
    V = t.V
    if V is None:
        return
    if d.V is not None and d.V != V:
        yield finding(
            "vocab.mismatch",
            f"draft vocab_size {d.V} != target text vocab_size {V}: the draft was trained with another tokenizer",
            source=_doc("vocabulary-maps"),
            draft_vocab=d.V,
            target_vocab=V,
        )
    Vd = d.Vd
    if Vd > V:
        yield finding(
            "vocab.draft_larger",
            f"draft_vocab_size {Vd} is larger than the target vocab {V}",
            source=_doc("vocabulary-maps"),
            Vd=Vd,
            V=V,
        )
        return
    tensors = ctx.draft_ck.tensors
    if not tensors:
        return
    src_maps = _doc("vocabulary-maps", "verl-SpeCo PR #67")
    if d.has_d2t:
        info = tensors["d2t"]
        if tuple(info.shape) != (Vd,):
            yield finding(
                "shape.d2t",
                f"d2t has shape {list(info.shape)}, expected [{Vd}] (draft_vocab_size)",
                source=src_maps,
                expected=[Vd],
                found=list(info.shape),
            )
        elif info.dtype != "I64":
            yield finding(
                "vocab.d2t_invalid",
                f"d2t is {info.dtype}, engines expect int64 offsets",
                source=src_maps,
                reason="dtype",
                dtype=info.dtype,
            )
        else:
            d2t = ctx.value("d2t")
            if d2t is None:
                yield finding(
                    "vocab.values_unavailable",
                    "d2t values not available from this source; map not validated",
                    source=src_maps,
                )
            else:
                code, ev = classify_d2t(d2t, Vd, V)
                if code == "vocab.d2t_absolute":
                    yield finding(
                        code,
                        "d2t equals arange(Vd): absolute target ids were written where offsets are expected "
                        "(maps i -> 2i); store d2t = target_ids - arange(Vd)",
                        severity="error",
                        source=src_maps,
                        **ev,
                    )
                elif code:
                    yield finding(
                        code,
                        f"d2t is not a valid offset map ({ev['reason']}"
                        + (
                            f": draft id {ev['draft_id']} -> target id {ev['target_id']}, vocab {V}"
                            if "target_id" in ev
                            else f" at draft id {ev['draft_id']}: target ids {ev['target_ids']}"
                        )
                        + "); regenerate it from the sorted list of kept target ids",
                        severity="error",
                        source=src_maps,
                        **ev,
                    )
                elif Vd < V and not np.any(d2t):
                    yield finding(
                        "vocab.d2t_identity",
                        f"d2t is all zeros (identity) but Vd {Vd} < V {V}: draft ids map onto target ids 0..{Vd - 1}",
                        source=src_maps,
                        Vd=Vd,
                        V=V,
                    )
    if d.has_t2d:
        yield from _t2d(ctx, Vd, V, src_maps)


def _t2d(ctx: PairContext, Vd: int, V: int, source: str) -> Iterable[Finding]:
    d = ctx.draft
    tensors = ctx.draft_ck.tensors
    info = tensors["t2d"]
    if tuple(info.shape) != (V,) or info.dtype != "BOOL":
        yield finding(
            "vocab.t2d_invalid",
            f"t2d is {info.dtype} {list(info.shape)}, expected BOOL [{V}]",
            source=source,
            dtype=info.dtype,
            shape=list(info.shape),
            expected=[V],
        )
        return
    t2d = ctx.value("t2d")
    if t2d is None:
        return
    total = int(np.count_nonzero(t2d))
    if total != Vd:
        yield finding(
            "vocab.t2d_invalid",
            f"t2d marks {total} target ids but draft_vocab_size is {Vd}",
            source=source,
            true_count=total,
            Vd=Vd,
        )
        return
    if not (d.has_d2t and tuple(tensors["d2t"].shape) == (Vd,) and tensors["d2t"].dtype == "I64"):
        return
    d2t = ctx.value("d2t")
    if d2t is None:
        return
    tgt = np.arange(Vd, dtype=np.int64) + d2t.astype(np.int64)
    ok = (tgt >= 0) & (tgt < V)
    bad = np.nonzero(~ok | ~t2d[np.clip(tgt, 0, V - 1)])[0]
    if bad.size:
        yield finding(
            "vocab.t2d_invalid",
            f"t2d disagrees with d2t at {bad.size} draft id(s) (first {int(bad[0])} -> {int(tgt[bad[0]])})",
            source=source,
            count=int(bad.size),
            draft_id=int(bad[0]),
        )


@rule("tie.reduced_vocab", source=_doc("vocabulary-maps", "SpecForge #139", "speculators PR #74"))
def rule_tie(ctx: PairContext) -> Iterable[Finding]:
    d, t = ctx.draft, ctx.target
    V = t.V or d.V
    if d.tie_word_embeddings and V is not None and d.Vd < V:
        yield finding(
            "tie.reduced_vocab",
            f"tie_word_embeddings is true with draft_vocab_size {d.Vd} < {V}: the reduced head gets tied to the full "
            "embedding (shape mismatch at load); set tie_word_embeddings to false",
            source=_doc("vocabulary-maps", "SpecForge #139", "speculators PR #74"),
            Vd=d.Vd,
            V=V,
        )


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

    def ok(self, strict: bool = False) -> bool:
        return not has_errors(self.findings, strict=strict)

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
            "engines": {
                e: {"ready": bool(self.ready_tps(e)), "ready_tp": self.ready_tps(e)}
                for e in self.engines
            },
            "findings": [f.to_dict() for f in self.findings],
            "embed_sharing": [r.to_dict() for r in self.embed_sharing],
            "resolved": {e: dict(v) for e, v in self.resolved.items()},
            "engine_versions": {e: dict(v) for e, v in self.engine_versions.items()},
            "ok": self.ok(strict),
        }


def parse_tps(text: str) -> tuple[int, ...]:
    """Parse ``--tp 1,2,4,8``.

    Raises:
        UsageError: empty, non-integer or non-positive entries.
    """
    try:
        tps = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise UsageError(
            f"--tp {text!r}: expected comma-separated positive integers, e.g. 1,2,4,8"
        ) from None
    if not tps or any(t < 1 for t in tps):
        raise UsageError(f"--tp {text!r}: expected comma-separated positive integers, e.g. 1,2,4,8")
    return tuple(dict.fromkeys(tps))


def run_check(
    target_ck: Checkpoint,
    draft_ck: Checkpoint,
    *,
    engines: Sequence[str] = ENGINES,
    tps: Sequence[int] = (1, 2, 4, 8),
    draft_tp: int | None = None,
    max_model_len: int | None = None,
    kernel: str = "skip",
) -> CheckResult:
    """Run the checkpoint rules and every requested engine model on a target/draft pair.

    Args:
        target_ck, draft_ck: checkpoints from :func:`recipecli.checkpoint.open_checkpoint`.
        engines: engine names (:data:`recipecli.engines.ENGINES`).
        tps: target tensor-parallel sizes to check.
        draft_tp: vLLM ``draft_tensor_parallel_size`` (None = the target TP).
        max_model_len: serving length for ``maxpos.short`` (default: target max_position_embeddings).
        kernel: ``auto|cpu|cuda|skip``; anything but ``skip`` runs the fused-norm kernel check.

    Returns:
        :class:`CheckResult`, with each engine model's resolved values in ``resolved``.

    Raises:
        UsageError: an unknown engine name.
    """
    ctx = PairContext(
        target_ck,
        draft_ck,
        target_model(target_ck),
        canonical_draft(draft_ck),
        tuple(tps),
        draft_tp,
        max_model_len,
    )
    models = [engine_model(e) for e in engines]
    findings: list[Finding] = []
    for r in RULES:
        if r.needs_eagle3 and not ctx.draft.is_eagle3:
            continue
        findings.extend(r.fn(ctx))
    rows: list[SharingRow] = []
    resolved: dict[str, dict[str, Any]] = {}
    if ctx.draft.is_eagle3:
        for model in models:
            run = model.run(ctx)
            findings.extend(run.findings)
            rows.extend(run.sharing)
            resolved[model.name] = {
                k: {"value": v.value, "origin": v.origin} for k, v in run.resolved.items()
            }
        findings.extend(_aux_summary(ctx, resolved))
        findings.extend(kernel_findings(draft_ck, kernel, tuple(engines)))
    order = {"error": 0, "warning": 1, "info": 2}
    findings.sort(key=lambda f: (order[f.severity], f.code, f.engine, f.tp or 0))
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
    )


def _aux_summary(ctx: PairContext, resolved: Mapping[str, Mapping[str, Any]]) -> list[Finding]:
    """``aux.convention`` (info): the ids as written, what each engine captures, what the format's
    convention says the draft was trained on. Engines that differ report ``aux.mismatch``."""
    from recipecli.engines.common import trained_layers

    d = ctx.draft
    if d.aux_ids is None or ctx.target.L is None:
        return []
    per_engine = {
        e: list(r["aux_layers"]["value"]) for e, r in resolved.items() if "aux_layers" in r
    }
    trained = trained_layers(d)
    conv = TRAINED_CONVENTION.get(d.format or "", "unknown")
    detail = "; ".join(f"{e} captures hidden_states{lay}" for e, lay in per_engine.items())
    msg = f"explicit aux ids {list(d.aux_ids)} ({d.aux_ids_where}): {detail}"
    if trained is not None:
        msg += f"; format {d.format} writes {conv} ids, i.e. trained on hidden_states{trained}"
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
            convention=conv,
            differs=differs,
        )
    ]


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


# --------------------------------------------------------------------------- human output


def _shape(s: tuple[int, ...] | None) -> str:
    return f"[{', '.join(str(x) for x in s)}]" if s else "-"


def _bytes(n: int | None) -> str:
    if not n:
        return "-"
    return f"{n / 1e9:.2f} GB" if n >= 1e8 else f"{n / 1e6:.1f} MB"


_SHOWN = (
    ("architecture", "arch"),
    ("H", "H"),
    ("Ht", "Ht"),
    ("Vd", "Vd"),
    ("k", "k"),
    ("aux_layers", "aux hidden states"),
)


def _resolved_line(values: Mapping[str, Mapping[str, Any]]) -> str:
    """``arch Eagle3LlamaForCausalLM, H 4096, Vd 32000, k 3*, aux hidden states [2, 16, 29]*``;
    ``*`` marks a value the engine filled in (a default), not one the checkpoint gave."""
    parts = []
    for key, label in _SHOWN:
        if key not in values:
            continue
        v = values[key]
        given = str(v["origin"]).startswith(
            ("config:", "len(", "eagle_aux", "eagle_config", "registry")
        )
        mark = "" if given or key == "architecture" else "*"
        value = v["value"]
        parts.append(f"{label} {list(value) if isinstance(value, tuple) else value}{mark}")
    return ", ".join(parts) + (
        " (* = engine default)" if any(p.endswith("*") for p in parts) else ""
    )


def _engine_names() -> dict[str, str]:
    """Every spelling of each engine in messages (``vllm``, ``vLLM``) -> its ``--engine`` name."""
    from recipecli.engines import engine_models

    out: dict[str, str] = {}
    for m in engine_models():
        out[m.name] = m.name
        out[m.title] = m.name
    return out


_ANY_ENGINE = "\x00engine\x00"


def _generic(message: str, names: Iterable[str]) -> str:
    """``message`` with every engine name replaced by one placeholder (whole words only)."""
    import re

    alts = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.sub(rf"(?<![\w.-])(?:{alts})(?![\w-])", _ANY_ENGINE, message)


@dataclass(frozen=True)
class FindingLine:
    """One line of the human report: a finding, or identical findings of several engines.

    Attributes:
        severity, code, tp: as in :class:`~recipecli.findings.Finding`.
        engines: the engines it holds for (``("any",)`` for checkpoint rules), in report order.
        message: the message; when several engines are merged and their messages differ only by
            the engine's name, the name reads "each engine".
    """

    severity: str
    code: str
    tp: int | None
    engines: tuple[str, ...]
    message: str

    @property
    def where(self) -> str:
        return ", ".join(self.engines) + (f" tp{self.tp}" if self.tp is not None else "")


def merge_findings(
    findings: Sequence[Finding], engines: Sequence[str] = ENGINES
) -> list[FindingLine]:
    """Group findings that are the same for several engines: same severity, code, TP and
    message once the engine's name is ignored (``vLLM captures …`` = ``tokenspeed captures …``).
    Order: each group where its first finding was; its engines in ``engines`` order. ``--json``
    keeps every finding."""
    names = _engine_names()
    groups: dict[tuple[str, str, int | None, str], list[Finding]] = {}
    for f in findings:
        key = (f.severity, f.code, f.tp, _generic(f.message, names))
        groups.setdefault(key, []).append(f)
    lines = []
    for (sev, code, tp, generic), group in groups.items():
        rank = {e: i for i, e in enumerate(engines)}
        names_of = sorted(
            dict.fromkeys(f.engine for f in group), key=lambda e: rank.get(e, len(rank))
        )
        if len(names_of) == 1:
            message = group[0].message
        else:
            message = generic.replace(_ANY_ENGINE, "each engine")
        lines.append(FindingLine(sev, code, tp, tuple(names_of), message))
    return lines


_SHARING_HEADER = (
    "engine",
    "tp",
    "target embed",
    "draft sharded",
    "draft replicated",
    "embed",
    "head",
    "embed bytes",
    "draft bytes",
)
#: Column groups when the sharing table is wider than the terminal: shapes, then verdicts.
_SHARING_SPLIT = ((0, 1, 2, 3, 4), (0, 1, 5, 6, 7, 8))


def _table(rows: Sequence[Sequence[str]], cols: Sequence[int]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in cols]
    return [
        "  " + "  ".join(row[i].ljust(w) for i, w in zip(cols, widths, strict=True)).rstrip()
        for row in rows
    ]


def format_result(
    res: CheckResult, *, strict: bool = False, color: bool = False, width: int | None = None
) -> str:
    """Human report: header, READY/NOT READY per engine, findings by severity, sharing table.

    Args:
        res: the result of :func:`run_check`.
        strict: warnings count as failures (the ``--strict`` verdict).
        color: ANSI colour (READY green, NOT READY and errors red, warnings yellow); the caller
            decides (:func:`recipecli.output.color_enabled`: a terminal, no ``NO_COLOR``, no
            ``--no-color``).
        width: wrap lines to this many columns at word boundaries (None: no wrapping), and
            split the sharing table into two when it is wider.

    Identical findings of several engines are shown once with their engines
    (:func:`merge_findings`).
    """
    from recipecli.output import paint, wrap_line

    t, d = res.target, res.draft
    head = [
        f"target  {res.target_source}: {t.architecture}"
        + (f" (text config under {t.wrapper})" if t.wrapper else "")
        + f", H {t.H}, layers {t.L}, vocab {t.V}",
        f"draft   {res.draft_source}: "
        + (
            f"format {d.format} ({d.format_name}), aux ids "
            + (str(list(d.aux_ids)) if d.aux_ids is not None else "absent")
            if d.is_eagle3
            else "not an EAGLE3 draft"
        ),
    ]
    for engine, values in res.resolved.items():
        head.append(f"  as {engine} reads it: {_resolved_line(values)}")
    lines = [w for h in head for w in wrap_line(h, width)]
    lines.append("")
    for engine in res.engines:
        ready = res.ready_tps(engine)
        warn = [f for f in res.findings if f.severity == "warning" and f.engine in (engine, "any")]
        if ready and not (strict and warn):
            verdict = paint("READY", "ok", color) + " " * 5
            lines.append(f"{engine:<11} {verdict} at TP {', '.join(map(str, ready))}")
        else:
            general = any(
                f.severity == "error" and f.tp is None and f.engine in (engine, "any")
                for f in res.findings
            )
            why = (
                "see errors"
                if general
                else ("no TP size works" if not ready else "warnings under --strict")
            )
            lines.append(f"{engine:<11} {paint('NOT READY', 'error', color)}  ({why})")
    merged = merge_findings(res.findings, res.engines)
    for sev in ("error", "warning", "info"):
        group = [m for m in merged if m.severity == sev]
        if not group:
            continue
        lines += ["", paint(f"{sev}s ({len(group)}):", sev, color)]
        for m in group:
            text = f"  [{m.where}] {m.code}: {m.message}"
            wrapped = wrap_line(text, width)
            prefix = f"  [{m.where}] "
            if wrapped[0].startswith(prefix + m.code):  # else a very narrow terminal: plain
                rest = wrapped[0][len(prefix) + len(m.code) :]
                wrapped[0] = prefix + paint(m.code, "code", color) + rest
            lines += wrapped
    if res.embed_sharing:
        lines += ["", "embedding / head sharing (per rank):"]
        table = [_SHARING_HEADER] + [
            (
                r.engine,
                str(r.tp),
                _shape(r.target_shape),
                _shape(r.draft_sharded_shape),
                _shape(r.draft_replicated_shape),
                r.verdict,
                r.head_verdict,
                _bytes(r.embed_bytes_per_rank),
                _bytes(r.draft_bytes_per_rank),
            )
            for r in res.embed_sharing
        ]
        full = _table(table, range(len(_SHARING_HEADER)))
        if width is None or max(len(x) for x in full) <= width:
            lines += full
        else:
            for i, cols in enumerate(_SHARING_SPLIT):
                lines += ([""] if i else []) + _table(table, cols)
    return "\n".join(lines)
