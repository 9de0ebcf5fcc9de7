"""Every node's command of ``recipecli render --nodes N --engine vllm`` is accepted by vLLM
0.33.0's own CLI parser (issue #26), with each multi-node flag in its own dest.

Matrix: the bundled gpt-oss-120b-eagle3 recipe on 2 nodes x 4 GPUs (TP 8), 4 x 2 (TP 8) and
4 x 4 (TP 4 x DP 4), rendered ``--format argv-json``. For each rank r: vLLM's namespace holds
``nnodes`` N, ``node_rank`` r, ``master_addr`` the ``--head-addr``, ``master_port`` 29501,
``headless`` True exactly when r > 0 (vllm/engine/arg_utils.py EngineArgs.add_cli_args,
vllm/entrypoints/cli/serve.py), the DP size as rendered, and the same ``speculative_config`` on
every rank. (``EngineArgs(...)`` itself is not built: its ``__post_init__`` opens the target on
the Hub, and the suite is offline.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import vllm_cli
from conftest import REPORT

pytestmark = pytest.mark.conformance

REPO = Path(__file__).resolve().parents[2]
HEAD = "10.9.8.7"
LAYOUTS = [
    (2, 4, ("tensor_parallel_size=8",)),
    (4, 2, ("tensor_parallel_size=8",)),
    (4, 4, ("data_parallel_size=4",)),
]


def _nodes(nodes: int, gpus: int, sets: tuple[str, ...]) -> list[dict[str, Any]]:
    cmd = [sys.executable, "-m", "recipecli", "render", "gpt-oss-120b-eagle3", "--engine",
           "vllm", "--nodes", str(nodes), "--gpus-per-node", str(gpus), "--head-addr", HEAD,
           "--ifname", "eth0", "--format", "argv-json"]  # fmt: skip
    for s in sets:
        cmd += ["--set", s]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    nodes_: list[dict[str, Any]] = json.loads(proc.stdout)["nodes"]
    return nodes_


@pytest.mark.parametrize(("nodes", "gpus", "sets"), LAYOUTS)
def test_every_rank_parses_with_its_multi_node_flags(nodes: int, gpus: int, sets) -> None:
    specs = []
    for node in _nodes(nodes, gpus, sets):
        argv, rank = node["argv"], node["rank"]
        got = vllm_cli.parse(argv)
        REPORT["parser"].append(
            {
                "id": f"nodes-{nodes}x{gpus}-rank{rank}",
                "argv": argv,
                "accepted": got["accepted"],
                "error": got["error"],
            }  # fmt: skip
        )
        assert got["accepted"], f"vLLM rejected rank {rank}: {got['error']}\nargv: {argv}"
        ns = got["namespace"]
        assert not vllm_cli.flag_dests_missing(argv, ns)
        assert (ns["nnodes"], ns["node_rank"]) == (nodes, rank)
        assert (ns["master_addr"], ns["master_port"]) == (HEAD, 29501)
        assert ns["headless"] is (rank > 0)
        assert ns["data_parallel_size"] == (4 if "data_parallel_size=4" in sets else 1)
        specs.append(ns["speculative_config"])
    assert all(s == specs[0] for s in specs) and specs[0]["method"] == "eagle3"
