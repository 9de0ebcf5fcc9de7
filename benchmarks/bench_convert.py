"""Benchmark `recipecli convert` against a plain file copy of the same bytes.

Builds (once, cached) a Llama-3.1-8B-shaped EAGLE3 draft in float16 with REAL random values
(geometry of the public meta-llama/Llama-3.1-8B config.json: H 4096, nh 32, nkv 8, I 14336,
V 128256; Vd 32000 as in yuhuili/EAGLE3-LLaMA3.1-Instruct-8B), plus its own
``embed_tokens`` [128256, 4096] so that the checkpoint is ~1.9 GB in two shards and the largest
tensor is 1.05 GB. Then, with the files in the page cache:

* copy: ``shutil.copyfile`` of every source file (and the same followed by ``fsync``);
* convert: ``python -m recipecli convert SRC OUT --to speculators`` in a child process (write,
  fsync, reopen and compare every byte with the source, canonical comparison, `check` against a
  target config), timed end to end, its peak RSS from ``getrusage(RUSAGE_CHILDREN)``;
* the library with ``fsync=False`` in-process (the CLI always fsyncs), against the plain copy;
* convert with ``--dtype bf16`` (the numpy cast path) for reference.

Targets: convert throughput >= 50% of copy throughput; peak RSS < 2 x largest tensor + 300 MB.

Usage: python benchmarks/bench_convert.py [--work DIR] [--repeat N] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from recipecli.testing.builder import write_checkpoint
from recipecli.testing.specs import draft_specs, valid_vocab_map

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "configs" / "SafeAILab__EAGLE3-traineagle3-config"


def build_source(root: Path) -> Path:
    """Write the draft once: sparse layout by the builder, then every tensor filled with N(0,1)
    float16 values chunk by chunk (never the whole checkpoint in memory)."""
    if (root / "config.json").is_file():
        return root
    cfg = json.loads((FIXTURE / "config.json").read_text())
    d2t, t2d = valid_vocab_map(cfg["vocab_size"], cfg["draft_vocab_size"], seed=0)
    specs = draft_specs(cfg, d2t=d2t, t2d=t2d, with_embed=True)
    tmp = root.with_name(root.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    write_checkpoint(tmp, cfg, specs, num_shards=2)
    from recipecli.checkpoint.safetensors_header import read_file_header

    rng = np.random.default_rng(0)
    holes = {s.name for s in specs if s.value is None}
    for shard in sorted(tmp.glob("*.safetensors")):
        header = read_file_header(shard)
        with open(shard, "r+b") as fh:
            for name, t in header.tensors.items():
                if name not in holes:
                    continue
                fh.seek(header.data_start + t.begin)
                left = t.nbytes // 2
                while left:
                    n = min(left, 1 << 24)
                    fh.write(rng.standard_normal(n, dtype=np.float32).astype("<f2").tobytes())
                    left -= n
    os.rename(tmp, root)
    return root


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_file())


def time_copy(src: Path, dst: Path, *, fsync: bool) -> float:
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    os.sync()
    t0 = time.perf_counter()
    for f in _files(src):
        shutil.copyfile(f, dst / f.name)
        if fsync:
            fd = os.open(dst / f.name, os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)
    dt = time.perf_counter() - t0
    shutil.rmtree(dst)
    return dt


def time_convert(src: Path, out: Path, target: Path, *extra: str) -> tuple[float, int, dict]:
    """(seconds, peak RSS bytes of the child, JSON result)."""
    shutil.rmtree(out, ignore_errors=True)
    args = [sys.executable, "-m", "recipecli", "convert", str(src), str(out)]
    args += ["--to", "speculators", "--target", str(target), "--norm-before-residual", "false"]
    args += ["--json", *extra]
    t0 = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"convert failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    # RUSAGE_CHILDREN keeps the maximum over all waited-for children: run each measurement in
    # a fresh helper process (see main) so it is this conversion's peak alone
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    doc = json.loads(proc.stdout)
    shutil.rmtree(out)
    return dt, rss, doc


def _child_convert(src: str, out: str, target: str, extra: list[str]) -> None:
    if extra == ["--library-no-fsync"]:  # the library with fsync=False, in this process
        from recipecli.convert import ConvertOptions, convert

        t0 = time.perf_counter()
        res = convert(src, out, ConvertOptions(to="speculators", norm_before_residual=False),
                      target=target, progress=False, fsync=False)  # fmt: skip
        dt = time.perf_counter() - t0
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        doc = res.to_dict()
        shutil.rmtree(out)
        print(json.dumps({"seconds": dt, "rss": rss, "bytes": doc["bytes_written"],
                          "largest": doc["largest_tensor_bytes"], "shards": len(doc["shards"])}))  # fmt: skip
        return
    dt, rss, doc = time_convert(Path(src), Path(out), Path(target), *extra)
    print(json.dumps({"seconds": dt, "rss": rss, "bytes": doc["bytes_written"],
                      "largest": doc["largest_tensor_bytes"], "shards": len(doc["shards"])}))  # fmt: skip


def measure_convert(src: Path, out: Path, target: Path, *extra: str) -> dict:
    os.sync()  # every contender starts with no dirty pages
    code = (
        f"import sys, json; sys.path.insert(0, {str(Path(__file__).parent)!r}); import bench_convert as b; "
        f"b._child_convert({str(src)!r}, {str(out)!r}, {str(target)!r}, {list(extra)!r})"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--work", default=os.path.join(tempfile.gettempdir(), "recipecli-bench-convert")
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", action="store_true", help="keep the generated source draft")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    src = build_source(work / "draft-llama31-8b-fp16")
    print(f"source: {src} (built/reused in {time.perf_counter() - t0:.1f} s)", file=sys.stderr)
    target = work / "target.json"
    target.write_text(
        json.dumps(
            {
                # the repo id, as save_pretrained records it: the speculators verifier
                "_name_or_path": "meta-llama/Llama-3.1-8B-Instruct",
                "architectures": ["LlamaForCausalLM"],
                "model_type": "llama",
                "hidden_size": 4096,
                "intermediate_size": 14336,
                "num_attention_heads": 32,
                "num_key_value_heads": 8,
                "num_hidden_layers": 32,
                "vocab_size": 128256,
                "max_position_embeddings": 131072,
                "torch_dtype": "bfloat16",
            }
        )
    )
    total = sum(f.stat().st_size for f in _files(src))
    for f in _files(src):  # warm the page cache for every contender alike
        with open(f, "rb") as fh:
            while fh.read(1 << 26):
                pass
    copy = min(time_copy(src, work / "copy", fsync=False) for _ in range(args.repeat))
    copy_sync = min(time_copy(src, work / "copy", fsync=True) for _ in range(args.repeat))
    runs = [measure_convert(src, work / "out", target) for _ in range(args.repeat)]
    conv = min(runs, key=lambda r: r["seconds"])
    nosync = min(
        (
            measure_convert(src, work / "out", target, "--library-no-fsync")
            for _ in range(args.repeat)
        ),
        key=lambda r: r["seconds"],
    )
    cast = measure_convert(src, work / "out", target, "--dtype", "bf16")
    largest = conv["largest"]
    rss_limit = 2 * largest + 300e6
    rows = {
        "source_bytes": total,
        "largest_tensor_bytes": largest,
        "copy_s": round(copy, 3),
        "copy_GBps": round(total / copy / 1e9, 3),
        "copy_fsync_s": round(copy_sync, 3),
        "copy_fsync_GBps": round(total / copy_sync / 1e9, 3),
        "convert_s": round(conv["seconds"], 3),
        "convert_GBps": round(conv["bytes"] / conv["seconds"] / 1e9, 3),
        "convert_vs_copy": round(copy / conv["seconds"], 3),
        "convert_vs_copy_fsync": round(copy_sync / conv["seconds"], 3),
        "convert_peak_rss_MB": round(max(r["rss"] for r in runs) / 1e6, 1),
        "library_no_fsync_s (in-process, no interpreter start)": round(nosync["seconds"], 3),
        "library_no_fsync_vs_copy": round(copy / nosync["seconds"], 3),
        "rss_limit_MB (2x largest + 300 MB)": round(rss_limit / 1e6, 1),
        "convert_bf16_s": round(cast["seconds"], 3),
        "convert_bf16_GBps_out": round(cast["bytes"] / cast["seconds"] / 1e9, 3),
        "convert_bf16_peak_rss_MB": round(cast["rss"] / 1e6, 1),
        "throughput_target_met (>= 0.5 x copy)": copy / conv["seconds"] >= 0.5,
        "rss_target_met": max(r["rss"] for r in runs) < rss_limit,
    }
    print(json.dumps(rows, indent=2))
    if not args.keep:
        shutil.rmtree(src)


if __name__ == "__main__":
    main()
