"""Extract the engine data recipecli's engine models read, from the engines' own sources.

Nothing here is imported at run time: ``recipecli check`` reads the JSON this writes into each
engine folder's ``data/`` (``recipecli/engines/<engine>/data/``, the file named from the engine's
pin), and never imports torch, transformers or an engine. Every extractor parses source files
with :mod:`ast` (no import of the package, no GPU).

transformers' config-class fields and defaults (``recipecli/data/transformers/``) are read from
the classes themselves, in a venv holding the pinned release: ``scripts/extract_transformers_fields.py``
(``build_engine_data.py transformers`` says so and exits).

Usage (versions are the pins, ``recipecli/engines/<engine>/pin.py``; a source of another version
is refused with one line)::

    # vLLM registry: EAGLE3 draft architectures and the targets that implement SupportsEagle3
    pip download vllm==<pin> --no-deps -d /tmp/dl
    python scripts/build_engine_data.py vllm /tmp/dl/vllm-<pin>-cp38-abi3-manylinux_2_28_x86_64.whl

    # SGLang registry: EntryClass exports, which targets capture aux states and how
    pip download sglang==<pin> --no-deps -d /tmp/dl
    python scripts/build_engine_data.py sglang /tmp/dl/sglang-<pin>-cp311-cp311-manylinux_2_34_x86_64.whl

    # tokenspeed registry (a git directory of lightseekorg/tokenspeed; the commit is recorded)
    python scripts/build_engine_data.py tokenspeed /path/to/tokenspeed.git [--commit SHA]

A new engine adds ``scripts/engine_data_<engine>.py`` with ``extract(source, tree)``.

``tests/conformance/test_engine_data.py`` fails when a committed file's recorded version differs from the
version the engine model pins.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/pins.py beside this file
import pins  # noqa: E402  (scripts/pins.py: the paths derive from each engine's pin)

from recipecli.engines import engine_names  # noqa: E402  (pins puts the repo on sys.path)

ROOT = pins.ROOT

# --------------------------------------------------------------------------- sources


class Tree:
    """Read-only view of a source tree: a wheel (zip), a folder, or a git directory at a commit."""

    def __init__(self, path: Path, commit: str | None = None) -> None:
        self.path = path
        self.commit = commit
        self._zip = zipfile.ZipFile(path) if path.is_file() else None
        self._git = (path / "HEAD").is_file() and (path / "objects").is_dir()
        if self._git and self.commit is None:
            self.commit = self._run("rev-parse", "HEAD").strip()

    def _run(self, *args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(self.path), *args], check=True, capture_output=True, text=True
        ).stdout

    def names(self) -> list[str]:
        if self._zip is not None:
            return self._zip.namelist()
        if self._git:
            return self._run("ls-tree", "-r", "--name-only", self.commit or "HEAD").splitlines()
        return [str(p.relative_to(self.path)) for p in self.path.rglob("*.py")]

    def read(self, name: str) -> str:
        if self._zip is not None:
            return self._zip.read(name).decode()
        if self._git:
            return self._run("show", f"{self.commit}:{name}")
        return (self.path / name).read_text()

    def glob(self, pattern: str) -> Iterator[str]:
        rx = re.compile(pattern)
        yield from sorted(n for n in self.names() if rx.fullmatch(n))


# --------------------------------------------------------------------------- writing


def write(path: Path, data: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["transformers", *engine_names()])
    ap.add_argument("source", type=Path, help="wheel, folder or git directory")
    ap.add_argument("--commit", default=None, help="git commit (a git directory's source)")
    args = ap.parse_args(argv)
    if args.what == "transformers":
        print(
            "transformers' config classes are read from the classes themselves: in a venv with "
            "the pinned release, run scripts/extract_transformers_fields.py",
            file=sys.stderr,
        )
        return 2
    tree = Tree(args.source, args.commit)
    # scripts/engine_data_<engine>.py: extract(source, tree) -> the engine's data
    data = importlib.import_module(f"engine_data_{args.what}").extract(args.source, tree)
    pins.check_version(args.what, str(data.get("version") or data.get("commit")))
    path = write(pins.data_path(args.what), data)
    print(f"wrote {path.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
