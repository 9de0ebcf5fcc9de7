"""The `recipecli` command line: a thin click layer over the library.

Commands are registered in :data:`COMMANDS` and imported only when invoked, so ``recipecli --help``
and commands that need no weights never import torch (or even the modules of other commands).
Exit codes are mapped here and nowhere else: 0 ok, 1 findings of severity error, 2 bad input.
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from recipecli import __version__
from recipecli.errors import EXIT_BAD_INPUT, RecipeCliError

# name -> (module under recipecli.commands, one-line help, example)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "inspect": (
        "inspect",
        "Summarise a checkpoint from config.json and safetensors headers (never the weights).",
        "recipecli inspect meta-llama/Llama-3.1-8B-Instruct --json",
    ),
    "check": (
        "check",
        "Will this EAGLE3 draft serve with this target, per engine and TP size?",
        "recipecli check --example llama3.1-8b-eagle3",
    ),
    "verify-kernel": (
        "verify_kernel",
        "Run the fused EAGLE3 RMSNorm kernel against its torch reference on a draft's norms.",
        "recipecli verify-kernel --draft ./my-draft --device cpu --tokens 1,7",
    ),
    "render": (
        "render",
        "Render serve, bench and eval commands for vLLM or tokenspeed from one YAML recipe.",
        "recipecli render minimax-m3-eagle3 --engine vllm --hardware mi355x",
    ),
    "lint": (
        "lint",
        "Lint recipes: schema, unknown flags, env vars for the vendor, misplaced overrides.",
        "recipecli lint my-recipe.yaml",
    ),
    "docs": (
        "docs",
        "Generate documentation pages from recipes (deterministic; --check for CI).",
        "recipecli docs --bundled -o docs/recipes --check",
    ),
    "diff": (
        "diff",
        "Semantic diff of two rendered commands (recipes, hardware profiles or engines).",
        "recipecli diff minimax-m3-eagle3 minimax-m3-eagle3 --engine vllm --vs-engine tokenspeed",
    ),
    "report": (
        "report",
        "A/B table from `vllm bench serve --save-result` JSON files (and lm-eval results).",
        "recipecli report baseline.json candidate.json --gpus 4",
    ),
    "convert": (
        "convert",
        "Convert an EAGLE3 draft between formats (speculators, eagle3), verified bit for bit.",
        "recipecli convert ./draft ./draft-speculators --to speculators --target ./target",
    ),
    "completion": (
        "completion",
        "Print the shell completion script (bash, zsh or fish).",
        'eval "$(recipecli completion bash)"',
    ),
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module = importlib.import_module(f"recipecli.commands.{entry[0]}")
        return module.command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_) for name, (_, help_, _) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)
        with formatter.section("Examples"):
            formatter.write_dl([(name, ex) for name, (_, _, ex) in COMMANDS.items()])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="recipecli")
@click.option("--debug", is_flag=True, help="Show the full traceback on errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """recipecli: catch EAGLE3 speculative-decoding deployment mistakes before a GPU is rented.

    Exit codes: 0 ok, 1 the checked thing has errors, 2 bad input or usage.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def _debug_requested(argv: list[str]) -> bool:
    return "--debug" in argv or os.environ.get("RECIPECLI_DEBUG") == "1"


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the CLI and map the error family to exit codes."""
    args = sys.argv[1:] if argv is None else argv
    try:
        rv = cli.main(args=args, prog_name="recipecli", standalone_mode=False)
    except RecipeCliError as exc:
        if _debug_requested(args):
            raise
        click.echo(f"recipecli: error: {exc.one_line()}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "recipecli"
        msg = " ".join(exc.format_message().split())
        click.echo(f"recipecli: error: {msg} (see '{where} --help')", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except click.ClickException as exc:
        click.echo(f"recipecli: error: {' '.join(exc.format_message().split())}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except click.exceptions.Abort:
        click.echo("recipecli: aborted", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        click.echo("recipecli: interrupted", err=True)
        sys.exit(130)
    sys.exit(rv if isinstance(rv, int) else 0)
