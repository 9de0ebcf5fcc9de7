"""The default per-request deadline of Hub calls (kept light: no Hub import). Commands that may
reach the Hub take ``--timeout`` (:func:`recipecli.cli.hub_option.timeout_option`) and pass it to
:func:`recipecli.checkpoint.open_checkpoint` as ``timeout=``.

Every Hub request recipecli makes (through huggingface_hub's HTTP client) must finish -- connect,
send, headers and body together -- within that many seconds; see
:mod:`recipecli.checkpoint.hub` for the retry bound and the one-line failures.
"""

from __future__ import annotations

#: Default seconds per Hub request, connect and read together.
DEFAULT_TIMEOUT_S = 10.0
