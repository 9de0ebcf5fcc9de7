"""Run SGLang 0.5.23's own CLI parser and argument resolution on a rendered argv.

``python -m sglang.launch_server FLAGS`` runs ``prepare_server_args(sys.argv[1:])``
(sglang/launch_server.py, ``__main__``): an ``argparse.ArgumentParser`` filled by
``ServerArgs.add_cli_args``, ``parse_args``, then ``ServerArgs.from_cli_args``
(sglang/srt/server_args.py). ``sglang serve FLAGS`` goes through sglang/cli/main.py ``main``
and sglang/cli/serve.py (backend detection, ``_run_llm``), which calls the same
``prepare_server_args`` and then ``sglang.launch_server.run_server``; :func:`parse_sglang_serve`
swaps ``run_server`` for a catcher, so no server starts.

:func:`resolve` runs ``ServerArgs.resolve_once`` (the resolution pipeline of
sglang/srt/arg_groups/pipeline.py, where SGLang validates its arguments) and reports which hooks
ran and where it stopped: on a machine without an accelerator it stops at
``serving_hook.handle_missing_default_values``, which calls ``utils/common.py get_device``.
Nothing here runs at import: the module is collected by the normal suite too.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from typing import Any

LAUNCH = ["python", "-m", "sglang.launch_server"]
#: the first resolution step that needs an accelerator (sglang/srt/arg_groups/serving_hook.py)
DEVICE_HOOK = "handle_missing_default_values"
NO_ACCELERATOR = "No accelerator"


def sglang_parser() -> argparse.ArgumentParser:
    """The parser ``prepare_server_args`` builds (``ServerArgs.add_cli_args``)."""
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser(prog="sglang serve")
    ServerArgs.add_cli_args(parser)
    return parser


def _run(fn) -> dict[str, Any]:
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            args = fn()
    except SystemExit as exc:
        text = [line for line in err.getvalue().strip().splitlines() if line.strip()]
        return {"accepted": False, "error": text[-1] if text else f"exit {exc.code}", "args": None}
    except Exception as exc:
        return {"accepted": False, "error": f"{type(exc).__name__}: {exc}", "args": None}
    return {"accepted": True, "error": None, "args": args}


def parse_launch(argv: list[str]) -> dict[str, Any]:
    """Parse ``python -m sglang.launch_server FLAGS`` as its ``__main__`` does.

    Returns:
        ``{"accepted", "error", "args"}``: ``args`` is the ``ServerArgs`` record;
        ``error`` argparse's last message line (exit 2) or the exception's text.
    """
    assert argv[:3] == LAUNCH, argv[:3]
    from sglang.srt.server_args import prepare_server_args

    return _run(lambda: prepare_server_args(list(argv[3:])))


def parse_sglang_serve(flags: list[str]) -> dict[str, Any]:
    """Parse ``sglang serve FLAGS`` through sglang/cli/main.py ``main`` (no server starts)."""
    import sglang.cli.main as cli_main
    import sglang.launch_server as launch

    caught: dict[str, Any] = {}
    original, saved = launch.run_server, sys.argv

    def run_server(server_args):
        caught["args"] = server_args

    def go():
        cli_main.main()
        if "args" not in caught:
            raise RuntimeError("sglang serve did not reach run_server (help or another backend)")
        return caught["args"]

    launch.run_server = run_server
    sys.argv = ["sglang", "serve", *flags]
    try:
        return _run(go)
    finally:
        launch.run_server, sys.argv = original, saved


def inexact_flags(flags: list[str]) -> list[str]:
    """Flags of ``flags`` that are not one of the parser's own option strings.

    argparse accepts an unambiguous prefix of a long option (``allow_abbrev``), so a misspelt
    flag could parse; the rendered flag must be the exact option string.
    """
    options = sglang_parser()._option_string_actions
    return [t for t in flags if t.startswith("--") and t.split("=", 1)[0] not in options]


def resolve(server_args) -> dict[str, Any]:
    """Run ``server_args.resolve_once()`` and report how far SGLang's resolution got.

    Returns:
        ``{"resolved": bool, "hooks": [names of the run_hook steps started],
        "stopped_at": the last one, "error": "Type: message" or None}``.
    """
    import sglang.srt.arg_groups.pipeline as pipeline

    started: list[str] = []
    original = pipeline.run_hook

    def run_hook(step, *args, **kwargs):
        started.append(getattr(step, "__name__", repr(step)))
        return original(step, *args, **kwargs)

    pipeline.run_hook = run_hook
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            server_args.resolve_once()
    except Exception as exc:
        return {
            "resolved": False,
            "hooks": started,
            "stopped_at": started[-1] if started else None,
            "error": f"{type(exc).__name__}: {exc}",
        }
    finally:
        pipeline.run_hook = original
    return {"resolved": True, "hooks": started, "stopped_at": None, "error": None}
