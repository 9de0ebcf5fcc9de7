"""Shared pytest fixtures for recipecli tests.

``FIXTURES`` is the directory of real public ``config.json`` files (``../shared/fixtures/configs``
next to the repository); derive expected values from them BY HAND, never from the code under test.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT.parent / "shared" / "fixtures" / "configs"


def load_fixture_config(name: str) -> dict[str, Any]:
    """Parsed ``config.json`` of fixture ``name`` (directory name, e.g. ``Qwen__Qwen3-8B``)."""
    path = FIXTURES / name / "config.json"
    if not path.is_file():
        raise FileNotFoundError(f"no fixture config {path}")
    return json.loads(path.read_text())


@pytest.fixture
def fixture_config() -> Callable[[str], dict[str, Any]]:
    """Loader of fixture configs: ``fixture_config("meta-llama__Meta-Llama-3.1-8B")``."""
    return load_fixture_config
