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


RAY_LAYOUTS = [(2, 4, 8), (4, 2, 8), (4, 4, 16)]


@pytest.mark.parametrize(("nodes", "gpus", "tp"), RAY_LAYOUTS)
def test_the_ray_serve_command_parses_without_the_native_multi_node_flags(
    nodes: int, gpus: int, tp: int
) -> None:
    # --backend ray: the one serve command on the Ray head; vLLM's namespace has the Ray
    # executor, nnodes/node_rank at their defaults (ParallelConfig.__post_init__ refuses
    # nnodes > 1 with Ray), no headless, and TP x PP = the cluster's GPUs (ParallelConfig
    # world_size "is TPxPP"). ParallelConfig itself is not built: its validator imports ray,
    # which the pinned CPU environment does not install.
    cmd = [sys.executable, "-m", "recipecli", "render", "gpt-oss-120b-eagle3", "--engine",
           "vllm", "--nodes", str(nodes), "--gpus-per-node", str(gpus), "--head-addr", HEAD,
           "--ifname", "eth0", "--backend", "ray", "--set", f"tensor_parallel_size={tp}",
           "--format", "argv-json"]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    head, *workers = json.loads(proc.stdout)["nodes"]
    argv = head["argv"]
    got = vllm_cli.parse(argv)
    REPORT["parser"].append(
        {
            "id": f"nodes-ray-{nodes}x{gpus}-rank0",
            "argv": argv,
            "accepted": got["accepted"],
            "error": got["error"],
        }  # fmt: skip
    )
    assert got["accepted"], f"vLLM rejected the Ray head's serve command: {got['error']}"
    ns = got["namespace"]
    assert not vllm_cli.flag_dests_missing(argv, ns)
    assert ns["distributed_executor_backend"] == "ray"
    assert (ns["nnodes"], ns["node_rank"], ns["headless"]) == (1, 0, False)
    assert ns["tensor_parallel_size"] * ns["pipeline_parallel_size"] == nodes * gpus
    assert ns["speculative_config"]["method"] == "eagle3"
    # the other nodes run no vLLM command of their own: they join the Ray cluster
    assert all(w["argv"][:2] == ["ray", "start"] for w in workers)
