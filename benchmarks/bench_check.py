"""Benchmark `recipecli check --kernel skip` on a DeepSeek-V3-size 163-shard target + its draft.

Reuses bench_inspect's cached full-size sparse DeepSeek-V3 checkpoint (~690 GB apparent) and builds
the SpecForge DeepSeek-V3 EAGLE3 draft (full size, sparse, valid vocab map). Prints the wall time of
`recipecli check T D --kernel skip --json` (subprocess, best of N) and whether torch was imported.
Target: under 2 s on this 2-core machine, no torch import. Exit 1 when missed.

    python benchmarks/bench_check.py [--workdir DIR] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_inspect  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "configs"
TARGET_S = 2.0


def build_draft(workdir: Path) -> Path:
    from recipecli.testing.builder import write_checkpoint
    from recipecli.testing.specs import draft_specs, valid_vocab_map

    root = workdir / "deepseek-v3-eagle3-draft"
    if (root / "model.safetensors").is_file():
        return root
    cfg = json.loads(
        (
            FIXTURES / "sgl-project-SpecForge-template__deepseek-v3-671b-eagle3" / "config.json"
        ).read_text()
    )
    d2t, t2d = valid_vocab_map(129280, 32000, seed=0)
    write_checkpoint(root, cfg, draft_specs(cfg, d2t=d2t, t2d=t2d))
    return root


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", default=str(Path(tempfile.gettempdir()) / "recipecli-bench"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    target = bench_inspect.build(work, 163, False)
    draft = build_draft(work)
    code = (
        "import sys\nfrom recipecli.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n    rc = e.code\n"
        "sys.stderr.write('TORCH=%s RC=%s\\n' % ('torch' in sys.modules, rc))\n"
    )
    cmd = [
        sys.executable,
        "-c",
        code,
        "check",
        str(target),
        str(draft),
        "--kernel",
        "skip",
        "--json",
    ]
    times, last = [], None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        last = subprocess.run(cmd, capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
    assert last is not None
    doc = json.loads(last.stdout)
    torch_loaded = "TORCH=True" in last.stderr
    best = min(times)
    n_tensors = sum(1 for _ in target.glob("*.safetensors"))
    print(f"target: {target} ({n_tensors} shards); draft: {draft}")
    print(
        f"check --kernel skip: best {best:.3f} s of {args.repeat} (all: {', '.join(f'{t:.3f}' for t in times)})"
        f" target < {TARGET_S} s -> {'OK' if best < TARGET_S else 'MISSED'}"
    )
    print(f"torch imported: {torch_loaded} (target: False)")
    print(f"verdict ok={doc['ok']}, findings: {len(doc['findings'])}")
    return 0 if best < TARGET_S and not torch_loaded else 1


if __name__ == "__main__":
    raise SystemExit(main())
