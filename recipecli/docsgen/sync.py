"""Writing and checking the output directory: write what differs (atomically), delete generated
orphans, never overwrite a file that is not a generated page, and ``--check`` (write nothing)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from recipecli.docsgen.pages import GENERATED_MARKER
from recipecli.errors import UsageError


@dataclass(frozen=True)
class SyncResult:
    """What :func:`sync` found or did.

    Attributes:
        missing: files this run generates that do not exist in the output directory.
        stale: generated files (first line is :data:`GENERATED_MARKER`) whose content differs
            from the generated text.
        orphans: generated files in the output directory that this run does not generate.
        written: files written, ``missing`` then ``stale`` (empty under ``check``).
        removed: orphans deleted (empty under ``check``).
        unchanged: files whose content already is the generated text.
    """

    missing: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    orphans: tuple[str, ...] = ()
    written: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class SyncReport:
    """What ``recipecli docs`` reports about one :func:`sync` run.

    Attributes:
        result: the :class:`SyncResult`.
        out: the output directory (file names in ``result`` are relative to it).
        check: True under ``--check`` (nothing written: missing/stale/orphaned files fail).
        pages: how many pages this run generates.
    """

    result: SyncResult
    out: Path
    check: bool
    pages: int

    def _paths(self, names: Sequence[str]) -> list[str]:
        return [str(self.out / n) for n in names]

    @property
    def failed(self) -> bool:
        """True under ``check`` when some file is missing, stale or orphaned."""
        r = self.result
        return self.check and bool(r.missing or r.stale or r.orphans)

    def to_dict(self) -> dict[str, object]:
        """The ``docs --json`` document: output, check, ok, then the paths of each kind."""
        r = self.result
        return {
            "output": str(self.out),
            "check": self.check,
            "ok": not self.failed,
            "missing": self._paths(r.missing),
            "stale": self._paths(r.stale),
            "orphans": self._paths(r.orphans),
            "written": self._paths(r.written),
            "removed": self._paths(r.removed),
            "unchanged": self._paths(r.unchanged),
        }

    def lines(self) -> list[tuple[str, bool]]:
        """The text report as (line, to stderr) pairs: under ``check`` the missing/stale files
        and a summary (on stderr when it failed); else the files written and removed (stderr)
        and a count line."""
        r = self.result
        if self.check:
            out = [(f"missing: {p}", False) for p in self._paths(r.missing)]
            out += [(f"stale: {p}", False) for p in self._paths(r.stale)]
            out += [
                (f"stale: {p} (no recipe generates it any more)", False)
                for p in self._paths(r.orphans)
            ]
            if self.failed:
                n = len(r.missing) + len(r.stale) + len(r.orphans)
                out.append(
                    (
                        f"recipecli docs: {n} file(s) missing or out of date in {self.out}; "
                        "run the same command without --check to regenerate",
                        True,
                    )
                )
            else:
                out.append((f"{self.out}: {self.pages} files up to date", False))
            return out
        out = [(f"wrote {self.out / n}", True) for n in r.written]
        out += [(f"removed {self.out / n}", True) for n in r.removed]
        out.append(
            (
                f"{self.out}: {len(r.written)} written, {len(r.removed)} removed, "
                f"{len(r.unchanged)} unchanged",
                False,
            )
        )
        return out


def first_line(path: Path) -> str | None:
    """First line of ``path`` without its line end; None when it cannot be read as UTF-8 text
    (missing, a directory, unreadable, binary)."""
    try:
        with path.open(encoding="utf-8") as fh:
            return fh.readline().rstrip("\n")
    except (OSError, UnicodeDecodeError):
        return None


def is_generated(path: Path) -> bool:
    """True when ``path`` is a regular file whose first line is :data:`GENERATED_MARKER` or the
    engine pages' marker: the only files ``docs`` overwrites or deletes."""
    from recipecli.docsgen.engine_pages import ENGINE_MARKER

    return path.is_file() and first_line(path) in (GENERATED_MARKER, ENGINE_MARKER)


def find_orphans(pages: Mapping[str, str], out_dir: Path) -> list[str]:
    """``*.md`` files in ``out_dir`` that start with :data:`GENERATED_MARKER` but are not in
    ``pages`` (pages of recipes that were removed or renamed)."""
    if not out_dir.is_dir():
        return []
    return [
        path.name
        for path in sorted(out_dir.glob("*.md"))
        if path.name not in pages and is_generated(path)
    ]


def _output_dir_error(out: Path, reason: str) -> UsageError:
    return UsageError(
        f"cannot use as the output directory: {reason}",
        path=str(out),
        hint="give another -o DIR",
    )


def ensure_output_dir(out_dir: str | os.PathLike[str]) -> Path:
    """Create the output directory when missing; the directory above it must exist (the folder
    rule of every writer, :func:`recipecli.safe_write.check_parent`).

    Args:
        out_dir: the ``-o DIR`` of ``docs``.

    Returns:
        ``out_dir`` as a Path.

    Raises:
        UsageError: it (or a parent) is a regular file, the directory above it does not exist,
            or it cannot be created (permissions, read-only or virtual file system); one line
            naming the directory.
    """
    from recipecli.safe_write import check_parent

    out = Path(out_dir)
    try:
        out.mkdir(exist_ok=True)  # the folder rule: DIR itself, never the folders above it
    except FileNotFoundError:
        check_parent(out, what="-o DIR", noun="-o DIR")
        raise
    except FileExistsError:
        raise _output_dir_error(out, "it is a file, not a directory") from None
    except NotADirectoryError:
        raise _output_dir_error(out, "a parent is a file, not a directory") from None
    except OSError as exc:
        raise _output_dir_error(out, exc.strerror or str(exc)) from None
    return out


def _compare(
    pages: Mapping[str, str], out: Path
) -> tuple[list[str], list[str], list[str], list[str]]:
    """(missing, stale, unchanged, foreign) page names: ``foreign`` exist without being
    generated pages (:func:`is_generated`)."""
    from recipecli.safe_write import check_within

    missing, stale, same, foreign = [], [], [], []
    for name, text in sorted(pages.items()):
        path = out / name
        check_within(path, out, what="page", noun="-o DIR")  # read nothing through such a link
        if not path.exists() and not path.is_symlink():
            missing.append(name)
        elif not is_generated(path):
            foreign.append(name)
        elif path.read_bytes() == text.encode("utf-8"):
            same.append(name)
        else:
            stale.append(name)
    return missing, stale, same, foreign


def sync(
    pages: Mapping[str, str],
    out_dir: str | os.PathLike[str],
    *,
    check: bool,
    inputs: Sequence[tuple[str, str | os.PathLike[str]]] = (),
) -> SyncResult:
    """Compare ``pages`` with ``out_dir``; unless ``check``, create ``out_dir`` when missing,
    write what differs (atomically) and delete generated orphans.

    A file that exists but is not a generated page (its first line is not
    :data:`GENERATED_MARKER`, e.g. a hand-written ``README.md``) is never overwritten: the run
    stops before writing anything, also under ``check`` (regenerating would fail).

    Args:
        pages: ``{file name: text}`` from :func:`generate`.
        out_dir: output directory.
        check: write nothing, only report.
        inputs: the recipe files and template folder read, as (label, path): no page may be
            one of them or lie inside one (:func:`recipecli.safe_write.check_inputs`).

    Returns:
        :class:`SyncResult` (file names relative to ``out_dir``, sorted).

    Raises:
        UsageError: a page would overwrite a file without the marker; ``out_dir`` is a file or
            cannot be created; a page cannot be written.
    """
    from recipecli.safe_write import check_inputs

    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise _output_dir_error(out, "it is a file, not a directory")
    missing, stale, same, foreign = _compare(pages, out)
    if foreign:
        others = f" (and {len(foreign) - 1} more)" if len(foreign) > 1 else ""
        raise UsageError(
            f"exists and is not a generated page (its first line is not the `recipecli docs` "
            f"marker){others}; refusing to overwrite it",
            path=str(out / foreign[0]),
            hint="give another -o DIR or move the file away",
        )
    for name in pages:
        check_inputs(out / name, inputs, what="page", noun="-o DIR")
    orphans = find_orphans(pages, out)
    if check:
        return SyncResult(tuple(missing), tuple(stale), tuple(orphans), unchanged=tuple(same))
    created = not out.exists()
    ensure_output_dir(out)
    written = (*missing, *stale)
    try:
        _write(out, {name: pages[name] for name in written}, orphans, inputs)
    except BaseException:
        if created:  # a failed run leaves no empty folder behind
            with contextlib.suppress(OSError):
                out.rmdir()
        raise
    return SyncResult(
        tuple(missing), tuple(stale), tuple(orphans), written, tuple(orphans), tuple(same)
    )


def _write(
    out: Path,
    pages: Mapping[str, str],
    orphans: Sequence[str],
    inputs: Sequence[tuple[str, str | os.PathLike[str]]],
) -> None:
    """Write ``pages`` into ``out`` (all or none, each over nothing or a generated page, never
    through a link out of ``out``), then delete the ``orphans`` (none of them one of the
    ``inputs``; a link is removed, never what it points to).

    Raises:
        UsageError: a page cannot be written, or an orphan is an input.
    """
    from recipecli.docsgen.engine_pages import ENGINE_MARKER
    from recipecli.safe_write import check_inputs, generated_page_kind, write_files

    write_files(
        {out / name: text.encode("utf-8") for name, text in pages.items()},
        kind=generated_page_kind(GENERATED_MARKER, ENGINE_MARKER),
        what="page",
        noun="-o DIR",
        inputs=inputs,
        within=out,
    )
    for name in orphans:
        check_inputs(out / name, inputs, what="page", noun="-o DIR")
        (out / name).unlink()
