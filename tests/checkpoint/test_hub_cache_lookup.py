"""``cached_snapshot_dir`` answers "not cached" from the cache's folder layout alone.

huggingface_hub keeps a repo under ``<cache>/models--ORG--NAME`` (its ``repo_folder_name``); a
repo with no such folder cannot be cached, and saying so must not import huggingface_hub's
download module (about 1 s of start-up paid by every ``render`` of a bundled recipe).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_no_repo_folder_is_not_cached_without_importing_file_download(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from recipecli.checkpoint.hub import cached_snapshot_dir\n"
        "print(cached_snapshot_dir('org/name', None))\n"
        "print('huggingface_hub.file_download' in sys.modules)\n"
    )
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["None", "False"]


def test_a_cached_config_is_found(tmp_path: Path, monkeypatch) -> None:
    from recipecli.checkpoint.hub import cached_snapshot_dir

    # huggingface_hub's layout: refs/main names the commit, snapshots/<commit>/ holds the files
    repo = tmp_path / "models--org--name"
    snap = repo / "snapshots" / ("a" * 40)
    snap.mkdir(parents=True)
    (snap / "config.json").write_text("{}")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("a" * 40)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    assert cached_snapshot_dir("org/name", None) == snap
    assert cached_snapshot_dir("org/other", None) is None
