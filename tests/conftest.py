"""Shared pytest fixtures for recipecli tests (the helpers they use live in ``tests/helpers/``).

The tests mirror the packages: ``tests/<package>/test_*.py`` tests ``recipecli/<package>/``;
``tests/test_layers.py`` and ``tests/test_packaging.py`` are about the project as a whole.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

# the shared helpers (tests/helpers/) import as `helpers.*` from every test package
sys.path.insert(0, str(Path(__file__).resolve().parent))

# The kernel verification cache (recipecli/kernelcheck/cache.py) lives under XDG_CACHE_HOME: a
# developer's own `check --kernel on` must not change what a test's default-mode check prints,
# and no test writes to the user's cache. Subprocesses inherit the temporary one.
_TEST_CACHE = tempfile.mkdtemp(prefix="recipecli-test-xdg-")
os.environ["XDG_CACHE_HOME"] = _TEST_CACHE
atexit.register(shutil.rmtree, _TEST_CACHE, ignore_errors=True)

from helpers.fixtures import FIXTURES, REPO_ROOT, load_fixture_config  # noqa: E402

__all__ = ["FIXTURES", "REPO_ROOT", "load_fixture_config"]


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
