"""Hugging Face repos: the local HF cache first, then the Hub, headers only.

The cache location and offline mode are read at call time (``HF_HUB_CACHE``, ``HF_HOME``,
``HF_HUB_OFFLINE``), so they can be changed per command; a caller that must stay off the network
whatever the environment says (``recipecli docs``) passes ``offline=True`` to :func:`load_repo`
instead. From the Hub only ``config.json`` and the safetensors HEADERS are fetched
(huggingface_hub's safetensors metadata API uses HTTP range requests); small tensor values are
fetched with one range request each. Weights are never downloaded. Tokens come from
huggingface_hub's usual places and never appear in messages.

Network failures are bounded (:func:`~recipecli.checkpoint.hub_transport.hub_requests`): every
request gets a deadline of ``--timeout`` seconds (default 10) for connect, send, headers and body
together and two attempts, and after a final failure every further request fails at once. The
command then stops with one line saying what happened: no answer within the deadline, an HTTP
5xx, a reset connection, a TLS error.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from recipecli.checkpoint.hub_transport import HubGiveUp, HubGuard, first_line, hub_requests
from recipecli.checkpoint.local import (
    BIN_INDEX,
    SAFE_INDEX,
    has_weights,
    load_local_dir,
    read_config,
    read_json_file,
)
from recipecli.checkpoint.model import Checkpoint, TensorInfo
from recipecli.checkpoint.safetensors_format import IO_STATS
from recipecli.checkpoint.safetensors_header import validate_entries
from recipecli.errors import CheckpointFormatError, RecipeCliError, SourceError

REPO_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9._-]+$")
_TRUE = {"1", "true", "yes", "on"}


def looks_like_repo_id(source: str) -> bool:
    """``org/name`` with Hub-legal characters (no ``..``, no leading ``/``)."""
    return bool(REPO_ID_RE.match(source)) and ".." not in source


def hub_cache_dir() -> Path:
    """The HF hub cache directory, honouring ``HF_HUB_CACHE`` then ``HF_HOME`` at call time."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def hub_offline() -> bool:
    """True when ``HF_HUB_OFFLINE`` is set to a true value."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE


def cached_snapshot_dir(repo_id: str, revision: str | None) -> Path | None:
    """The cache snapshot directory holding ``config.json`` for ``repo_id``@``revision``, if any.

    A repo with no folder in the cache (huggingface_hub's layout: ``models--ORG--NAME``) is
    answered without importing huggingface_hub's download module (about 1 s of start-up).
    """
    if not (hub_cache_dir() / ("models--" + repo_id.replace("/", "--"))).is_dir():
        return None
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(
            repo_id, "config.json", cache_dir=str(hub_cache_dir()), revision=revision
        )
    except Exception:  # invalid repo id / revision strings
        return None
    if isinstance(found, str) and os.path.isfile(found):
        return Path(found).parent
    return None


def _cache_complete(snap: Path) -> bool:
    """All weight files the snapshot's index (if any) names are present in the cache."""
    if not has_weights(snap):
        return False
    for index in (SAFE_INDEX, BIN_INDEX):
        if (snap / index).is_file():
            try:
                weight_map = read_json_file(snap / index, what="weight index")["weight_map"]
                shards = {str(s) for s in weight_map.values()}
            except (RecipeCliError, TypeError, KeyError, AttributeError):
                return True  # let the local reader report the malformed index
            return all(os.path.isfile(snap / s) for s in shards)
    return True


def _unreachable(what: str, reason: str | None = None) -> SourceError:
    """The one error for "no network path to the Hub and no cached copy"."""
    why = f" ({reason})" if reason else ""
    return SourceError(
        f"cannot reach the Hub for {what}{why}, and it is not in the HF cache ({hub_cache_dir()})",
        hint="check the name and the network (or raise --timeout), or pass a local directory or "
        "snapshot; set HF_HUB_OFFLINE=1 to skip the Hub",
    )


def _hub_error(
    exc: Exception, repo_id: str, revision: str | None, guard: HubGuard | None = None
) -> SourceError:
    from huggingface_hub import errors

    rev = f"@{revision}" if revision else ""
    reason = guard.reason() if guard is not None else None
    if isinstance(exc, HubGiveUp):
        return _unreachable(f"{repo_id}{rev}", str(exc))
    if isinstance(exc, errors.LocalEntryNotFoundError):
        return _unreachable(f"{repo_id}{rev}", reason)
    if isinstance(exc, errors.GatedRepoError):
        return SourceError(
            f"Hub repo {repo_id}{rev} is gated",
            hint="accept its licence on the Hub and log in (hf auth login), or use a local copy",
        )
    if isinstance(exc, errors.RevisionNotFoundError):
        return SourceError(f"revision {revision!r} not found in Hub repo {repo_id}")
    if isinstance(exc, errors.RepositoryNotFoundError):
        return SourceError(
            f"Hub repo {repo_id} not found (or private)",
            hint="check the name, or log in if it is private",
        )
    if isinstance(exc, errors.EntryNotFoundError):
        return SourceError(f"Hub repo {repo_id}{rev} has no config.json")
    if isinstance(exc, errors.NotASafetensorsRepoError):
        return SourceError(
            f"Hub repo {repo_id}{rev} has no safetensors files; .bin headers cannot be read remotely",
            hint="download it and inspect the local directory (or save a snapshot there)",
        )
    if reason is not None:
        return _unreachable(f"{repo_id}{rev}", reason)
    return SourceError(
        f"cannot reach the Hub for {repo_id}{rev} ({type(exc).__name__})",
        hint="check the network, or set HF_HUB_OFFLINE=1 and use the HF cache, a local directory "
        "or a snapshot",
    )


def _quiet_hub_logs() -> None:
    """huggingface_hub logs every retry ("Retrying in 8s") on stderr; recipecli reports one line."""
    import logging

    from huggingface_hub.utils import logging as hf_logging

    hf_logging.set_verbosity(logging.ERROR)


def _hub_reachable(guard: HubGuard) -> bool:
    """One request to the Hub endpoint (through huggingface_hub's HTTP client), so an
    unreachable or failing Hub fails in one deadline instead of after retries."""
    from huggingface_hub import constants, get_session

    try:
        response = get_session().head(constants.ENDPOINT)
    except Exception as exc:
        if guard.reason() is None:
            guard.problem = f"cannot connect ({first_line(exc)})"
        return False
    if response.status_code >= 500:
        guard.problem = guard.problem or f"the Hub answered HTTP {response.status_code}"
        return False
    return True


def _hub_config(repo_id: str, revision: str | None, guard: HubGuard) -> dict[str, Any]:
    """Download (into the HF cache) and read ``config.json`` of ``repo_id``@``revision``.

    Raises:
        SourceError: see :func:`_hub_error`.
        CheckpointFormatError: a malformed config.
    """
    from huggingface_hub import hf_hub_download

    try:
        config_path = hf_hub_download(
            repo_id,
            "config.json",
            revision=revision,
            cache_dir=str(hub_cache_dir()),
            etag_timeout=guard.timeout,
        )
    except Exception as exc:
        raise _hub_error(exc, repo_id, revision, guard) from None
    return read_config(Path(config_path))


def _hub_tensor_table(repo_id: str, meta: Any) -> tuple[dict[str, TensorInfo], dict[str, int]]:
    """The tensor table of huggingface_hub's ``SafetensorsRepoMetadata`` and each tensor's
    offset in its file's data buffer, every header validated as a local one is.

    Raises:
        CheckpointFormatError: a malformed header, or an index naming a tensor its shard lacks.
    """
    tensors: dict[str, TensorInfo] = {}
    offsets: dict[str, int] = {}
    for filename, fmeta in sorted(meta.files_metadata.items()):
        header: dict[str, Any] = {
            name: {"dtype": t.dtype, "shape": list(t.shape), "data_offsets": list(t.data_offsets)}
            for name, t in fmeta.tensors.items()
        }
        raw, _ = validate_entries(header, where=f"{repo_id}/{filename}", data_len=None)
        for name, rt in raw.items():
            tensors[name] = TensorInfo(name, rt.dtype, rt.shape, rt.nbytes, filename)
            offsets[name] = rt.begin
    if meta.sharded:
        for name, filename in meta.weight_map.items():
            if name not in tensors or tensors[name].shard != filename:
                raise CheckpointFormatError(
                    f"index lists tensor {name!r} in {filename!r} but that shard does not hold it",
                    path=f"{repo_id}/{filename}",
                )
    return tensors, offsets


def _hub_range_reader(
    repo_id: str, revision: str | None, offsets: dict[str, int], timeout: float | None = None
) -> Callable[[TensorInfo], bytes]:
    """``read_raw`` of a Hub checkpoint: one bounded HTTP range request per tensor (plus one
    per file for its 8-byte header length, remembered)."""
    header_len: dict[str, int] = {}

    def _range(filename: str, start: int, length: int) -> bytes:
        from huggingface_hub import hf_hub_url

        # their defining modules: huggingface_hub.utils names them without re-exporting them
        from huggingface_hub.utils._headers import build_hf_headers
        from huggingface_hub.utils._http import http_backoff

        url = hf_hub_url(repo_id, filename, revision=revision)
        headers = build_hf_headers()
        headers["Range"] = f"bytes={start}-{start + length - 1}"
        with hub_requests(timeout) as guard:
            try:
                resp = http_backoff("GET", url, headers=headers)
                resp.raise_for_status()
            except Exception as exc:
                raise _hub_error(exc, repo_id, revision, guard) from None
        data = resp.content
        IO_STATS.bytes_read += len(data)
        if len(data) != length:
            raise CheckpointFormatError(
                f"range request returned {len(data)} bytes, expected {length}",
                path=f"{repo_id}/{filename}",
            )
        return data

    def read_raw(info: TensorInfo) -> bytes:
        if info.shard not in header_len:
            header_len[info.shard] = int.from_bytes(_range(info.shard, 0, 8), "little")
        start = 8 + header_len[info.shard] + offsets[info.name]
        return _range(info.shard, start, info.nbytes)

    return read_raw


def load_from_hub(
    repo_id: str,
    revision: str | None,
    *,
    need_tensors: bool = True,
    timeout: float | None = None,
) -> Checkpoint:
    """Fetch ``config.json`` and the safetensors headers of ``repo_id`` from the Hub.

    Every request, the later range reads of small tensors included, is bounded
    (:func:`hub_requests`: ``timeout`` seconds each, default 10, two attempts).

    Raises:
        SourceError: repo/revision missing, gated, no safetensors, network failure (one line
            saying what failed: no answer, HTTP 5xx, reset, TLS).
        CheckpointFormatError: malformed config or headers.
    """
    from huggingface_hub import HfApi

    _quiet_hub_logs()
    with hub_requests(timeout) as guard:
        if not _hub_reachable(guard):
            raise _unreachable(repo_id, guard.reason())
        config = _hub_config(repo_id, revision, guard)
        if not need_tensors:
            return Checkpoint(
                source=repo_id,
                kind="hub",
                config=config,
                tensors={},
                root=repo_id,
                revision=revision,
            )
        try:
            meta = HfApi().get_safetensors_metadata(repo_id, revision=revision)
        except Exception as exc:
            raise _hub_error(exc, repo_id, revision, guard) from None

    tensors, offsets = _hub_tensor_table(repo_id, meta)
    files = tuple(sorted(meta.files_metadata))
    return Checkpoint(
        source=repo_id,
        kind="hub",
        config=config,
        tensors=tensors,
        weight_format="safetensors",
        shards=files,
        root=repo_id,
        revision=revision,
        read_raw=_hub_range_reader(repo_id, revision, offsets, timeout),
    )


def load_repo(
    repo_id: str,
    revision: str | None,
    *,
    need_tensors: bool = True,
    offline: bool | None = None,
    timeout: float | None = None,
) -> Checkpoint:
    """Resolve a repo id: complete HF-cache snapshot first, then the Hub (unless offline).

    Args:
        repo_id: ``org/name``.
        revision: branch, tag or commit (None: ``main``).
        need_tensors: False when the config suffices (a cached config without weights is then
            used, and the Hub is asked for ``config.json`` only).
        offline: True: never the Hub; False: the Hub when the cache lacks it; None: as
            ``HF_HUB_OFFLINE`` says (:func:`hub_offline`, read now).
        timeout: seconds each Hub request may take (None: 10; ``--timeout``).

    Raises:
        SourceError: not cached and offline, or the Hub cannot serve it.
    """
    off = hub_offline() if offline is None else offline
    snap = cached_snapshot_dir(repo_id, revision)
    if snap is not None:
        if _cache_complete(snap):
            return load_local_dir(snap, source=repo_id, kind="hf-cache", revision=revision)
        if not need_tensors or off:
            if need_tensors:
                raise SourceError(
                    f"{repo_id} is in the HF cache ({snap}) without its weight files and "
                    "HF_HUB_OFFLINE is set",
                    hint="unset HF_HUB_OFFLINE to read the headers from the Hub, or use a snapshot",
                )
            config = read_config(snap / "config.json")
            return Checkpoint(
                source=repo_id,
                kind="hf-cache",
                config=config,
                tensors={},
                root=str(snap),
                revision=revision,
            )
    if off:
        raise SourceError(
            f"{repo_id} is not in the HF cache ({hub_cache_dir()}) and HF_HUB_OFFLINE is set",
            hint="download it, pass a local directory or a snapshot (.json), or unset HF_HUB_OFFLINE",
        )
    return load_from_hub(repo_id, revision, need_tensors=need_tensors, timeout=timeout)
