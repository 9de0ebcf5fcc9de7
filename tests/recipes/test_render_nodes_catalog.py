"""tokenspeed's flag catalog is built from its own parser (issue #26 slice 2):
``scripts/build_tokenspeed_flag_catalog.py`` over ``ServerArgs.add_cli_args`` at the pinned commit.

Expected entries read by hand from tokenspeed f4d8ec6e python/tokenspeed/runtime/utils/
server_args.py ``add_cli_args``: ``--nnodes`` / ``--node-rank`` (type=int), ``--dist-init-addr``
(type=str), ``--nprocs-per-node`` / ``--world-size`` (type=int), ``--distributed-timeout-seconds``
(type=int); ``--trust-remote-code`` is a BooleanOptionalAction; ``--expert-parallel-size`` and
``--ep-size`` are one call (the first names it); ``--tensor-parallel-size``/``--tp`` are copied
onto ``attn_tp_size`` by ``from_cli_args``; ``--speculative-eagle-topk`` has ``choices=[1]``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from recipecli.engines.catalog import load_catalog
from recipecli.engines.tokenspeed.pin import PIN

REPO = Path(__file__).resolve().parents[2]
MIRROR = Path("/work/.mirror/lightseekorg+tokenspeed/repo")
CATALOG = REPO / "recipecli" / "engines" / "tokenspeed" / "data" / PIN.catalog_file


def test_multi_node_flags_are_in_the_catalog() -> None:
    flags = load_catalog("tokenspeed").flags()
    for flag in ("--nnodes", "--node-rank", "--nprocs-per-node", "--world-size"):
        assert flags[flag] == {"kind": "value", "type": "int"}, flag
    assert flags["--dist-init-addr"] == {"kind": "value", "type": "str"}
    assert flags["--distributed-timeout-seconds"]["type"] == "int"


def test_kinds_and_aliases_follow_argparse() -> None:
    cat = load_catalog("tokenspeed")
    flags = cat.flags()
    assert flags["--trust-remote-code"]["kind"] == "bool"
    assert flags["--no-trust-remote-code"]["negates"] == "--trust-remote-code"
    assert cat.canonical("--ep-size") == "--expert-parallel-size"
    assert cat.canonical("--tp") == cat.canonical("--tensor-parallel-size") == "--attn-tp-size"
    assert flags["--speculative-eagle-topk"]["choices"] == ["1"]
    assert flags["--hf-overrides"]["kind"] == "json"
    assert cat.canonical("--model-path") == "--model"


@pytest.mark.skipif(not MIRROR.is_dir(), reason="no tokenspeed git mirror on this machine")
def test_the_catalog_re_extracts_identically(tmp_path: Path) -> None:
    out = tmp_path / "flags.json"
    script = REPO / "scripts" / "build_tokenspeed_flag_catalog.py"
    cmd = [sys.executable, str(script), "--git-dir", str(MIRROR), "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True)
    assert json.loads(out.read_text()) == json.loads(CATALOG.read_text())
