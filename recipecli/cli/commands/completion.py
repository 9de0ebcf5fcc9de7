"""`recipecli completion SHELL`: print click's completion script for the shell
(:mod:`recipecli.cli.completion` holds the callbacks and the script classes).

The script covers the whole command tree, whose root (the lazy group of :mod:`recipecli.cli.app`)
is read from click's context, not imported: commands sit below the app that registers them.
"""

from __future__ import annotations

import click

from recipecli.cli.completion import completion_class


@click.command("completion")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@click.pass_context
def command(ctx: click.Context, shell: str) -> int:
    """Print the completion script, e.g. `eval "$(recipecli completion bash)"`.

    Completes command names, options, recipe names (render, lint), --hardware profiles of the
    recipe given, check --example names, and files for paths.
    """
    root = ctx.find_root().command
    comp = completion_class(shell)(root, {}, "recipecli", "_RECIPECLI_COMPLETE")
    click.echo(comp.source())
    return 0
