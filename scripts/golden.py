#!/usr/bin/env python3
"""Golden-output corpus: run ~1,400 ``recipecli`` invocations in-process and compare their exit
code, stdout, stderr and written files with the outputs recorded from the code before the issue
#23 refactor (``tests/golden/expected.json``).

Usage::

    python scripts/golden.py --compare            # the tree this script lives in; exit 1 on a difference
    python scripts/golden.py --compare -k render/  # only cases whose name contains "render/"
    python scripts/golden.py --record --root /tmp/golden-base   # (re-)record from another tree

What a run does (deterministic; everything offline):

1. copies the tree under test (``--root``, default: the repository of this script; its
   ``recipecli/``, ``templates/`` and ``kernels/``) into a fresh work directory ``W/src`` and
   imports ``recipecli`` from that copy (``recipecli.templates`` and ``recipecli.kernels`` mapped
   to ``W/src/templates`` and ``W/src/kernels`` as pyproject's package-dir does), so an editable
   install pointing elsewhere is never used; it prints where each came from;
2. builds the inputs (tests/golden/golden_inputs.py: sparse checkpoints from the fixture configs,
   tiny pairs, recipes, bench files) with the tree's own ``recipecli.testing`` builders;
3. runs every case of tests/golden/golden_cases.py through ``click.testing.CliRunner``'s
   isolation and ``recipecli.cli.app.main`` (so the exit-code mapping and the ``recipecli:
   error:`` lines are the console script's own), with ``W`` as working directory,
   ``HF_HUB_OFFLINE=1``, an empty ``HF_HOME``, ``NO_COLOR=1``, ``COLUMNS=100`` and
   ``PYTHONHASHSEED=0``; kernel checks run with ``--kernel skip`` (a few on the CPU interpreter,
   whose result is exact), and convert's timings are replaced by ``<S>``;
4. replaces the copy's path by ``<ROOT>`` and ``W`` by ``<TMP>`` in every output.

The expected file stores, per case, argv, exit code and the sha256 of the whole result; the
full texts (as lists of lines) only for results of at most 8,000 bytes and a few representative
large ones (all in full would be ~9 MB). When a case stored by hash only differs, ``--compare``
regenerates the full "before" outputs by running the corpus on ``git archive`` of the recorded
commit (or ``--before COMMIT``) in a second process, and diffs against those. ``--dump FILE``
writes every result in full.

Re-recording after an intended behaviour change: make the change, run ``--compare`` and read
every difference it prints (``--lines 0`` prints whole diffs); when each one is intended, commit
the change, run ``python scripts/golden.py --record`` on the clean tree (the recorded commit is
the one hash-only differences regenerate from; ``--record`` warns on a dirty tree), set
``BASE_COMMIT`` in tests/test_golden.py to that commit, and commit tests/golden/expected.json
saying which cases changed and why. Adding cases: edit tests/golden/golden_cases*.py, then record
from the pre-refactor tree, so that new expectations are not taken from refactored code::

    mkdir /tmp/base && git archive 4b682b9 recipecli templates kernels tests/fixtures \
        docs/examples | tar -x -C /tmp/base
    python scripts/golden.py --record --root /tmp/base

(a tree from ``git archive`` is not a git checkout: its commit and dirtiness are then recorded
as ``?``; record from a worktree of the commit to keep them).
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Protocol, TypedDict

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "tests" / "golden"
EXPECTED = GOLDEN / "expected.json"
#: What is copied from the tree under test: the package and the two package-dir mappings.
TREE_DIRS = ("recipecli", "templates", "kernels")
MAPPED = {"recipecli.templates": "templates", "recipecli.kernels": "kernels"}
ENV = {
    "HF_HUB_OFFLINE": "1",
    "NO_COLOR": "1",
    "COLUMNS": "100",
    "TQDM_DISABLE": "1",
    "LC_ALL": "C.UTF-8",
}
#: Variables that would change what a case reads or prints; removed before any import.
UNSET = ("HF_HUB_CACHE", "HF_ENDPOINT", "HUGGINGFACE_HUB_CACHE", "RECIPECLI_DEBUG", "TERM")


class Case(Protocol):
    """A case of tests/golden/golden_cases.py (its ``Case`` dataclass)."""

    @property
    def name(self) -> str: ...
    @property
    def argv(self) -> tuple[str, ...]: ...
    @property
    def files(self) -> tuple[str, ...]: ...
    @property
    def setup(self) -> Callable[[Path], None] | None: ...


class Result(TypedDict):
    """What is recorded of one case."""

    argv: list[str]
    exit: int
    stdout: str
    stderr: str
    files: dict[str, str]


class _EntryKeys(TypedDict):
    argv: list[str]
    exit: int
    sha256: str


class Entry(_EntryKeys, total=False):
    """A case in the expected file: always argv, exit and sha256; the full output (texts split
    into lines) only for some cases (:func:`stored`)."""

    stdout: list[str]
    stderr: list[str]
    files: dict[str, list[str]]


class _TreeFinder(importlib.abc.MetaPathFinder):
    """Imports ``recipecli.templates`` / ``recipecli.kernels`` from the copied tree."""

    def __init__(self, dirs: dict[str, Path]) -> None:
        self.dirs = dirs

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        """The spec of a mapped package (its ``__init__.py`` in the copy), else None."""
        where = self.dirs.get(fullname)
        if where is None:
            return None
        return importlib.util.spec_from_file_location(
            fullname, where / "__init__.py", submodule_search_locations=[str(where)]
        )


def _git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else "?"


def tree_digest(root: Path) -> str:
    """sha256 (16 hex digits) over the paths and bytes of every .py/.j2/.json/.yaml/.md file of
    :data:`TREE_DIRS` under ``root``: equal digests = the same code and data."""
    h = hashlib.sha256()
    for top in TREE_DIRS:
        for path in sorted((root / top).rglob("*")):
            if path.is_file() and path.suffix in {".py", ".j2", ".json", ".yaml", ".md"}:
                h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def use_tree(root: Path, src: Path) -> dict[str, str]:
    """Copy :data:`TREE_DIRS` of ``root`` to ``src`` and import ``recipecli`` from there.

    Returns:
        Provenance: root, its commit and dirtiness, the digest of root and copy, and the files
        ``recipecli``, its templates and kernels were imported from.

    Raises:
        SystemExit: ``recipecli`` was imported already, or came from somewhere else.
    """
    if "recipecli" in sys.modules:
        raise SystemExit("golden: recipecli is imported already; run this script on its own")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for top in TREE_DIRS:
        shutil.copytree(root / top, src / top, ignore=ignore)
    sys.path.insert(0, str(src))
    sys.meta_path.insert(0, _TreeFinder({m: src / d for m, d in MAPPED.items()}))
    import recipecli.kernels

    import recipecli
    from recipecli.recipes.templating import bundled_templates_dir

    where = {
        "root": str(root),
        "commit": _git(root, "rev-parse", "HEAD"),
        "dirty": "yes" if _git(root, "status", "--porcelain", "--", *TREE_DIRS) else "no",
        "digest_root": tree_digest(root),
        "digest_copy": tree_digest(src),
        "recipecli": str(recipecli.__file__),
        "templates": str(bundled_templates_dir()),
        "kernels": str(recipecli.kernels.__file__),
    }
    for key in ("recipecli", "templates", "kernels"):
        if not Path(where[key]).resolve().is_relative_to(src.resolve()):
            raise SystemExit(f"golden: {key} imported from {where[key]}, not from {src}")
    return where


def _environment(work: Path) -> None:
    for name in UNSET:
        os.environ.pop(name, None)
    os.environ.update(ENV, HF_HOME=str(work / "hf"), XDG_CACHE_HOME=str(work / "cache"))


# --------------------------------------------------------------------------- running a case

_SECONDS = (
    (re.compile(r"\bin \d+(\.\d+)? s\b"), "in <S> s"),
    (re.compile(r"\(\d+(\.\d+)? s\)"), "(<S> s)"),
    (re.compile(r'"seconds": \d+(\.\d+)?(e-?\d+)?'), '"seconds": "<S>"'),
)


#: The random part of a temporary name (``tempfile`` draws 8 of ``[a-z0-9_]``), as convert's
#: ``.OUT.tmp-XXXXXXXX`` staging directory.
_TEMP_NAME = re.compile(r"(\.tmp-)[a-z0-9_]{8}\b")


def normaliser(subs: Sequence[tuple[str, str]]) -> Callable[[str, bool], str]:
    """A function ``(text, timed)`` replacing each ``subs`` pair in order (longest paths first)
    and random temporary names by ``.tmp-<RND>``, and, when ``timed`` (a convert case), the
    durations convert prints by ``<S>``."""

    def norm(text: str, timed: bool) -> str:
        for old, new in subs:
            text = text.replace(old, new)
        text = _TEMP_NAME.sub(r"\1<RND>", text)
        if timed:
            for pattern, repl in _SECONDS:
                text = pattern.sub(repl, text)
        return text

    return norm


def safetensors_summary(path: Path) -> str:
    """Header of a safetensors file (metadata; name, dtype, shape, offsets per tensor) and the
    sha256 of the whole file (its size only when over 16 MiB)."""
    raw = path.read_bytes() if path.stat().st_size <= 1 << 24 else b""
    with path.open("rb") as fh:
        header = json.loads(fh.read(int.from_bytes(fh.read(8), "little")))
    lines = [f"__metadata__ {json.dumps(header.pop('__metadata__', None), sort_keys=True)}"]
    for name, info in header.items():
        lines.append(f"{name} {info['dtype']} {info['shape']} {info['data_offsets']}")
    digest = hashlib.sha256(raw).hexdigest() if raw else f"size {path.stat().st_size}"
    return "\n".join([*lines, f"sha256 {digest}"])


def _file_text(path: Path, norm: Callable[[str, bool], str]) -> str:
    if path.suffix == ".safetensors":
        return safetensors_summary(path)
    data = path.read_bytes()
    try:
        return norm(data.decode("utf-8"), False)
    except UnicodeDecodeError:
        return f"<binary {len(data)} bytes sha256 {hashlib.sha256(data).hexdigest()}>"


def capture_files(
    work: Path, paths: Iterable[str], norm: Callable[[str, bool], str]
) -> dict[str, str]:
    """Content of each path (relative to ``work``; a directory: every file under it, sorted)."""
    out: dict[str, str] = {}
    for rel in paths:
        top = work / rel
        if top.is_dir():
            for path in sorted(p for p in top.rglob("*") if p.is_file()):
                out[path.relative_to(work).as_posix()] = _file_text(path, norm)
        elif top.is_file():
            out[rel] = _file_text(top, norm)
        else:
            out[rel] = "<missing>"
    return out


def invoke(argv: Sequence[str]) -> tuple[int, str, str]:
    """Run ``recipecli argv`` in-process (CliRunner isolation around the console script's
    ``main``); an exception main lets through is recorded as exit -1 and its type and message
    appended to stderr (no traceback: line numbers move with any refactor)."""
    from click.testing import CliRunner

    from recipecli.cli.app import main

    extra = ""
    with CliRunner().isolation() as (out, err, _):
        try:
            main(list(argv))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except Exception as exc:  # noqa: BLE001 - recorded, never hidden
            code, extra = -1, f"<exception {type(exc).__name__}: {exc}>\n"
        sys.stdout.flush()
        sys.stderr.flush()
        stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    return code, stdout, stderr + extra


def run_case(case: Case, work: Path, norm: Callable[[str, bool], str]) -> Result:
    """Run one case (its setup first) and return its normalised :class:`Result`."""
    try:
        if case.setup is not None:
            case.setup(work)
    except OSError as exc:  # recorded: the case then shows what the setup could not do
        code, stdout, stderr = -2, "", f"<setup failed: {type(exc).__name__}: {exc}>\n"
    else:
        code, stdout, stderr = invoke(case.argv)
    timed = bool(case.argv) and case.argv[0] == "convert"
    return {
        "argv": list(case.argv),
        "exit": code,
        "stdout": norm(stdout, timed),
        "stderr": norm(stderr, timed),
        "files": capture_files(work, case.files, norm),
    }


# --------------------------------------------------------------------------- the corpus


def run_corpus(
    root: Path, pattern: str | None, keep: bool
) -> tuple[dict[str, Result], dict[str, str]]:
    """Copy ``root``, build the inputs and run every case whose name contains ``pattern``.

    Returns:
        ``(results by case name, provenance)``; the provenance is printed on stderr too.
    """
    work = Path(tempfile.mkdtemp(prefix="recipecli-golden-"))
    cwd = os.getcwd()
    try:
        _environment(work)
        where = use_tree(root, work / "src")
        for key, value in where.items():
            print(f"golden: {key:12} {value}", file=sys.stderr)
        where = {k: v.replace(str(work), "<TMP>") for k, v in where.items()}
        sys.path.insert(1, str(GOLDEN))
        all_cases: Callable[[], list[Case]] = importlib.import_module("golden_cases").all_cases
        inputs = importlib.import_module("golden_inputs")
        build_inputs: Callable[[Path, Path], None] = inputs.build_inputs
        input_manifest: Callable[[Path, tuple[str, ...]], Iterable[str]] = inputs.input_manifest

        build_inputs(work, root)
        os.chdir(work)
        real = os.path.realpath(work)
        subs = [(str(work / "src"), "<ROOT>"), (str(work), "<TMP>"), (real, "<TMP>")]
        norm = normaliser(sorted(set(subs), key=lambda s: -len(s[0])))
        manifest = "\n".join(input_manifest(work, ("fx", "tiny", "snap", "bench", "recipes")))
        results: dict[str, Result] = {}
        if pattern is None or pattern in "inputs/manifest":
            results["inputs/manifest"] = {
                "argv": [],
                "exit": 0,
                "stdout": manifest + "\n",
                "stderr": "",
                "files": {},
            }
        for case in all_cases():
            if pattern is None or pattern in case.name:
                results[case.name] = run_case(case, work, norm)
        return results, where
    finally:
        os.chdir(cwd)
        if keep:
            print(f"golden: kept the work directory {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


def case_text(result: Result) -> list[str]:
    """``result`` as lines, for a unified diff: argv, exit, stdout, stderr, then each file."""
    lines = [f"argv: {json.dumps(result['argv'])}", f"exit: {result['exit']}", "--- stdout"]
    lines += result["stdout"].splitlines()
    lines += ["--- stderr", *result["stderr"].splitlines()]
    for name, text in result["files"].items():
        lines += [f"--- file {name}", *text.splitlines()]
    return lines


# --------------------------------------------------------------------------- the expected file
# Every case is stored with the sha256 of its result; the full result (texts as lists of lines,
# so that a git diff of the file reads line by line) only for cases of at most FULL_BYTES and for
# REPRESENTATIVE ones: the whole corpus would be ~9 MB. `--compare` regenerates the full results
# of the recorded commit (`git archive`) to diff a case stored by hash only.

FULL_BYTES = 8000
REPRESENTATIVE = (
    "check-example/all/tp1,2,4,8/json",
    "check-fixture/llama8b+traineagle3/all/tp1,2,4,8/json",
    "check-fixture/m3-nvfp4+m3/all/tp1,2,4,8/json",
    "check-tiny/base-b/all/tp1,2,4/json",
    "check-tiny/fmt-d/all/tp1,2,4/json",
    "check-recipe/minimax-m3-eagle3/mi355x/all/json",
    "inspect/fx-target/llama8b/json",
    "docs/bundled/all/bundled",
    "docs/engines",
    "report/bundled-json",
    "convert/d-eagle3-json",
)


def digest(result: Result) -> str:
    """sha256 of ``result`` as canonical JSON (sorted keys, UTF-8)."""
    text = json.dumps(result, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def stored(name: str, result: Result, *, full: bool | None = None) -> Entry:
    """The expected-file entry of ``result``: argv, exit, sha256, and (when ``full``, default:
    small or representative) stdout, stderr and files as lists of lines."""
    entry: Entry = {"argv": result["argv"], "exit": result["exit"], "sha256": digest(result)}
    if full is None:
        full = name in REPRESENTATIVE or len(json.dumps(result)) <= FULL_BYTES
    if full:
        entry["stdout"] = result["stdout"].split("\n")
        entry["stderr"] = result["stderr"].split("\n")
        entry["files"] = {k: v.split("\n") for k, v in result["files"].items()}
    return entry


def loaded(entry: Entry) -> Result | None:
    """The :class:`Result` of an expected-file entry; None when it holds only the hash."""
    if "stdout" not in entry or "stderr" not in entry or "files" not in entry:
        return None
    return {
        "argv": entry["argv"],
        "exit": entry["exit"],
        "stdout": "\n".join(entry["stdout"]),
        "stderr": "\n".join(entry["stderr"]),
        "files": {k: "\n".join(v) for k, v in entry["files"].items()},
    }


def write_expected(
    path: Path, results: dict[str, Result], where: dict[str, str], full: bool
) -> None:
    """Write ``results`` (every one in full when ``full``) with their provenance to ``path``."""
    cases = {n: stored(n, r, full=True if full else None) for n, r in results.items()}
    doc = {"format": 2, "recorded_from": where, "cases": cases}
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


def regenerate(commit: str, names: set[str]) -> dict[str, Result]:
    """Full results of ``names`` from ``commit`` of this repository: its tree is extracted with
    ``git archive`` (the repository is only read) and run by a second process of this script.

    Raises:
        RuntimeError: the commit cannot be archived or the run failed.
    """
    tmp = Path(tempfile.mkdtemp(prefix="recipecli-golden-before-"))
    try:
        parts = [*TREE_DIRS, "tests/fixtures", "docs/examples"]
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", "--format=tar", commit, *parts],
            capture_output=True,
        )
        if archive.returncode != 0:
            raise RuntimeError(f"git archive {commit}: {archive.stderr.decode().strip()}")
        tree = tmp / "tree"
        tree.mkdir()
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
        out = tmp / "before.json"
        cmd = [sys.executable, __file__, "--dump", str(out), "--root", str(tree)]
        if subprocess.run(cmd, capture_output=True, text=True).returncode != 0:
            raise RuntimeError(f"the run on {commit} failed")
        cases: dict[str, Entry] = json.loads(out.read_text())["cases"]
        return {n: r for n in names if n in cases and (r := loaded(cases[n])) is not None}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _same(entry: Entry, result: Result) -> bool:
    return entry["sha256"] == digest(result)


def compare(
    expected: dict[str, Entry],
    got: dict[str, Result],
    before: Callable[[set[str]], dict[str, Result]],
    lines: int,
    limit: int,
) -> int:
    """Print each case that differs: missing, new, or a unified diff cut to ``lines`` lines
    (0 = whole), for the first ``limit`` cases; the expected side of a case stored by hash only
    comes from ``before``. Returns the number of differing cases."""
    names = list(expected) + [n for n in got if n not in expected]
    bad = [n for n in names if n not in got or n not in expected or not _same(expected[n], got[n])]
    shown = bad[:limit]
    want = {n: r for n in shown if n in expected and (r := loaded(expected[n])) is not None}
    hashed = {n for n in shown if n in expected and n in got and n not in want}
    if hashed:
        try:
            want.update(before(hashed))
        except RuntimeError as exc:
            print(f"golden: no full expected output for {len(hashed)} case(s): {exc}")
    for name in shown:
        if name not in expected or name not in got:
            print(f"=== {name}: {'new (not in the expected file)' if name in got else 'not run'}")
            continue
        if name not in want:
            print(f"=== {name}: differs (sha256 only; no full expected output)")
            continue
        diff = list(
            difflib.unified_diff(
                case_text(want[name]), case_text(got[name]), "expected", "got", lineterm=""
            )
        )
        cut = diff if lines <= 0 else diff[:lines]
        print(f"=== {name}: differs ({len(diff)} diff lines)")
        print("\n".join(cut) + ("\n..." if len(cut) < len(diff) else ""))
    return len(bad)


def _args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--record", action="store_true", help="write the expected file")
    mode.add_argument("--compare", action="store_true", help="compare with the expected file")
    mode.add_argument("--dump", type=Path, metavar="FILE", help="write every result in full")
    p.add_argument("--root", type=Path, default=REPO, help="tree to import (default: this repo)")
    p.add_argument("--expected", type=Path, default=EXPECTED, help="the expected file")
    p.add_argument("-k", dest="pattern", help="only cases whose name contains this")
    p.add_argument("--lines", type=int, default=40, help="diff lines per case (0: all)")
    p.add_argument("--limit", type=int, default=50, help="differing cases to print")
    p.add_argument(
        "--before",
        metavar="COMMIT",
        help="commit to regenerate hashed-only cases from (default: the recorded one)",
    )
    p.add_argument("--keep", action="store_true", help="keep the work directory")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: ``--record`` / ``--dump`` write a file and return 0; ``--compare`` returns
    1 when a case differs (printing it), else 0."""
    args = _args(argv)
    if os.environ.get("PYTHONHASHSEED") != "0":  # set iteration order: the same every run
        env = dict(os.environ, PYTHONHASHSEED="0")
        return subprocess.run([sys.executable, __file__, *sys.argv[1:]], env=env).returncode
    if (args.record or args.dump) and args.pattern is not None:
        raise SystemExit("golden: --record and --dump run the whole corpus (no -k)")
    t0 = time.perf_counter()
    results, where = run_corpus(args.root.resolve(), args.pattern, args.keep)
    seconds = time.perf_counter() - t0
    if args.record or args.dump:
        path = args.expected if args.record else args.dump
        write_expected(path, results, where, full=bool(args.dump))
        if args.record and (where["dirty"] != "no" or where["commit"] == "?"):
            print("golden: warning: the tree is dirty or not a git checkout: hash-only cases")
            print("golden: warning: cannot be regenerated from the recorded commit for a diff")
        size = path.stat().st_size
        print(f"golden: wrote {len(results)} cases to {path} ({size} bytes) in {seconds:.1f} s")
        return 0
    doc = json.loads(args.expected.read_text())
    expected: dict[str, Entry] = doc["cases"]
    if args.pattern is not None:
        expected = {n: e for n, e in expected.items() if args.pattern in n}
    commit = args.before or doc["recorded_from"]["commit"]
    n = compare(expected, results, lambda names: regenerate(commit, names), args.lines, args.limit)
    print(f"golden: {len(results)} cases run in {seconds:.1f} s; {n} differ from {args.expected}")
    return 1 if n else 0


if __name__ == "__main__":
    sys.exit(main())
