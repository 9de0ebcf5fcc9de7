"""The lazy click group of `recipecli` and its entry point :func:`main`.

Commands are registered in :data:`COMMANDS` (modules of :mod:`recipecli.cli.commands`) and
imported only when invoked, so ``recipecli --help`` and commands that need no weights never import
torch (or even the modules of other commands). Exit codes are mapped here and nowhere else: 0 ok,
1 findings of severity error, 2 bad input.
"""

from __future__ import annotations

import difflib
import importlib
import os
import sys

import click

from recipecli import __version__
from recipecli.errors import EXIT_BAD_INPUT, RecipeCliError
from recipecli.output import color_enabled, paint

#: Options of the top-level group that are accepted anywhere on the command line (before ``--``).
GLOBAL_FLAGS: tuple[str, ...] = ("--debug", "--no-color")

# name -> (module under recipecli.cli.commands, one-line help, example)
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
        "Run the fused EAGLE3 RMSNorm kernel against its reference on a draft's norms.",
        "recipecli verify-kernel --draft ./my-draft --device cpu --tokens 1,7",
    ),
    "render": (
        "render",
        "Render serve, bench and eval commands for vLLM, tokenspeed or SGLang from one YAML recipe.",
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
        module = importlib.import_module(f"recipecli.cli.commands.{entry[0]}")
        command: click.Command = module.command
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """Look up ``args[0]``; an unknown name fails with the closest command names."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in COMMANDS:
            close = difflib.get_close_matches(name, list(COMMANDS), n=3, cutoff=0.6)
            hint = ""
            if close:
                names = " or ".join(repr(c) for c in close)
                hint = f" Did you mean {names}?"
            ctx.fail(f"No such command {name!r}.{hint}")
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_) for name, (_, help_, _) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)
        with formatter.section("Examples"):
            formatter.write_dl([(name, ex) for name, (_, _, ex) in COMMANDS.items()])


@click.group(
    cls=LazyGroup,
    invoke_without_command=True,
    subcommand_metavar="COMMAND [ARGS]...",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="recipecli")
@click.option(
    "--debug", is_flag=True, help="Show the full traceback on errors (accepted anywhere)."
)
@click.option(
    "--no-color",
    is_flag=True,
    help="No colour in terminal output (accepted anywhere; NO_COLOR=1 does the same).",
)
@click.pass_context
def cli(ctx: click.Context, debug: bool, no_color: bool) -> None:
    """recipecli: catch EAGLE3 speculative-decoding deployment mistakes before a GPU is rented.

    Exit codes: 0 ok, 1 the checked thing has errors, 2 bad input or usage.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    ctx.obj["no_color"] = no_color
    if ctx.invoked_subcommand is None:  # bare `recipecli`: the help, like `hf` and `vllm`
        click.echo(ctx.get_help(), color=color_enabled(no_color=no_color))


def hoist_global_flags(argv: list[str]) -> list[str]:
    """Move :data:`GLOBAL_FLAGS` found anywhere before ``--`` to the front, where the group
    parses them (``recipecli inspect X --debug`` = ``recipecli --debug inspect X``)."""
    end = argv.index("--") if "--" in argv else len(argv)
    found = [a for a in GLOBAL_FLAGS if a in argv[:end]]
    rest = [a for i, a in enumerate(argv) if i >= end or a not in GLOBAL_FLAGS]
    return found + rest


def _global_flag(argv: list[str], flag: str) -> bool:
    """``flag`` given before any ``--`` (after it every word is an argument)."""
    end = argv.index("--") if "--" in argv else len(argv)
    return flag in argv[:end]


def _debug_requested(argv: list[str]) -> bool:
    return _global_flag(argv, "--debug") or os.environ.get("RECIPECLI_DEBUG") == "1"


def _error_prefix(args: list[str]) -> str:
    no_color = _global_flag(args, "--no-color")
    return paint("recipecli: error:", "error", color_enabled(sys.stderr, no_color=no_color))


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the CLI and map the error family to exit codes."""
    args = hoist_global_flags(list(sys.argv[1:] if argv is None else argv))
    try:
        rv = cli.main(args=args, prog_name="recipecli", standalone_mode=False)
    except RecipeCliError as exc:
        if _debug_requested(args):
            import traceback

            traceback.print_exc()  # --debug shows where; the exit code stays the error's own
        click.echo(f"{_error_prefix(args)} {exc.one_line()}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "recipecli"
        msg = " ".join(exc.format_message().split())
        click.echo(f"{_error_prefix(args)} {msg} (see '{where} --help')", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except click.ClickException as exc:
        msg = " ".join(exc.format_message().split())
        click.echo(f"{_error_prefix(args)} {msg}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except click.exceptions.Abort:
        click.echo("recipecli: aborted", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        click.echo("recipecli: interrupted", err=True)
        sys.exit(130)
    sys.exit(rv if isinstance(rv, int) else 0)
