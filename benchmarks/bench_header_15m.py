"""Benchmark: a safetensors header of 1.5 million tensors (the most the 100 MB header cap allows).

Builds once (cached in ``--workdir``) a checkpoint whose single ``model.safetensors`` has a
~98 MB header in the safetensors library's compact layout: 1,500,000 tensors with short names
(base-36 counters) cycling through four (dtype, shape) kinds, data in file order, plus a
``config.json``. Then, each in a fresh child process so that peak memory is the child's own:

* ``parse``: :func:`recipecli.checkpoint.safetensors_header.read_file_columns` on that file
  (header read + validation, the tensor table as columns);
* ``open``: :func:`recipecli.checkpoint.open_checkpoint` (the Checkpoint with its
  1.5 million TensorInfo entries);
* ``inspect``: ``recipecli inspect DIR`` (interpreter start, imports, summary, output).

For each: best wall time of ``--repeat`` runs, the child's user+sys CPU seconds and its peak
RSS (``ru_maxrss``), plus the load average, since the machine is shared.

Targets: ``parse`` <= 3 s wall and <= 600 MB peak RSS on 2 cores. Exit status 1 when missed.
Headers larger than the cap are refused at once with one line (``... over the 104857600-byte
cap``); headers not in the compact layout are parsed by ``json.loads`` only up to 16 MiB
(``MAX_LOOSE_HEADER_BYTES``), about 230k tensors, and refused with one line above that.

Usage::

    python benchmarks/bench_header_15m.py [--workdir DIR] [--tensors 1500000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PARSE_TARGET_S = 3.0
PARSE_TARGET_MB = 600.0

KINDS = (("BF16", (1,), 2), ("F32", (1,), 4), ("BF16", (2, 1), 4), ("U8", (3,), 3))
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _base36(i: int) -> str:
    out = ""
    while True:
        i, r = divmod(i, 36)
        out = _DIGITS[r] + out
        if not i:
            return out


def build(root: Path, count: int) -> Path:
    """Write the checkpoint (once); returns its directory."""
    marker = root / f".built-{count}"
    if marker.exists():
        return root
    root.mkdir(parents=True, exist_ok=True)
    parts = ['"__metadata__":{"format":"pt"}']
    offset = 0
    for i in range(count):
        dtype, shape, nbytes = KINDS[i % len(KINDS)]
        dims = ",".join(map(str, shape))
        parts.append(
            f'"{_base36(i)}":{{"dtype":"{dtype}","shape":[{dims}],'
            f'"data_offsets":[{offset},{offset + nbytes}]}}'
        )
        offset += nbytes
    header = ("{" + ",".join(parts) + "}").encode()
    header += b" " * (-len(header) % 8)
    with open(root / "model.safetensors", "wb") as fh:
        fh.write(len(header).to_bytes(8, "little"))
        fh.write(header)
        fh.truncate(8 + len(header) + offset)
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 64,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "vocab_size": 256,
    }
    (root / "config.json").write_text(json.dumps(config))
    marker.write_text(str(len(header)))
    return root


# Each child reports its own peak RSS (ru_maxrss, KB on Linux) on stderr at exit.
_CHILD = """
import atexit, resource, sys
atexit.register(lambda: sys.stderr.write(
    "\\nMAXRSS %d\\n" % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
case, root, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
if case == "parse":
    from recipecli.checkpoint.safetensors_header import read_file_columns
    cols, _ = read_file_columns(root + "/model.safetensors")
    assert len(cols.names) == count, len(cols.names)
elif case == "open":
    from recipecli.checkpoint import open_checkpoint
    assert len(open_checkpoint(root).tensors) == count
else:
    from recipecli.cli import main
    main(["inspect", root])
"""


def measure(case: str, root: Path, count: int) -> tuple[float, float, float]:
    """(wall s, user+sys CPU s, peak RSS MB) of one child process running ``case``."""
    cmd = [sys.executable, "-c", _CHILD, case, str(root), str(count)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0 or "MAXRSS" not in proc.stderr:
        sys.exit(f"benchmark child {case!r} failed:\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rss_kb = int(proc.stderr.rsplit("MAXRSS", 1)[1].split()[0])
    return wall, cpu, rss_kb / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "bench15m")
    parser.add_argument("--tensors", type=int, default=1_500_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    root = build(args.workdir / f"ck-{args.tensors}", args.tensors)
    header_bytes = int((root / f".built-{args.tensors}").read_text())
    print(f"checkpoint: {root} ({args.tensors} tensors, header {header_bytes / 1e6:.1f} MB)")
    print(f"cpus: {os.cpu_count()}  load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    results = {}
    for name in ("parse", "open", "inspect"):
        runs = [measure(name, root, args.tensors) for _ in range(args.repeat)]
        wall = min(r[0] for r in runs)
        cpu = min(r[1] for r in runs)
        rss = max(r[2] for r in runs)
        results[name] = (wall, cpu, rss)
        print(
            f"{name:8s} wall {wall:6.2f} s (best of {args.repeat})  cpu {cpu:6.2f} s (best)  "
            f"peak RSS {rss:7.1f} MB (worst)"
        )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    wall, _, rss = results["parse"]
    ok = wall <= PARSE_TARGET_S and rss <= PARSE_TARGET_MB
    print(
        f"target parse <= {PARSE_TARGET_S:g} s and <= {PARSE_TARGET_MB:g} MB: "
        + ("met" if ok else "MISSED")
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
