"""`recipecli completion SHELL`: print click's completion script for the shell."""

from __future__ import annotations

import click
from click.shell_completion import get_completion_class

from recipecli.errors import UsageError


@click.command("completion")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def command(shell: str) -> int:
    """Print the completion script, e.g. `eval "$(recipecli completion bash)"`."""
    from recipecli.cli import cli

    cls = get_completion_class(shell)
    if cls is None:  # pragma: no cover - click ships all three
        raise UsageError(f"no completion support for {shell}")
    comp = cls(cli, {}, "recipecli", "_RECIPECLI_COMPLETE")
    click.echo(comp.source())
    return 0
