"""`recipecli diff A [B]`: semantic diff of two rendered commands (two recipes, one recipe on two
hardware profiles, or one recipe for two engines)."""

from __future__ import annotations

from typing import TypedDict

import click

from recipecli.cli.completion import complete_recipe, hardware_completer
from recipecli.cli.terminal import print_json
from recipecli.engines import ENGINES
from recipecli.errors import EXIT_FINDINGS, EXIT_OK
from recipecli.recipes.targets import target_config_callback


class _Sides(TypedDict):
    """The keywords :func:`recipecli.diff.diff_recipes` and :func:`~recipecli.diff.diff_all`
    share: each side's engine, hardware profile and overrides, and the target config."""

    engine: str
    vs_engine: str | None
    hardware: str | None
    vs_hardware: str | None
    sets: tuple[str, ...]
    vs_sets: tuple[str, ...]
    target_config: str | None


@click.command("diff")
@click.argument("recipe_a", metavar="A", shell_complete=complete_recipe)
@click.argument("recipe_b", metavar="[B]", required=False, shell_complete=complete_recipe)
@click.option(
    "--engine",
    type=click.Choice(list(ENGINES)),
    default=ENGINES[0],
    show_default=True,
    help="Engine of A.",
)
@click.option(
    "--vs-engine",
    type=click.Choice(list(ENGINES)),
    default=None,
    help="Engine of B (default: --engine).",
)
@click.option(
    "--hardware",
    default=None,
    shell_complete=hardware_completer("recipe_a"),
    help="Hardware profile of A (default: its default).",
)
@click.option(
    "--vs-hardware",
    shell_complete=hardware_completer("recipe_b", "recipe_a"),
    default=None,
    help="Hardware profile of B (default: --hardware, else its default).",
)
@click.option(
    "--what",
    type=click.Choice(["serve", "bench", "eval", "all"]),
    default="serve",
    show_default=True,
    help="Which command to compare; all: serve, bench and eval (the sections either side has).",
)
@click.option(
    "--set", "sets", multiple=True, metavar="NAME=VALUE", help="Override for A (repeatable)."
)
@click.option(
    "--vs-set", "vs_sets", multiple=True, metavar="NAME=VALUE", help="Override for B (repeatable)."
)
@click.option(
    "--target-config",
    metavar="SOURCE",
    callback=target_config_callback,
    help="Where to read the target's config.json (both sides).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def command(
    recipe_a: str,
    recipe_b: str | None,
    engine: str,
    vs_engine: str | None,
    hardware: str | None,
    vs_hardware: str | None,
    what: str,
    sets: tuple[str, ...],
    vs_sets: tuple[str, ...],
    target_config: str | None,
    as_json: bool,
) -> int:
    """Compare the command rendered from A with the one rendered from B (default: A again).

    Flags are compared by name regardless of order: added (+), removed (-), changed (~);
    JSON-valued flags (--speculative-config, --hf-overrides) and lm-eval key=value lists key by
    key; environment variables likewise. Exit 0 when the commands are the same, 1 when they
    differ (like diff(1)), 2 for bad input.

    \b
    Examples:
      recipecli diff minimax-m3-eagle3 --hardware b200 --vs-hardware mi355x
      recipecli diff minimax-m3-eagle3 --engine vllm --vs-engine tokenspeed
      recipecli diff llama3.1-8b-eagle3 qwen3-30b-a3b-eagle3 --what bench --json
      recipecli diff minimax-m3-eagle3 --vs-set max_model_len=65536
      recipecli diff minimax-m3-eagle3 --engine vllm --vs-engine tokenspeed --what all
    """
    from recipecli.diff import diff_all, diff_recipes, format_all, format_diff

    sides = _Sides(
        engine=engine,
        vs_engine=vs_engine,
        hardware=hardware,
        vs_hardware=vs_hardware,
        sets=sets,
        vs_sets=vs_sets,
        target_config=target_config,
    )
    if what == "all":
        d_all = diff_all(recipe_a, recipe_b, **sides)
        if as_json:
            print_json(d_all.to_dict(), ok=d_all.identical)
        else:
            click.echo(format_all(d_all), nl=False)
        return EXIT_OK if d_all.identical else EXIT_FINDINGS
    d = diff_recipes(recipe_a, recipe_b, what=what, **sides)
    if as_json:
        print_json(d.to_dict(), ok=d.identical)
    else:
        click.echo(format_diff(d), nl=False)
    return EXIT_OK if d.identical else EXIT_FINDINGS
