"""Run vLLM 0.33.0's own CLI parser on an argv, stopping before any server or benchmark starts.

``vllm.entrypoints.cli.main.main()`` (vllm/entrypoints/cli/main.py) builds the real parser of
every subcommand, parses ``sys.argv`` and runs the subcommand's ``validate`` (for serve,
``validate_parsed_serve_args`` in vllm/entrypoints/common/cli_args.py) before calling
``args.dispatch_function``; :func:`parse` swaps that function for a no-op on the parsed
namespace. ``--config FILE`` goes through ``FlexibleArgumentParser.load_config_file``
(vllm/utils/argparse_utils.py) exactly as on the command line.

:func:`check_speculative_fields` applies ``SpeculativeConfig``'s own pydantic field declarations
(vllm/config/speculative.py; the ``@config`` decorator forbids unknown keys) to a
``--speculative-config`` dict: the checks pydantic runs when ``EngineArgs`` builds it, without
``__post_init__`` (which needs the target model).
"""

from __future__ import annotations

import contextlib
import io
import sys
from typing import Any


def parse(argv: list[str]) -> dict[str, Any]:
    """Parse ``argv`` (``["vllm", "serve", ...]``) with vLLM's CLI.

    Returns:
        ``{"accepted": bool, "error": str | None, "namespace": dict | None}``; ``error`` is
        argparse's message (its exit status 2) or the validation exception's text.
    """
    import vllm.entrypoints.cli.main as cli_main
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    captured: dict[str, Any] = {}
    original = FlexibleArgumentParser.parse_args

    def parse_args(self, args=None, namespace=None):
        ns = original(self, args, namespace)
        if hasattr(ns, "dispatch_function"):
            captured["ns"] = ns
            ns.dispatch_function = lambda parsed: captured.setdefault("dispatched", True)
        return ns

    saved = sys.argv
    err = io.StringIO()
    FlexibleArgumentParser.parse_args = parse_args
    sys.argv = list(argv)
    try:
        with contextlib.redirect_stderr(err):
            cli_main.main()
    except SystemExit as exc:
        text = err.getvalue().strip().splitlines()
        return {
            "accepted": False,
            "error": (text[-1] if text else f"exit {exc.code}"),
            "namespace": None,
        }
    except Exception as exc:  # a subcommand's validate
        return {"accepted": False, "error": f"{type(exc).__name__}: {exc}", "namespace": None}
    finally:
        FlexibleArgumentParser.parse_args = original
        sys.argv = saved
    ns = captured.get("ns")
    if ns is None or not captured.get("dispatched"):
        return {
            "accepted": False,
            "error": "vllm printed help (no subcommand dispatched)",
            "namespace": None,
        }
    out = {k: v for k, v in vars(ns).items() if k != "dispatch_function"}
    return {"accepted": True, "error": None, "namespace": out}


def check_speculative_fields(spec: dict[str, Any]) -> list[str]:
    """Problems pydantic would raise for ``SpeculativeConfig(**spec)``'s fields.

    Returns:
        One line per unknown key or invalid value; empty when every field passes.
    """
    from typing import Annotated

    from pydantic import TypeAdapter, ValidationError
    from vllm.config.speculative import SpeculativeConfig

    fields = SpeculativeConfig.__pydantic_fields__
    problems = []
    for key, value in spec.items():
        name = key.replace("-", "_")  # EngineArgs.create_speculative_config does the same
        if name not in fields:
            problems.append(f"unknown SpeculativeConfig field {key!r}")
            continue
        info = fields[name]
        annotation = info.annotation
        if info.metadata:
            annotation = Annotated[(annotation, *info.metadata)]
        try:
            TypeAdapter(annotation).validate_python(value)
        except ValidationError as exc:
            problems.append(f"{key}={value!r}: {exc.errors()[0]['msg']}")
    return problems


def flag_dests_missing(argv: list[str], namespace: dict[str, Any]) -> list[str]:
    """Flags of ``argv`` whose argparse dest is not in ``namespace``.

    vLLM's parser allows abbreviations (argparse's ``allow_abbrev``), so a misspelt prefix of a
    real flag would parse; requiring the exact dest (``--no-x`` -> ``x``) catches that.
    """
    missing = []
    for token in argv:
        if not token.startswith("--") or token == "--config":
            continue
        dest = token[2:].split("=", 1)[0].replace("-", "_")
        if dest not in namespace and not (dest.startswith("no_") and dest[3:] in namespace):
            missing.append(token)
    return missing
