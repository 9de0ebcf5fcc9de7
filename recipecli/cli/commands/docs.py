"""`recipecli docs RECIPE_OR_DIR… [-o docs/recipes] [--engine E|all] [--check]`: generate the
models pages (tokenspeed's docs/recipes/models.md layout) and one page per recipe."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from recipecli.cli.completion import complete_recipe
from recipecli.cli.terminal import print_json
from recipecli.errors import EXIT_FINDINGS, EXIT_OK
from recipecli.recipes.engines import ENGINES


@click.command("docs")
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
    recipes, bundled, engine_pages, out_dir, engine, check, checkpoints, templates, as_json
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
      recipecli docs recipes/ -o site/recipes --engine tokenspeed
      recipecli docs --bundled -o docs/recipes --checkpoints bundled --check
      recipecli docs --engines -o docs/engines --check
    """
    from recipecli.docsgen import DocsOptions, collect_recipes, generate, sync
    from recipecli.errors import UsageError

    if engine_pages:
        if recipes or bundled:
            raise UsageError("--engines writes the engine pages only; give no recipes or --bundled")
        from recipecli.engines.pages import engine_pages as build_engine_pages

        out_dir = out_dir or "docs/engines"
        pages = build_engine_pages()
        inputs: list = []
    else:
        out_dir = out_dir or "docs/recipes"
        loaded = collect_recipes(recipes, bundled=bundled)
        engines = ENGINES if engine == "all" else (engine,)
        pages = generate(loaded, out_dir, DocsOptions(engines, checkpoints, templates))
        inputs = [(f"the recipe directory {r}", r) for r in recipes if Path(r).is_dir()]
        inputs += [(f"the recipe {r.path}", r.path) for r in loaded]
        if templates:
            inputs.append((f"the --templates folder {templates}", templates))
    result = sync(pages, out_dir, check=check, inputs=inputs)
    failed = _print_result(result, Path(out_dir), check=check, pages=len(pages), as_json=as_json)
    return EXIT_FINDINGS if failed else EXIT_OK


def _print_result(result: Any, out: Path, *, check: bool, pages: int, as_json: bool) -> bool:
    """Print what :func:`recipecli.docsgen.sync` did (or, under ``--check``, found); True when
    ``--check`` found files missing or stale."""
    missing = [str(out / n) for n in result.missing]
    stale = [str(out / n) for n in result.stale]
    orphans = [str(out / n) for n in result.orphans]
    failed = check and bool(missing or stale or orphans)
    if as_json:
        print_json(
            {
                "output": str(out),
                "check": check,
                "ok": not failed,
                "missing": missing,
                "stale": stale,
                "orphans": orphans,
                "written": [str(out / n) for n in result.written],
                "removed": [str(out / n) for n in result.removed],
                "unchanged": [str(out / n) for n in result.unchanged],
            }
        )
    elif check:
        for path in missing:
            click.echo(f"missing: {path}")
        for path in stale:
            click.echo(f"stale: {path}")
        for path in orphans:
            click.echo(f"stale: {path} (no recipe generates it any more)")
        if failed:
            click.echo(
                f"recipecli docs: {len(missing) + len(stale) + len(orphans)} file(s) missing or "
                f"out of date in {out}; run the same command without --check to regenerate",
                err=True,
            )
        else:
            click.echo(f"{out}: {pages} files up to date")
    else:
        for path in result.written:
            click.echo(f"wrote {out / path}", err=True)
        for path in result.removed:
            click.echo(f"removed {out / path}", err=True)
        click.echo(
            f"{out}: {len(result.written)} written, {len(result.removed)} removed, "
            f"{len(result.unchanged)} unchanged"
        )
    return failed
