"""Shared state of the SGLang conformance suite: the session report and the known disagreements.

Kept out of ``conftest.py`` so the test modules import it by a name no other test directory uses
(``tests/conformance`` has its own ``conftest``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from recipecli.engines import engine_spec

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "configs"
RECIPES = REPO / "recipecli" / "data" / "recipes"
TARGETS = REPO / "recipecli" / "data" / "targets"
#: the pinned SGLang release (recipecli/engines/sglang/pin.py)
SGLANG_VERSION = engine_spec("sglang").pin.version
RUN_HINT = "bash scripts/conformance/run_sglang_conformance.sh"

#: what the suite compared, by section: one record per check (written at session end)
REPORT: dict[str, list[dict[str, Any]]] = {"parser": [], "overrides": [], "verdicts": []}

#: section -> id -> reason: recipecli bugs known today, run as strict xfail
KNOWN: dict[str, dict[str, str]] = json.loads((HERE / "known_disagreements.json").read_text())


def known(section: str, pid: str) -> list[pytest.MarkDecorator]:
    """``xfail(strict=True)`` marks for ``pid`` when ``known_disagreements.json`` lists it."""
    reason = KNOWN.get(section, {}).get(pid)
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
