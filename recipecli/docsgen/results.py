"""Measured A/B results a recipe links (``results:``), as the markdown tables of
:mod:`recipecli.report`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from recipecli.docsgen.markdown import prose
from recipecli.engines import TITLES as ENGINE_TITLES
from recipecli.errors import RecipeError
from recipecli.recipes.loader import Recipe, check_results_inside


def results_sections(recipe: Recipe, engine: str | None = None) -> list[dict[str, str]]:
    """Measured A/B results a recipe links (``results:`` entries), as markdown tables made by
    :mod:`recipecli.report` from the ``vllm bench serve --save-result`` JSON files.

    Each entry: ``title``, ``baseline`` and ``candidate`` (file or list of files, relative to the
    recipe file and inside its folder, links followed), optional ``gpus``, ``labels``
    ``[A, B]``, ``eval_baseline`` / ``eval_candidate``, ``engine`` and ``hardware``.

    Args:
        recipe: the recipe.
        engine: keep only entries for this engine (entries without ``engine`` always match).

    Returns:
        ``[{"title", "engine", "hardware", "table"}]`` in recipe order.

    Raises:
        RecipeError: an entry is malformed, or names a file outside the recipe's folder
            (``../x``, an absolute path elsewhere, a link out of it; every entry is checked,
            whatever ``engine``); ReportError/UsageError from the report loader.
    """
    entries = recipe.get("results") or []
    if not isinstance(entries, list):
        raise RecipeError("results must be a list", path=recipe.where("results"))
    check_results_inside(recipe)
    from recipecli.report import load_report, render_markdown

    base = Path(recipe.path).parent
    out: list[dict[str, str]] = []
    for i, entry in enumerate(entries):
        where = recipe.where("results", str(i))
        if not isinstance(entry, Mapping) or "baseline" not in entry or "candidate" not in entry:
            raise RecipeError("a results entry needs baseline and candidate files", path=where)
        if engine is not None and entry.get("engine") not in (None, engine):
            continue

        def files(key: str, entry: Mapping[str, Any] = entry) -> list[str]:
            value = entry.get(key) or []
            items = [value] if isinstance(value, str) else list(value)
            return [str(base / str(v)) for v in items]

        labels = entry.get("labels") or ("Baseline", "Candidate")
        report = load_report(
            files("baseline"),
            files("candidate"),
            gpus=entry.get("gpus"),
            labels=(str(labels[0]), str(labels[1])),
            eval_baseline_paths=files("eval_baseline"),
            eval_candidate_paths=files("eval_candidate"),
        )
        out.append(
            {
                "title": prose(entry.get("title") or f"{labels[0]} vs {labels[1]}"),
                "engine": ENGINE_TITLES.get(entry.get("engine") or "", ""),
                "hardware": str(entry.get("hardware") or ""),
                "table": render_markdown(report).rstrip("\n"),
            }
        )
    return out
