"""``open_checkpoint(..., offline=...)``: the parameter, not ``HF_HUB_OFFLINE``, decides whether a
repo id may reach the Hub; ``offline=None`` reads the environment as commands always did.

The Hub is replaced by a recorder (``recipecli.checkpoint.hub.load_from_hub``, the one function
that talks to it); the HF cache is a directory laid out as huggingface_hub lays it out (blobs +
snapshot symlinks + refs/main). No network is used.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import recipecli.checkpoint.hub as hub
from recipecli.checkpoint import open_checkpoint
from recipecli.errors import SourceError

CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64}
SHA = "c" * 40


def cache_config_only(cache: Path, repo_id: str) -> None:
    """``repo_id`` in the HF cache with its config.json and no weight files."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    data = json.dumps(CONFIG).encode()
    blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
    blob.parent.mkdir(parents=True)
    blob.write_bytes(data)
    snap = repo / "snapshots" / SHA
    snap.mkdir(parents=True)
    (snap / "config.json").symlink_to(Path("../../blobs") / blob.name)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(SHA)


@pytest.fixture
def hub_calls(tmp_path, monkeypatch):
    """Calls that reached the (recorded) Hub; an empty HF cache with one config-only repo."""
    calls: list[tuple[str, bool]] = []
    timeouts: list[float | None] = []

    def fake_load_from_hub(repo_id, revision, *, need_tensors=True, timeout=None):
        calls.append((repo_id, need_tensors))
        timeouts.append(timeout)
        return "from-the-hub"

    monkeypatch.setattr(hub, "load_from_hub", fake_load_from_hub)
    cache = tmp_path / "hub-cache"
    cache_config_only(cache, "org/cfgonly")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.delenv("HF_HOME", raising=False)
    return calls


@pytest.mark.parametrize("env", [None, "1"])
def test_offline_true_never_reaches_the_hub_whatever_the_env(hub_calls, monkeypatch, env):
    if env is None:
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    else:
        monkeypatch.setenv("HF_HUB_OFFLINE", env)
    with pytest.raises(SourceError, match="org/missing is not in the HF cache"):
        open_checkpoint("org/missing", offline=True)
    # cached without weights: with tensors needed it is refused instead of asking the Hub
    with pytest.raises(SourceError, match="without its weight files"):
        open_checkpoint("org/cfgonly", offline=True)
    assert hub_calls == []
    assert ("HF_HUB_OFFLINE" in __import__("os").environ) == (env is not None)  # left alone


@pytest.mark.parametrize("env", [None, "1"])
def test_offline_false_asks_the_hub_whatever_the_env(hub_calls, monkeypatch, env):
    if env is None:
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    else:
        monkeypatch.setenv("HF_HUB_OFFLINE", env)
    assert open_checkpoint("org/missing", offline=False) == "from-the-hub"
    assert open_checkpoint("org/cfgonly", offline=False) == "from-the-hub"
    assert hub_calls == [("org/missing", True), ("org/cfgonly", True)]


def test_offline_none_reads_the_environment(hub_calls, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert open_checkpoint("org/missing") == "from-the-hub"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(SourceError, match="HF_HUB_OFFLINE is set"):
        open_checkpoint("org/missing")
    assert hub_calls == [("org/missing", True)]


def test_config_only_cache_serves_render_offline(hub_calls, monkeypatch):
    # need_tensors=False (render): the cached config.json is enough, online or not
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    for offline in (True, False, None):
        ck = open_checkpoint("org/cfgonly", need_tensors=False, offline=offline)
        assert ck.kind == "hf-cache" and ck.config["hidden_size"] == 64 and ck.tensors == {}
    assert hub_calls == []


def test_the_timeout_parameter_reaches_the_hub_loader(hub_calls, monkeypatch):
    # --timeout is passed down explicitly (no process-wide setting): open_checkpoint -> load_repo
    # -> load_from_hub, which bounds every request with it (hub_requests)
    seen: list[float | None] = []
    real = hub.load_from_hub

    def spy(repo_id, revision, *, need_tensors=True, timeout=None):
        seen.append(timeout)
        return real(repo_id, revision, need_tensors=need_tensors, timeout=timeout)

    monkeypatch.setattr(hub, "load_from_hub", spy)
    assert open_checkpoint("org/missing", offline=False, timeout=2.5) == "from-the-hub"
    assert open_checkpoint("org/missing", offline=False) == "from-the-hub"
    assert seen == [2.5, None]
