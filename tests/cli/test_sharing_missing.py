"""The sharing table says why an engine has no rows (issue #28 leftover): on the bundled Llama
pair tokenspeed and SGLang stop at the draft's architecture lookup (tokenspeed get_config
appends NextN to 'LlamaForCausalLM', which it does not register; SGLang keeps
'LlamaForCausalLM', a target class: README.md's NOT READY showcase), before any embedding
step, so only vLLM has rows."""

from __future__ import annotations

import os
import subprocess
import sys


def test_engines_without_sharing_rows_say_why(tmp_path):
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf"), NO_COLOR="1")
    proc = subprocess.run(
        [sys.executable, "-m", "recipecli", "check", "--example", "llama3.1-8b-eagle3"]
        + ["--kernel", "skip"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    table = lines[lines.index("embedding / head sharing (per rank):") + 1 :]
    rows = [line.split()[0] for line in table[1:5]]
    assert rows == ["vllm"] * 4  # TP 1, 2, 4, 8
    for engine in ("tokenspeed", "sglang"):
        assert (
            f"  {engine}: no rows: its load path stops at draft.arch_name before the embedding "
            "step (errors above)"
        ) in table
