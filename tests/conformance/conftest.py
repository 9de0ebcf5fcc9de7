"""Conformance suite: recipecli checked against vLLM 0.33.0's own code.

The tests here are marked ``conformance`` and run only inside the pinned environment that
``scripts/conformance/build_vllm_env.sh`` builds; ``scripts/conformance/run_conformance.sh`` (and
``.ci/run``) sets ``RECIPECLI_CONFORMANCE_ENV=1`` and runs them there. Anywhere else (the normal
``python -m pytest``) they are deselected, with one summary line saying how to run them. With
``RECIPECLI_CONFORMANCE_ENV=1`` and no vLLM 0.33.0 importable, collection fails instead of
skipping, so CI cannot pass without running them.

Each test records what it compared in the session :data:`REPORT`; at the end the suite writes
``conformance_report.json`` and ``draft_disagreements.md`` to ``$RECIPECLI_CONFORMANCE_REPORT``
(default: pytest's base temp directory) and prints a summary.
"""

from __future__ import annotations

import json
import os
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from recipecli.engines import engine_spec

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

IN_ENV = os.environ.get("RECIPECLI_CONFORMANCE_ENV") == "1"
#: the pinned vLLM release (recipecli/engines/vllm/pin.py)
VLLM_VERSION = engine_spec("vllm").pin.version
RUN_HINT = "bash scripts/conformance/run_conformance.sh"

#: what the suite compared, by section: list of one-line records (written at session end)
REPORT: dict[str, list[dict[str, Any]]] = {"parser": [], "hf_overrides": [], "drafts": []}
_DESELECTED: list[int] = [0]


def pytest_configure(config: pytest.Config) -> None:
    if IN_ENV:
        os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
        try:
            have = metadata.version("vllm")
        except metadata.PackageNotFoundError:
            raise pytest.UsageError(
                "RECIPECLI_CONFORMANCE_ENV=1 but vllm is not installed here: "
                f"run the suite with {RUN_HINT}"
            ) from None
        if have != VLLM_VERSION:
            raise pytest.UsageError(f"conformance needs vllm {VLLM_VERSION}, found {have}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if IN_ENV:
        return
    keep, drop = [], []
    for item in items:
        (drop if item.get_closest_marker("conformance") else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
        _DESELECTED[0] = len(drop)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if not IN_ENV:
        if _DESELECTED[0]:
            terminalreporter.write_line(
                f"conformance: {_DESELECTED[0]} tests deselected (they need the pinned vLLM "
                f"{VLLM_VERSION} env): {RUN_HINT}"
            )
        return
    out = Path(
        os.environ.get("RECIPECLI_CONFORMANCE_REPORT") or config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "conformance_report.json").write_text(json.dumps(REPORT, indent=1, default=str))
    drafts = REPORT["drafts"]
    if drafts:
        from run_pairs import markdown

        (out / "draft_disagreements.md").write_text(markdown(drafts))
    tr = terminalreporter
    tr.section(f"conformance against vLLM {VLLM_VERSION}")
    parser = REPORT["parser"]
    tr.write_line(
        f"parser: {len(parser)} rendered commands through vllm's own CLI parser "
        f"({sum(1 for r in parser if r.get('accepted'))} accepted)"
    )
    for r in parser:
        tr.write_line(f"  {r['id']}: {'accepted' if r.get('accepted') else r.get('error')}")
    hfo = REPORT["hf_overrides"]
    tr.write_line(f"hf-overrides: {len(hfo)} renders resolved by vllm's config code")
    for r in hfo:
        tr.write_line(f"  {r['id']}: asked {r['asked']} -> text config {r['text_config']}")
    tr.write_line(
        f"drafts: {len(drafts)} draft/target pairs through vLLM's draft model + load_weights"
    )
    for r in drafts:
        diff = ", ".join(r["disagreements"]) or "agree"
        tr.write_line(f"  {r['case']}: vllm {r['vllm']['verdict']}; recipecli vs vllm: {diff}")
    tr.write_line(f"report: {out / 'conformance_report.json'}")
