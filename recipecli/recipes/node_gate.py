"""``render --nodes``' check of the layout it renders: ``check``'s layout rules (issue #25,
``recipecli/engines/<engine>/layout.py`` through :func:`recipecli.check.run_check`) on the served
pair, when it opens without the network, at the command's TP, PP, DP, DP attention and EP on
the nodes given. A layout the engine refuses is refused here with the engine's reason; where
the draft runs is stated in the output's comments.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from recipecli.errors import RecipeError
from recipecli.findings import Finding
from recipecli.recipes.nodes import NodeLayout, NodeOptions, flag_value

if TYPE_CHECKING:
    from recipecli.checkpoint.model import Checkpoint
    from recipecli.recipes.argv import Rendered

#: the finding that says where the draft runs under PP (each engine's layout rules)
DRAFT_STAGE = "layout.draft_stage"


def _open_offline(source: str) -> Checkpoint | None:
    """``source`` opened without the network (a bundled snapshot of the repo id, a local path,
    the local HF cache), None when it does not open so."""
    from recipecli.checkpoint.resolve import open_checkpoint
    from recipecli.errors import RecipeCliError
    from recipecli.examples import bundled_snapshots

    try:
        return open_checkpoint(bundled_snapshots().get(source) or source, offline=True)
    except RecipeCliError:
        return None


def _draft_tp(serve: Rendered) -> int | None:
    spec = dict(serve.flags).get("--speculative-config")
    value = spec.get("draft_tensor_parallel_size") if isinstance(spec, Mapping) else None
    return int(value) if value is not None else None


def _label(lay: NodeLayout) -> str:
    parts = [f"TP {lay.tp}", f"PP {lay.pp}", f"DP {lay.dp}"]
    return " ".join(parts + (["dp-attn"] if lay.dp_attention else []) + (["EP"] if lay.ep else []))


def _layout_findings(
    serve: Rendered, lay: NodeLayout, opts: NodeOptions, pair: tuple[Checkpoint, Checkpoint]
) -> list[Finding]:
    """:func:`recipecli.check.run_check` on ``pair`` at ``serve``'s TP, draft TP and length with
    ``lay``'s layout on the nodes given: the engine's layout findings."""
    from recipecli.check import run_check
    from recipecli.engines.layout import LayoutRequest

    mml = flag_value(serve, "max_model_len")
    req = LayoutRequest(
        (lay.pp,), lay.dp, lay.dp_attention, lay.ep, "both", opts.nodes, opts.gpus_per_node
    )
    res = run_check(
        *pair,
        engines=(serve.engine,),
        tps=(lay.tp,),
        draft_tp=_draft_tp(serve),
        max_model_len=int(mml) if mml else None,
        kernel="skip",
        layouts=req,
    )
    return [f for _, f in res.layout_findings if f.engine in (serve.engine, "any")]


def _placement(found: list[Finding], lay: NodeLayout) -> list[str]:
    """Comment lines on where the draft runs (the engines' ``layout.draft_stage``)."""
    stage = [f"draft: {f.message}" for f in found if f.code == DRAFT_STAGE]
    if not stage and lay.pp == 1:
        stage = [
            f"draft: PP 1 (one pipeline stage): the draft runs with the target on all "
            f"{lay.world} ranks"
        ]
    return stage


def layout_gate(
    serve: Rendered, lay: NodeLayout, opts: NodeOptions, *, force: bool = False
) -> tuple[list[str], list[Finding]]:
    """Run ``check``'s layout rules for ``serve``'s engine on its pair at layout ``lay``.

    Args:
        serve: the one-node serve command (its pair after ``--set``).
        lay: its layout (:func:`recipecli.recipes.nodes.node_layout`).
        opts: the node options (nodes, GPUs per node).
        force: render anyway: the engine's refusals come back as warnings.

    Returns:
        (comment lines: where the draft runs; warnings). Nothing is checked when the target or
        the draft does not open offline (a comment says so: ``check`` is the place for the Hub).

    Raises:
        RecipeError: an error of the engine's layout rules (it refuses this layout at start-up),
            with its reason and citation; not with ``force``.
    """
    from recipecli.codes import finding

    target, draft = _open_offline(serve.target), _open_offline(serve.draft)
    if target is None or draft is None:
        return [
            f"draft placement and the engine's layout rules not checked here (the pair does not "
            f"open offline): see `recipecli check {serve.target} {serve.draft} --engine "
            f"{serve.engine} --tp {lay.tp} --pp {lay.pp} --dp {lay.dp}`"
        ], []
    found = _layout_findings(serve, lay, opts, (target, draft))
    errors = [f for f in found if f.severity == "error"]
    if errors and not force:
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        raise RecipeError(
            f"{serve.engine} refuses {_label(lay)}: {errors[0].message} [{errors[0].source}]{more}",
            hint=f"pick a layout `recipecli check {serve.target} {serve.draft} --engine "
            f"{serve.engine} --pp 1,2 --nodes {opts.nodes} --gpus-per-node "
            f"{opts.gpus_per_node}` calls READY, or render anyway with --force",
        )
    warnings = [
        finding(
            f.code,
            f"check ({serve.engine}, {_label(lay)}): {f.message}",
            severity="warning",
            engine=serve.engine,
            source=f"{serve.draft}; {f.source}",
        )
        for f in errors
    ]
    return _placement(found, lay), warnings
