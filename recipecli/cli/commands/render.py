"""`recipecli render RECIPE --engine vllm|tokenspeed|sglang`: serve, bench and eval commands from one
YAML recipe (a file or a bundled recipe name; `--list` shows the bundled ones)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from recipecli.cli.completion import complete_hardware, complete_recipe, complete_source
from recipecli.cli.params import GPU_COUNT, NET_NAME, NODE_COUNT, PORT, SECONDS
from recipecli.cli.terminal import print_json
from recipecli.errors import UsageError
from recipecli.recipes.engines import ENGINES, SERVE_CONFIG_FILE_FORMAT
from recipecli.recipes.targets import target_config_callback

if TYPE_CHECKING:  # the recipe library is imported when the command runs
    from recipecli.findings import Finding
    from recipecli.recipes.argv import Rendered
    from recipecli.recipes.loader import Recipe
    from recipecli.recipes.nodes import NodeOptions, NodePlan

#: formats only a deployment on several nodes has (``--nodes N``, N > 1)
NODE_FORMATS: tuple[str, ...] = ("lws", "slurm")


@click.command("render")
@click.argument("recipe", required=False, shell_complete=complete_recipe)
@click.option(
    "--engine",
    type=click.Choice(list(ENGINES)),
    help="Engine to render for (required, except with --list).",
)
@click.option(
    "--hardware",
    shell_complete=complete_hardware,
    help="Hardware profile of the recipe (default: its default_hardware).",
)
@click.option(
    "--what",
    type=click.Choice(["serve", "bench", "eval", "all"]),
    default="serve",
    show_default=True,
    help="Which command(s) to render.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(
        ["shell", "argv-json", *dict.fromkeys(SERVE_CONFIG_FILE_FORMAT.values()), *NODE_FORMATS]
    ),
    default="shell",
    show_default=True,
    help="shell: export lines + one flag per line (with --nodes: one script, a block per "
    "rank picked by NODE_RANK); argv-json: {env, argv} (with --nodes: {nodes: [{rank, argv, "
    "env}]}); vllm-config: YAML for `vllm serve --config` (serve only); lws: a "
    "LeaderWorkerSet, slurm: an sbatch script (both need --nodes).",
)
@click.option(
    "--nodes",
    type=NODE_COUNT,
    help="Render the serve command for N nodes (default: the recipe's nodes, else 1): one "
    "command per node rank with the engine's multi-node flags.",
)
@click.option(
    "--gpus-per-node",
    type=GPU_COUNT,
    default=8,
    show_default=True,
    help="GPUs of each node (with --nodes): nodes x GPUs must equal the engine's world size.",
)
@click.option(
    "--head-addr",
    type=NET_NAME,
    metavar="HOST",
    help="Address of the rank-0 node (with --nodes; shell and argv-json need it, lws and "
    "slurm take it from the launcher).",
)
@click.option(
    "--head-port",
    type=PORT,
    help="Rendezvous port on the head (with --nodes; default: the engine's).",
)
@click.option(
    "--ifname",
    type=NET_NAME,
    metavar="IFACE",
    help="Network interface NCCL and Gloo bind on every node (required with --nodes: "
    "NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME).",
)
@click.option(
    "--dist-timeout",
    type=SECONDS,
    metavar="SECONDS",
    help="torch.distributed start-up timeout, as the engine's own flag (with --nodes).",
)
@click.option(
    "--backend",
    type=click.Choice(["native", "ray"]),
    help="How the nodes start (with --nodes): native (default): the engine's own multi-node "
    "flags on every node; ray: one serve command on a Ray cluster's head "
    "(vLLM --distributed-executor-backend ray), `ray start` on every node.",
)
@click.option(
    "--image",
    metavar="IMAGE",
    help="Container image with the engine (--format lws; required there).",
)
@click.option(
    "--target-config",
    metavar="SOURCE",
    shell_complete=complete_source,
    callback=target_config_callback,
    help="Where to read the target's config.json (dir, config.json, snapshot, repo id).",
)
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="NAME=VALUE",
    help="Override a serve field (max_model_len=65536), target, draft, a speculative field "
    "(speculative.num_speculative_tokens=5), an engine flag of the shipped catalog "
    "(served-model-name=m3; enforce-eager=false drops it), a bench flag (num_prompts=100; "
    "max_concurrency=1,4,16 renders one bench command each), hf-overrides={JSON} or "
    "text_overrides.KEY=JSON. VALUE is typed by the flag it sets: text verbatim, integers and "
    "numbers parsed and range-checked, JSON for JSON flags, true/false for switches; an empty "
    "VALUE drops the flag. Last wins. Repeatable.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Render anyway: for an engine the recipe marks unsupported, and with overrides the "
    "engine would drop (an engine flag inside --hf-overrides, a key it would set where nothing "
    "reads it); both are reported as warnings instead of errors.",
)
@click.option("--list", "list_", is_flag=True, help="List the bundled recipes and exit.")
@click.option(
    "--templates",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Directory of templates overriding the bundled ones.",
)
def command(
    recipe: str | None,
    engine: str | None,
    hardware: str | None,
    what: str,
    fmt: str,
    target_config: str | None,
    sets: tuple[str, ...],
    force: bool,
    list_: bool,
    templates: str | None,
    **node: Any,
) -> int:
    """Render commands for ENGINE from RECIPE.

    Example: recipecli render minimax-m3-eagle3 --engine vllm --hardware mi355x --what all
    """
    from recipecli.recipes.loader import load_recipe
    from recipecli.recipes.render import check_config_file_format, render_all

    if list_:
        return _list_bundled()
    if recipe is None:
        raise UsageError("missing RECIPE (a file or a bundled name; see `recipecli render --list`)")
    if engine is None:
        raise UsageError(f"missing --engine ({', '.join(ENGINES)})")
    if fmt in SERVE_CONFIG_FILE_FORMAT.values():
        check_config_file_format(fmt, engine, what)

    loaded = load_recipe(recipe)
    opts = _node_options(node, loaded, fmt)
    if opts is not None:
        args = (loaded, engine, hardware, what, fmt, sets, force, templates, opts)
        return _render_nodes(*args, image=node["image"], target_config=target_config)
    rendered = render_all(
        loaded,
        engine,
        hardware=hardware,
        what=what,
        sets=sets,
        target_config=target_config,
        force=force,
    )
    _warn(rendered, _pair_warnings(loaded, rendered, hardware, sets, force))
    _print(rendered, fmt, loaded.name, templates)
    return 0


def _pair_warnings(
    recipe: Recipe,
    rendered: Sequence[Rendered],
    hardware: str | None,
    sets: Sequence[str],
    force: bool,
) -> list[Finding]:
    """check's verdict on the served pair (:func:`recipecli.recipecheck.pair_gate`) when a serve
    command is rendered: refuses a TP layout the engine refuses; returns its warnings."""
    from recipecli.recipecheck import pair_gate
    from recipecli.recipes.render import own_draft, set_draft

    serve = next((r for r in rendered if r.what == "serve"), None)
    if serve is None:
        return []
    mine = own_draft(recipe, hardware, set_draft(sets))
    return pair_gate(recipe, serve, sets=sets, force=force, recipe_draft=mine)


def _list_bundled() -> int:
    """``render --list``: per bundled recipe, ``name<TAB>title<TAB>(engines: …; hardware: …)``
    (the engines the recipe does not mark unsupported)."""
    from recipecli.recipes.loader import bundled_names, load_recipe

    for name in bundled_names():
        r = load_recipe(name)
        click.echo(
            f"{name}\t{r.get('title', '')}\t(engines: "
            + ", ".join(e for e in ENGINES if e not in (r.get("unsupported") or {}))
            + f"; hardware: {', '.join(r.get('hardware') or {}) or 'none'})"
        )
    return 0


def _warn(rendered: Sequence[Rendered], extra: Sequence[Finding] = ()) -> None:
    """Each distinct warning of the rendered commands (then ``extra``) once on stderr, where it
    comes from first (``recipecli: warning: FILE:LINE: message``)."""
    shown: set[str] = set()
    for w in [w for r in rendered for w in r.warnings] + list(extra):
        if w.message not in shown:
            shown.add(w.message)
            where = w.source.partition("; ")[0]
            click.echo(f"recipecli: warning: {where}: {w.message}", err=True)


def _print(rendered: Sequence[Rendered], fmt: str, name: str, templates: str | None) -> None:
    """The rendered commands on stdout in ``fmt``: ``argv-json`` (one ``{env, argv}`` document,
    or a list of them with ``what`` / ``point`` when there are several), ``vllm-config`` (the
    serve command as YAML for ``vllm serve --config``) or ``shell``."""
    from recipecli.recipes.render import shell_text, vllm_config_text

    if fmt == "argv-json":
        docs = [
            r.to_dict()
            | ({"what": r.what} if len(rendered) > 1 else {})
            | ({"point": r.point} if r.point else {})
            for r in rendered
        ]
        print_json(docs[0] if len(docs) == 1 else docs, ok=True)  # render exits 0 or raises
    elif fmt == "vllm-config":
        click.echo(vllm_config_text(rendered[0], name, templates=templates), nl=False)
    else:
        click.echo(shell_text(rendered, templates=templates), nl=False)


def _node_options(node: dict[str, Any], recipe: Recipe, fmt: str) -> NodeOptions | None:
    """The node options of ``render`` (``node``: the --nodes ... --image values), None for one
    node (``--nodes``, else the recipe's ``nodes``, at most 1).

    Raises:
        UsageError: a node-only format or option without more than one node.
    """
    count = node["nodes"] if node["nodes"] is not None else recipe.get("nodes")
    if count and count > 1:
        from recipecli.recipes.nodes import NodeOptions  # only when several nodes are rendered

        return NodeOptions(count, node["gpus_per_node"], node["head_addr"], node["head_port"],
                           node["ifname"], node["dist_timeout"],
                           node["backend"] or "native")  # fmt: skip
    if fmt in NODE_FORMATS:
        raise UsageError(f"--format {fmt} renders several nodes: give --nodes N (2 or more)")
    names = ("head_addr", "head_port", "ifname", "dist_timeout", "backend", "image")
    given = [n for n in names if node[n] is not None]
    if given:
        flag = "--" + given[0].replace("_", "-")
        raise UsageError(f"{flag} is for several nodes: give --nodes N (2 or more)")
    return None


def _render_nodes(
    recipe: Recipe,
    engine: str,
    hardware: str | None,
    what: str,
    fmt: str,
    sets: Sequence[str],
    force: bool,
    templates: str | None,
    opts: NodeOptions,
    *,
    image: str | None,
    target_config: str | None,
) -> int:
    """``render --nodes N`` (N > 1): the serve command planned on N nodes
    (:func:`recipecli.recipes.nodes.plan_nodes`), the layout checked by ``check``'s rules
    (:func:`recipecli.recipes.node_gate.layout_gate`), printed in ``fmt``."""
    from dataclasses import replace

    from recipecli.recipes.node_gate import layout_gate
    from recipecli.recipes.nodes import plan_nodes
    from recipecli.recipes.render import render_all

    if what != "serve":
        raise UsageError(f"--nodes renders the serve command: use --what serve, not {what}")
    if fmt in SERVE_CONFIG_FILE_FORMAT.values():
        raise UsageError(f"--format {fmt} describes one node: use shell, argv-json, lws or slurm")
    if fmt in ("shell", "argv-json") and opts.head_addr is None:
        raise UsageError(
            f"--nodes {opts.nodes} --format {fmt}: give --head-addr HOST (the "
            "rank-0 node's address; lws and slurm take it from the launcher)"
        )
    if fmt == "lws" and not image:
        raise UsageError("--format lws: give --image IMAGE (the container image with the engine)")
    rendered = render_all(
        recipe,
        engine,
        hardware=hardware,
        what="serve",
        sets=sets,
        target_config=target_config,
        force=force,
    )
    warnings = _pair_warnings(recipe, rendered, hardware, sets, force)
    plan = plan_nodes(rendered[0], opts)
    notes, layout_warnings = layout_gate(rendered[0], plan.layout, opts, force=force)
    plan = replace(plan, notes=plan.notes + tuple(notes))
    _warn(rendered, [*warnings, *layout_warnings])
    _print_nodes(plan, fmt, recipe, templates, image)
    return 0


def _print_nodes(
    plan: NodePlan, fmt: str, recipe: Recipe, templates: str | None, image: str | None
) -> None:
    """A node plan on stdout in ``fmt`` (:mod:`recipecli.recipes.launchers`)."""
    from recipecli.recipes.launchers import PodOptions, lws_text, nodes_shell_text, slurm_text

    name = f"{recipe.name}-{plan.engine}".replace(".", "-")
    if fmt == "argv-json":
        print_json(plan.to_dict())
    elif fmt == "slurm":
        click.echo(slurm_text(plan, name, templates=templates), nl=False)
    elif fmt == "lws":
        vendor = _vendor(recipe, plan.serve.hardware)
        pod = PodOptions(name, str(image), "amd.com/gpu" if vendor == "amd" else "nvidia.com/gpu")
        click.echo(lws_text(plan, pod, templates=templates), nl=False)
    else:
        click.echo(nodes_shell_text(plan, templates=templates), nl=False)


def _vendor(recipe: Recipe, hardware: str | None) -> str | None:
    """The GPU vendor of ``hardware``'s profile (``amd``, ``nvidia``), None without one."""
    profile = ((recipe.get("hardware") or {}).get(hardware) or {}) if hardware else {}
    vendor = profile.get("vendor")
    return str(vendor) if vendor else None
