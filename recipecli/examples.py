"""Bundled example checkpoint pairs (metadata snapshots) for `recipecli check --example NAME`."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from recipecli.errors import UsageError

if TYPE_CHECKING:  # the checkpoint package (numpy) is imported on use
    from recipecli.checkpoint.model import Checkpoint

#: name -> (target snapshot, draft snapshot), files under recipecli/data/examples/
EXAMPLES: dict[str, tuple[str, str]] = {
    "llama3.1-8b-eagle3": (
        "llama3.1-8b-instruct.target.json",
        "eagle3-llama3.1-instruct-8b.draft.json",
    ),
}


def examples_dir() -> Path:
    """Directory of the bundled example snapshots (inside the installed package)."""
    return Path(str(resources.files("recipecli.data").joinpath("examples")))


#: name -> one-line description
DESCRIPTIONS: dict[str, str] = {
    "llama3.1-8b-eagle3": "meta-llama/Llama-3.1-8B-Instruct + yuhuili/EAGLE3-LLaMA3.1-Instruct-8B "
    "(format A, Vd 32000; metadata snapshots)",
}


def list_example_names() -> list[str]:
    return sorted(EXAMPLES)


def example_pair(name: str) -> tuple[str, str]:
    """Paths of the (target, draft) snapshots of example ``name``.

    Raises:
        UsageError: unknown example name.
    """
    if name not in EXAMPLES:
        raise UsageError(f"unknown example {name!r}; available: {', '.join(list_example_names())}")
    target, draft = EXAMPLES[name]
    return str(examples_dir() / target), str(examples_dir() / draft)


def bundled_snapshots() -> dict[str, str]:
    """Bundled metadata snapshots by the model id they describe: the example pair
    (``recipecli/data/examples/*.json``) and the bundled recipes' targets and drafts
    (``recipecli/data/{targets,drafts}/*.snapshot.json.gz``; see
    :func:`recipecli.checkpoint.snapshot.bundled_snapshot_paths`):
    ``{"meta-llama/Llama-3.1-8B-Instruct": path, …}``."""
    from recipecli.checkpoint.snapshot import bundled_snapshot_paths

    return {repo: str(path) for repo, path in bundled_snapshot_paths().items()}


def open_source(
    source: str, revision: str | None = None, *, timeout: float | None = None
) -> Checkpoint:
    """Open a recipe's target or draft: recipecli's bundled snapshot of that repo id when it
    ships one and no revision is asked (offline), else
    :func:`recipecli.checkpoint.open_checkpoint` (directory, snapshot file, HF cache, then the
    Hub).

    Returns:
        the :class:`~recipecli.checkpoint.Checkpoint`.

    Raises:
        RecipeCliError: as ``open_checkpoint`` raises it (missing source, bad files, Hub errors).
    """
    from recipecli.checkpoint.resolve import open_checkpoint

    # open_checkpoint resolves a repo id to its bundled snapshot first (no revision asked)
    return open_checkpoint(source, revision, timeout=timeout)
