"""Finding builders the engine models share: ``rope.mismatch`` (positions step g; each engine
builds the draft's rotary embedding from the draft config alone, cited by its ``ROPE`` source),
and ``vocab.t2d_invalid`` / ``tie.reduced_vocab`` (tensors step e). A builder holds the wording
and the condition; each engine passes its own title, source and verdict (severity and what it
does), so no verdict is written once for all engines."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from recipecli.codes import finding
from recipecli.engines.base import Citation, EngineRun
from recipecli.engines.common import rope_differences, t2d_problem
from recipecli.findings import Finding


def rope_mismatch_findings(
    run: EngineRun, draft_config: Mapping[str, Any], *, engine: str, title: str, source: Citation
) -> Iterator[Finding]:
    """``rope.mismatch`` (info) when ``draft_config``'s rotary settings (the draft config as the
    engine reads it) differ from the target text config's (:func:`rope_differences`): the engine
    serves the draft with its own settings, as its trainer built it, so by the severity policy
    (docs/check.md#severity) an info that names the difference and the fix if the draft was
    trained with the target's."""
    target = run.ctx.target_ck.text.config
    diffs = rope_differences(draft_config, target)
    if not diffs:
        return
    shown = ", ".join(
        f"{k} {'absent' if a is None else a} vs {'absent' if b is None else b}"
        for k, (a, b) in diffs.items()
    )
    keys = [k for k in ("rope_theta", "rope_parameters", "rope_scaling") if k in target]
    fix = (
        f"if the draft was trained with the target's, set the draft's {', '.join(keys)} to the target's "
        "(and drop its other rope keys)"
        if keys
        else "if the draft was trained with the target's, drop the draft's rope keys"
    )
    yield finding(
        "rope.mismatch",
        f"the draft's rotary settings differ from the target's (draft vs target: {shown}): "
        f"{title} builds the draft's rotary embedding from the draft config alone, "
        f"so the draft serves with its own, as its trainer built it; {fix}",
        engine=engine,
        source=source,
        differences=diffs,
    )


def t2d_invalid_findings(
    run: EngineRun, *, engine: str, title: str, source: Citation, severity: str
) -> Iterator[Finding]:
    """``vocab.t2d_invalid`` when the draft's ``t2d`` is not a valid map
    (:func:`recipecli.engines.common.t2d_problem`), graded ``severity`` by the engine: each
    engine's ``load_weights`` (``source``) skips ``t2d``, so serving is unaffected and the
    finding says so in the engine's words (``title`` names it)."""
    bad = t2d_problem(run.ctx)
    if bad is None:
        return
    text = bad.pop("text")
    yield finding(
        "vocab.t2d_invalid",
        f"{text}: {title}'s load_weights skips t2d, so serving is unaffected; regenerate it from "
        "d2t (or drop it) for the tools that read it",
        severity=severity,
        engine=engine,
        source=source,
        **bad,
    )


def untie_fix(has_lm_head: bool, Vd: int) -> str:
    """The fix for a head an engine ties to the (target's) embedding: untie it, and ship the
    draft's own ``lm_head`` [Vd, H] when it has none."""
    if has_lm_head:
        return "set tie_word_embeddings to false (the draft's lm_head then loads)"
    return f"re-export the draft with its own lm_head [{Vd}, H] and tie_word_embeddings false"


def tie_reduced_vocab_findings(
    run: EngineRun, *, engine: str, effect: str, source: Citation, severity: str | None = None
) -> Iterator[Finding]:
    """``tie.reduced_vocab`` when the draft sets ``tie_word_embeddings`` with ``draft_vocab_size``
    Vd below the vocabulary V (the target's text vocab, else the draft's ``vocab_size``).

    ``effect`` is what the engine does with such a head, after the condition's words; it may
    name ``{Vd}``, ``{V}`` and ``{fix}`` (:func:`untie_fix`), filled here. ``severity`` is the
    engine's verdict (None: the code's default, an error), ``source`` where its code decides."""
    d = run.ctx.draft
    V = run.ctx.target.V or d.V
    if not d.tie_word_embeddings or V is None or d.Vd >= V:
        return
    fix = untie_fix(d.has_lm_head, d.Vd)
    text = f"tie_word_embeddings is true with draft_vocab_size {d.Vd} < {V}" + effect.format(
        Vd=d.Vd, V=V, fix=fix
    )
    yield finding(
        "tie.reduced_vocab", text, severity=severity, engine=engine, source=source, Vd=d.Vd, V=V
    )


def input_norm_dropped_findings(
    run: EngineRun, names: list[str], *, engine: str, title: str, reads: str, source: Citation
) -> Iterator[Finding]:
    """``tensor.dropped`` for shipped ``input_norm.`` tensors the engine's ``load_weights``
    passes over (``names``, from the engine's own name map): without ``norm_before_fc`` (read
    where ``reads`` says) the engine builds no ``input_norm``, so fc takes the aux states without
    the norm the draft was trained with. An error by the severity policy (a trained weight the
    draft runs without), on each engine that drops it."""
    if not names:
        return
    yield finding(
        "tensor.dropped",
        f"the draft ships {names[0]} but norm_before_fc is {run.get('norm_before_fc')} "
        f"({run.resolved['norm_before_fc'].origin}; {title} reads it {reads}): {title} builds no "
        "input_norm and its load_weights drops the tensor without a word, so fc runs on aux "
        'states without the norm it was trained with; set "norm_before_fc": true if it was '
        "trained with it, else drop the tensor",
        engine=engine,
        source=source,
        dropped=names,
    )
