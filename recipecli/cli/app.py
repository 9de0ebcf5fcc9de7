"""The lazy click group of `recipecli` and its entry point :func:`main`.

Commands are registered in :data:`COMMANDS` (modules of :mod:`recipecli.cli.commands`) and
imported only when invoked, so ``recipecli --help`` and commands that need no weights never import
torch (or even the modules of other commands). Exit codes are mapped here and nowhere else: 0 ok,
1 findings of severity error, 2 bad input.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import importlib
import os
import sys

import click

from recipecli import __version__
from recipecli.errors import (
    EXIT_BAD_INPUT,
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    RecipeCliError,
    os_error_line,
)
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


class _Carried(Exception):
    """Carries Ctrl-C or an OS error out of click to :func:`main`: click would otherwise print a
    blank line before re-raising Ctrl-C, and turn EPIPE into a silent exit 1 (the findings
    code)."""

    def __init__(self, inner: BaseException):
        super().__init__(str(inner))
        self.inner = inner


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def invoke(self, ctx: click.Context) -> object:
        """Run the subcommand; Ctrl-C and OS errors leave click as :class:`_Carried`."""
        try:
            return super().invoke(ctx)
        except (KeyboardInterrupt, OSError) as exc:
            raise _Carried(exc) from exc

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


def _say(line: str) -> None:
    """Print one line on stderr; a stderr that is gone or full is not an error of its own."""
    with contextlib.suppress(OSError, ValueError):
        click.echo(line, err=True)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null after its reader went away (EPIPE), so that the interpreter's
    last flush at exit raises nothing (Python's own advice for a closed pipe)."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _show_traceback(args: list[str]) -> None:
    if _debug_requested(args):
        import traceback

        traceback.print_exc()  # --debug shows where; the exit code stays the error's own


def _fail(args: list[str], exc: BaseException) -> int:
    """The exit code of an error that reached :func:`main`, after its one line on stderr.

    Ctrl-C (and SIGTERM/SIGHUP, which the writers turn into ``KeyboardInterrupt``): "recipecli:
    interrupted", 130. EPIPE (stdout's reader went away): nothing, 141. Any other OS error:
    :func:`recipecli.errors.os_error_line`, 2. ``MemoryError``: one line, 2. The error family:
    its one line and its own exit code.
    """
    if isinstance(exc, _Carried):
        exc = exc.inner
    if isinstance(exc, OSError) and exc.errno == errno.EPIPE:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    _show_traceback(args)
    if isinstance(exc, (KeyboardInterrupt, click.exceptions.Abort)):
        _say("recipecli: interrupted")
        return EXIT_INTERRUPTED
    if isinstance(exc, RecipeCliError):
        _say(f"{_error_prefix(args)} {exc.one_line()}")
        return exc.exit_code
    if isinstance(exc, OSError):
        _say(f"{_error_prefix(args)} {os_error_line(exc)}")
        return EXIT_BAD_INPUT
    if isinstance(exc, MemoryError):
        _say(f"{_error_prefix(args)} out of memory — give smaller sizes (see the command's --help)")
        return EXIT_BAD_INPUT
    raise exc


def _click_error(args: list[str], exc: click.ClickException) -> int:
    """The one line and exit code (2) of click's own errors (usage, bad option values)."""
    msg = " ".join(exc.format_message().split())
    if isinstance(exc, click.UsageError):
        where = exc.ctx.command_path if exc.ctx is not None else "recipecli"
        msg = f"{msg} (see '{where} --help')"
    _say(f"{_error_prefix(args)} {msg}")
    return EXIT_BAD_INPUT


def _flushed(rv: object) -> int:
    """``rv`` as the exit code, once stdout is flushed (a full device or a closed pipe fails
    here when the command's last lines were still buffered)."""
    sys.stdout.flush()
    return rv if isinstance(rv, int) else 0


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the CLI and map errors to one line and an exit code.

    0 ok, 1 findings of severity error, 2 bad input, usage or an OS error (full disk, file-size
    limit, permissions, …), 130 interrupted (Ctrl-C, SIGTERM, SIGHUP), 141 stdout closed by its
    reader (quietly). No traceback unless ``--debug`` (or ``RECIPECLI_DEBUG=1``).
    """
    args = hoist_global_flags(list(sys.argv[1:] if argv is None else argv))
    try:
        try:
            code = _flushed(cli.main(args=args, prog_name="recipecli", standalone_mode=False))
        except click.exceptions.Exit as exc:
            code = exc.exit_code
        except click.ClickException as exc:
            code = _click_error(args, exc)
        except (_Carried, RecipeCliError, OSError, MemoryError, click.exceptions.Abort) as exc:
            code = _fail(args, exc)
    except KeyboardInterrupt as exc:  # also one that lands while an error above is handled
        code = _fail(args, exc)
    sys.exit(code)
