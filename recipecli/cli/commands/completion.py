"""`recipecli completion SHELL`: print click's completion script for the shell
(:mod:`recipecli.cli.completion` holds the callbacks and the script classes)."""

from __future__ import annotations

import click

from recipecli.cli.completion import completion_class


@click.command("completion")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def command(shell: str) -> int:
    """Print the completion script, e.g. `eval "$(recipecli completion bash)"`.

    Completes command names, options, recipe names (render, lint), --hardware profiles of the
    recipe given, check --example names, and files for paths.
    """
    from recipecli.cli.app import cli

    comp = completion_class(shell)(cli, {}, "recipecli", "_RECIPECLI_COMPLETE")
    click.echo(comp.source())
    return 0
