"""The ``check`` section of a recipe page: ``recipecli check`` run on the recipe's pairs, at the TP
size and ``max_model_len`` of the rendered serve command, on checkpoints opened without the
network unless ``--checkpoints online`` (and never with torch)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recipecli.docsgen.inputs import hardware_names
from recipecli.errors import RecipeCliError
from recipecli.examples import bundled_snapshots
from recipecli.recipecheck import deployment, pair_of
from recipecli.recipes.loader import Recipe
from recipecli.recipes.render import Rendered

if TYPE_CHECKING:  # the checkpoint readers are imported when the section is built
    from recipecli.checkpoint.model import Checkpoint
    from recipecli.findings import Finding

#: ``--checkpoints`` modes: where the ``check`` section may find the recipe's checkpoints.
#: bundled: only snapshots shipped with recipecli; cache: also local paths and the HF cache (never
#: the Hub, whatever HF_HUB_OFFLINE says); online: also the Hub (headers only); none: skip it.
CHECKPOINT_MODES: tuple[str, ...] = ("bundled", "cache", "online", "none")


@lru_cache(maxsize=1)
def _bin_only(root: Path) -> bool:
    from recipecli.checkpoint.local import has_weights

    return has_weights(root) and not any(root.glob("*.safetensors"))


def open_for_docs(source: str, mode: str) -> tuple[Checkpoint, str]:
    """Open a checkpoint for the docs' check section without touching the network unless
    ``mode`` is ``online``, and without torch (``.bin``-only checkpoints are refused).

    Args:
        source: the recipe's target or draft (repo id or path).
        mode: one of :data:`CHECKPOINT_MODES` except ``none``.

    Returns:
        (checkpoint, description of where it came from — no absolute paths).

    Raises:
        SourceError and other RecipeCliError: not available in this mode.
    """
    from recipecli.checkpoint import open_checkpoint
    from recipecli.checkpoint.hub import cached_snapshot_dir, looks_like_repo_id
    from recipecli.errors import SourceError

    snap = bundled_snapshots().get(source)
    if snap is not None:
        return open_checkpoint(snap), f"bundled snapshot {Path(snap).name}"
    if mode == "bundled":
        raise SourceError("no bundled snapshot", path=source)
    root: Path | None = Path(source) if Path(source).is_dir() else None
    if root is None and looks_like_repo_id(source):
        root = cached_snapshot_dir(source, None)
    if root is not None and _bin_only(root):
        raise SourceError(
            ".bin checkpoints need torch, which `docs` never imports",
            path=source,
            hint="run `recipecli check` on it",
        )
    ck = open_checkpoint(source, offline=mode != "online")
    where = {"hf-cache": "HF cache", "hub": "Hugging Face Hub (headers)"}.get(ck.kind, ck.kind)
    return ck, where


@dataclass(frozen=True)
class CheckRow:
    """One verdict row: engine on a hardware profile at the recipe's TP size."""

    hardware: str | None
    engine: str
    tp: int
    max_model_len: int | None
    ready: bool
    errors: int
    warnings: int


@dataclass(frozen=True)
class CheckSection:
    """The ``check`` part of a recipe page.

    Attributes:
        available: False when some checkpoint could not be opened offline.
        pairs: (hardware profiles, target, draft, target source, draft source) per distinct pair.
        rows: verdicts per hardware profile and engine.
        findings: ``(severity, engine, code, message)`` of errors and warnings, de-duplicated.
        missing: the sources that could not be opened (when not available).
    """

    available: bool
    pairs: tuple[tuple[str, str, str, str, str], ...] = ()
    rows: tuple[CheckRow, ...] = ()
    findings: tuple[tuple[str, str, str, str], ...] = ()
    missing: tuple[str, ...] = ()


def check_section(
    recipe: Recipe, engines: Sequence[str], mode: str, renders: Mapping[tuple[Any, str], Rendered]
) -> CheckSection | None:
    """Run ``recipecli check`` logic (:func:`recipecli.check.run_check`) on the recipe's
    target/draft pairs, per hardware profile and engine, at the TP size and ``max_model_len``
    the rendered serve command uses.

    Args:
        recipe: the recipe.
        engines: engines documented.
        mode: ``--checkpoints`` mode (``none`` -> None).
        renders: ``{(hardware, engine): serve Rendered}``.

    Returns:
        :class:`CheckSection`, or None for mode ``none``.
    """
    if mode == "none":
        return None
    by_pair: dict[tuple[str, str], list[str | None]] = {}
    for hw in hardware_names(recipe):
        by_pair.setdefault(pair_of(recipe, hw), []).append(hw)
    opened: dict[str, tuple[Checkpoint, str]] = {}
    missing: list[str] = []
    for source in sorted({s for pair in by_pair for s in pair}):
        try:
            opened[source] = open_for_docs(source, mode)
        except RecipeCliError:
            missing.append(source)
    if missing:
        return CheckSection(False, missing=tuple(missing))
    pairs, rows = [], []
    seen: dict[tuple[str, str, str, str], None] = {}  # (severity, engine, code, message), in order
    for (target, draft), hws in by_pair.items():
        pairs.append(
            (", ".join(str(h) for h in hws), target, draft, opened[target][1], opened[draft][1])
        )
        for hw in hws:
            for engine in engines:
                row, found = _verdict(
                    recipe, hw, engine, renders[(hw, engine)], opened[target][0], opened[draft][0]
                )
                rows.append(row)
                for f in found:
                    seen.setdefault((f.severity, f.engine, f.code, f.message), None)
    return CheckSection(True, tuple(pairs), tuple(rows), tuple(seen))


def _verdict(
    recipe: Recipe,
    hw: str | None,
    engine: str,
    serve: Rendered,
    target: Checkpoint,
    draft: Checkpoint,
) -> tuple[CheckRow, list[Finding]]:
    """One :class:`CheckRow` (``engine`` on ``hw``, at the serve command's settings) and its
    errors then warnings."""
    from recipecli.check import run_check

    dep = deployment(recipe, serve)
    res = run_check(
        target,
        draft,
        engines=(engine,),
        tps=(dep.tp,),
        draft_tp=dep.draft_tp,
        max_model_len=dep.max_model_len,
    )
    errs = [f for f in res.findings if f.severity == "error"]
    warns = [f for f in res.findings if f.severity == "warning"]
    row = CheckRow(
        hw,
        engine,
        dep.tp,
        dep.max_model_len,
        dep.tp in res.ready_tps(engine),
        len(errs),
        len(warns),
    )
    return row, errs + warns
