"""Resolve a SOURCE string to a :class:`~recipecli.checkpoint.model.Checkpoint`."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from recipecli.checkpoint.hub import cached_snapshot_dir, load_repo, looks_like_repo_id
from recipecli.checkpoint.local import config_only, load_local_dir, read_json_file
from recipecli.checkpoint.model import Checkpoint
from recipecli.checkpoint.snapshot import (
    is_snapshot,
    load_snapshot,
    open_bundled,
    read_snapshot_file,
)
from recipecli.errors import CheckpointFormatError, SourceError


def _mode(path: Path) -> int | None:
    """``st_mode`` of ``path`` (links followed), None when it does not exist.

    Raises:
        SourceError: it exists but cannot be examined (a folder on the way is not searchable).
    """
    try:
        return os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except ValueError:  # an embedded NUL byte
        raise SourceError("the path holds a NUL byte", path=repr(str(path))[1:-1]) from None
    except OSError as exc:
        raise SourceError(f"cannot read it ({exc.strerror})", path=str(path)) from None


def _open_file(path: Path, source: str) -> Checkpoint:
    """A file SOURCE: a recipecli snapshot or a bare ``config.json``.

    Raises:
        SourceError: not a ``.json`` file.
        CheckpointFormatError: malformed, or JSON that is neither.
    """
    if path.name.endswith(".json.gz") and stat.S_ISREG(_mode(path) or 0):
        data = read_snapshot_file(path)
        if is_snapshot(data):
            return load_snapshot(data, path=path, source=source)
        raise CheckpointFormatError("gzip JSON file is not a recipecli snapshot", path=source)
    # read_json_file refuses FIFOs, devices and sockets without blocking
    data = read_json_file(path, what="JSON file") if path.suffix == ".json" else None
    if data is None:
        raise SourceError(
            "file is not a recipecli snapshot (.json) or config.json",
            path=source,
            hint="pass the checkpoint directory, not one of its files",
        )
    if is_snapshot(data):
        return load_snapshot(data, path=path, source=source)
    if isinstance(data, dict) and ("architectures" in data or "model_type" in data):
        return config_only(path, data, source=source)
    raise CheckpointFormatError(
        "JSON file is neither a recipecli snapshot nor a config.json", path=source
    )


def _from_hf_cache(repo_id: str, *, need_tensors: bool) -> Checkpoint | None:
    """``repo_id`` (revision ``main``) from the HF cache alone, or None when the cache lacks a
    copy that serves the command (no config.json; weight files missing when tensors are needed).

    Raises:
        CheckpointFormatError: the cached copy is malformed (the message names the file).
    """
    if cached_snapshot_dir(repo_id, None) is None:
        return None
    try:
        return load_repo(repo_id, None, need_tensors=need_tensors, offline=True)
    except SourceError:  # cached without its weight files: the bundled snapshot serves
        return None


def _open_missing(
    source: str,
    revision: str | None,
    *,
    need_tensors: bool,
    offline: bool | None,
    timeout: float | None = None,
    bundled: bool = True,
) -> Checkpoint:
    """A SOURCE that is no local file or directory: a Hub repo id, unless it reads as a path.

    Raises:
        SourceError: a path whose first part is a local directory, or not an ``org/name`` id.
    """
    first = Path(source.split("/", 1)[0]).expanduser()
    first_mode = _mode(first)
    if looks_like_repo_id(source) and first_mode is not None and stat.S_ISDIR(first_mode):
        raise SourceError(
            f"no such directory (the local directory {first} exists, so this is read as a path, "
            "not a Hub repo id)",
            path=source,
            hint="check the path; for a Hub repo with the same first part, cd elsewhere",
        )
    if looks_like_repo_id(source) and not source.startswith((".", "/", "~")):
        if bundled and revision is None:
            cached = _from_hf_cache(source, need_tensors=need_tensors)
            snap = cached or open_bundled(source)
            if snap is not None:
                return snap
        return load_repo(
            source, revision, need_tensors=need_tensors, offline=offline, timeout=timeout
        )
    raise SourceError(
        "no such directory or file, and not an org/name repo id",
        path=source,
        hint="give a checkpoint directory, a snapshot .json or a Hugging Face repo id",
    )


def open_checkpoint(
    source: str,
    revision: str | None = None,
    *,
    need_tensors: bool = True,
    offline: bool | None = None,
    timeout: float | None = None,
    bundled: bool = True,
) -> Checkpoint:
    """Resolve ``source`` and read its config and tensor table (headers only).

    Resolution order:
      1. a local directory with ``config.json`` (+ safetensors, sharded safetensors with index,
         or ``pytorch_model.bin`` / sharded ``.bin`` with index);
      2. a ``.json`` file: a recipecli metadata snapshot, or a bare HF ``config.json`` (no tensors);
         a ``.json.gz`` file: a gzip-compressed snapshot;
      3. a Hugging Face repo id ``org/name``: the user's HF cache first (offline, that exact
         id and revision; with weights, or its config alone when ``need_tensors`` is False:
         kind ``hf-cache``); then, with no ``revision``, recipecli's bundled snapshot of that
         id when one ships (:func:`recipecli.checkpoint.snapshot.open_bundled`: the bundled
         recipes' targets and drafts, no network; kind ``snapshot`` with a note saying so);
         then the Hub (config.json + safetensors headers, never weights).

    Args:
        source: directory, snapshot/config file, or repo id.
        revision: Hub revision (branch, tag or commit) for repo ids.
        need_tensors: False when only the config is needed (``render``): a cached or remote
            config then suffices.
        offline: for repo ids: True never asks the Hub (HF cache only), False may, None reads
            ``HF_HUB_OFFLINE`` as the command started with it (the default for commands).
        timeout: for repo ids: seconds each Hub request may take, connect and read together
            (None: 10 s; ``--timeout``).
        bundled: False skips the bundled snapshots (``convert``, which needs the weights).

    Returns:
        An immutable :class:`Checkpoint`.

    Raises:
        SourceError: nothing matches ``source``, or the Hub/cache cannot provide it.
        CheckpointFormatError: a file is malformed (the message names it).
        MissingDependencyError: a ``.bin`` checkpoint without torch installed.
    """
    if not isinstance(source, str) or not source.strip():
        raise SourceError(
            "empty SOURCE", hint="give a directory, a snapshot .json or an org/name repo id"
        )
    path = Path(source).expanduser()
    mode = _mode(path)
    if mode is not None and stat.S_ISDIR(mode):
        return load_local_dir(path, source=source)
    if mode is not None:
        return _open_file(path, source)
    return _open_missing(
        source,
        revision,
        need_tensors=need_tensors,
        offline=offline,
        timeout=timeout,
        bundled=bundled,
    )
