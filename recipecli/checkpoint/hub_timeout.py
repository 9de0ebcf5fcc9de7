"""The ``--timeout`` of commands that reach the Hugging Face Hub (kept light: no Hub import).

Every Hub request recipecli makes (through huggingface_hub's HTTP client) must finish -- connect,
send, headers and body together -- within this many seconds; see
:mod:`recipecli.checkpoint.hub` for the retry bound and the one-line failures.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

#: Default seconds per Hub request, connect and read together.
DEFAULT_TIMEOUT_S = 10.0

_state = {"timeout": DEFAULT_TIMEOUT_S}

F = TypeVar("F", bound=Callable[..., Any])


def set_timeout(seconds: float) -> None:
    """Set the per-request Hub deadline (seconds, > 0) for this process.

    Raises:
        ValueError: ``seconds`` is not a positive finite number.
    """
    if not (isinstance(seconds, (int, float)) and 0 < seconds < float("inf")):
        raise ValueError(f"Hub timeout must be a positive number of seconds, got {seconds!r}")
    _state["timeout"] = float(seconds)


def get_timeout() -> float:
    """The per-request Hub deadline in seconds (default :data:`DEFAULT_TIMEOUT_S`)."""
    return _state["timeout"]


def _callback(ctx: click.Context, param: click.Parameter, value: float | None) -> None:
    set_timeout(DEFAULT_TIMEOUT_S if value is None else value)


def timeout_option(func: F) -> F:
    """``--timeout SECONDS`` for a command that may reach the Hub (sets :func:`set_timeout`)."""
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
