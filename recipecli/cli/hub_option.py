"""``--timeout SECONDS`` for commands that may reach the Hugging Face Hub."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from recipecli.checkpoint.hub_timeout import DEFAULT_TIMEOUT_S, set_timeout

F = TypeVar("F", bound=Callable[..., Any])


def _callback(ctx: click.Context, param: click.Parameter, value: float | None) -> None:
    set_timeout(DEFAULT_TIMEOUT_S if value is None else value)


def timeout_option(func: F) -> F:
    """Add ``--timeout`` (sets :func:`recipecli.checkpoint.hub_timeout.set_timeout`)."""
    return click.option(
        "--timeout",
        type=click.FloatRange(min=0, min_open=True, max=3600),
        default=None,
        expose_value=False,
        callback=_callback,
        metavar="SECONDS",
        help=f"Seconds each Hugging Face Hub request may take, connect and read together "
        f"(default {DEFAULT_TIMEOUT_S:g}); a failed request is retried once.",
    )(func)
