"""Hugging Face sources: a fake HF cache directory, and the Hub behind a mocked HTTP transport.

huggingface_hub 2.x talks HTTP through one shared ``httpx2.Client`` made by a replaceable factory
(``huggingface_hub.utils._http.set_client_factory``); the tests install a client whose
``MockTransport`` serves real safetensors bytes (written by the builder) with the headers the Hub
sends (``X-Repo-Commit``, ``ETag``, ``Content-Length``, ``X-Error-Code``) and honours ``Range``.
No network is used.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from urllib.parse import unquote

import httpx2
import numpy as np
import pytest
from huggingface_hub import constants
from huggingface_hub.utils import _http

from recipecli.checkpoint import IO_STATS, open_checkpoint
from recipecli.cli import main
from recipecli.errors import SourceError
from recipecli.testing.builder import TensorSpec, write_checkpoint
from recipecli.testing.specs import draft_specs, norm_values, valid_vocab_map

TOKEN = "hf_SeCrEtT0kenNeverShown0123456789"
SHA_MAIN = "a" * 40
SHA_V1 = "b" * 40

DRAFT_CONFIG = {
    "architectures": ["LlamaForCausalLMEagle3"],
    "model_type": "llama",
    "hidden_size": 64,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 128,
    "num_hidden_layers": 1,
    "vocab_size": 256,
    "draft_vocab_size": 32,
    "torch_dtype": "bfloat16",
}


def build_draft(root: Path, *, num_shards: int = 1, config: dict | None = None) -> Path:
    """A tiny draft (d2t/t2d with values) plus a 512 KiB hole so headers != whole file."""
    config = config or DRAFT_CONFIG
    d2t, t2d = valid_vocab_map(256, 32, seed=7)
    specs = draft_specs(config, d2t=d2t, t2d=t2d)
    specs.append(TensorSpec("zz_big.weight", "BF16", (512, 512)))
    return write_checkpoint(root, config, specs, num_shards=num_shards)


def header_of(path: Path) -> tuple[int, dict]:
    raw = path.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    return n, json.loads(raw[8 : 8 + n])


# ----------------------------------------------------------------------------- fake HF cache


def add_to_cache(cache: Path, repo_id: str, sha: str, src: Path, refs: tuple[str, ...] = ("main",)):
    """Lay out ``src``'s files as HF cache blobs + snapshot symlinks for ``repo_id``@``sha``."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    snap = repo / "snapshots" / sha
    snap.mkdir(parents=True, exist_ok=True)
    for f in sorted(src.iterdir()):
        data = f.read_bytes()
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
        blob.write_bytes(data)
        (snap / f.name).symlink_to(Path("../../blobs") / blob.name)
    (repo / "refs").mkdir(exist_ok=True)
    for ref in refs:
        (repo / "refs" / ref).write_text(sha)
    return snap


@pytest.fixture
def fake_cache(tmp_path, monkeypatch):
    cache = tmp_path / "hub-cache"
    build_draft(tmp_path / "main-src")
    v1 = dict(DRAFT_CONFIG, hidden_size=32, intermediate_size=64)
    build_draft(tmp_path / "v1-src", config=v1, num_shards=2)
    add_to_cache(cache, "org/name", SHA_MAIN, tmp_path / "main-src")
    add_to_cache(cache, "org/name", SHA_V1, tmp_path / "v1-src", refs=("v1",))
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_HOME", raising=False)
    return cache


def test_cache_resolves_main(fake_cache):
    ck = open_checkpoint("org/name")
    assert ck.kind == "hf-cache"
    assert ck.config["hidden_size"] == 64
    assert ck.shards == ("model.safetensors",)
    # q [nh*hd, 2H] = [4*16, 128]; fc [H, 3H] = [64, 192]
    assert ck.tensors["midlayer.self_attn.q_proj.weight"].shape == (64, 128)
    assert ck.tensors["fc.weight"].shape == (64, 192)
    assert np.array_equal(ck.read_tensor("d2t"), valid_vocab_map(256, 32, seed=7)[0])


def test_cache_revision_branch_and_sha(fake_cache):
    by_branch = open_checkpoint("org/name", revision="v1")
    assert by_branch.kind == "hf-cache" and by_branch.config["hidden_size"] == 32
    assert len(by_branch.shards) == 2
    assert by_branch.tensors["fc.weight"].shape == (32, 96)
    by_sha = open_checkpoint("org/name", revision=SHA_MAIN)
    assert by_sha.config["hidden_size"] == 64


def test_cache_unknown_revision_offline(fake_cache):
    with pytest.raises(SourceError, match="HF_HUB_OFFLINE"):
        open_checkpoint("org/name", revision="nope")


def test_not_cached_offline_names_hf_hub_offline(fake_cache):
    with pytest.raises(SourceError) as info:
        open_checkpoint("org/other")
    assert "HF_HUB_OFFLINE" in str(info.value) and "org/other" in str(info.value)


def test_cache_without_weights_offline(fake_cache, tmp_path):
    src = tmp_path / "cfg-only"
    src.mkdir()
    (src / "config.json").write_text(json.dumps(DRAFT_CONFIG))
    add_to_cache(fake_cache, "org/cfgonly", SHA_MAIN, src)
    with pytest.raises(SourceError, match="without its weight files"):
        open_checkpoint("org/cfgonly")
    # a config is enough when tensors are not needed (render)
    ck = open_checkpoint("org/cfgonly", need_tensors=False)
    assert ck.kind == "hf-cache" and ck.tensors == {}


def test_hf_home_is_honoured(fake_cache, tmp_path, monkeypatch):
    home = tmp_path / "hf-home"
    home.mkdir()
    (home / "hub").symlink_to(fake_cache)
    monkeypatch.delenv("HF_HUB_CACHE")
    monkeypatch.setenv("HF_HOME", str(home))
    assert open_checkpoint("org/name").kind == "hf-cache"


def test_cli_on_cache_and_offline_error(fake_cache, capsys):
    with pytest.raises(SystemExit) as info:
        main(["inspect", "org/name", "--json"])
    assert info.value.code == 0
    doc = json.loads(capsys.readouterr().out)
    assert "fc.weight" in doc["tensors"]
    with pytest.raises(SystemExit) as info:
        main(["inspect", "org/missing"])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "HF_HUB_OFFLINE" in err[0]


# ----------------------------------------------------------------------------- mocked Hub


class FakeHub:
    """A minimal ``huggingface.co`` file server: ``/{repo}/resolve/{rev}/{file}``, HEAD and GET."""

    RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<file>.+)$")

    def __init__(self, repos: dict[str, dict[str, bytes]], private: tuple[str, ...] = ()):
        self.repos = repos  # repo id -> file name -> bytes, served at SHA_MAIN ("main")
        self.private = private  # repos that answer 401 (private/gated without access)
        self.requests: list[httpx2.Request] = []
        self.served: list[tuple[str, str, int]] = []  # (file, range header, bytes sent)

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        m = self.RESOLVE.match(unquote(request.url.path))
        if not m:
            return httpx2.Response(404, headers={"X-Error-Code": "RepoNotFound"})
        repo, rev, name = m["repo"], m["rev"], m["file"]
        if repo in self.private or repo not in self.repos:
            return httpx2.Response(
                401,
                headers={"X-Error-Code": "RepoNotFound", "X-Error-Message": "Invalid username"},
                text=f"Repository not found; you sent {request.headers.get('authorization')}",
            )
        if rev not in ("main", SHA_MAIN):
            return httpx2.Response(404, headers={"X-Error-Code": "RevisionNotFound"})
        files = self.repos[repo]
        if name not in files:
            return httpx2.Response(
                404, headers={"X-Error-Code": "EntryNotFound", "X-Repo-Commit": SHA_MAIN}
            )
        data = files[name]
        headers = {
            "X-Repo-Commit": SHA_MAIN,
            "ETag": '"' + hashlib.sha1(data).hexdigest() + '"',
            "Accept-Ranges": "bytes",
        }
        if request.method == "HEAD":
            headers["Content-Length"] = str(len(data))
            return httpx2.Response(200, headers=headers)
        rng = request.headers.get("range")
        if rng:
            a, b = (int(x) for x in re.fullmatch(r"bytes=(\d+)-(\d+)", rng).groups())
            body = data[a : b + 1]
            self.served.append((name, rng, len(body)))
            headers["Content-Range"] = f"bytes {a}-{a + len(body) - 1}/{len(data)}"
            return httpx2.Response(206, headers=headers, content=body)
        self.served.append((name, "", len(data)))
        return httpx2.Response(200, headers=headers, content=data)


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """Install a FakeHub behind huggingface_hub's shared client; yields (FakeHub, checkpoint dirs)."""
    single = build_draft(tmp_path / "single")
    shards = build_draft(tmp_path / "sharded", num_shards=3)
    fake = FakeHub(
        {
            "org/draft": {f.name: f.read_bytes() for f in single.iterdir()},
            "org/sharded": {f.name: f.read_bytes() for f in shards.iterdir()},
            "org/noconfig": {"model.safetensors": (single / "model.safetensors").read_bytes()},
        },
        private=("org/private",),
    )
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "download-cache"))
    # get_safetensors_metadata downloads the index into huggingface_hub's import-time cache
    # path (it takes no cache_dir): point that at tmp too, never at ~/.cache
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "download-cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.setenv("HF_HUB_DISABLE_IMPLICIT_TOKEN", "0")
    _http.set_client_factory(
        lambda: httpx2.Client(
            transport=httpx2.MockTransport(fake.handler),
            event_hooks={"request": [_http.hf_request_event_hook]},
            follow_redirects=True,
        )
    )
    try:
        yield fake, {"single": single, "sharded": shards}
    finally:
        _http.set_client_factory(_http.default_client_factory)


def test_hub_single_file_headers_only(hub):
    fake, dirs = hub
    ck = open_checkpoint("org/draft")
    assert ck.kind == "hub" and ck.config["draft_vocab_size"] == 32
    local = open_checkpoint(str(dirs["single"]))
    assert {n: (t.dtype, t.shape, t.nbytes) for n, t in ck.tensors.items()} == {
        n: (t.dtype, t.shape, t.nbytes) for n, t in local.tensors.items()
    }
    assert ck.tensors["t2d"].shape == (256,) and ck.tensors["t2d"].dtype == "BOOL"
    # weights never fetched: every safetensors GET is a range read of at most 100001 bytes
    st = [s for s in fake.served if s[0].endswith(".safetensors")]
    assert st and all(r.startswith("bytes=0-") and n <= 100_001 for _, r, n in st)
    assert sum(n for _, _, n in st) < (dirs["single"] / "model.safetensors").stat().st_size
    # the token was sent
    # the token was sent with every file request (huggingface_hub also fetches its own
    # /api/agent-harnesses registry, without a token)
    files = [r for r in fake.requests if "/resolve/" in r.url.path]
    assert files and all(r.headers.get("authorization") == f"Bearer {TOKEN}" for r in files)


def test_hub_read_tensor_fetches_only_its_byte_range(hub):
    fake, dirs = hub
    ck = open_checkpoint("org/draft")
    n, header = header_of(dirs["single"] / "model.safetensors")
    begin, end = header["midlayer.hidden_norm.weight"]["data_offsets"]
    fake.served.clear()
    before = IO_STATS.bytes_read
    got = ck.read_tensor("midlayer.hidden_norm.weight")
    assert np.allclose(got, norm_values("midlayer.hidden_norm.weight", 64), rtol=2**-8, atol=0)
    # one 8-byte read of the header length, then exactly the tensor's bytes
    assert fake.served == [
        ("model.safetensors", "bytes=0-7", 8),
        ("model.safetensors", f"bytes={8 + n + begin}-{8 + n + end - 1}", end - begin),
    ]
    assert IO_STATS.bytes_read - before == 8 + (end - begin) == 8 + 64 * 2
    fake.served.clear()
    assert np.array_equal(ck.read_tensor("d2t"), valid_vocab_map(256, 32, seed=7)[0])
    assert [s[2] for s in fake.served] == [32 * 8]  # header length cached per shard


def test_hub_sharded_index_and_shards(hub):
    fake, dirs = hub
    ck = open_checkpoint("org/sharded")
    local = open_checkpoint(str(dirs["sharded"]))
    assert len(ck.shards) == 3 and set(ck.shards) == set(local.shards)
    assert {n: t.shard for n, t in ck.tensors.items()} == {
        n: t.shard for n, t in local.tensors.items()
    }
    assert np.array_equal(ck.read_tensor("t2d"), local.read_tensor("t2d"))
    served_files = {s[0] for s in fake.served}
    assert "model.safetensors.index.json" in served_files


def assert_no_token(text: str):
    assert TOKEN not in text
    assert TOKEN[3:15] not in text


@pytest.mark.parametrize(
    ("repo", "revision", "fragment"),
    [
        ("org/private", None, "not found (or private)"),  # 401
        ("org/noconfig", None, "has no config.json"),  # 404 EntryNotFound
        ("org/draft", "v9", "revision 'v9' not found"),  # 404 RevisionNotFound
    ],
)
def test_hub_errors_never_show_the_token(hub, capsys, repo, revision, fragment):
    fake, _ = hub
    with pytest.raises(SourceError) as info:
        open_checkpoint(repo, revision=revision)
    assert fragment in str(info.value)
    assert_no_token(str(info.value))
    assert any(r.headers.get("authorization") == f"Bearer {TOKEN}" for r in fake.requests)
    args = ["inspect", repo] + (["--revision", revision] if revision else [])
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    assert exit_info.value.code == 2
    out = capsys.readouterr()
    assert len(out.err.strip().splitlines()) == 1 and fragment in out.err
    assert_no_token(out.err + out.out)


def test_hub_range_read_failure_never_shows_the_token(hub):
    fake, _ = hub
    ck = open_checkpoint("org/draft")
    fake.repos["org/draft"] = {}  # the file disappears: later range reads answer 404
    with pytest.raises(SourceError) as info:
        ck.read_tensor("norm.weight")
    assert_no_token(str(info.value))


def test_hub_not_reached_when_offline(hub, monkeypatch):
    fake, _ = hub
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(SourceError, match="HF_HUB_OFFLINE"):
        open_checkpoint("org/draft")
    assert fake.requests == []


def test_config_downloaded_by_hub_does_not_make_cache_complete(hub, monkeypatch):
    """After a Hub inspect the cache holds config.json only: the next run must go to the Hub
    again (online), and say so offline rather than report an empty tensor table."""
    fake, _ = hub
    assert open_checkpoint("org/draft").kind == "hub"
    assert open_checkpoint("org/draft").kind == "hub"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(SourceError, match="without its weight files"):
        open_checkpoint("org/draft")


def test_unreachable_hub_fails_fast_with_one_clear_error(tmp_path, monkeypatch):
    """A transport that cannot connect: one quick probe, then a SourceError naming the repo,
    the cache directory and HF_HUB_OFFLINE (no ~24 s of download retries)."""
    import time

    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    _http.set_client_factory(lambda: httpx2.Client(transport=httpx2.MockTransport(refuse)))
    try:
        t0 = time.perf_counter()
        with pytest.raises(SourceError) as exc:
            open_checkpoint("org/unreachable")
        assert time.perf_counter() - t0 < 5
    finally:
        _http.set_client_factory(_http.default_client_factory)
    msg = exc.value.one_line()
    assert "cannot reach the Hub for org/unreachable" in msg
    assert str(tmp_path / "empty-cache") in msg and "HF_HUB_OFFLINE=1" in msg
