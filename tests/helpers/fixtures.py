"""The public fixture configs (``tests/fixtures/configs/<org>__<model>/config.json``, each with a
``SOURCE.txt`` naming where it came from). Derive expected values from them BY HAND, never from the
code under test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: the repository root (tests/helpers/fixtures.py -> parents[2])
REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "configs"


def load_fixture_config(name: str) -> dict[str, Any]:
    """Parsed ``config.json`` of fixture ``name`` (directory name, e.g. ``Qwen__Qwen3-8B``)."""
    path = FIXTURES / name / "config.json"
    if not path.is_file():
        raise FileNotFoundError(f"no fixture config {path}")
    return json.loads(path.read_text())
