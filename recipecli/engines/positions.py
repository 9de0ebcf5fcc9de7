"""The ``rope.mismatch`` finding every engine model yields in its positions step (g): the same
verdict on every engine, because each builds the draft's rotary embedding from the draft config
alone (cited by each engine's ``ROPE`` source)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from recipecli.codes import finding
from recipecli.engines.base import Citation, EngineRun
from recipecli.engines.common import rope_differences
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
