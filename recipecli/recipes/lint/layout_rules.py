"""``recipe.layout_refused``: a recipe whose serve layout an engine refuses for EAGLE3 whatever
the pair (issue #25).

A recipe's ``serve:`` may set ``pipeline_parallel_size``, ``data_parallel_size``,
``enable_dp_attention``, ``enable_expert_parallel`` and ``nodes`` beside
``tensor_parallel_size``. :func:`recipe_layout` reads them (``check --recipe`` checks that
layout with the pair); :func:`lint_layout` runs each engine's pair-independent layout refusals
(``REFUSALS`` of ``recipecli/engines/<engine>/layout.py``: tokenspeed has no PP, SGLang refuses
EAGLE3 at PP > 1 and DP attention whose DP size does not divide the TP size) on it, with no
checkpoint and no network: the rules that need the target (vLLM's aux capture over PP, experts
by EP) are ``check --recipe``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recipecli.engines.layout import Layout, LayoutRequest, layout_refusals
from recipecli.findings import Finding
from recipecli.recipes.engines import ENGINES as RECIPE_ENGINES
from recipecli.recipes.lint.common import finding
from recipecli.recipes.loader import Recipe

#: the serve fields of a layout beyond TP, as the recipe schema names them
LAYOUT_FIELDS: tuple[str, ...] = (
    "pipeline_parallel_size",
    "data_parallel_size",
    "enable_dp_attention",
    "enable_expert_parallel",
    "nodes",
)


def _size(serve: Mapping[str, Any], key: str, default: int | None) -> int | None:
    """A positive int serve field (the schema types it), ``default`` when absent or not one."""
    v = serve.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 1 else default


def recipe_layout(recipe: Recipe) -> tuple[int, LayoutRequest] | None:
    """(target TP, the layout request) of ``recipe``'s ``serve:`` (``nodes`` there or at the
    top level), None when it sets none of :data:`LAYOUT_FIELDS` (a TP-only recipe)."""
    serve = recipe.get("serve") or {}
    if not isinstance(serve, Mapping):
        return None
    if not any(k in serve for k in LAYOUT_FIELDS) and recipe.get("nodes") is None:
        return None
    nodes = _size(serve, "nodes", None) or _size(recipe.data, "nodes", None)
    req = LayoutRequest(
        pps=(_size(serve, "pipeline_parallel_size", 1) or 1,),
        dp=_size(serve, "data_parallel_size", 1) or 1,
        dp_attention=serve.get("enable_dp_attention") is True,
        ep=serve.get("enable_expert_parallel") is True,
        nodes=nodes,
    )
    return _size(serve, "tensor_parallel_size", 1) or 1, req


def _where(recipe: Recipe, lay: Layout) -> str:
    """``file:line`` of the serve field that makes the layout refused (PP, else DP)."""
    key = "pipeline_parallel_size" if lay.pp > 1 else "data_parallel_size"
    return recipe.where("serve", key)


def lint_layout(recipe: Recipe) -> list[Finding]:
    """``recipe.layout_refused`` (a warning, so that ``render`` still renders the command;
    ``check --recipe`` reports the refusal itself as an error) per engine the recipe renders for (and does not mark
    unsupported) that refuses its EAGLE3 serve layout; nothing for a TP-only recipe or another
    speculative method."""
    got = recipe_layout(recipe)
    method = str((recipe.get("speculative") or {}).get("method") or "").lower()
    if got is None or method != "eagle3":
        return []
    tp, req = got
    lay = Layout(tp, req.pps[0], req.dp, req.dp_attention, req.ep, req.role)
    unsupported = recipe.get("unsupported") or {}
    out: list[Finding] = []
    for engine in RECIPE_ENGINES:
        if engine in unsupported:
            continue
        refused = layout_refusals(engine)(lay)
        if not refused:
            continue
        first = refused[0]
        out.append(
            finding(
                "recipe.layout_refused",
                "warning",
                engine,
                f"{engine} refuses this recipe's layout ({lay.label()}): {first.message}",
                _where(recipe, lay),
                str(first.source),
                layout=dict(lay.to_dict()),
                codes=[f.code for f in refused],
            )
        )
    return out
