"""`recipecli lint RECIPE…`: schema, unknown/removed flags per engine (with "did you mean"), env
vars for the vendor, tokenspeed TP/top-k rules, misplaced overrides. Exit 1 on any error."""

from __future__ import annotations

import click

from recipecli.cli.completion import complete_recipe
from recipecli.cli.terminal import print_json
from recipecli.errors import EXIT_FINDINGS, EXIT_OK


@click.command("lint")
@click.argument("recipes", nargs=-1, required=True, shell_complete=complete_recipe)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
def command(recipes: tuple[str, ...], as_json: bool, strict: bool) -> int:
    """Lint recipe files, bundled recipe names, or directories (every *.yaml/*.yml in them,
    not recursive).

    Example: recipecli lint my-recipe.yaml minimax-m3-eagle3 my-recipes/
    """
    from recipecli.findings import has_errors
    from recipecli.recipes.lint import expand_refs, lint_recipe

    results = {ref: lint_recipe(ref) for ref in expand_refs(recipes)}
    bad = any(has_errors(f, strict=strict) for f in results.values())
    if as_json:
        print_json(
            {
                "ok": not bad,
                "recipes": [
                    {"recipe": ref, "findings": [f.to_dict() for f in fs]}
                    for ref, fs in results.items()
                ],
            },
            ok=not bad,
        )
        return EXIT_FINDINGS if bad else EXIT_OK
    for ref, findings in results.items():
        if not findings:
            click.echo(f"{ref}: ok")
        for f in findings:
            where, _, rule = f.source.partition("; ")
            tail = f"  [{rule}]" if rule else ""
            click.echo(f"{where}: {f.severity}: {f.code}: {f.message}{tail}")
    return EXIT_FINDINGS if bad else EXIT_OK
