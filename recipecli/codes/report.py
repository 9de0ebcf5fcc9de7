"""Catalog entries of ``report``'s notes (``report.*``), as docs/report.md#notes describes them."""

from __future__ import annotations

from recipecli.codes.spec import Code
from recipecli.codes.spec import code as _code

ENTRIES: tuple[Code, ...] = (
    _code(
        "report.failed_requests",
        "error",
        "the comparison is unsound",
        "A run has failed requests.",
        source="docs/report.md#notes",
    ),
    _code(
        "report.workload_differs",
        "warning",
        "the comparison is unsound",
        "A workload key differs (allowed with --allow-different-workloads).",
        source="docs/report.md#notes",
    ),
    _code(
        "report.acceptance_collapsed",
        "warning",
        "the draft barely helps",
        "A side accepted under 10 % of its drafted tokens.",
        source="docs/report.md#notes",
    ),
    _code(
        "report.acceptance_confounded",
        "warning",
        "the comparison is confounded",
        "The arms' acceptance rates are more than 5 percentage points apart.",
        source="docs/report.md#notes",
    ),
    _code(
        "report.speculative_tokens_differ",
        "warning",
        "the comparison is confounded",
        "The arms draft a different number of tokens per step.",
        source="docs/report.md#notes",
    ),
    _code(
        "report.speculative_one_side",
        "info",
        "nothing to do",
        "Only one arm reports speculative-decoding metrics.",
        source="docs/report.md#notes",
    ),
    _code(
        "report.metadata_differs",
        "info",
        "nothing to do",
        "A setting the bench recorded differs between the arms.",
        source="docs/report.md#notes",
    ),
    _code(
        "report.acceptance_vs_tpot",
        "info",
        "nothing to do",
        "Acceptance lengths differ by more than 5 %: tokens per target step against the TPOT change.",
        source="docs/report.md#notes",
    ),
    _code(
        "report.ttft_tpot_tradeoff",
        "info",
        "nothing to do",
        "Mean TPOT and mean TTFT move in opposite directions, neither within the noise.",
        source="docs/report.md#notes",
    ),
    _code(
        "report.single_runs",
        "info",
        "nothing to do",
        "One run per side: no change is called an improvement or a regression.",
        source="docs/report.md#notes",
    ),
    _code(
        "report.spread_one_side",
        "info",
        "nothing to do",
        "One side has one run, the other several.",
        source="docs/report.md#notes",
    ),
    _code(
        "report.repeated_runs",
        "info",
        "nothing to do",
        "Several runs per side: how to read cells and intervals.",
        source="docs/report.md#notes",
    ),
)
