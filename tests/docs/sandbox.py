"""The folder the docs commands run in: the files the pages name, made from the repo's own
fixtures, so every command runs offline (``HF_HUB_OFFLINE=1``, an empty ``HF_HOME``).

- ``tests`` links to the repository's tests/ (pages name ``tests/fixtures/...``);
  ``docs/recipes`` and ``docs/examples`` are copies (``docs --check`` compares the first,
  ``report`` reads and writes the second), so no command writes into the repository;
- ``Llama-3.1-8B-Instruct/``, ``EAGLE3-LLaMA3.1-Instruct-8B/`` and ``my-draft/``: checkpoint
  directories made from the bundled example snapshots (recipecli/data/examples): their
  config.json, and a sparse ``model.safetensors`` whose header is the snapshot's tensor table
  and whose small tensors (norms, d2t, t2d) hold the snapshot's values; the other bytes are
  holes (zeros), so the 16 GB target costs no disk;
- ``my-recipe.yaml`` (the bundled minimax-m3-eagle3 recipe, its ``results/`` beside it) and
  ``recipes/`` (a copy of recipecli/data/recipes);
- the ``report`` inputs the pages name (``BASELINE.json``, ``base.json``, ``base-1.json``...):
  copies of vLLM PR #47391's files in docs/examples/report.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import struct
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "recipecli" / "data" / "examples"
REPORT = REPO / "docs" / "examples" / "report"
TARGET_SNAPSHOT = EXAMPLES / "llama3.1-8b-instruct.target.json"
DRAFT_SNAPSHOT = EXAMPLES / "eagle3-llama3.1-instruct-8b.draft.json"


def checkpoint_from_snapshot(snapshot: Path, out: Path) -> Path:
    """A checkpoint directory at ``out`` with ``snapshot``'s config and tensor table (one
    sparse safetensors file; the snapshot's small-tensor values written at their offsets)."""
    data = json.loads(snapshot.read_text(encoding="utf-8"))
    out.mkdir(parents=True)
    (out / "config.json").write_text(json.dumps(data["config"], indent=1), encoding="utf-8")
    header: dict[str, object] = {}
    offset = 0
    starts: dict[str, int] = {}
    for name, info in data["tensors"].items():
        nbytes = int(info["bytes"])
        header[name] = {
            "dtype": info["dtype"],
            "shape": info["shape"],
            "data_offsets": [offset, offset + nbytes],
        }
        starts[name] = offset
        offset += nbytes
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    path = out / "model.safetensors"
    with path.open("wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw)
        base = f.tell()
        for name, value in (data.get("values") or {}).items():
            f.seek(base + starts[name])
            f.write(base64.b64decode(value))
        f.truncate(base + offset)
    return out


def _report_files(root: Path) -> None:
    names = {
        "baseline.json": ("BASELINE.json", "base.json", "base-1.json", "base-2.json"),
        "candidate.json": ("CANDIDATE.json", "cand.json", "cand-1.json", "cand-2.json"),
        "candidate_lm_eval_gsm8k.json": ("base_gsm8k.json", "cand_gsm8k.json"),
    }
    for source, copies in names.items():
        for name in copies:
            shutil.copyfile(REPORT / source, root / name)


def build_sandbox(root: Path) -> Path:
    """Fill ``root`` (an empty folder) with the files the docs commands read; returns it."""
    root.mkdir(parents=True, exist_ok=True)
    os.symlink(REPO / "tests", root / "tests")
    shutil.copytree(REPO / "docs" / "recipes", root / "docs" / "recipes")
    shutil.copytree(REPORT, root / "docs" / "examples" / "report")
    checkpoint_from_snapshot(TARGET_SNAPSHOT, root / "Llama-3.1-8B-Instruct")
    checkpoint_from_snapshot(DRAFT_SNAPSHOT, root / "EAGLE3-LLaMA3.1-Instruct-8B")
    checkpoint_from_snapshot(DRAFT_SNAPSHOT, root / "my-draft")
    recipes = REPO / "recipecli" / "data" / "recipes"
    shutil.copyfile(recipes / "minimax-m3-eagle3.yaml", root / "my-recipe.yaml")
    shutil.copytree(recipes, root / "recipes")  # with results/, which the recipes link
    shutil.copytree(recipes / "results", root / "results")  # beside my-recipe.yaml
    _report_files(root)
    (root / "hf").mkdir()
    return root
