"""`recipecli docs RECIPE_OR_DIR… [-o docs/recipes] [--engine E|all] [--check]`: generate the
models pages (tokenspeed's docs/recipes/models.md layout) and one page per recipe."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from recipecli.cli.completion import complete_recipe
from recipecli.cli.terminal import print_json
from recipecli.errors import EXIT_FINDINGS, EXIT_OK
from recipecli.recipes.engines import ENGINES

if TYPE_CHECKING:
    from recipecli.safe_write import Input


class _DocsCommand(click.Command):
    """``docs``' usage line names its three inputs: recipes (files, names, directories),
    ``--bundled`` or ``--engines`` (RECIPE_OR_DIR is optional with the other two)."""

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        return ["[OPTIONS]", "(RECIPE_OR_DIR... | --bundled | --engines) -o DIR"]


@click.command("docs", cls=_DocsCommand)
@click.argument("recipes", nargs=-1, metavar="RECIPE_OR_DIR...", shell_complete=complete_recipe)
@click.option("--bundled", is_flag=True, help="Document every bundled recipe (as well).")
@click.option(
    "--engines",
    "engine_pages",
    is_flag=True,
    help="Write the engine-model pages (docs/engines/: every rule check applies, with its "
    "engine source) instead of recipe pages.",
)
@click.option(
    "-o",
    "--output",
    "out_dir",
    default=None,
    metavar="DIR",
    help="Directory of the generated pages [default: docs/recipes, or docs/engines with --engines].",
)
@click.option(
    "--engine",
    type=click.Choice([*ENGINES, "all"]),
    default="all",
    show_default=True,
    help="Engines to document (one models page per engine).",
)
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 listing the files that are missing or stale (for CI).",
)
@click.option(
    "--checkpoints",
    type=click.Choice(["bundled", "cache", "online", "none"]),
    default="cache",
    show_default=True,
    help="Where the check section may open the recipe's checkpoints: bundled snapshots only; "
    "also local paths and the HF cache (HF_HUB_OFFLINE=1); also the Hub (headers only); "
    "or skip the check section.",
)
@click.option(
    "--templates",
    metavar="DIR",
    help="Directory of docs_*.md.j2 templates overriding the bundled ones.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document: stale, written, …")
def command(
    recipes: tuple[str, ...],
    bundled: bool,
    engine_pages: bool,
    out_dir: str | None,
    engine: str,
    check: bool,
    checkpoints: str,
    templates: str | None,
    as_json: bool,
) -> int:
    """Generate documentation pages for RECIPE_OR_DIR… (recipe files, bundled names or
    directories of *.yaml recipes).

    Writes README.md, models-<engine>.md and <recipe>.md into DIR (created when missing; the
    directory above it must exist); the output is deterministic (a second run changes no
    byte). Generated pages that no recipe
    produces any more are deleted; a file without the generated-page marker is never
    overwritten (exit 2). Exit 0 ok, 1 under --check when some file is missing or stale,
    2 bad input.

    \b
    Examples:
      recipecli docs --bundled -o docs/recipes
      recipecli docs my-recipe.yaml -o site/recipes --engine tokenspeed
      recipecli docs --bundled -o docs/recipes --checkpoints bundled --check
      recipecli docs --engines -o docs/engines --check
    """
    from recipecli.docsgen import SyncReport, sync
    from recipecli.errors import UsageError

    if engine_pages:
        if recipes or bundled:
            raise UsageError("--engines writes the engine pages only; give no recipes or --bundled")
        from recipecli.docsgen.engine_pages import engine_pages as build_engine_pages

        out_dir = out_dir or "docs/engines"
        pages = build_engine_pages()
        inputs: list[Input] = []
    else:
        out_dir = out_dir or "docs/recipes"
        pages, inputs = _recipe_pages(recipes, bundled, out_dir, engine, checkpoints, templates)
    result = sync(pages, out_dir, check=check, inputs=inputs)
    report = SyncReport(result, Path(out_dir), check, len(pages))
    if as_json:
        print_json(report, ok=not report.failed)
    else:
        for line, to_stderr in report.lines():
            click.echo(line, err=to_stderr)
    return EXIT_FINDINGS if report.failed else EXIT_OK


def _recipe_pages(
    recipes: tuple[str, ...],
    bundled: bool,
    out_dir: str,
    engine: str,
    checkpoints: str,
    templates: str | None,
) -> tuple[dict[str, str], list[Input]]:
    """The recipe pages (``{file name: text}``) of RECIPE_OR_DIR… (and the bundled recipes), and
    what they were made from as safe_write inputs (recipe directories and files, --templates):
    no page may be written over or into one."""
    from recipecli.docsgen import DocsOptions, collect_recipes, generate

    loaded = collect_recipes(recipes, bundled=bundled)
    engines = ENGINES if engine == "all" else (engine,)
    pages = generate(loaded, out_dir, DocsOptions(engines, checkpoints, templates))
    inputs: list[Input] = [(f"the recipe directory {r}", r) for r in recipes if Path(r).is_dir()]
    inputs += [(f"the recipe {r.path}", r.path) for r in loaded]
    if templates:
        inputs.append((f"the --templates folder {templates}", templates))
    return pages, inputs
