"""Benchmark `recipecli convert` against `cp` + `fsync` of the same bytes (issue #30, item 5).

Builds (once, cached under --work) a Llama-3.1-8B-shaped EAGLE3 draft in float16 with REAL random
values (geometry of the public meta-llama/Llama-3.1-8B config.json: H 4096, nh 32, nkv 8,
I 14336; Vd 32000 as in yuhuili/EAGLE3-LLaMA3.1-Instruct-8B): 0.85 GB in one shard, the largest
tensor the 262 MB ``lm_head``. ``--embed`` adds its own ``embed_tokens`` [128256, 4096]
(1.9 GB in two shards, largest tensor 1.05 GB).

The page cache is equalised, not dropped (that needs root): every source file is read once
before the first run, so both contenders read the source from memory. Then ``--repeat`` rounds
(default 5), each with ``os.sync()`` before every contender so neither inherits the other's
dirty pages:

* copy: the ``cp`` command copying every source file into a fresh folder, then ``fsync`` of
  every copied file and of the folder (what convert's durability costs at the least), timed
  from the start of ``cp`` to the last ``fsync``;
* convert: ``python -m recipecli convert SRC OUT --to speculators --target T --json`` in a
  child process, timed end to end (interpreter start, write, fsync, the byte-for-byte
  comparison with the source, the reopened output's checks, ``check`` against the target,
  the rename), its peak RSS from ``wait4``.

The child runs with its bytecode cached, as an installed package's is: ``PYTHONPYCACHEPREFIX``
under --work (nothing is written into the tree) and ``PYTHONDONTWRITEBYTECODE`` unset, after
one untimed convert that fills the cache. ``--as-env`` keeps this environment's setting
instead (with ``PYTHONDONTWRITEBYTECODE=1`` every run compiles the ~140 modules it imports
from source, about 0.1 s that no installed copy pays).

Targets (exit status 1 when one is missed, 0 when all are met):

* speed: median convert time <= 1.25 x median copy time (convert at >= 0.8 x the speed of
  ``cp`` + ``fsync``);
* memory: peak RSS of every convert < 2 x largest tensor + 300 MB.

Usage: python benchmarks/bench_convert.py [--work DIR] [--repeat N] [--embed] [--as-env] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
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

#: convert time / copy time at most this (convert at >= 0.8 x the speed of cp + fsync)
SPEED_TARGET = 1.25

TARGET_CONFIG = {
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


def build_source(root: Path, *, with_embed: bool) -> Path:
    """Write the draft once: sparse layout by the builder, then every tensor filled with N(0,1)
    float16 values chunk by chunk (never the whole checkpoint in memory)."""
    if (root / "config.json").is_file():
        return root
    cfg = json.loads((FIXTURE / "config.json").read_text())
    d2t, t2d = valid_vocab_map(cfg["vocab_size"], cfg["draft_vocab_size"], seed=0)
    specs = draft_specs(cfg, d2t=d2t, t2d=t2d, with_embed=with_embed)
    tmp = root.with_name(root.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    write_checkpoint(tmp, cfg, specs, num_shards=2 if with_embed else 1)
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


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def time_copy(src: Path, dst: Path) -> float:
    """Seconds for ``cp`` of every file of ``src`` into a new ``dst``, then fsync of each copy
    and of ``dst``."""
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    files = _files(src)
    os.sync()
    t0 = time.perf_counter()
    subprocess.run(["cp", *map(str, files), str(dst)], check=True)
    for f in files:
        _fsync(dst / f.name)
    _fsync(dst)
    dt = time.perf_counter() - t0
    shutil.rmtree(dst)
    return dt


def child_env(work: Path, as_env: bool) -> dict[str, str]:
    """The convert child's environment: this one, with bytecode cached under ``work`` unless
    ``as_env``."""
    env = dict(os.environ)
    if not as_env:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    return env


def time_convert(
    src: Path, out: Path, target: Path, env: dict[str, str]
) -> tuple[float, int, dict[str, object]]:
    """(seconds, peak RSS bytes of the child, its JSON result) of one CLI convert."""
    shutil.rmtree(out, ignore_errors=True)
    args = [sys.executable, "-m", "recipecli", "convert", str(src), str(out)]
    args += ["--to", "speculators", "--target", str(target), "--norm-before-residual", "false"]
    args += ["--json"]
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        os.sync()
        t0 = time.perf_counter()
        proc = subprocess.Popen(args, stdout=stdout, stderr=stderr, env=env)
        _pid, status, usage = os.wait4(proc.pid, 0)
        dt = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        stderr.seek(0)
        if proc.returncode != 0:
            raise SystemExit(f"convert failed ({proc.returncode}): {stderr.read()[-2000:]}")
        doc = json.loads(stdout.read())
    shutil.rmtree(out)
    return dt, usage.ru_maxrss * 1024, doc


def machine_state() -> dict[str, object]:
    """What the figures depend on: CPUs, load, memory, the file system of the work folder."""
    info: dict[str, object] = {
        "cpus": os.cpu_count(),
        "load_avg_1_5_15": [round(x, 2) for x in os.getloadavg()],
        "kernel": platform.release(),
        "python": platform.python_version(),
    }
    try:
        mem = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
        info["mem_available_GB"] = round(int(mem["MemAvailable"].split()[0]) / 1e6, 1)
    except (OSError, KeyError, ValueError):
        pass
    return info


def main() -> int:
    doc = __doc__ or ""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument(
        "--work", default=os.path.join(tempfile.gettempdir(), "recipecli-bench-convert")
    )
    ap.add_argument("--repeat", type=int, default=5, help="rounds (median taken); default 5")
    ap.add_argument("--embed", action="store_true", help="the 1.9 GB draft with embed_tokens")
    ap.add_argument(
        "--as-env", action="store_true", help="keep this environment's bytecode setting"
    )
    ap.add_argument("--keep", action="store_true", help="keep the generated source draft")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    name = "draft-llama31-8b-fp16" + ("-embed" if args.embed else "")
    src = build_source(work / name, with_embed=args.embed)
    print(f"source: {src} (built/reused in {time.perf_counter() - t0:.1f} s)", file=sys.stderr)
    target = work / "target.json"
    target.write_text(json.dumps(TARGET_CONFIG))
    total = sum(f.stat().st_size for f in _files(src))
    for f in _files(src):  # equalise the page cache: both contenders read a cached source
        with open(f, "rb") as fh:
            while fh.read(1 << 26):
                pass
    env = child_env(work, args.as_env)
    time_convert(src, work / "out", target, env)  # untimed: fills the bytecode cache
    copies: list[float] = []
    converts: list[float] = []
    rss: list[int] = []
    largest = 0
    for _ in range(args.repeat):  # interleaved, so a change of load hits both alike
        copies.append(time_copy(src, work / "copy"))
        dt, peak, res = time_convert(src, work / "out", target, env)
        converts.append(dt)
        rss.append(peak)
        largest = int(str(res["largest_tensor_bytes"]))
    copy_s, conv_s = statistics.median(copies), statistics.median(converts)
    ratio = conv_s / copy_s
    rss_limit = 2 * largest + 300e6
    rows = {
        "source_bytes": total,
        "largest_tensor_bytes": largest,
        "runs": args.repeat,
        "bytecode": "as this environment has it" if args.as_env else "cached (--work/pycache)",
        "copy_fsync_s": [round(x, 3) for x in copies],
        "convert_s": [round(x, 3) for x in converts],
        "copy_fsync_median_s": round(copy_s, 3),
        "convert_median_s": round(conv_s, 3),
        "copy_fsync_GBps": round(total / copy_s / 1e9, 3),
        "convert_GBps": round(total / conv_s / 1e9, 3),
        "convert_time_vs_copy_fsync": round(ratio, 3),
        "convert_speed_vs_copy_fsync": round(1 / ratio, 3),
        "convert_peak_rss_MB": round(max(rss) / 1e6, 1),
        "rss_limit_MB (2x largest + 300 MB)": round(rss_limit / 1e6, 1),
        f"speed_target_met (convert <= {SPEED_TARGET} x copy+fsync)": ratio <= SPEED_TARGET,
        "rss_target_met": max(rss) < rss_limit,
        "machine": machine_state(),
    }
    print(json.dumps(rows, indent=2))
    if not args.keep:
        shutil.rmtree(src)
    missed = ratio > SPEED_TARGET or max(rss) >= rss_limit
    if missed:
        print("bench_convert: target missed", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
