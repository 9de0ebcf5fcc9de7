"""A :class:`~.nodes.NodePlan` as text for the launchers users already run (issue #26):
``--format shell`` (one script for every node, the block of each rank picked by ``NODE_RANK``),
``--format slurm`` (an sbatch script: one multi-node ``srun`` step, the rank from
``SLURM_NODEID``, the head from the first host of ``scontrol show hostnames``) and
``--format lws`` (a ``leaderworkerset.x-k8s.io/v1`` LeaderWorkerSet: the leader runs rank 0 and
serves HTTP, each worker's rank is ``LWS_WORKER_INDEX``, the head ``LWS_LEADER_ADDRESS``).

On a Ray cluster (``render --backend ray``) the head runs ``ray start --head`` before the serve
command and the other nodes ``ray start --block``; each node's own address (vLLM
``VLLM_HOST_IP``) is a parameter of the shell script, the address ``getent`` gives for
``SLURMD_NODENAME`` under Slurm and the pod's IP (``status.podIP``) in a LeaderWorkerSet.

Each goes through a Jinja2 template (``templates/nodes-*.j2``); the commands reach them already
quoted (:func:`~.nodes.shell_command`), the LeaderWorkerSet body already dumped as YAML.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from recipecli.recipes.nodes import (
    ADDR,
    HEAD,
    RANK,
    NodeCommand,
    NodePlan,
    export_lines,
    node_env,
    shell_command,
)
from recipecli.recipes.templating import render_template

#: LeaderWorkerSet's env vars in every pod of a group (kubernetes-sigs/lws v0.10.0
#: api/leaderworkerset/v1/leaderworkerset_types.go LwsLeaderAddress, LwsWorkerIndex)
LWS_LEADER = "LWS_LEADER_ADDRESS"
LWS_INDEX = "LWS_WORKER_INDEX"
#: where the model cache volume is mounted (huggingface_hub's default cache for root)
CACHE_MOUNT = "/root/.cache/huggingface"


@dataclass(frozen=True)
class PodOptions:
    """What a LeaderWorkerSet needs beyond the commands.

    Attributes:
        name: the LeaderWorkerSet's name (a DNS label).
        image: the container image that has the engine.
        gpu_resource: the extended resource of one GPU (``nvidia.com/gpu``, ``amd.com/gpu``).
        cache_claim: the PersistentVolumeClaim holding the model cache.
    """

    name: str
    image: str
    gpu_resource: str
    cache_claim: str = "model-cache"


def _header(plan: NodePlan, title: str) -> list[str]:
    """Comment lines: the title, then the plan's notes (each on one line)."""
    return [f"recipecli render: {title}", *(" ".join(n.split()) for n in plan.notes)]


def _pre_lines(
    cmd: NodeCommand, common: dict[str, str], names: dict[str, str], indent: str
) -> list[str]:
    """The lines of a node's block before its command: the node's own parameters checked
    (:attr:`NodeCommand.node_env`), the variables it exports beyond ``common``, the commands
    it runs first."""
    lines = []
    for var in cmd.node_env:
        lines += [f': "${{{var}:?set {var} to the address of this node}}"', f"export {var}"]
    lines += export_lines({k: v for k, v in cmd.env.items() if common.get(k) != v})
    lines += [shell_command(a, names, indent=indent, exec_=False) for a in cmd.run_first]
    return lines


def nodes_shell_text(plan: NodePlan, *, templates: str | None = None) -> str:
    """``--format shell`` for N nodes: one bash script; run it on every node with
    ``NODE_RANK`` set; each rank's block is its command with literal values (on Ray, a worker
    node's own address is its ``VLLM_HOST_IP``, set before the script runs)."""
    common = node_env(plan)
    blocks = [
        {
            "rank": c.rank,
            "pre": _pre_lines(c, common, {}, "    "),
            "command": shell_command(c.argv, {}, indent="    "),
        }
        for c in plan.commands()
    ]
    context = {
        "notes": _header(plan, f"{plan.engine} serve, one block per node rank"),
        "nodes": plan.options.nodes,
        "exports": export_lines(common),
        "blocks": blocks,
    }
    return render_template("nodes-shell.sh.j2", context, user_dir=templates)


def slurm_text(plan: NodePlan, job: str, *, templates: str | None = None) -> str:
    """``--format slurm``: an sbatch script of one ``srun`` step over every node; the head is
    the first host of the allocation, the rank each task's ``SLURM_NODEID``."""
    var = plan.launch.ray_host_ip if plan.ray else None
    names = {HEAD: "HEAD_ADDR", RANK: "SLURM_NODEID", **({ADDR: var} if var else {})}
    leader = plan.command(0, head=HEAD, own=ADDR)
    worker = plan.command(RANK, head=HEAD, own=ADDR)
    common = node_env(plan)
    setup = []
    if var:  # each task's own address: what its Slurm node name resolves to
        setup = [
            "set -euo pipefail",
            f'{var}="$(getent ahostsv4 "$SLURMD_NODENAME" | awk \'NR == 1 {{print $1}}\')"',
            f': "${{{var}:?no IPv4 address for $SLURMD_NODENAME}}"',
            f"export {var}",
        ]
    context = {
        "notes": _header(plan, f"{plan.engine} serve as a Slurm batch job"),
        "job": job,
        "nodes": plan.options.nodes,
        "gpus": plan.options.gpus_per_node,
        "exports": export_lines(common),
        "setup": setup,
        "leader_pre": _pre_lines(leader, leader.env, names, "    "),
        "leader": shell_command(leader.argv, names, indent="    "),
        "worker": shell_command(worker.argv, names, indent="    "),
    }
    return render_template("nodes-slurm.sh.j2", context, user_dir=templates)


def _env_entry(name: str, value: str) -> dict[str, Any]:
    """A container env entry; the node's own address (:data:`ADDR`) is the pod's IP."""
    if value == ADDR:
        return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
    return {"name": name, "value": value}


def _container(plan: NodePlan, pod: PodOptions, rank: int | str) -> dict[str, Any]:
    var = plan.launch.ray_host_ip if plan.ray else None
    names = {HEAD: LWS_LEADER, RANK: LWS_INDEX, **({ADDR: var} if var else {})}
    cmd = plan.command(rank, head=HEAD, own=ADDR)
    script = shell_command(cmd.argv, names)
    if cmd.run_first:
        first = [shell_command(a, names, exec_=False) for a in cmd.run_first]
        script = "\n".join(["set -euo pipefail", *first, script])
    out: dict[str, Any] = {
        "name": "leader" if rank == 0 else "worker",
        "image": pod.image,
        "command": ["/bin/bash", "-c"],
        # Kubernetes expands $(NAME) in args itself: $$ keeps a literal $( for bash
        "args": [script.replace("$(", "$$(")],
        "env": [_env_entry(k, v) for k, v in cmd.env.items()],
        "resources": {"limits": {pod.gpu_resource: plan.options.gpus_per_node}},
        "volumeMounts": [
            {"name": "model-cache", "mountPath": CACHE_MOUNT},
            {"name": "dshm", "mountPath": "/dev/shm"},
        ],
    }
    if rank == 0:
        out["ports"] = [{"name": "http", "containerPort": plan.http_port}]
        out["readinessProbe"] = {
            "httpGet": {"path": plan.launch.health, "port": plan.http_port},
            "periodSeconds": 10,
            "failureThreshold": 3,
        }
    return out


def _pod(plan: NodePlan, pod: PodOptions, rank: int | str) -> dict[str, Any]:
    role = "leader" if rank == 0 else "worker"
    return {
        "metadata": {"labels": {"app": pod.name, "role": role}},
        "spec": {
            "containers": [_container(plan, pod, rank)],
            "volumes": [
                {"name": "model-cache", "persistentVolumeClaim": {"claimName": pod.cache_claim}},
                {"name": "dshm", "emptyDir": {"medium": "Memory"}},
            ],
        },
    }


def lws_manifest(plan: NodePlan, pod: PodOptions) -> dict[str, Any]:
    """The LeaderWorkerSet of ``plan``: one group of ``nodes`` pods (``size``), the leader
    template runs rank 0 (HTTP port and readiness on the engine's health route), the worker
    template every other rank; a group restarts whole when a pod does
    (``RecreateGroupOnPodRestart``: a lost rank hangs the collective otherwise)."""
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": pod.name},
        "spec": {
            "replicas": 1,
            "leaderWorkerTemplate": {
                "size": plan.options.nodes,
                "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": _pod(plan, pod, 0),
                "workerTemplate": _pod(plan, pod, RANK),
            },
        },
    }


def lws_text(plan: NodePlan, pod: PodOptions, *, templates: str | None = None) -> str:
    """``--format lws``: :func:`lws_manifest` as YAML under the plan's notes as comments."""
    import yaml

    class _Dumper(yaml.SafeDumper):
        """Multi-line strings (the container scripts) as ``|`` blocks."""

    def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = (
            "|"
            if "\n" in value and not any(ln != ln.rstrip() for ln in value.split("\n"))
            else None
        )
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _text)
    body = yaml.dump(lws_manifest(plan, pod), Dumper=_Dumper, sort_keys=False, width=1 << 16)
    notes = _header(plan, f"{plan.engine} serve as a LeaderWorkerSet")
    notes.append(f"the model cache: PersistentVolumeClaim {pod.cache_claim} at {CACHE_MOUNT}")
    context = {"notes": notes, "body": body.rstrip("\n")}
    return render_template("nodes-lws.yaml.j2", context, user_dir=templates)
