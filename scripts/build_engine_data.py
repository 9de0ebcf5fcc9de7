"""Extract the engine data recipecli's engine models read, from the engines' own sources.

Nothing here is imported at run time: ``recipecli check`` reads the JSON this writes into each
engine folder's ``data/`` (``recipecli/engines/<engine>/data/``, the file named from the engine's
pin) and ``recipecli/data/transformers/``, and never imports torch, transformers or an engine.
Every extractor
parses source files with :mod:`ast` (no import of the package, no GPU).

Usage (versions are the pins, ``recipecli/engines/<engine>/pin.py``; a source of another version
is refused with one line)::

    # transformers config-class defaults (the values an engine gets for a key a config lacks),
    # at the release an engine's pin names (Pin.transformers)
    pip download transformers==<version> --no-deps -d /tmp/dl
    python scripts/build_engine_data.py transformers /tmp/dl/transformers-<version>-py3-none-any.whl

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
import ast
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

#: Config fields an engine model may need a default for (draft and target geometry).
CONFIG_FIELDS = (
    "vocab_size",
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "max_position_embeddings",
    "rms_norm_eps",
    "tie_word_embeddings",
    "attention_bias",
    "mlp_bias",
    "hidden_act",
)


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


def _constant(node: ast.AST | None) -> object:
    """A literal default (int, float, bool, str, None), else a marker that it is not literal."""
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except ValueError:
        return _NOT_LITERAL


_NOT_LITERAL = object()


# --------------------------------------------------------------------------- transformers


def transformers_defaults(tree: Tree) -> dict[str, object]:
    """``model_type`` -> {field: default} for every transformers config class.

    transformers 5 declares config fields as annotated class attributes (``hidden_size: int =
    4096``) and fills ``head_dim`` / ``num_key_value_heads`` in ``__post_init__`` when they are
    None (``configuration_llama.py`` ``LlamaConfig.__post_init__``); both derivations are recorded
    as ``derived``.
    """
    version = None
    models: dict[str, dict[str, object]] = {}
    for name in tree.names():
        if name.endswith("dist-info/METADATA"):
            m = re.search(r"^Version: (\S+)", tree.read(name), re.M)
            version = m.group(1) if m else None
    for name in tree.glob(r"transformers/models/[^/]+/configuration_[^/]+\.py"):
        mod = ast.parse(tree.read(name))
        for cls in (n for n in mod.body if isinstance(n, ast.ClassDef)):
            model_type = None
            fields: dict[str, object] = {}
            derived: dict[str, str] = {}
            not_null: list[str] = []
            strict = any("strict" in ast.unparse(dec) for dec in cls.decorator_list)
            for stmt in cls.body:
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                    tgt = stmt.targets[0]
                    if isinstance(tgt, ast.Name) and tgt.id == "model_type":
                        model_type = _constant(stmt.value)
                elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    key = stmt.target.id
                    if key in CONFIG_FIELDS:
                        value = _constant(stmt.value)
                        if value is not _NOT_LITERAL:
                            fields[key] = value
                        if "None" not in ast.unparse(stmt.annotation):
                            not_null.append(key)
                elif isinstance(stmt, ast.FunctionDef) and stmt.name == "validate_architecture":
                    if "self.hidden_size % self.num_attention_heads" in ast.unparse(stmt):
                        derived["hidden_size % num_attention_heads"] = "must be 0 (ValueError)"
                elif isinstance(stmt, ast.FunctionDef) and stmt.name == "__post_init__":
                    src = ast.unparse(stmt)
                    if re.search(
                        r"self\.head_dim = self\.hidden_size // self\.num_attention_heads", src
                    ):
                        derived["head_dim"] = "hidden_size // num_attention_heads"
                    if re.search(r"self\.num_key_value_heads = self\.num_attention_heads", src):
                        derived["num_key_value_heads"] = "num_attention_heads"
            if isinstance(model_type, str) and fields:
                models[model_type] = {"class": cls.name, "defaults": fields, "derived": derived}
                if strict and not_null:
                    # @strict (huggingface_hub.dataclasses) refuses None for a non-Optional field
                    models[model_type]["not_null"] = sorted(not_null)
    return {"package": "transformers", "version": version, "models": dict(sorted(models.items()))}


# --------------------------------------------------------------------------- writing


def write(path: Path, data: dict[str, object], *, compact: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if compact:  # one line per model: small, and a diff still shows which model changed
        body = ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in data["models"].items())
        head = {k: v for k, v in data.items() if k != "models"}
        text = json.dumps(head)[:-1] + ', "models": {\n' + body + "\n}}\n"
        json.loads(text)
        path.write_text(text)
        return path
    path.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["transformers", *engine_names()])
    ap.add_argument("source", type=Path, help="wheel, folder or git directory")
    ap.add_argument("--commit", default=None, help="git commit (a git directory's source)")
    args = ap.parse_args(argv)
    tree = Tree(args.source, args.commit)
    if args.what == "transformers":
        data = transformers_defaults(tree)
        name = f"transformers-{data['version']}-defaults.json"
        path = write(pins.TRANSFORMERS_DIR / name, data, compact=True)
    else:
        # scripts/engine_data_<engine>.py: extract(source, tree) -> the engine's data
        data = importlib.import_module(f"engine_data_{args.what}").extract(args.source, tree)
        pins.check_version(args.what, str(data.get("version") or data.get("commit")))
        path = write(pins.data_path(args.what), data)
    print(f"wrote {path.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
