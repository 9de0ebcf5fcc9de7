"""The per-request deadline of Hub calls (kept light: no Hub import; the ``--timeout`` option
that sets it is :func:`recipecli.cli.hub_option.timeout_option`).

Every Hub request recipecli makes (through huggingface_hub's HTTP client) must finish -- connect,
send, headers and body together -- within this many seconds; see
:mod:`recipecli.checkpoint.hub` for the retry bound and the one-line failures.
"""

from __future__ import annotations

#: Default seconds per Hub request, connect and read together.
DEFAULT_TIMEOUT_S = 10.0

_state = {"timeout": DEFAULT_TIMEOUT_S}


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
