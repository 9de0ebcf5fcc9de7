"""Build the bundled example snapshots in recipecli/data/examples/ from the fixture configs.

    python scripts/build_examples.py [--fixtures tests/fixtures/configs]

Target: meta-llama/Llama-3.1-8B-Instruct, from the Meta-Llama-3.1-8B fixture config (the Instruct
config differs only in eos_token_id, set here to the Instruct value). Draft:
yuhuili/EAGLE3-LLaMA3.1-Instruct-8B, from SafeAILab's EAGLE3 trainer config (format A), with a
valid reduced-vocabulary map (Vd = 32000 of V = 128256, seed 0). Both are full-size sparse
checkpoints turned into snapshots exactly as `recipecli inspect --save-metadata` does.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from recipecli.checkpoint import open_checkpoint
from recipecli.checkpoint.snapshot import dumps_snapshot, snapshot_dict
from recipecli.testing.builder import write_checkpoint
from recipecli.testing.specs import draft_specs, target_specs, valid_vocab_map

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "recipecli" / "data" / "examples"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixtures", default=str(ROOT / "tests" / "fixtures" / "configs"))
    args = ap.parse_args()
    fx = Path(args.fixtures)
    target_cfg = json.loads((fx / "meta-llama__Meta-Llama-3.1-8B" / "config.json").read_text())
    target_cfg["eos_token_id"] = [128001, 128008, 128009]
    draft_cfg = json.loads(
        (fx / "SafeAILab__EAGLE3-traineagle3-config" / "config.json").read_text()
    )
    d2t, t2d = valid_vocab_map(128256, 32000, seed=0)
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, cfg, specs, source, note in (
            (
                "llama3.1-8b-instruct.target.json",
                target_cfg,
                target_specs(target_cfg),
                "meta-llama/Llama-3.1-8B-Instruct",
                "built by scripts/build_examples.py from the public Meta-Llama-3.1-8B config.json "
                "(eos_token_id set to the Instruct value); weights are not included",
            ),
            (
                "eagle3-llama3.1-instruct-8b.draft.json",
                draft_cfg,
                draft_specs(draft_cfg, naming="midlayer", d2t=d2t, t2d=t2d),
                "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
                "built by scripts/build_examples.py from SafeAILab's EAGLE3 trainer config.json with a "
                "synthetic valid d2t/t2d map (Vd 32000); weights are not included",
            ),
        ):
            d = Path(tmp) / name
            write_checkpoint(d, cfg, specs)
            snap = snapshot_dict(open_checkpoint(str(d)))
            snap["source"] = source
            snap["note"] = note
            (OUT / name).write_text(dumps_snapshot(snap))
            print(f"wrote {OUT / name} ({(OUT / name).stat().st_size} bytes)")


if __name__ == "__main__":
    main()
