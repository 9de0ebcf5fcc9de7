"""``results`` entries that name a file outside the recipe's folder (issue #29 item 2): ``docs``
refuses them (:func:`recipecli.recipes.loader.check_results_inside`); lint reports each one."""

from __future__ import annotations

from recipecli.findings import Finding
from recipecli.recipes.lint.common import finding
from recipecli.recipes.loader import Recipe, results_files, results_outside_message


def lint_results(recipe: Recipe) -> list[Finding]:
    """One ``recipe.results_outside`` error per ``results`` file (``baseline``, ``candidate``,
    ``eval_baseline``, ``eval_candidate``) that lies outside the recipe file's folder once every
    symbolic link is followed: ``../x``, an absolute path elsewhere, a link out of the folder.

    Args:
        recipe: the recipe (malformed entries are skipped: the schema reports them).

    Returns:
        the findings, in file order, each at the entry key's ``file:line``.
    """
    return [
        finding(
            "recipe.results_outside",
            "error",
            "any",
            results_outside_message(recipe, value),
            where,
            "docs/hostile-input.md",
            path=value,
        )
        for value, where, inside in results_files(recipe)
        if not inside
    ]
