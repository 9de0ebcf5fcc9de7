"""``recipecli render --nodes N`` (issue #26): one serve command per node with each engine's own
multi-node flags, the world size checked, refused layouts refused with the engine's reason.

Expected values worked out by hand from the engines' parsers at the pins:

* vLLM 0.33.0 vllm/engine/arg_utils.py ``EngineArgs.add_cli_args`` (``--nnodes``, ``--node-rank``,
  ``--master-addr``, ``--master-port``; vllm/config/parallel.py ``ParallelConfig.master_port``
  = 29501) and vllm/entrypoints/cli/serve.py (``--headless``: no API server on the other nodes);
  ``create_engine_config`` counts DP x PP x TP worker processes across ``--nnodes``.
* SGLang 0.5.23 arg_groups/fields/parallel.py ``nnodes``, ``node_rank``, ``dist_init_addr``
  (``HOST:PORT``; its help shows port 25000).
* tokenspeed f4d8ec6e server_args.py ``add_cli_args`` (``--nnodes``, ``--node-rank``,
  ``--nprocs-per-node``, ``--world-size``, ``--dist-init-addr``; docs/serving/parallelism.md
  shows ``--dist-init-addr <rank0-host>:25000``).

The bundled gpt-oss-120b-eagle3 recipe serves TP 4 on its h200x4 profile; ``--set
tensor_parallel_size=8`` spreads it over 2 nodes x 4 GPUs (8 = 2 x 4), 16 over 4 x 4.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
RECIPE = "gpt-oss-120b-eagle3"
HEAD = "10.1.2.3"
#: engine -> the multi-node flags expected at the end of rank r's argv (by hand, see above)
TAILS = {
    "vllm": lambda n, r, g, w: ["--nnodes", str(n), "--node-rank", str(r), "--master-addr",
                                HEAD, "--master-port", "29501"] + (["--headless"] if r else []),
    "sglang": lambda n, r, g, w: ["--nnodes", str(n), "--node-rank", str(r),
                                  "--dist-init-addr", f"{HEAD}:25000"],
    "tokenspeed": lambda n, r, g, w: ["--nnodes", str(n), "--node-rank", str(r),
                                      "--nprocs-per-node", str(g), "--world-size", str(w),
                                      "--dist-init-addr", f"{HEAD}:25000"],
}  # fmt: skip
#: (nodes, GPUs per node, TP): 2 x 4 = 8, 4 x 4 = 16, 4 x 2 = 8
LAYOUTS = [(2, 4, 8), (4, 4, 16), (4, 2, 8)]


def render(*args: str) -> subprocess.CompletedProcess[str]:
    # RECIPE marks tokenspeed unsupported (its draft, not the layout): --force renders it
    forced = ("--force",) if RECIPE in args and "tokenspeed" in args else ()
    cmd = [sys.executable, "-m", "recipecli", "render", *args, *forced]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=120)


def nodes_json(engine: str, nodes: int, gpus: int, *sets: str) -> dict[str, Any]:
    args = [RECIPE, "--engine", engine, "--nodes", str(nodes), "--gpus-per-node", str(gpus)]
    args += ["--head-addr", HEAD, "--ifname", "eth0", "--format", "argv-json"]
    for s in sets:
        args += ["--set", s]
    proc = render(*args)
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def _without_rank(argv: list[str]) -> list[str]:
    out = list(argv)
    i = out.index("--node-rank")
    del out[i : i + 2]
    return [a for a in out if a != "--headless"]


@pytest.mark.parametrize("engine", sorted(TAILS))
@pytest.mark.parametrize(("nodes", "gpus", "tp"), LAYOUTS)
def test_one_command_per_rank_with_the_engines_flags(engine: str, nodes: int, gpus: int, tp: int):
    data = nodes_json(engine, nodes, gpus, f"tensor_parallel_size={tp}")
    assert [n["rank"] for n in data["nodes"]] == list(range(nodes))
    for n in data["nodes"]:
        tail = TAILS[engine](nodes, n["rank"], gpus, tp)
        assert n["argv"][-len(tail) :] == tail
        assert n["env"]["NCCL_SOCKET_IFNAME"] == n["env"]["GLOO_SOCKET_IFNAME"] == "eth0"
        # the profile's CUDA_VISIBLE_DEVICES cut to the GPUs of one node
        assert n["env"]["CUDA_VISIBLE_DEVICES"] == ",".join(str(i) for i in range(gpus))
    # everything but the rank (and vLLM's --headless) is the same on every node: the
    # speculative flags included
    rest = {json.dumps(_without_rank(n["argv"])) for n in data["nodes"]}
    assert len(rest) == 1
    # the same env (NCCL settings included) on every node
    assert all(n["env"] == data["nodes"][0]["env"] for n in data["nodes"])
    spec = [a for a in data["nodes"][0]["argv"] if a.startswith("--speculative")]
    assert spec, "the speculative flags are on every node"


def test_vllm_data_parallel_layout_counts_dp_x_tp() -> None:
    # 4 nodes x 4 GPUs = 16 = TP 4 x DP 4 (vLLM infers the DP ranks of each node from
    # --nnodes/--node-rank: EngineArgs.create_engine_config)
    data = nodes_json("vllm", 4, 4, "data_parallel_size=4")
    argv = data["nodes"][3]["argv"]
    assert argv[argv.index("--data-parallel-size") + 1] == "4"
    assert argv[argv.index("--tensor-parallel-size") + 1] == "4"


def test_sglang_dp_attention_splits_the_tp_group() -> None:
    # SGLang's DP attention ranks sit inside the TP group: 2 x 4 = TP 8 with DP 8
    data = nodes_json(
        "sglang", 2, 4, "tensor_parallel_size=8", "data_parallel_size=8", "enable_dp_attention=true"
    )
    assert "--enable-dp-attention" in data["nodes"][1]["argv"]


def test_a_world_size_that_does_not_multiply_out_is_refused_with_the_arithmetic() -> None:
    proc = render(RECIPE, "--engine", "vllm", "--nodes", "2", "--gpus-per-node", "4",
                  "--head-addr", HEAD, "--ifname", "eth0")  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == ""
    assert "2 nodes x 4 GPUs = 8, but vllm runs TP 4 x PP 1 x DP 1 = 4" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("engine", "words"),
    [
        # vLLM: GptOssModel lacks supports_aux_hidden_states_over_pp (the #25 rule)
        ("vllm", "does not support eagle3 with pipeline parallelism"),
        # SGLang: check_pipeline_parallel_compat asserts EAGLE (non-multi-layer) under PP
        ("sglang", "Pipeline parallelism currently only supports EAGLE"),
    ],
)
def test_a_layout_the_engine_refuses_is_refused_here(engine: str, words: str) -> None:
    args = [RECIPE, "--engine", engine, "--nodes", "2", "--gpus-per-node", "4", "--head-addr",
            HEAD, "--ifname", "eth0", "--set", "pipeline_parallel_size=2"]  # fmt: skip
    proc = render(*args)
    assert proc.returncode == 2 and words in proc.stderr and proc.stdout == ""
    forced = render(*args, "--force")
    assert forced.returncode == 0 and words in forced.stderr and "warning" in forced.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--nodes", "2", "--head-addr", HEAD], "give --ifname"),
        (["--nodes", "2", "--head-addr", HEAD, "--ifname", "lo"], "loopback"),
        (["--nodes", "2", "--ifname", "eth0"], "give --head-addr"),
        (["--nodes", "2", "--ifname", "eth0", "--format", "lws"], "give --image"),
        (["--format", "slurm"], "give --nodes N"),
        (["--head-port", "7000"], "--head-port is for several nodes"),
        (["--nodes", "2", "--ifname", "eth0", "--head-addr", "a b"], "--head-addr 'a b'"),
        (["--nodes", "2", "--ifname", "eth0", "--head-addr", HEAD, "--what", "bench"],
         "--what serve"),
    ],
)  # fmt: skip
def test_missing_or_bad_node_options_are_one_line(args: list[str], words: str) -> None:
    proc = render(RECIPE, "--engine", "vllm", "--gpus-per-node", "4", "--set",
                  "tensor_parallel_size=8", *args)  # fmt: skip
    assert proc.returncode == 2 and words in proc.stderr, proc.stderr
    assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1


def test_the_recipes_nodes_count_is_used(tmp_path: Path) -> None:
    text = (REPO / "recipecli" / "data" / "recipes" / f"{RECIPE}.yaml").read_text()
    path = tmp_path / "two.yaml"
    path.write_text(text + "\nnodes: 2\n")
    proc = render(str(path), "--engine", "tokenspeed", "--gpus-per-node", "2", "--head-addr",
                  HEAD, "--ifname", "eth0", "--format", "argv-json", "--force")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    ranks = json.loads(proc.stdout)["nodes"]
    assert [n["argv"][n["argv"].index("--nnodes") + 1] for n in ranks] == ["2", "2"]
    # --nodes 1 renders the one-node command
    one = render(
        str(path), "--engine", "tokenspeed", "--nodes", "1", "--format", "argv-json", "--force"
    )
    assert "--nnodes" not in json.loads(one.stdout)["argv"]


def test_comments_state_the_arithmetic_and_where_the_draft_runs() -> None:
    proc = render(RECIPE, "--engine", "sglang", "--nodes", "2", "--gpus-per-node", "4",
                  "--head-addr", HEAD, "--ifname", "eth0", "--set", "tensor_parallel_size=8")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "# sglang on 2 nodes x 4 GPUs: TP 8 x PP 1 x DP 1 = 8 worker processes" in proc.stdout
    assert "# draft: PP 1 (one pipeline stage): the draft runs with the target on all 8" in (
        proc.stdout
    )


@pytest.mark.parametrize(
    ("engine", "flag"),
    # vLLM ParallelConfig.distributed_timeout_seconds, SGLang fields/parallel.py dist_timeout,
    # tokenspeed server_args.py --distributed-timeout-seconds
    [("vllm", "--distributed-timeout-seconds"), ("sglang", "--dist-timeout"),
     ("tokenspeed", "--distributed-timeout-seconds")],
)  # fmt: skip
def test_dist_timeout_is_the_engines_own_flag(engine: str, flag: str) -> None:
    data = nodes_json(engine, 2, 4, "tensor_parallel_size=8")
    assert flag not in data["nodes"][0]["argv"]
    proc = render(RECIPE, "--engine", engine, "--nodes", "2", "--gpus-per-node", "4",
                  "--head-addr", HEAD, "--ifname", "eth0", "--set", "tensor_parallel_size=8",
                  "--dist-timeout", "1800", "--format", "argv-json")  # fmt: skip
    for n in json.loads(proc.stdout)["nodes"]:
        assert n["argv"][n["argv"].index(flag) + 1] == "1800"


@pytest.mark.parametrize("engine", sorted(TAILS))
def test_every_rendered_flag_is_in_the_engines_parser_catalog(engine: str) -> None:
    # the catalogs are extracted from each engine's own parser (tokenspeed's cannot be imported
    # on CPU: scripts/build_tokenspeed_flag_catalog.py reads its add_cli_args)
    from recipecli.engines.catalog import load_catalog

    flags = load_catalog(engine).flags()
    for n in nodes_json(engine, 4, 2, "tensor_parallel_size=8")["nodes"]:
        unknown = [a for a in n["argv"] if a.startswith("--") and a not in flags]
        assert unknown == [], unknown


def test_lws_asks_for_the_profiles_gpu_vendor() -> None:
    # minimax-m3-eagle3's mi355x profile is vendor amd: AMD's device plugin resource
    proc = render("minimax-m3-eagle3", "--engine", "vllm", "--hardware", "mi355x", "--nodes",
                  "2", "--gpus-per-node", "4", "--ifname", "eth0", "--format", "lws",
                  "--image", "example/vllm-rocm:1", "--set", "tensor_parallel_size=8")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "amd.com/gpu: 4" in proc.stdout and "nvidia.com/gpu" not in proc.stdout
    import yaml

    pod = yaml.safe_load(proc.stdout)["spec"]["leaderWorkerTemplate"]["workerTemplate"]
    env = {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]}
    # the profile lists 0,1,2,3 for TP 4; --set tensor_parallel_size=8 re-derives 0..7 (one
    # node), and --nodes cuts it to the 4 GPUs of each node
    assert env["HIP_VISIBLE_DEVICES"] == "0,1,2,3"


def test_counts_of_one_read_in_the_singular() -> None:
    # llama3.1-8b-eagle3 serves TP 1 (1 worker process); 2 nodes x 1 GPU per node = 2
    proc = render("llama3.1-8b-eagle3", "--engine", "vllm", "--nodes", "2", "--gpus-per-node",
                  "1", "--ifname", "eth0", "--format", "slurm")  # fmt: skip
    assert proc.returncode != 0
    assert "2 nodes x 1 GPU = 2, but vllm runs TP 1 x PP 1 x DP 1 = 1 worker process " in (
        proc.stderr
    )
