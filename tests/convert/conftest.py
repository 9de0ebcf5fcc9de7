"""Fixtures of the convert tests (builders: tests/helpers/convert.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.convert import write_target


@pytest.fixture
def target(tmp_path: Path) -> Path:
    """A target given as a bare config.json (helpers.convert.TARGET_CONFIG): enough for the
    speculators verifier and the post-write check."""
    return write_target(tmp_path / "target")
