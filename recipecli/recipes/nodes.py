"""Per-node serve commands of a deployment on several nodes (``recipecli render --nodes N``,
issue #26): the rendered serve command plus each engine's own multi-node flags
(:class:`recipecli.engines.spec.NodeLaunch`, read from its parser at the pin), one command per
node rank, the same everywhere but the rank.

Checked before anything is written: the world size as the engine counts it (TP x PP x DP; with
SGLang's DP attention the DP ranks split the TP group) equals nodes x GPUs per node; the head
address is a parameter (``--head-addr``) or a launcher's variable, never a default; the NIC
NCCL and Gloo bind is a parameter (``--ifname``), never left to a loopback guess.

The head address and the rank can be launcher variables: :data:`HEAD` and :data:`RANK` stand
for them inside argv items, and :func:`shell_word` writes them as ``${VAR}`` expansions.

With ``backend="ray"`` (vLLM's :attr:`NodeLaunch.ray_backend`) the engine runs one serve command
on the Ray head and Ray places its workers: rank 0 runs ``ray start --head`` then the serve
command, every other rank ``ray start --address=HEAD:PORT --block``; each node's own address is
the engine's :attr:`NodeLaunch.ray_host_ip` variable (:data:`ADDR` where a launcher supplies it).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import recipecli.recipes.engines as E
from recipecli.engines import engine_spec
from recipecli.engines.catalog import load_catalog
from recipecli.engines.spec import NodeLaunch
from recipecli.errors import RecipeError, UsageError
from recipecli.recipes.argv import Rendered
from recipecli.recipes.values import scalar_text

#: stands for the head address inside an argv item when a launcher supplies it
HEAD = "\x00HEAD_ADDR\x00"
#: stands for the node rank inside an argv item when a launcher supplies it
RANK = "\x00NODE_RANK\x00"
#: stands for this node's own address (Ray: the engine's host-IP variable) when a launcher
#: supplies it
ADDR = "\x00NODE_ADDR\x00"
#: the ``render --backend`` values: the engine's own multi-node flags, or a Ray cluster
BACKENDS: tuple[str, ...] = ("native", "ray")
#: the Ray head's GCS port: ``ray start --port``'s default, the port vLLM's
#: examples/online_serving/run_cluster.sh starts the head on and its workers dial
RAY_PORT = 6379
#: NICs that carry no traffic between nodes
LOOPBACK = frozenset({"lo", "lo0"})
#: the env vars that pick the NIC NCCL and Gloo (torch.distributed's CPU groups) bind to
IFNAME_VARS: tuple[str, ...] = ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME")


@dataclass(frozen=True)
class NodeOptions:
    """What ``render --nodes`` is told.

    Attributes:
        nodes: node count (> 1).
        gpus_per_node: GPUs (worker processes) per node.
        head_addr: the head (rank 0) node's address, or None when a launcher supplies it.
        head_port: the rendezvous port (None: the engine's :attr:`NodeLaunch.default_port`).
        ifname: the network interface NCCL and Gloo bind on every node.
        timeout: seconds for torch.distributed's initialisation (the engine's timeout flag),
            or None for the engine's default.
        backend: ``native`` (the engine's multi-node flags on every node) or ``ray`` (one
            serve command on a Ray cluster's head: :attr:`NodeLaunch.ray_backend`).
    """

    nodes: int
    gpus_per_node: int = 8
    head_addr: str | None = None
    head_port: int | None = None
    ifname: str | None = None
    timeout: int | None = None
    backend: str = "native"


@dataclass(frozen=True)
class NodeLayout:
    """The layout of the serve command across the nodes.

    Attributes:
        tp, pp, dp: tensor-, pipeline- and data-parallel sizes of the serve command.
        dp_attention, ep: DP attention and expert parallelism switched on.
        world: worker processes as the engine counts them.
        counted: how the engine counts them (for messages: ``TP 8 x PP 2 x DP 1``).
    """

    tp: int
    pp: int
    dp: int
    dp_attention: bool
    ep: bool
    world: int
    counted: str


@dataclass(frozen=True)
class NodeCommand:
    """One node's serve command.

    Attributes:
        rank: the node rank (an int, or :data:`RANK` when a launcher supplies it).
        argv: the command the node runs to the end (items may hold :data:`HEAD` / :data:`RANK`
            / :data:`ADDR`): the serve command, or, on a Ray worker node, ``ray start --block``.
        env: variables to export first, in order.
        run_first: commands run before :attr:`argv`, each to completion (Ray's head:
            ``ray start --head``).
        node_env: variables each node sets to its own value before running (Ray: the engine's
            host-IP variable on the ranks whose address recipecli is not told).
    """

    rank: int | str
    argv: list[str]
    env: dict[str, str]
    run_first: tuple[list[str], ...] = ()
    node_env: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """``{"rank": ..., "argv": [...], "env": {...}}`` (``argv-json`` for N > 1), with
        ``run_first`` (a list of argvs) and ``node_env`` (names) when there are any."""
        out: dict[str, Any] = {"rank": self.rank, "argv": list(self.argv), "env": dict(self.env)}
        if self.run_first:
            out["run_first"] = [list(a) for a in self.run_first]
        if self.node_env:
            out["node_env"] = list(self.node_env)
        return out


@dataclass(frozen=True)
class NodePlan:
    """A serve command rendered for several nodes.

    Attributes:
        serve: the one-node serve command it is built from.
        options: what render was told.
        launch: the engine's multi-node flags.
        layout: the layout and its world size.
        port: the rendezvous port on the head.
        http_port: the port rank 0 serves HTTP on.
        notes: comment lines (the arithmetic, where the draft runs, what differs per rank).
    """

    serve: Rendered
    options: NodeOptions
    launch: NodeLaunch
    layout: NodeLayout
    port: int
    http_port: int
    notes: tuple[str, ...]

    @property
    def engine(self) -> str:
        return self.serve.engine

    @property
    def ray(self) -> bool:
        """The workers run on a Ray cluster (``backend="ray"``)."""
        return self.options.backend == "ray"

    def command(
        self, rank: int | str, head: str | None = None, own: str | None = None
    ) -> NodeCommand:
        """The command of node ``rank`` (:data:`RANK` for a launcher-supplied non-zero rank)
        with the head address ``head`` (default: ``--head-addr``; :data:`HEAD` for a
        launcher's variable) and, on Ray, the node's own address ``own`` (:data:`ADDR` for a
        launcher's variable; None: the head address on rank 0, a :attr:`NodeCommand.node_env`
        parameter on the others)."""
        addr = head if head is not None else self.options.head_addr
        if addr is None:
            raise UsageError("give --head-addr HOST (the rank-0 node's address)")
        if self.ray:
            return ray_command(self, rank, addr, own)
        return NodeCommand(rank, node_argv(self, rank, addr), node_env(self))

    def commands(self) -> list[NodeCommand]:
        """Every node's command, rank 0 first, with the literal ``--head-addr``."""
        return [self.command(r) for r in range(self.options.nodes)]

    def to_dict(self) -> dict[str, Any]:
        """``{"nodes": [{"rank", "argv", "env"}, ...]}`` (on Ray ``"backend": "ray"`` first)."""
        nodes = {"nodes": [c.to_dict() for c in self.commands()]}
        return {"backend": "ray", **nodes} if self.ray else nodes


def flag_value(serve: Rendered, field: str) -> Any:
    """The serve command's value of serve field ``field`` (its flag or an alias of it in the
    engine's catalog), None when the command does not set it."""
    flag = E.serve_flag(serve.engine, field)
    if flag is None:
        return None
    catalog = load_catalog(serve.engine)
    canonical = catalog.canonical(flag)
    found = [v for f, v in serve.flags if catalog.canonical(f) == canonical]
    return found[-1] if found else None


def _size(serve: Rendered, field: str) -> int:
    value = flag_value(serve, field)
    return int(value) if value not in (None, False, True) else 1


def node_layout(serve: Rendered, launch: NodeLaunch) -> NodeLayout:
    """The layout of ``serve`` and its world size as its engine counts it: TP x PP x DP (each
    DP rank a TP x PP group: vLLM ``EngineArgs.create_engine_config``, tokenspeed
    ``resolve_parallelism``), TP x PP with DP attention where the DP ranks split the TP group
    (SGLang, :attr:`NodeLaunch.dp_attention_in_tp`)."""
    tp = _size(serve, "tensor_parallel_size")
    pp = _size(serve, "pipeline_parallel_size")
    dp = _size(serve, "data_parallel_size")
    dp_attention = flag_value(serve, "enable_dp_attention") is True
    ep = flag_value(serve, "enable_expert_parallel") is True
    if dp_attention and launch.dp_attention_in_tp:
        world, counted = tp * pp, f"TP {tp} x PP {pp} (DP attention: the {dp} DP ranks split TP)"
    else:
        world, counted = tp * pp * dp, f"TP {tp} x PP {pp} x DP {dp}"
    return NodeLayout(tp, pp, dp, dp_attention, ep, world, counted)


def _n(count: int, noun: str, plural: str) -> str:
    """``1 GPU``, ``2 GPUs``: ``count`` and the noun in its number."""
    return f"{count} {noun if count == 1 else plural}"


def _check_world(engine: str, layout: NodeLayout, opts: NodeOptions) -> None:
    gpus = opts.nodes * opts.gpus_per_node
    if layout.world != gpus:
        raise RecipeError(
            f"{opts.nodes} nodes x {_n(opts.gpus_per_node, 'GPU', 'GPUs')} = {gpus}, but "
            f"{engine} runs {layout.counted} = "
            f"{_n(layout.world, 'worker process', 'worker processes')}",
            hint=f"set the sizes so they multiply to {gpus} (--set tensor_parallel_size=..., "
            "pipeline_parallel_size, data_parallel_size) or change --nodes/--gpus-per-node",
        )


def _check_options(engine: str, opts: NodeOptions) -> NodeLaunch:
    launch = engine_spec(engine).nodes
    if launch is None:
        raise UsageError(f"--nodes: recipecli renders {engine} for one node only")
    if opts.nodes < 2:
        raise UsageError(f"--nodes {opts.nodes}: give 2 or more (one node needs no --nodes)")
    if opts.gpus_per_node < 1:
        raise UsageError(f"--gpus-per-node {opts.gpus_per_node}: give 1 or more")
    if not opts.ifname:
        raise UsageError(
            f"--nodes {opts.nodes}: give --ifname IFACE, the network interface NCCL and Gloo "
            "bind on every node (left unset, Gloo binds what the hostname resolves to, "
            "often a loopback address)"
        )
    if opts.ifname in LOOPBACK:
        raise UsageError(
            f"--ifname {opts.ifname}: a loopback interface carries no traffic "
            "between nodes; give the NIC the nodes reach each other on"
        )
    if opts.backend not in BACKENDS:
        raise UsageError(f"--backend {opts.backend}: choose {' or '.join(BACKENDS)}")
    if opts.backend == "ray" and launch.ray_backend is None:
        raise UsageError(
            f"--backend ray: {engine} has no Ray executor at its pin; leave --backend out "
            "(its own multi-node flags on every node)"
        )
    return launch


def _check_ray_layout(layout: NodeLayout) -> None:
    """Ray renders one serve command whose TP x PP workers Ray places: no DP ranks."""
    if layout.dp > 1:
        raise RecipeError(
            f"--backend ray: recipecli renders one serve command on the Ray head, whose TP x "
            f"PP workers Ray places; data_parallel_size {layout.dp} runs one engine per DP rank",
            hint="render it without --backend ray (the engine's own multi-node flags), or set "
            "data_parallel_size=1",
        )


def _own_flags(launch: NodeLaunch, ray: bool = False) -> list[str]:
    flags = [launch.nnodes, launch.node_rank, launch.addr, launch.port, *launch.worker_flags]
    flags += [launch.nprocs_per_node, launch.world_size]
    if ray and launch.ray_backend:
        flags.append(launch.ray_backend[0])
    return [f for f in flags if f]


def _check_unset(serve: Rendered, launch: NodeLaunch, ray: bool = False) -> None:
    """The recipe sets none of the flags ``--nodes`` renders per node."""
    catalog = load_catalog(serve.engine)
    own = {catalog.canonical(f) for f in _own_flags(launch, ray)}
    taken = [f for f, _ in serve.flags if catalog.canonical(f) in own]
    if taken:
        raise RecipeError(
            f"the recipe sets {taken[0]}, which render --nodes sets per node",
            hint=f"remove {taken[0]} from the recipe's engine args",
        )


def plan_nodes(serve: Rendered, opts: NodeOptions, notes: Sequence[str] = ()) -> NodePlan:
    """Plan ``serve`` on ``opts.nodes`` nodes.

    Args:
        serve: a rendered serve command (:func:`recipecli.recipes.render.render_command`).
        opts: the node options.
        notes: extra comment lines (the draft's placement, from ``check``'s layout rules).

    Returns:
        :class:`NodePlan`.

    Raises:
        UsageError: ``serve`` is not a serve command; the engine has no multi-node launch;
            fewer than 2 nodes; no or a loopback ``--ifname``.
        RecipeError: the world size is not nodes x GPUs per node (with the arithmetic); the
            recipe sets a flag rendered per node.
    """
    if serve.what != "serve":
        raise UsageError(f"--nodes renders the serve command, not {serve.what}")
    launch = _check_options(serve.engine, opts)
    layout = node_layout(serve, launch)
    ray = opts.backend == "ray"
    if ray:
        _check_ray_layout(layout)
    _check_world(serve.engine, layout, opts)
    _check_unset(serve, launch, ray)
    port = opts.head_port or (RAY_PORT if ray else launch.default_port)
    http_port = int(flag_value(serve, "port") or engine_spec(serve.engine).default_port)
    first = (
        f"{serve.engine} on {opts.nodes} nodes x {_n(opts.gpus_per_node, 'GPU', 'GPUs')}: "
        f"{layout.counted} = {_n(layout.world, 'worker process', 'worker processes')}"
    )
    lines = (
        _ray_notes(launch, opts, port, http_port)
        if ray
        else _notes(launch, port, http_port, opts.head_addr)
    )
    lines = [first, *lines, *notes]
    return NodePlan(serve, opts, launch, layout, port, http_port, tuple(lines))


def _notes(launch: NodeLaunch, port: int, http_port: int, head: str | None = None) -> list[str]:
    """Comment lines of the engine's own multi-node launch: the head, what differs per rank."""
    where = head or "the launcher's head address"
    differ = f" and {', '.join(launch.worker_flags)} on the other ranks differ"
    return [
        f"head (rank 0): {where}, rendezvous port {port}; rank 0 serves HTTP on port "
        f"{http_port} ({launch.health} when ready)",
        f"only {launch.node_rank}"
        + (differ if launch.worker_flags else " differs")
        + " between nodes; the speculative flags are the same on every node",
    ]


def _ray_notes(launch: NodeLaunch, opts: NodeOptions, port: int, http_port: int) -> list[str]:
    """Comment lines of a Ray cluster: who runs what, where each node's address comes from."""
    head = opts.head_addr or "the launcher's head address"
    flag = " ".join(launch.ray_backend or ())
    var = launch.ray_host_ip
    return [
        f"Ray head (rank 0): {head}, port {port}; rank 0 runs ray start --head, then the one "
        f"serve command ({flag}; HTTP on port {http_port}, {launch.health} when ready); every "
        f"other rank runs ray start --address=HEAD:{port} --block",
        "the serve command places its workers on the Ray cluster's GPUs, one per worker, and "
        "waits for the nodes to join; the speculative flags are on that one command",
        *([f"{var}: each node's own address (exported before ray start)"] if var else []),
    ]


def node_argv(plan: NodePlan, rank: int | str, head: str) -> list[str]:
    """The serve argv of node ``rank`` with head address ``head``: the one-node command, then
    the engine's multi-node flags (:class:`NodeLaunch`) in its own names."""
    launch, opts = plan.launch, plan.options
    argv = list(plan.serve.argv)
    argv += [launch.nnodes, str(opts.nodes), launch.node_rank, str(rank)]
    if launch.nprocs_per_node:
        argv += [launch.nprocs_per_node, str(opts.gpus_per_node)]
    if launch.world_size:
        argv += [launch.world_size, str(plan.layout.world)]
    if launch.port:
        argv += [launch.addr, head, launch.port, str(plan.port)]
    else:
        argv += [launch.addr, f"{head}:{plan.port}"]
    if opts.timeout is not None and launch.timeout:
        argv += [launch.timeout, str(opts.timeout)]
    if rank != 0:
        argv += list(launch.worker_flags)
    return argv


def ray_command(plan: NodePlan, rank: int | str, head: str, own: str | None) -> NodeCommand:
    """Node ``rank``'s commands on a Ray cluster (vLLM examples/online_serving/run_cluster.sh;
    vllm/v1/executor/ray_utils.py initialize_ray_cluster joins the running cluster): rank 0
    runs ``ray start --head --node-ip-address=OWN --port=PORT``, then the serve command with
    :attr:`NodeLaunch.ray_backend` (and the timeout flag) and no per-node flags (vLLM
    ParallelConfig.__post_init__ refuses nnodes > 1 with Ray); every other rank runs
    ``ray start --address=HEAD:PORT --block``. :attr:`NodeLaunch.ray_host_ip` is the node's own
    address ``own`` (rank 0 default: ``head``; elsewhere, unset, a :attr:`NodeCommand.node_env`
    parameter)."""
    launch, env = plan.launch, node_env(plan)
    var = launch.ray_host_ip
    if rank == 0:
        own = own if own is not None else head
        argv = [*plan.serve.argv, *(launch.ray_backend or ())]
        if plan.options.timeout is not None and launch.timeout:
            argv += [launch.timeout, str(plan.options.timeout)]
        start = ["ray", "start", "--head", f"--node-ip-address={own}", f"--port={plan.port}"]
        return NodeCommand(rank, argv, env | ({var: own} if var else {}), (start,))
    argv = ["ray", "start", f"--address={head}:{plan.port}", "--block"]
    if var and own is not None:
        return NodeCommand(rank, argv, env | {var: own})
    return NodeCommand(rank, argv, env, node_env=(var,) if var else ())


def node_env(plan: NodePlan) -> dict[str, str]:
    """The env of every node: the serve command's, with a visible-devices list of the first K
    devices (as recipes and ``--set tensor_parallel_size`` derive it from the TP size) made the
    first ``gpus_per_node`` (one node's share of the world); any other list is kept as the
    recipe gives it. Then :data:`IFNAME_VARS` = ``--ifname``."""
    env = dict(plan.serve.env)
    per_node = ",".join(str(i) for i in range(plan.options.gpus_per_node))
    for var in E.VISIBLE_DEVICES_VARS:
        ids = env.get(var, "").split(",")
        if var in env and ids == [str(i) for i in range(len(ids))]:
            env[var] = per_node
    for var in IFNAME_VARS:
        env[var] = str(plan.options.ifname)
    return env


def shell_word(item: str, names: Mapping[str, str]) -> str:
    """``item`` as one shell word: :func:`shlex.quote`, or, when it holds :data:`HEAD` /
    :data:`RANK`, a double-quoted word expanding ``${NAME}`` for each (``names``: sentinel ->
    variable name); every other character is kept literal."""
    if not any(s in item for s in names):
        return shlex.quote(item)
    out = item
    for ch in ("\\", '"', "$", "`"):
        out = out.replace(ch, "\\" + ch)
    for sentinel, var in names.items():
        out = out.replace(sentinel, "${" + var + "}")
    return f'"{out}"'


def shell_command(
    argv: Sequence[str], names: Mapping[str, str], indent: str = "", *, exec_: bool = True
) -> str:
    """``argv`` as an ``exec`` line (a plain command line without ``exec_``) with one flag per
    continuation line (:func:`shell_word`)."""
    words = [shell_word(a, names) for a in argv]
    head = 0
    while head < len(words) and not argv[head].startswith("--"):
        head += 1
    lines = [" ".join(["exec"] * exec_ + words[:head])]
    i = head
    while i < len(words):
        j = i + 1
        while j < len(words) and not argv[j].startswith("--"):
            j += 1
        lines.append(" ".join(words[i:j]))
        i = j
    return (" \\\n" + indent + "  ").join(lines)


def export_lines(env: Mapping[str, str]) -> list[str]:
    """``export NAME=VALUE`` lines (values :func:`shlex.quote`d)."""
    return [f"export {k}={shlex.quote(scalar_text(v))}" for k, v in env.items()]
