"""SGLang's layout rules beyond TP (issue #25): EAGLE3 with pipeline parallelism is refused at
start-up by ``check_pipeline_parallel_compat``; the draft runs on the last PP stage.

Reads the ``layouts`` key ``scripts/engine_data_sglang.py`` writes into the data file: its
``refusals`` (each ``raise``/``assert`` of the server-args checks with its message) and
``draft_stage``. DP, DP attention, EP and PD roles carry no EAGLE3 refusal there
(docs/engines/layouts.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict, cast

from recipecli.codes import finding
from recipecli.engines.base import PairContext, engine_data
from recipecli.engines.layout import Layout, LayoutRuleDoc
from recipecli.engines.sglang.sources import NAME, src
from recipecli.engines.sglang.spec import SPEC
from recipecli.findings import Finding

#: asserts the speculative algorithm is EAGLE (non-multi-layer) when pp_size > 1; called by
#: check_server_args at engine start
PP_COMPAT = src("arg_groups/validation_hook.py", "check_pipeline_parallel_compat")
#: ``self._hosts_draft = get_parallel().pp_group.is_last_rank``
DRAFT_STAGE = src("speculative/eagle_worker_v2.py", "EAGLEWorkerV2.__init__")


class Refusal(TypedDict):
    """One ``layouts.refusals`` entry (the keys these rules read)."""

    file: str
    function: str
    line: int
    exception: str
    message: str
    axes: list[str]
    algorithms: list[str]


def _layouts() -> Mapping[str, Any]:
    """The data file's ``layouts`` key."""
    return cast(Mapping[str, Any], engine_data(SPEC)["layouts"])


def pp_refusal() -> Refusal:
    """The ``check_pipeline_parallel_compat`` refusal that fires for EAGLE3 on every PD role
    (the one whose axes are only ``pp``).

    Raises:
        LookupError: the data file has no such refusal (a data file from another version).
    """
    for r in cast(list[Refusal], _layouts()["refusals"]):
        if (
            r["function"] == "check_pipeline_parallel_compat"
            and "EAGLE3" in r["algorithms"]
            and r["axes"] == ["pp"]
            and "SGLANG_ENABLE_PP_SPEC" not in r["message"]
        ):
            return r
    raise LookupError("no check_pipeline_parallel_compat refusal for EAGLE3 in SGLang's data")


def layout_findings(ctx: PairContext, lay: Layout) -> list[Finding]:
    """SGLang's findings for ``lay``: at PP > 1, ``layout.pp_refused`` (the start-up
    AssertionError, whatever the PD role) and ``layout.draft_stage``."""
    if lay.pp == 1:
        return []
    r = pp_refusal()
    stage = cast(Mapping[str, str], _layouts()["draft_stage"])
    where = f"{r['file']}:{r['line']}"
    return [
        finding(
            "layout.pp_refused",
            f"SGLang refuses EAGLE3 at PP {lay.pp} at start-up: {r['exception']}: "
            f"{r['message']} ({where}); use --pp-size 1",
            engine=NAME,
            tp=lay.tp,
            source=PP_COMPAT,
            quote=r["message"],
            role=lay.role,
        ),
        finding(
            "layout.draft_stage",
            f"SGLang PP {lay.pp}: the EAGLE3 draft would run on the {stage['stage']} PP stage "
            f"({stage['evidence']})",
            engine=NAME,
            tp=lay.tp,
            source=DRAFT_STAGE,
            stage=lay.pp - 1,
        ),
    ]


RULES = layout_findings

#: the rules above as SGLang's engine page lists them
DOC_RULES: tuple[LayoutRuleDoc, ...] = (
    LayoutRuleDoc(
        "PP > 1, any PD role",
        "refused at start-up: AssertionError: Pipeline parallelism currently only supports EAGLE "
        "(non-multi-layer) speculative decoding",
        ("layout.pp_refused",),
        (PP_COMPAT,),
    ),
    LayoutRuleDoc(
        "PP > 1",
        "the draft would run on the last PP stage only",
        ("layout.draft_stage",),
        (DRAFT_STAGE,),
    ),
)
