"""The checkpoint rules: checks of the draft itself that hold for every engine (is it an EAGLE3
draft, is its ``d2t`` a valid map, was it trained for this target's vocabulary); each cites a
section of docs/check.md.

Why each applies on every engine: ``d2t`` is read by all three (vLLM ``Eagle3LlamaForCausalLM.
load_weights`` loads it into ``draft_id_to_target_id``; SGLang and tokenspeed
``LlamaForCausalLMEagle3.load_weights`` turn it into ``hot_token_id = d2t + arange``), so an
invalid map sends draft tokens to other target ids on each. Verdicts that differ by engine are
steps of the engine models instead: ``t2d`` (every engine's ``load_weights`` skips it) and a tied
head with a reduced vocabulary (vLLM never ties) are reported by each engine's step e.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from recipecli.codes import finding
from recipecli.draft import detect_format
from recipecli.engines.base import PairContext
from recipecli.engines.common import (
    classify_d2t,
)
from recipecli.findings import Finding

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
        yield from _d2t(ctx, Vd, V, src_maps)


def _d2t(ctx: PairContext, Vd: int, V: int, source: str) -> Iterable[Finding]:
    """``d2t`` as a map: shape [Vd], int64, offsets that keep every target id in [0, V) and
    increase (:func:`recipecli.engines.common.classify_d2t`), not all zeros when Vd < V."""
    tensors = ctx.draft_ck.tensors
    info = tensors["d2t"]
    if tuple(info.shape) != (Vd,):
        yield finding(
            "shape.d2t",
            f"d2t has shape {list(info.shape)}, expected [{Vd}] (draft_vocab_size)",
            source=source,
            expected=[Vd],
            found=list(info.shape),
        )
    elif info.dtype != "I64":
        yield finding(
            "vocab.d2t_invalid",
            f"d2t is {info.dtype}, engines expect int64 offsets",
            source=source,
            reason="dtype",
            dtype=info.dtype,
        )
    else:
        d2t = ctx.value("d2t")
        if d2t is None:
            yield finding(
                "vocab.values_unavailable",
                "d2t values not available from this source; map not validated",
                source=source,
            )
        else:
            yield from _d2t_values(d2t, Vd, V, source)


def _d2t_values(d2t: np.ndarray, Vd: int, V: int, source: str) -> Iterable[Finding]:
    """The values of a [Vd] int64 ``d2t``: absolute ids written as offsets, an invalid offset
    map (a target id outside [0, V) or not increasing), or all zeros although Vd < V."""
    code, ev = classify_d2t(d2t, Vd, V)
    if code == "vocab.d2t_absolute":
        yield finding(
            code,
            "d2t equals arange(Vd): absolute target ids were written where offsets are expected "
            "(maps i -> 2i); store d2t = target_ids - arange(Vd)",
            severity="error",
            source=source,
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
            source=source,
            **ev,
        )
    elif Vd < V and not np.any(d2t):
        yield finding(
            "vocab.d2t_identity",
            f"d2t is all zeros (identity) but Vd {Vd} < V {V}: draft ids map onto target ids 0..{Vd - 1}",
            source=source,
            Vd=Vd,
            V=V,
        )
