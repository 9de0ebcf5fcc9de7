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
    """

    nodes: int
    gpus_per_node: int = 8
    head_addr: str | None = None
    head_port: int | None = None
    ifname: str | None = None
    timeout: int | None = None


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
        argv: the command (items may hold :data:`HEAD` / :data:`RANK`).
        env: variables to export first, in order.
    """

    rank: int | str
    argv: list[str]
    env: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        """``{"rank": ..., "argv": [...], "env": {...}}`` (``argv-json`` for N > 1)."""
        return {"rank": self.rank, "argv": list(self.argv), "env": dict(self.env)}


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

    def command(self, rank: int | str, head: str | None = None) -> NodeCommand:
        """The command of node ``rank`` (:data:`RANK` for a launcher-supplied non-zero rank)
        with the head address ``head`` (default: ``--head-addr``; :data:`HEAD` for a
        launcher's variable)."""
        addr = head if head is not None else self.options.head_addr
        if addr is None:
            raise UsageError("give --head-addr HOST (the rank-0 node's address)")
        return NodeCommand(rank, node_argv(self, rank, addr), node_env(self))

    def commands(self) -> list[NodeCommand]:
        """Every node's command, rank 0 first, with the literal ``--head-addr``."""
        return [self.command(r) for r in range(self.options.nodes)]

    def to_dict(self) -> dict[str, Any]:
        """``{"nodes": [{"rank", "argv", "env"}, ...]}``."""
        return {"nodes": [c.to_dict() for c in self.commands()]}


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


def _check_world(engine: str, layout: NodeLayout, opts: NodeOptions) -> None:
    gpus = opts.nodes * opts.gpus_per_node
    if layout.world != gpus:
        raise RecipeError(
            f"{opts.nodes} nodes x {opts.gpus_per_node} GPUs = {gpus}, but {engine} runs "
            f"{layout.counted} = {layout.world} worker processes",
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
    return launch


def _own_flags(launch: NodeLaunch) -> list[str]:
    flags = [launch.nnodes, launch.node_rank, launch.addr, launch.port, *launch.worker_flags]
    flags += [launch.nprocs_per_node, launch.world_size]
    return [f for f in flags if f]


def _check_unset(serve: Rendered, launch: NodeLaunch) -> None:
    """The recipe sets none of the flags ``--nodes`` renders per node."""
    catalog = load_catalog(serve.engine)
    own = {catalog.canonical(f) for f in _own_flags(launch)}
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
    _check_world(serve.engine, layout, opts)
    _check_unset(serve, launch)
    port = opts.head_port or launch.default_port
    http_port = int(flag_value(serve, "port") or engine_spec(serve.engine).default_port)
    head = opts.head_addr or "the launcher's head address"
    lines = [
        f"{serve.engine} on {opts.nodes} nodes x {opts.gpus_per_node} GPUs: {layout.counted} = "
        f"{layout.world} worker processes",
        f"head (rank 0): {head}, rendezvous port {port}; rank 0 serves HTTP on port "
        f"{http_port} ({launch.health} when ready)",
        f"only {launch.node_rank}"
        + (
            f" and {', '.join(launch.worker_flags)} on the other ranks"
            if launch.worker_flags
            else ""
        )
        + (" differ" if launch.worker_flags else " differs")
        + " between nodes; the speculative flags are the same on every node",
        *notes,
    ]
    return NodePlan(serve, opts, launch, layout, port, http_port, tuple(lines))


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


def shell_command(argv: Sequence[str], names: Mapping[str, str], indent: str = "") -> str:
    """``argv`` as an ``exec`` line with one flag per continuation line (:func:`shell_word`)."""
    words = [shell_word(a, names) for a in argv]
    head = 0
    while head < len(words) and not argv[head].startswith("--"):
        head += 1
    lines = [" ".join(["exec", *words[:head]])]
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
