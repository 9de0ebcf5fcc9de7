"""Ctrl-C and kills at any point (issue #29, items 4 and 7): SIGINT is one line "recipecli:
interrupted" and exit 130 (128 + SIGINT), leaving nothing new behind; a SIGKILL of ``convert``
leaves its marked temporary folder, which the next run onto the same OUT removes (and only
folders marked as recipecli's whose convert is gone)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from hostile_helpers import hidden, one_error_line

# A subprocess that sends itself SIGINT at a chosen point: after the first tensor of convert,
# while docs stages its pages, and while the command module is being imported (start-up).
_SIGINT_AT = {
    "convert": (
        "import recipecli.convert.write as m; real = m.write_tensor\n"
        "def hook(*a, **k):\n    real(*a, **k); os.kill(os.getpid(), signal.SIGINT)\n"
        "m.write_tensor = hook\n",
        ["convert", "draft", "out", "--to", "eagle3"],
    ),
    "docs": (
        "import recipecli.safe_write.files as m; real = m._stage\n"
        "def hook(*a, **k):\n    os.kill(os.getpid(), signal.SIGINT); return real(*a, **k)\n"
        "m._stage = hook\n",
        ["docs", "my.yaml", "-o", "site", "--checkpoints", "none"],
    ),
    "start-up": (
        "import importlib; real = importlib.import_module\n"
        "def hook(name, *a):\n"
        "    if name.startswith('recipecli.cli.commands.'): os.kill(os.getpid(), signal.SIGINT)\n"
        "    return real(name, *a)\n"
        "importlib.import_module = hook\n",
        ["inspect", "draft"],
    ),
}


@pytest.mark.parametrize("where", list(_SIGINT_AT))
def test_ctrl_c_is_one_line_exit_130_and_leaves_nothing(run, scratch, where):
    hook, args = _SIGINT_AT[where]
    before = sorted(os.listdir(scratch))
    code = f"import os, signal\n{hook}from recipecli.cli import main\nmain({args!r})\n"
    proc = run(code=code)
    assert proc.returncode == 130, proc.stderr
    assert one_error_line(proc.stderr) == "recipecli: interrupted"
    assert sorted(os.listdir(scratch)) == before and hidden(scratch) == []


def test_sigterm_during_convert_is_130_too(run, scratch):
    hook = _SIGINT_AT["convert"][0].replace("SIGINT", "SIGTERM")
    code = f"import os, signal\n{hook}from recipecli.cli import main\n"
    code += "main(['convert', 'draft', 'out', '--to', 'eagle3'])\n"
    proc = run(code=code)
    assert proc.returncode == 130
    assert one_error_line(proc.stderr) == "recipecli: interrupted"
    assert not (scratch / "out").exists() and hidden(scratch) == []


# ----------------------------------------------------------------- SIGKILL at a random point

# convert, slowed: it prints "step" before each write step, then sleeps, so the test can kill it
# at the k-th step (a random one): inside the shard, after the shard, after config.json.
_SLOW_CONVERT = textwrap.dedent(
    """
    import sys, time
    import recipecli.convert.write as m
    real_tensor, real_file = m.write_tensor, m.write_new_file
    def tensor(*a, **k):
        print("step", flush=True); time.sleep(0.05); real_tensor(*a, **k)
    def new_file(*a, **k):
        print("step", flush=True); time.sleep(0.05); real_file(*a, **k)
    m.write_tensor, m.write_new_file = tensor, new_file
    import recipecli.convert.run as r
    r.write_new_file = new_file
    hold = sys.argv[1] == "hold"
    if hold:  # stop for good after the first tensor (a convert still running)
        def stay(*a, **k):
            real_tensor(*a, **k); print("held", flush=True); time.sleep(600)
        m.write_tensor = stay
    from recipecli.cli import main
    main(["convert", "draft", "out", "--to", "eagle3"])
    """
)


def _spawn(scratch, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _SLOW_CONVERT, mode],
        cwd=scratch, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip


def _stale_dirs(scratch) -> list[str]:
    return sorted(n for n in os.listdir(scratch) if n.startswith(".out.tmp-"))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sigkill_at_a_random_step_is_cleaned_by_the_next_run(run, scratch, seed):
    rng = random.Random(seed)
    proc = _spawn(scratch, "go")
    assert proc.stdout is not None
    steps = rng.randint(1, 16)  # 17 write steps in all: 15 tensors, config.json, the marker
    for _ in range(steps):
        if not proc.stdout.readline():
            break
    time.sleep(rng.random() * 0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    if (scratch / "out").exists():  # it finished before the kill: nothing to clean
        assert _stale_dirs(scratch) == []
        return
    assert len(_stale_dirs(scratch)) == 1  # what the kill left
    (scratch / ".out.tmp-mine").mkdir()  # a user's folder of the same shape: never ours
    (scratch / ".out.tmp-mine" / "config.json").write_text("{}\n")
    again = run("convert", "draft", "out", "--to", "eagle3")
    assert again.returncode == 0, again.stderr
    assert "the temporary folder of a convert onto out that was killed" in again.stderr
    assert _stale_dirs(scratch) == [".out.tmp-mine"]
    assert (scratch / ".out.tmp-mine" / "config.json").read_text() == "{}\n"
    assert sorted(os.listdir(scratch / "out")) == [
        ".recipecli-convert.json",
        "config.json",
        "model.safetensors",
    ]


def test_a_running_converts_folder_is_never_removed(run, scratch):
    proc = _spawn(scratch, "hold")
    assert proc.stdout is not None
    try:
        while proc.stdout.readline().strip() != "held":
            pass
        running = _stale_dirs(scratch)
        assert len(running) == 1
        other = run("convert", "draft", "out", "--to", "eagle3")  # a second convert meanwhile
        assert other.returncode == 0, other.stderr
        assert "was killed" not in other.stderr
        assert _stale_dirs(scratch) == running  # the running one's folder is still there
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
