"""`recipecli check TARGET DRAFT`: will this EAGLE3 draft serve with this target?

Two kinds of rules. Checkpoint rules (this module, :data:`RULES`) judge the draft itself and hold
for every engine: is it an EAGLE3 draft, is its ``d2t`` a valid map, was it trained for this target's vocabulary
(``t2d`` and a tied head are each engine's verdict: its load path skips or ties them). Engine rules are the steps of each engine's load path at a pinned version
(:mod:`recipecli.engines`): config resolution with the engine's defaults, draft architecture,
target support, aux hidden states, tensors, sharing and TP, positions. ``run_check`` runs both and
merges their findings and sharing tables. Rules read only config values, tensor headers, and the
values of ``d2t`` / ``t2d`` (never the weights).
"""

from __future__ import annotations

from recipecli.check.rules import (
    DOCS,
    RULES,
    SUMMARY_CODES,
    Rule,
    rule,
    rule_format,
    rule_norm_output,
    rule_target_weights,
    rule_vocab,
)
from recipecli.check.run import (
    CheckResult,
    kernel_findings,
    run_check,
)
from recipecli.check.text import (
    FindingLine,
    format_result,
    merge_findings,
    verdict_line,
)
from recipecli.draft import TRAINED_CONVENTION
from recipecli.engines import ENGINES
from recipecli.engines.common import SharingRow, default_aux_layers, pad64

__all__ = [
    "CheckResult",
    "DOCS",
    "ENGINES",
    "FindingLine",
    "RULES",
    "Rule",
    "SUMMARY_CODES",
    "SharingRow",
    "TRAINED_CONVENTION",
    "default_aux_layers",
    "format_result",
    "kernel_findings",
    "merge_findings",
    "pad64",
    "rule",
    "rule_format",
    "rule_norm_output",
    "rule_target_weights",
    "rule_vocab",
    "run_check",
    "verdict_line",
]
