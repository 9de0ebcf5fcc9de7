"""``--timeout SECONDS`` for commands that may reach the Hugging Face Hub."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from recipecli.checkpoint.hub_timeout import DEFAULT_TIMEOUT_S

F = TypeVar("F", bound=Callable[..., Any])


def timeout_option(func: F) -> F:
    """Add ``--timeout`` (the command's ``timeout`` parameter: seconds, or None for the default),
    which the command passes to :func:`recipecli.checkpoint.open_checkpoint`."""
    return click.option(
        "--timeout",
        type=click.FloatRange(min=0, min_open=True, max=3600),
        default=None,
        metavar="SECONDS",
        help=f"Seconds each Hugging Face Hub request may take, connect and read together "
        f"(default {DEFAULT_TIMEOUT_S:g}); a failed request is retried once.",
    )(func)
