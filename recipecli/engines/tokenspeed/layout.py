"""tokenspeed's layout rules beyond TP (issue #25): it has no pipeline parallelism.

Reads ``layouts.axes.pp`` of the data file (``scripts/engine_data_tokenspeed.py``: no pipeline
field in ``ServerArgs``, no ``--pp`` flag in ``add_cli_args``). Its DP is attention DP, and
neither DP, EP nor a PD role carries an EAGLE3 refusal (docs/engines/layouts.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from recipecli.codes import finding
from recipecli.engines.base import PairContext, engine_data
from recipecli.engines.layout import Layout, LayoutRuleDoc
from recipecli.engines.tokenspeed.sources import NAME, src
from recipecli.engines.tokenspeed.spec import SPEC
from recipecli.findings import Finding

#: the server arguments: no pipeline-parallel field, no --pp flag
SERVER_ARGS = src("utils/server_args.py", "ServerArgs / ServerArgs.add_cli_args")


def pp_axis() -> Mapping[str, Any]:
    """The data file's ``layouts.axes.pp`` (``supported``, ``fields``, ``flags``)."""
    return cast(Mapping[str, Any], engine_data(SPEC)["layouts"]["axes"]["pp"])


def layout_findings(ctx: PairContext, lay: Layout) -> list[Finding]:
    """tokenspeed's findings for ``lay``: ``layout.no_pp`` at PP > 1."""
    if lay.pp == 1 or pp_axis()["supported"]:
        return []
    return [
        finding(
            "layout.no_pp",
            f"tokenspeed has no pipeline parallelism (no pipeline field or --pp flag in its "
            f"server arguments): PP {lay.pp} cannot be asked for; use PP 1",
            engine=NAME,
            tp=lay.tp,
            source=SERVER_ARGS,
        )
    ]


RULES = layout_findings

#: the rules above as tokenspeed's engine page lists them
DOC_RULES: tuple[LayoutRuleDoc, ...] = (
    LayoutRuleDoc(
        "PP > 1",
        "no pipeline parallelism: no pipeline field or --pp flag in the server arguments",
        ("layout.no_pp",),
        (SERVER_ARGS,),
    ),
)
