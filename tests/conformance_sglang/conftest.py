"""Conformance suite: recipecli checked against SGLang 0.5.23's own code.

The tests here are marked ``conformance_sglang`` and run only inside the pinned environment that
``scripts/conformance/build_sglang_env.sh`` builds; ``scripts/conformance/run_sglang_conformance.sh``
(and ``.ci/run``) sets ``RECIPECLI_CONFORMANCE_SGLANG_ENV=1`` and runs them there. Anywhere else
(the normal ``python -m pytest``) they are deselected, with one summary line saying how to run
them. With ``RECIPECLI_CONFORMANCE_SGLANG_ENV=1`` and no SGLang 0.5.23 importable, collection
fails instead of skipping, so CI cannot pass without running them.

Each test records what it compared in :data:`sgl_report.REPORT`; at the end the suite writes
``sglang_conformance_report.json`` to ``$RECIPECLI_CONFORMANCE_REPORT`` (default: pytest's base
temp directory) and prints a summary.
"""

from __future__ import annotations

import json
import os
import sys
from importlib import metadata
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sgl_report import REPORT, RUN_HINT, SGLANG_VERSION  # noqa: E402

IN_ENV = os.environ.get("RECIPECLI_CONFORMANCE_SGLANG_ENV") == "1"
MARKER = "conformance_sglang"
_DESELECTED: list[int] = [0]


def pytest_configure(config: pytest.Config) -> None:
    if not IN_ENV:
        return
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("SGLANG_LOGGING_LEVEL", "ERROR")
    # SGLang's defaults, whatever the caller's shell says: model_config.py
    # _derive_context_length turns its ValueError into a warning under either flag.
    for name in ("SGLANG_IS_IN_CI", "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"):
        os.environ.pop(name, None)
    try:
        have = metadata.version("sglang")
    except metadata.PackageNotFoundError:
        raise pytest.UsageError(
            "RECIPECLI_CONFORMANCE_SGLANG_ENV=1 but sglang is not installed here: "
            f"run the suite with {RUN_HINT}"
        ) from None
    if have != SGLANG_VERSION:
        raise pytest.UsageError(f"SGLang conformance needs sglang {SGLANG_VERSION}, found {have}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if IN_ENV:
        return
    keep, drop = [], []
    for item in items:
        (drop if item.get_closest_marker(MARKER) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
        _DESELECTED[0] = len(drop)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    tr = terminalreporter
    if not IN_ENV:
        if _DESELECTED[0]:
            tr.write_line(
                f"conformance_sglang: {_DESELECTED[0]} tests deselected (they need the pinned "
                f"SGLang {SGLANG_VERSION} env): {RUN_HINT}"
            )
        return
    out = Path(
        os.environ.get("RECIPECLI_CONFORMANCE_REPORT") or config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
    )
    out.mkdir(parents=True, exist_ok=True)
    path = out / "sglang_conformance_report.json"
    path.write_text(json.dumps(REPORT, indent=1, default=str))
    tr.section(f"conformance against SGLang {SGLANG_VERSION}")
    parser = REPORT["parser"]
    refused = sum(1 for r in parser if str(r.get("outcome", "")).startswith("refused"))
    unparsed = sum(1 for r in parser if r.get("accepted") is None)
    accepted = sum(1 for r in parser if r.get("accepted"))
    tr.write_line(
        f"parser: {accepted} commands accepted by SGLang's own parser (bench: vLLM's), "
        f"{len(parser) - accepted - refused - unparsed} rejected; {refused} renders refused by "
        f"recipecli (unsupported.sglang); {unparsed} eval commands not parsed (lm_eval)"
    )
    for r in parser:
        tr.write_line(f"  {r['id']}: {r.get('outcome') or r.get('error')}")
    ov = REPORT["overrides"]
    tr.write_line(f"overrides: {len(ov)} placements through SGLang's get_config")
    for r in ov:
        tr.write_line(f"  {r['id']}: {r['outcome']}")
    ver = REPORT["verdicts"]
    tr.write_line(f"verdicts: {len(ver)} values of check --engine sglang against SGLang's code")
    for r in ver:
        tr.write_line(f"  {r['id']}: sglang {r['sglang']!r}, recipecli {r['recipecli']!r}")
    tr.write_line(f"report: {path}")
