"""Shared pytest fixtures for recipecli tests.

``FIXTURES`` is the directory of real public ``config.json`` files (``tests/fixtures/configs``,
each with a ``SOURCE.txt`` naming where it came from); derive expected values from them BY HAND, never from the code under test.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "configs"


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


@pytest.fixture(scope="session")
def full_size_target(tmp_path_factory) -> Callable[..., Path]:
    """Factory ``full_size_target(name, num_shards=7) -> Path``: the full-size sparse checkpoint
    of fixture target ``name`` (``recipecli.testing.specs.target_specs``), built once per session
    and shared between tests (DeepSeek-V3 and MiniMax-M3-NVFP4 take ~1-3 s each to write)."""
    from recipecli.testing.builder import write_checkpoint
    from recipecli.testing.specs import target_specs

    built: dict[tuple[str, int], Path] = {}

    def get(name: str, num_shards: int = 7) -> Path:
        key = (name, num_shards)
        if key not in built:
            config = load_fixture_config(name)
            root = tmp_path_factory.mktemp(name.replace(".", "_"))
            built[key] = write_checkpoint(root, config, target_specs(config), num_shards=num_shards)
        return built[key]

    return get
