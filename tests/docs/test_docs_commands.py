"""Every ``recipecli`` command of README.md and docs/**/*.md runs, offline, and exits with the
code its page states (issue #28 item 10): a docs command that stops working fails CI.

The commands are extracted from the fenced blocks (tests/docs/doc_commands.py says how, and
how a page marks a block skipped or with another exit code); each page's commands run in page
order, as a reader would, in a fresh folder holding the files the pages name (tests/docs/
sandbox.py), with ``HF_HUB_OFFLINE=1`` and an empty ``HF_HOME``. Skipped commands are printed
with their reason.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.doc_commands import REPO, all_commands, page_commands
from tests.docs.sandbox import build_sandbox, checkpoint_from_snapshot

COMMANDS = all_commands()
PAGES = sorted({c.page for c in COMMANDS})


def _env(root: Path) -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HOME=str(root / "hf"), NO_COLOR="1")
    env.update(COLUMNS="100", PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]))
    env.pop("HF_HUB_CACHE", None)
    return env


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_page_commands_run_offline(page, tmp_path, capsys):
    root = build_sandbox(tmp_path / "sandbox")
    failures: list[str] = []
    for cmd in (c for c in COMMANDS if c.page == page):
        if cmd.skip:
            with capsys.disabled():
                print(f"\nskipped {cmd.where}: {cmd.skip}: {cmd.text}")
            continue
        proc = subprocess.run(
            [sys.executable, "-m", "recipecli", *cmd.argv],
            capture_output=True,
            text=True,
            cwd=root,
            env=_env(root),
            timeout=300,
        )
        if proc.returncode != cmd.exit_code:
            last = (proc.stderr.strip().splitlines() or ["(no stderr)"])[-1]
            failures.append(
                f"{cmd.where}: `{cmd.text}` exited {proc.returncode}, the page says "
                f"{cmd.exit_code}: {last}"
            )
    assert not failures, "\n".join(failures)


def test_the_pages_hold_the_commands_the_issue_names():
    # README's NOT READY showcase states its exit code in its comment ("exits 1")
    readme = [c for c in COMMANDS if c.page == "README.md" and not c.skip]
    assert [(c.argv, c.exit_code) for c in readme][:1] == [
        (("check", "--example", "llama3.1-8b-eagle3"), 1)
    ]
    assert len([c for c in COMMANDS if not c.skip]) >= 40
    assert "docs/render.md" in PAGES and "docs/engines" not in " ".join(PAGES)


def test_markers_exit_codes_and_usage_lines(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text(
        "Intro.\n\n"
        "```bash\n"
        "recipecli check --example x      # exits 1: NOT READY\n"
        "recipecli render r --engine vllm \\\n"
        "    --what all\n"
        "recipecli lint RECIPE... [--json]\n"
        "```\n\n"
        "<!-- docs-test: skip (needs a GPU) -->\n\n"
        "```\n"
        "$ recipecli verify-kernel --device cuda\n"
        "```\n\n"
        "<!-- docs-test: exit 3 -->\n"
        "```\n"
        "E=docs/x\n"
        "recipecli report $E/a.json $E/b.json\n"
        "```\n\n"
        "```console\n"
        "$ recipecli check a b\n"
        "vllm  NOT READY\n"
        "exit 1: not ready on vllm (errors above)\n"
        "$ recipecli inspect a\n"
        "source a\n"
        "```\n",
        encoding="utf-8",
    )
    monkeypatch.setattr("tests.docs.doc_commands.REPO", tmp_path)
    got = [(c.line, c.argv, c.exit_code, c.skip) for c in page_commands(page)]
    assert got == [
        (4, ("check", "--example", "x"), 1, None),
        (5, ("render", "r", "--engine", "vllm", "--what", "all"), 0, None),
        (7, ("lint", "RECIPE...", "[--json]"), 0, "usage line"),
        (13, ("verify-kernel", "--device", "cuda"), 0, "needs a GPU"),
        (19, ("report", "docs/x/a.json", "docs/x/b.json"), 3, None),
        (23, ("check", "a", "b"), 1, None),
        (26, ("inspect", "a"), 0, None),
    ]


def test_sandbox_checkpoint_keeps_the_snapshot_values(tmp_path):
    # the bundled draft snapshot's d2t is 32000 int64 values (config draft_vocab_size 32000);
    # the first ones, decoded by hand from its base64: 1, 1, 4 (int64 little-endian)
    import json
    import struct

    from recipecli.checkpoint import open_checkpoint

    draft = REPO / "recipecli/data/examples/eagle3-llama3.1-instruct-8b.draft.json"
    root = checkpoint_from_snapshot(draft, tmp_path / "d")
    ck = open_checkpoint(str(root))
    assert ck.kind == "local"
    assert ck.tensors["d2t"].shape == (32000,)
    assert struct.unpack("<3q", ck.read_raw_bytes("d2t")[:24]) == (1, 1, 4)
    cfg = json.loads((root / "config.json").read_text())
    assert cfg["draft_vocab_size"] == 32000
    assert (root / "model.safetensors").stat().st_size > 800_000_000  # 0.85 GB, sparse
