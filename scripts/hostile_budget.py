"""Peak memory and wall time of recipecli on the hostile inputs of tests/hostile (issue #29).

Builds the suite's scratch folder (a tiny format-A draft, a target config, a copy of a bundled
recipe, two vLLM bench files) plus the hostile inputs of each class, runs every case's command
as a subprocess (``python -m recipecli ...``, or ``python -c`` for the hooked ones) and reads
its peak RSS from ``os.wait4`` (the child's own ``ru_maxrss``, KiB on Linux) and its wall
time. Prints one row per case and exits 1 when any case exceeds 1 GiB or 10 s (or exits with
an unexpected code: a case that no longer fails as it should is not measuring the right thing).

    python scripts/hostile_budget.py [--only SUBSTRING]
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

MAX_RSS_KIB = 1 << 20  # 1 GiB
MAX_SECONDS = 10.0
BIG = 10_000_000  # a 10 MB architecture


@dataclass(frozen=True)
class Case:
    group: str
    name: str
    args: tuple[str, ...]  # recipecli's arguments, or ("-c", CODE) for a hooked run
    codes: tuple[int, ...]  # the exit codes the case expects
    stdout: str = "pipe"  # "pipe", "full" (/dev/full) or "closed" (EPIPE)
    limit_kb: int | None = None  # ulimit -f
    prep: Callable[[Path], None] | None = None
    left: str | None = None  # a name fragment nothing in the folder may hold afterwards


def scratch(root: Path) -> None:
    """The hostile suite's scratch folder (tests/hostile/conftest.py) and the extra inputs."""
    from helpers.convert import tiny, write_draft, write_target  # type: ignore[import-not-found]
    from helpers.fixtures import load_fixture_config  # type: ignore[import-not-found]
    from helpers.report import PR_CANDIDATE, bench_json  # type: ignore[import-not-found]

    from recipecli.testing.specs import valid_vocab_map

    cfg = tiny(load_fixture_config("SafeAILab__EAGLE3-traineagle3-config"))
    d2t, t2d = valid_vocab_map(1000, 100, seed=7)
    write_draft(root / "draft", cfg, d2t=d2t, t2d=t2d)
    write_target(root / "target")
    recipe = (ROOT / "recipecli/data/recipes/llama3.1-8b-eagle3.yaml").read_text()
    recipe = recipe.replace("name: llama3.1-8b-eagle3", "name: my")
    (root / "my.yaml").write_text(recipe)
    (root / "base.json").write_text(json.dumps(bench_json()))
    (root / "cand.json").write_text(json.dumps(bench_json(PR_CANDIDATE)))
    target = json.loads((root / "target/config.json").read_text())
    (root / "target_big").mkdir()
    (root / "target_big/config.json").write_text(
        json.dumps({**target, "architectures": ["B" * BIG]})
    )
    (root / "t_bidi").mkdir()
    (root / "t_bidi/config.json").write_text(
        json.dumps({**target, "architectures": ["Llama\u202eForCausalLM"]})
    )
    host = "      host: 0.0.0.0\n"
    value = "      served-model-name: " + "z" * 100_000 + "\u202e\n"
    (root / "long.yaml").write_text(recipe.replace(host, host + value))
    flags = "".join(f"      zq{i}x: 1\n" for i in range(15_000))
    (root / "many.yaml").write_text(recipe.replace(host, host + "  vllm:\n    args:\n" + flags))
    bidi = recipe.replace(
        "draft: yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "draft: yuhuili/EAGLE3-\u202eLLaMA3.1-8B"
    )
    (root / "bidi.yaml").write_text(bidi.replace(host, host + "      bogus-fl\u2066ag: 1\n"))
    os.symlink("loop2", root / "loop1")
    os.symlink("loop1", root / "loop2")
    os.mkfifo(root / "fifo.yaml")
    cand = bench_json(PR_CANDIDATE)
    cand["spec_decode_acceptance_rate"] = 250.0
    (root / "rate.json").write_text(json.dumps(cand))


def _fresh(*names: str) -> Callable[[Path], None]:
    """Remove ``names`` (outputs of earlier cases) before a case."""

    def prep(root: Path) -> None:
        for name in names:
            path = root / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif os.path.lexists(path):  # a file, a link, a FIFO
                path.unlink()

    return prep


def _link_page(target: str) -> Callable[[Path], None]:
    def prep(root: Path) -> None:
        _fresh("site", "victim.md")(root)
        (root / "site/sub").mkdir(parents=True)
        (root / "victim.md").write_text("mine\n")
        os.symlink(target.format(abs=root), root / "site/my.md")

    return prep


def _fifo(name: str) -> Callable[[Path], None]:
    def prep(root: Path) -> None:
        _fresh(name, "site")(root)
        (root / "site").mkdir()
        os.mkfifo(root / name)

    return prep


def _stale_staging(root: Path) -> None:
    _fresh("out")(root)
    stale = root / ".out.tmp-killed1"
    stale.mkdir()
    (stale / ".recipecli-convert-staging").write_text('{"recipecli_convert_staging": 1}\n')
    (stale / "model.safetensors").write_bytes(b"\0" * 131_152)


def _stale_temp(name: str) -> Callable[[Path], None]:
    def prep(root: Path) -> None:
        folder = root / name
        folder.parent.mkdir(exist_ok=True)
        (folder.parent / f".{folder.name}.recipecli-killed1.tmp").write_bytes(b"half")

    return prep


def _both(*preps: Callable[[Path], None]) -> Callable[[Path], None]:
    def prep(root: Path) -> None:
        for one in preps:
            one(root)

    return prep


def _stale_backup(root: Path) -> None:
    old = root / ".out.old-killed1"
    (old / "old").mkdir(parents=True)
    (old / ".recipecli-convert-backup").write_text(
        json.dumps({"recipecli_convert_backup": 1, "staging": ".out.tmp-killed2"}) + "\n"
    )


_HOOK_SIGINT = (
    "import importlib, os, signal, sys\n"
    "real = importlib.import_module\n"
    "def hook(name, *a):\n"
    "    if name.startswith('recipecli.cli.commands.'): os.kill(os.getpid(), signal.SIGINT)\n"
    "    return real(name, *a)\n"
    "importlib.import_module = hook\n"
    "sys.argv = ['recipecli', {command!r}, '--help']\n"
    "from recipecli.__main__ import main\n"
    "main()\n"
)

DOCS = ("docs", "my.yaml", "-o", "site", "--checkpoints", "none")
REPORT = ("report", "base.json", "cand.json", "--gpus", "4")
CONVERT = ("convert", "draft", "out", "--to", "eagle3")
KERNEL = ("verify-kernel", "--device", "cpu")


def cases() -> list[Case]:
    """Every class of issue #29, each with the commands of its tests/hostile cases."""
    w, s, t, left, d, m, c = (
        "writes",
        "sizes",
        "tracebacks",
        "leftovers",
        "spoofing",
        "messages",
        "ctrl-c",
    )
    return [
        Case(w, "docs: page linked to ../victim.md", DOCS, (2,), prep=_link_page("../victim.md")),
        Case(w, "docs: page linked by absolute path", DOCS, (2,), prep=_link_page("{abs}/v.md")),
        Case(w, "docs: page linked via sub/../..", DOCS, (2,), prep=_link_page("sub/../../v.md")),
        Case(w, "report -o FIFO", (*REPORT, "-o", "ab.md"), (2,), prep=_fifo("ab.md")),
        Case(
            w,
            "inspect --save-metadata FIFO",
            ("inspect", "draft", "--save-metadata", "s.json"),
            (2,),
            prep=_fifo("s.json"),
        ),
        Case(s, "verify-kernel --widths 1e9", (*KERNEL, "--widths", "1000000000,4096"), (2,)),
        Case(
            s,
            "verify-kernel --tokens 1e9",
            (*KERNEL, "--widths", "64,64", "--tokens", "1000000000"),
            (2,),
        ),
        Case(
            s,
            "verify-kernel 4096 x 32768",
            (*KERNEL, "--widths", "16384,16384", "--tokens", "4096"),
            (2,),
        ),
        Case(s, "inspect: 10 MB architecture", ("inspect", "target_big"), (0,)),
        Case(s, "inspect --json: 10 MB architecture", ("inspect", "target_big", "--json"), (0,)),
        Case(
            s,
            "check: 10 MB architecture",
            ("check", "target_big", "draft", "--kernel", "skip"),
            (1,),
        ),
        Case(
            s,
            "check --json: 10 MB architecture",
            ("check", "target_big", "draft", "--kernel", "skip", "--json"),
            (1,),
        ),
        Case(s, "lint: 100,000-character value", ("lint", "long.yaml"), (0, 1)),
        Case(s, "lint: 15,000 unknown flags", ("lint", "many.yaml"), (1,)),
        Case(s, "render: 15,000 unknown flags", ("render", "many.yaml", "--engine", "vllm"), (2,)),
        Case(t, "convert under ulimit -f 50", CONVERT, (2,), limit_kb=50, prep=_fresh("out")),
        Case(t, "docs under ulimit -f 1", DOCS, (2,), limit_kb=1, prep=_fresh("site")),
        Case(
            t,
            "report -o under ulimit -f 0",
            (*REPORT, "-o", "ab.md"),
            (2,),
            limit_kb=0,
            prep=_fresh("ab.md"),
        ),
        Case(t, "inspect > /dev/full", ("inspect", "draft"), (2,), stdout="full"),
        Case(
            t, "render > /dev/full", ("render", "my.yaml", "--engine", "vllm"), (2,), stdout="full"
        ),
        Case(t, "report --json > /dev/full", (*REPORT, "--json"), (2,), stdout="full"),
        Case(t, "inspect --json | closed", ("inspect", "draft", "--json"), (141,), stdout="closed"),
        Case(t, "lint --json | closed", ("lint", "my.yaml", "--json"), (141,), stdout="closed"),
        Case(t, "render: a loop of links", ("render", "loop1", "--engine", "vllm"), (2,)),
        Case(
            left,
            "convert after a killed one (.out.tmp-*)",
            CONVERT,
            (0,),
            prep=_stale_staging,
            left="killed",
        ),
        Case(
            left,
            "convert --force after a killed one (.out.old-*)",
            (*CONVERT, "--force"),
            (0,),
            prep=_stale_backup,
            left="killed",
        ),
        Case(
            left,
            "docs after a killed one (.my.md.recipecli-*.tmp)",
            DOCS,
            (0,),
            prep=_both(_fresh("site"), _stale_temp("site/my.md")),
            left="killed",
        ),
        Case(
            left,
            "report -o after a killed one",
            (*REPORT, "-o", "ab.md"),
            (0,),
            prep=_both(_fresh("ab.md"), _stale_temp("ab.md")),
            left="killed",
        ),
        Case(
            d, "render: U+202E draft, U+2066 key", ("render", "bidi.yaml", "--engine", "vllm"), (2,)
        ),
        Case(d, "lint: U+202E draft, U+2066 key", ("lint", "bidi.yaml"), (1,)),
        Case(
            d, "check: U+202E architecture", ("check", "t_bidi", "draft", "--kernel", "skip"), (1,)
        ),
        Case(m, "render: a FIFO recipe", ("render", "fifo.yaml", "--engine", "vllm"), (2,)),
        Case(
            m,
            "render --target-config naming nothing",
            ("render", "my.yaml", "--engine", "vllm", "--target-config", "./nothing/config.json"),
            (2,),
        ),
        Case(
            m,
            "report: acceptance rate 250 %",
            ("report", "base.json", "rate.json", "--gpus", "4"),
            (2,),
        ),
        *[
            Case(c, f"Ctrl-C importing {name}", ("-c", _HOOK_SIGINT.format(command=name)), (130,))
            for name in ("inspect", "check", "render", "lint", "docs", "convert", "report")
        ],
    ]


def measure(case: Case, root: Path) -> tuple[int, float, int]:
    """(exit code, wall seconds, peak RSS KiB) of one case run in ``root``."""
    if case.prep is not None:
        case.prep(root)
    argv = (
        [sys.executable, *case.args]
        if case.args[0] == "-c"
        else [sys.executable, "-m", "recipecli", *case.args]
    )
    env = {**os.environ, "NO_COLOR": "1", "HF_HUB_OFFLINE": "1"}

    def limit() -> None:
        if case.limit_kb is not None:
            size = case.limit_kb * 1024
            resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    full = open("/dev/full", "w") if case.stdout == "full" else None  # noqa: SIM115
    out: Any = full if full is not None else subprocess.PIPE
    t0 = time.monotonic()
    proc = subprocess.Popen(
        argv, cwd=root, env=env, stdout=out, stderr=subprocess.DEVNULL, preexec_fn=limit
    )
    if case.stdout == "closed" and proc.stdout is not None:
        proc.stdout.close()
    elif proc.stdout is not None:
        while proc.stdout.read(1 << 20):  # drain, so that a large output never blocks
            pass
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if full is not None:
        full.close()
    code = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
    return code, wall, int(usage.ru_maxrss)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run only cases whose name holds this")
    opts = parser.parse_args()
    bad = 0
    with tempfile.TemporaryDirectory(prefix="hostile-budget-") as tmp:
        root = Path(tmp)
        scratch(root)
        print(f"{'class':<11} {'case':<50} {'exit':>4} {'wall s':>7} {'peak RSS MiB':>12}")
        worst_rss, worst_wall = 0, 0.0
        for case in cases():
            if opts.only not in case.name:
                continue
            code, wall, rss = measure(case, root)
            over = rss > MAX_RSS_KIB or wall > MAX_SECONDS or code not in case.codes
            if case.left is not None:  # a leftover case: the stale one must be gone
                over = over or any(case.left in p.name for p in root.rglob("*"))
            bad += over
            worst_rss, worst_wall = max(worst_rss, rss), max(worst_wall, wall)
            mark = "  <-- over" if over else ""
            print(
                f"{case.group:<11} {case.name:<50} {code:>4} {wall:>7.2f} {rss / 1024:>12.1f}{mark}"
            )
        print(
            f"worst: {worst_wall:.2f} s, {worst_rss / 1024:.1f} MiB peak RSS "
            f"(limits {MAX_SECONDS:.0f} s, {MAX_RSS_KIB // 1024} MiB)"
        )
    if bad:
        print(f"{bad} case(s) over the limits or with an unexpected exit code", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
