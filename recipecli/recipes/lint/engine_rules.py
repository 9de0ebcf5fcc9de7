"""Lint rules of one engine on the merged flags of each hardware profile: tokenspeed (TP alias
conflicts, EAGLE top-k) and SGLang (two names of one argument, draft tokens it would reset, a
top-k tree on paged KV with a backend that cannot run it)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import recipecli.recipes.engines as E
from recipecli.errors import RecipeError
from recipecli.findings import Finding
from recipecli.recipes.catalog import load_catalog
from recipecli.recipes.lint.common import finding
from recipecli.recipes.loader import Recipe


def _tokenspeed_layers(recipe: Recipe) -> Iterable[tuple[str | None, dict[str, tuple[Any, str]]]]:
    """Merged tokenspeed flags (value, where) per hardware profile (None = no profile)."""
    base: dict[str, tuple[Any, str]] = {}
    for key, value in (recipe.get("serve") or {}).items():
        flag = E.SERVE_FIELDS.get(key, ("", {}))[1].get("tokenspeed")
        if flag:
            base[flag] = (value, recipe.where("serve", key))
    eng_args = ((recipe.get("engines") or {}).get("tokenspeed") or {}).get("args") or {}
    for key, value in eng_args.items():
        base["--" + key] = (value, recipe.where("engines", "tokenspeed", "args", key))
    profiles = recipe.get("hardware") or {}
    yield None, dict(base)
    for name, hw in profiles.items():
        merged = dict(base)
        for key, value in (((hw or {}).get("args") or {}).get("tokenspeed") or {}).items():
            merged["--" + key] = (value, recipe.where("hardware", name, "args", "tokenspeed", key))
        yield name, merged


def lint_tokenspeed(recipe: Recipe) -> list[Finding]:
    out: list[Finding] = []
    catalog = load_catalog("tokenspeed")
    seen: set[str] = set()
    for _, flags in _tokenspeed_layers(recipe):
        present = {f: v for f, v in flags.items() if v[0] not in (False, None)}
        tp_like = [f for f in present if catalog.canonical(f) == "--attn-tp-size"]
        if "--attn-tp-size" in tp_like and len(tp_like) > 1:
            other = next(f for f in tp_like if f != "--attn-tp-size")
            where = present["--attn-tp-size"][1]
            if where not in seen:
                seen.add(where)
                out.append(
                    finding(
                        "recipe.tokenspeed_tp_conflict",
                        "error",
                        "tokenspeed",
                        f"{other} is an alias of --attn-tp-size in tokenspeed; giving "
                        f"both is an error: keep one",
                        where,
                        "tokenspeed f4d8ec6e runtime/utils/server_args.py (--tp and "
                        "--tensor-parallel-size alias --attn-tp-size; both is a ValueError); "
                        "docs/engines/tokenspeed.md#serve-flags",
                    )
                )
        topk = present.get("--speculative-eagle-topk")
        if topk is not None and topk[0] != 1 and topk[1] not in seen:
            seen.add(topk[1])
            out.append(
                finding(
                    "recipe.tokenspeed_topk",
                    "error",
                    "tokenspeed",
                    f"--speculative-eagle-topk {topk[0]}: tokenspeed only allows 1",
                    topk[1],
                    "tokenspeed f4d8ec6e runtime/utils/server_args.py (--speculative-eagle-topk "
                    "choices=[1]; resolve_speculative_decoding); "
                    "docs/engines/tokenspeed.md#speculative-flags",
                )
            )
    return out


def _sglang_layers(recipe: Recipe) -> Iterable[tuple[str | None, dict[str, tuple[Any, str]]]]:
    """Merged SGLang flags (value, where) per hardware profile (None = no profile): serve fields,
    the rendered speculative flags, ``engines.sglang.args``, then the profile's args."""
    base: dict[str, tuple[Any, str]] = {}
    for key, value in (recipe.get("serve") or {}).items():
        flag = E.SERVE_FIELDS.get(key, ("", {}))[1].get("sglang")
        if flag:
            base[flag] = (value, recipe.where("serve", key))
    spec = recipe.get("speculative") or {}
    n = spec.get("num_speculative_tokens")
    if isinstance(n, int) and not isinstance(n, bool) and n >= 1:
        where = recipe.where("speculative", "num_speculative_tokens")
        try:
            for flag, value in E.SPECULATIVE_FLAGS["sglang"](spec.get("method"), "", n, {}):
                base[flag] = (value, where)
        except RecipeError:
            pass
    eng_args = ((recipe.get("engines") or {}).get("sglang") or {}).get("args") or {}
    for key, value in eng_args.items():
        base["--" + str(key).lstrip("-")] = (value, recipe.where("engines", "sglang", "args", key))
    yield None, dict(base)
    for name, hw in (recipe.get("hardware") or {}).items():
        merged = dict(base)
        for key, value in (((hw or {}).get("args") or {}).get("sglang") or {}).items():
            flag = "--" + str(key).lstrip("-")
            merged[flag] = (value, recipe.where("hardware", name, "args", "sglang", key))
        yield name, merged


SGLANG_SPEC_RULE = (
    "sgl-project/sglang 0.5.23 python/sglang/srt/arg_groups/speculative_hook.py "
    "_handle_eagle_family; docs/engines/sglang.md"
)

# SGLang 0.5.23 speculative_hook.py _handle_eagle_family _PAGE_TREE_SPEC_BACKENDS: the backends
# that run a top-k > 1 draft tree on pages of more than one token.
SGLANG_PAGE_TREE_BACKENDS: tuple[str, ...] = ("flashinfer", "fa3", "triton")


def _int_or_none(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        return int(value)
    return None


def _sglang_alias_conflicts(
    catalog: Any, present: Mapping[str, tuple[Any, str]], emit: Callable[..., None]
) -> None:
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
                "sgl-project/sglang 0.5.23 python/sglang/srt/arg_groups/arg_utils.py "
                "add_cli_args_from_dataclass (Arg.aliases)",
            )


def lint_sglang(recipe: Recipe) -> list[Finding]:
    """SGLang rules on the merged flags (each finding once per place):

    * ``recipe.sglang_alias_conflict`` (warning): two names of one SGLang argument
      (``--tp-size`` and its alias ``--tensor-parallel-size``; catalog ``alias_of``): argparse
      stores both in one field and the later one on the command line wins silently;
    * ``recipe.sglang_draft_tokens`` (warning): top-k 1 with ``--speculative-num-draft-tokens``
      other than steps + 1: SGLang resets it to steps + 1;
    * ``recipe.sglang_topk_page_size`` (error; warning when the attention backend is left to
      SGLang): top-k > 1 with ``--page-size`` > 1 on a backend outside
      :data:`SGLANG_PAGE_TREE_BACKENDS` is a ``ValueError`` at start-up.

    Its layers hold the speculative flags every recipe renders, so :func:`lint_engine_rules`
    runs it only on a recipe that serves SGLang (:data:`ENGINE_LINTS`).
    """
    catalog = load_catalog("sglang")
    out: list[Finding] = []
    seen: set[tuple[str, str]] = set()

    def emit(code: str, severity: str, message: str, where: str, rule: str) -> None:
        if (code, where) not in seen:
            seen.add((code, where))
            out.append(finding(code, severity, "sglang", message, where, rule))

    for _, flags in _sglang_layers(recipe):
        present = {f: v for f, v in flags.items() if v[0] not in (False, None)}
        _sglang_alias_conflicts(catalog, present, emit)
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
                    SGLANG_SPEC_RULE,
                )
        page = present.get("--page-size")
        if topk is not None and topk > 1 and page is not None and (_int_or_none(page[0]) or 1) > 1:
            backend = present.get("--attention-backend")
            if backend is None or str(backend[0]) not in SGLANG_PAGE_TREE_BACKENDS:
                emit(
                    "recipe.sglang_topk_page_size",
                    "error" if backend is not None else "warning",
                    f"--speculative-eagle-topk {topk} with --page-size {page[0]}: SGLang runs a "
                    f"top-k > 1 draft tree on pages of more than one token only with the "
                    f"{', '.join(SGLANG_PAGE_TREE_BACKENDS)} attention backends (a ValueError at "
                    f"start-up otherwise)"
                    + (
                        f"; this recipe gives {backend[0]}"
                        if backend is not None
                        else "; set --attention-backend to one of them or --page-size 1"
                    ),
                    page[1],
                    SGLANG_SPEC_RULE,
                )
    return out


# engine -> (its rules on the merged flags, whether they are skipped when the recipe marks the
# engine unsupported). SGLang's layers include the speculative flags rendered from the recipe's
# own speculative section, which any recipe has, so its rules would speak about a pair the recipe
# says SGLang does not serve; tokenspeed's read only the serve fields and its own args.
ENGINE_LINTS: dict[str, tuple[Callable[[Recipe], list[Finding]], bool]] = {
    "tokenspeed": (lint_tokenspeed, False),
    "sglang": (lint_sglang, True),
}


def lint_engine_rules(recipe: Recipe) -> list[Finding]:
    """Every engine's own rules (:data:`ENGINE_LINTS`, in that order) on ``recipe``."""
    unsupported = recipe.get("unsupported") or {}
    out: list[Finding] = []
    for engine, (rules, skip_unsupported) in ENGINE_LINTS.items():
        if not (skip_unsupported and engine in unsupported):
            out.extend(rules(recipe))
    return out
