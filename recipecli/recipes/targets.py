"""Find the target model's config.json for a recipe (needed to place its config overrides).

Order: ``--target-config SOURCE`` > the recipe's (or hardware profile's) ``target_config`` >
the target's config in the local HF cache (offline) > a bundled snapshot of the target
(``recipecli/data/targets/<org>__<name>.json``) > the checkpoint sources (local dir, snapshot,
HF cache, Hub) for the target id itself.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from recipecli.errors import CheckpointFormatError, RecipeError, SourceError


def bundled_targets_dir() -> Path:
    """Directory of bundled target config snapshots."""
    return Path(str(resources.files("recipecli.data"))) / "targets"


def bundled_snapshot_path(target: str) -> Path | None:
    """The bundled snapshot file for repo id ``target`` (``org/name``), or None."""
    if target.count("/") != 1:
        return None
    path = bundled_targets_dir() / (target.replace("/", "__") + ".json")
    return path if path.is_file() else None


def check_target_config(source: str | None) -> str | None:
    """Refuse a ``--target-config`` SOURCE that reads as a local path and names nothing.

    The check is made when the option is read, so a wrong path is an error even for a recipe
    with no config overrides (whose target config is otherwise never opened). An ``org/name``
    repo id (:func:`recipecli.checkpoint.hub.looks_like_repo_id`, not starting with ``.``,
    ``/`` or ``~``) passes: it is looked up only when needed.

    Returns:
        ``source`` unchanged.

    Raises:
        SourceError: ``source`` is empty, or a path (absolute, relative or ``~``) that does
            not exist (a dangling symbolic link counts as missing).
    """
    if source is None:
        return None
    from recipecli.checkpoint.hub import looks_like_repo_id

    if looks_like_repo_id(source) and not source.startswith((".", "/", "~")):
        return source
    if not source.strip() or not os.path.exists(os.path.expanduser(source)):
        raise SourceError(
            "--target-config names no such file or directory, and not an org/name repo id",
            path=source or "''",
            hint="give the target's checkpoint directory, its config.json, a snapshot .json "
            "or its Hugging Face repo id",
        )
    return source


def target_config_callback(ctx: object, param: object, value: str | None) -> str | None:
    """A click option callback running :func:`check_target_config` (``--target-config``).

    Raises:
        SourceError: see :func:`check_target_config`.
    """
    return check_target_config(value)


def _in_hf_cache(target: str) -> bool:
    """``target`` (``org/name``) has a ``config.json`` at ``refs/main`` of the local HF cache,
    found without importing the checkpoint package (numpy): the same directory
    :func:`recipecli.checkpoint.hub.hub_cache_dir` names (``HF_HUB_CACHE``, else
    ``HF_HOME/hub``, else huggingface_hub's default)."""
    if target.count("/") != 1 or target.startswith((".", "/", "~")):
        return False
    if os.environ.get("HF_HUB_CACHE"):
        cache = Path(os.environ["HF_HUB_CACHE"]).expanduser()
    elif os.environ.get("HF_HOME"):
        cache = Path(os.environ["HF_HOME"]).expanduser() / "hub"
    else:
        from huggingface_hub import constants

        cache = Path(constants.HF_HUB_CACHE)
    repo = cache / f"models--{target.replace('/', '--')}"
    try:
        ref = (repo / "refs" / "main").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return False
    return bool(ref) and "/" not in ref and (repo / "snapshots" / ref / "config.json").is_file()


def _open_config(source: str, offline: bool | None = None) -> Mapping[str, Any]:
    # Imported lazily: the checkpoint package pulls in numpy and huggingface_hub.
    from recipecli.checkpoint import open_checkpoint

    config: Mapping[str, Any] = open_checkpoint(source, need_tensors=False, offline=offline).config
    return config


def load_target_config(
    target: str,
    *,
    override: str | None = None,
    recipe_config: str | None = None,
    recipe_dir: Path | None = None,
    where: str = "",
    offline: bool | None = None,
) -> tuple[Mapping[str, Any], str]:
    """Return the target's config.json and where it came from.

    Args:
        target: the target model id or SOURCE rendered into the command.
        override: ``--target-config SOURCE`` from the command line, if any.
        recipe_config: ``target_config`` from the recipe/hardware profile (a path relative to
            the recipe file, or any SOURCE), if any.
        recipe_dir: directory of the recipe file, to resolve relative ``recipe_config`` paths.
        where: ``file:line`` for error messages.
        offline: for a repo id: True reads only the HF cache, False may ask the Hub, None as
            ``HF_HUB_OFFLINE`` says (:func:`recipecli.checkpoint.open_checkpoint`).

    Returns:
        (config mapping, description of the source used).

    Raises:
        RecipeError: the config cannot be found offline (message names ``--target-config``).
    """
    if override:
        return _open_config(override, offline), override
    if recipe_config:
        candidate = Path(recipe_config)
        if recipe_dir is not None and not candidate.is_absolute():
            local = recipe_dir / candidate
            if local.exists():
                recipe_config = str(local)
        return _open_config(recipe_config, offline), recipe_config
    if _in_hf_cache(target):
        try:  # the user's copy of the target wins over recipecli's bundled one
            return _open_config(target, True), f"{target} (HF cache)"
        except (SourceError, CheckpointFormatError):
            pass
    snap = bundled_snapshot_path(target)
    if snap is not None:
        try:
            data = json.loads(snap.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:  # pragma: no cover - shipped files are valid
            raise CheckpointFormatError(
                f"bundled snapshot unreadable: {exc}", path=str(snap)
            ) from None
        return data["config"], f"bundled snapshot {snap.name}"
    try:
        return _open_config(target, offline), target
    except (SourceError, CheckpointFormatError) as exc:
        raise RecipeError(
            f"cannot read the config of target {target!r} to place the config overrides "
            f"(text_overrides, hf-overrides) ({exc.one_line()})",
            path=where or None,
            hint="pass --target-config SOURCE (a checkpoint dir, config.json or snapshot)",
        ) from None
