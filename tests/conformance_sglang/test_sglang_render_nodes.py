"""Every node's command of ``recipecli render --nodes N --engine sglang`` is accepted by SGLang
0.5.23's own parser (issue #26): ``prepare_server_args`` (its ``python -m sglang.launch_server``
``__main__``) builds the ``ServerArgs`` record, every rendered flag is one of the parser's exact
option strings, and the record holds what the node was rendered for: ``nnodes`` N,
``node_rank`` r, ``dist_init_addr`` ``HEAD:25000`` (arg_groups/fields/parallel.py), ``tp_size``,
and the same speculative fields on every rank.

Matrix: the bundled gpt-oss-120b-eagle3 recipe on 2 nodes x 4 GPUs and 4 x 2 (TP 8 each), and
2 x 4 with DP attention (TP 8, DP 8: SGLang's attention DP ranks split the TP group).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sgl_cli
from sgl_report import REPORT

pytestmark = pytest.mark.conformance_sglang

REPO = Path(__file__).resolve().parents[2]
HEAD = "10.9.8.7"
LAYOUTS = [
    (2, 4, ("tensor_parallel_size=8",)),
    (4, 2, ("tensor_parallel_size=8",)),
    (2, 4, ("tensor_parallel_size=8", "data_parallel_size=8", "enable_dp_attention=true")),
]
SPEC_FIELDS = (
    "speculative_algorithm",
    "speculative_draft_model_path",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
)


def _nodes(nodes: int, gpus: int, sets: tuple[str, ...]) -> list[dict[str, Any]]:
    cmd = [sys.executable, "-m", "recipecli", "render", "gpt-oss-120b-eagle3", "--engine",
           "sglang", "--nodes", str(nodes), "--gpus-per-node", str(gpus), "--head-addr", HEAD,
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
        got = sgl_cli.parse_launch(argv)
        REPORT["parser"].append(
            {
                "id": f"nodes-{nodes}x{gpus}-rank{rank}",
                "argv": argv,
                "accepted": got["accepted"],
                "error": got["error"],
            }  # fmt: skip
        )
        assert got["accepted"], f"SGLang rejected rank {rank}: {got['error']}\nargv: {argv}"
        assert not sgl_cli.inexact_flags(argv[3:])
        args = got["args"]
        assert (args.nnodes, args.node_rank) == (nodes, rank)
        assert args.dist_init_addr == f"{HEAD}:25000"
        assert args.tp_size == 8
        specs.append({f: getattr(args, f) for f in SPEC_FIELDS})
    assert all(s == specs[0] for s in specs) and specs[0]["speculative_algorithm"] == "EAGLE3"
