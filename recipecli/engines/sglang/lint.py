"""SGLang's own lint rules on a recipe's merged serve flags: two names of one argument, draft
tokens SGLang would reset, a top-k tree on paged KV with a backend that cannot run it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from recipecli.engines.catalog import Catalog, load_catalog
from recipecli.engines.sglang.pin import PIN
from recipecli.engines.sglang.recipe import CITE
from recipecli.engines.spec import FlagLayer, LintHit
from recipecli.findings import Severity

SPEC_RULE = f"{CITE}arg_groups/speculative_hook.py _handle_eagle_family; docs/engines/sglang.md"

#: ``arg_groups/speculative_hook.py`` ``_handle_eagle_family`` ``_PAGE_TREE_SPEC_BACKENDS``: the
#: backends that run a top-k > 1 draft tree on pages of more than one token.
PAGE_TREE_BACKENDS: tuple[str, ...] = ("flashinfer", "fa3", "triton")

Emit = Callable[[str, Severity, str, str, str], None]


def _int_or_none(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        return int(value)
    return None


def _alias_conflicts(catalog: Catalog, present: Mapping[str, tuple[Any, str]], emit: Emit) -> None:
    """``recipe.sglang_alias_conflict`` for every SGLang argument given under two names."""
    by_canonical: dict[str, list[str]] = {}
    for flag in present:
        by_canonical.setdefault(catalog.canonical(flag), []).append(flag)
    for canonical, names in by_canonical.items():
        if len(names) > 1:
            emit(
                "recipe.sglang_alias_conflict",
                "warning",
                f"{' and '.join(names)} are one SGLang argument ({canonical}): the later "
                f"one on the command line wins silently; give one",
                present[names[-1]][1],
                f"{CITE}arg_groups/arg_utils.py add_cli_args_from_dataclass (Arg.aliases)",
            )


def _draft_tokens(present: Mapping[str, tuple[Any, str]], emit: Emit) -> None:
    """``recipe.sglang_draft_tokens``: top-k 1 with draft tokens other than steps + 1."""
    steps = _int_or_none(present.get("--speculative-num-steps", (None, ""))[0])
    topk = _int_or_none(present.get("--speculative-eagle-topk", (None, ""))[0])
    tokens = present.get("--speculative-num-draft-tokens")
    if steps is not None and topk == 1 and tokens is not None:
        if _int_or_none(tokens[0]) != steps + 1:
            emit(
                "recipe.sglang_draft_tokens",
                "warning",
                f"--speculative-num-draft-tokens {tokens[0]} with top-k 1: SGLang resets "
                f"it to --speculative-num-steps + 1 = {steps + 1}",
                tokens[1],
                SPEC_RULE,
            )


def _topk_page_size(present: Mapping[str, tuple[Any, str]], emit: Emit) -> None:
    """``recipe.sglang_topk_page_size``: a top-k > 1 tree on pages of more than one token."""
    topk = _int_or_none(present.get("--speculative-eagle-topk", (None, ""))[0])
    page = present.get("--page-size")
    if topk is None or topk <= 1 or page is None or (_int_or_none(page[0]) or 1) <= 1:
        return
    backend = present.get("--attention-backend")
    if backend is not None and str(backend[0]) in PAGE_TREE_BACKENDS:
        return
    emit(
        "recipe.sglang_topk_page_size",
        "error" if backend is not None else "warning",
        f"--speculative-eagle-topk {topk} with --page-size {page[0]}: SGLang runs a "
        f"top-k > 1 draft tree on pages of more than one token only with the "
        f"{', '.join(PAGE_TREE_BACKENDS)} attention backends (a ValueError at "
        f"start-up otherwise)"
        + (
            f"; this recipe gives {backend[0]}"
            if backend is not None
            else "; set --attention-backend to one of them or --page-size 1"
        ),
        page[1],
        SPEC_RULE,
    )


def lint_rules(layers: Sequence[FlagLayer]) -> list[LintHit]:
    """SGLang rules on the merged flags (each verdict once per recipe place):

    * ``recipe.sglang_alias_conflict`` (warning): two names of one SGLang argument
      (``--tp-size`` and its alias ``--tensor-parallel-size``; catalog ``alias_of``): argparse
      stores both in one field and the later one on the command line wins silently;
    * ``recipe.sglang_draft_tokens`` (warning): top-k 1 with ``--speculative-num-draft-tokens``
      other than steps + 1: SGLang resets it to steps + 1;
    * ``recipe.sglang_topk_page_size`` (error; warning when the attention backend is left to
      SGLang): top-k > 1 with ``--page-size`` > 1 on a backend outside
      :data:`PAGE_TREE_BACKENDS` is a ``ValueError`` at start-up.

    The layers hold the speculative flags every recipe renders, so the spec marks these rules
    skipped on a recipe that says SGLang does not serve it.
    """
    catalog = load_catalog(PIN.engine)
    out: list[LintHit] = []
    seen: set[tuple[str, str]] = set()

    def emit(code: str, severity: Severity, message: str, where: str, rule: str) -> None:
        if (code, where) not in seen:
            seen.add((code, where))
            out.append(LintHit(code, severity, message, where, rule))

    for flags in layers:
        present = {f: v for f, v in flags.items() if v[0] not in (False, None)}
        _alias_conflicts(catalog, present, emit)
        _draft_tokens(present, emit)
        _topk_page_size(present, emit)
    return out
