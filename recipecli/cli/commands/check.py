"""`recipecli check TARGET DRAFT` and `recipecli check --recipe RECIPE`."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

import click

from recipecli.cli.completion import complete_example, complete_hardware, complete_recipe
from recipecli.cli.hub_option import timeout_option
from recipecli.cli.params import KERNEL_MODE, TP_SIZES
from recipecli.cli.terminal import print_json, style
from recipecli.engines import ENGINES
from recipecli.engines.layout import ROLES, LayoutRequest, Role
from recipecli.errors import EXIT_FINDINGS, EXIT_OK, UsageError

if TYPE_CHECKING:
    from recipecli.draft.formats import StatedConvention

#: ``--method``'s choices: ``auto`` and recipecli.engines.methods.METHODS (written here so that
#: ``--help`` imports no checkpoint code; tests/methods asserts they agree)
METHOD_CHOICES: tuple[str, ...] = ("auto", "eagle", "eagle3", "mtp", "dflash", "dspark")

#: ``--aux-id-convention``'s choices: recipecli.draft.STATED_CONVENTIONS (written here so that
#: ``--help`` imports no checkpoint code; tests/draft asserts they agree)
AUX_ID_CONVENTIONS: tuple[str, ...] = ("layer-output", "hidden-state", "boundary")

#: Options ``--recipe`` takes from the recipe's serve command instead.
RECIPE_SETTINGS: tuple[tuple[str, str], ...] = (
    ("tp", "--tp"),
    ("draft_tp", "--draft-tp"),
    ("max_model_len", "--max-model-len"),
)


class _CheckCommand(click.Command):
    """``check``'s usage line names its three ways to give the pair (TARGET and DRAFT are
    optional to click only because ``--example`` and ``--recipe`` replace them)."""

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        return ["[OPTIONS]", "(TARGET DRAFT | --example NAME | --recipe NAME_OR_FILE)"]


@click.command("check", cls=_CheckCommand)
@click.argument("target", required=False)
@click.argument("draft", required=False)
@click.option(
    "--example",
    default=None,
    shell_complete=complete_example,
    help="Check a bundled example pair by name (see --list-examples).",
)
@click.option("--list-examples", is_flag=True, help="List the bundled example pairs.")
@click.option(
    "--recipe",
    default=None,
    metavar="NAME_OR_FILE",
    shell_complete=complete_recipe,
    help="Check the pair a recipe deploys, at its serve command's TP, draft TP and "
    "max_model_len, for each engine (bundled snapshots when recipecli ships them, else the "
    "usual SOURCE lookup).",
)
@click.option(
    "--hardware",
    default=None,
    shell_complete=complete_hardware,
    help="With --recipe: its hardware profile (default: the recipe's default_hardware).",
)
@click.option("--engine", type=click.Choice([*ENGINES, "all"]), default="all", show_default=True)
@click.option(
    "--tp",
    "tp",
    type=TP_SIZES,
    default="1,2,4,8",
    show_default=True,
    help="Target tensor-parallel sizes to check.",
)
@click.option(
    "--draft-tp",
    type=click.IntRange(min=1),
    default=None,
    help="vLLM draft_tensor_parallel_size (default: the target TP).",
)
@click.option(
    "--pp",
    "pp",
    type=TP_SIZES,
    default="1",
    show_default=True,
    help="Pipeline-parallel sizes to check (a list, like --tp): the layouts checked are the "
    "product of the lists. Any layout option prints a layout matrix per engine.",
)
@click.option(
    "--dp", type=click.IntRange(min=1), default=1, show_default=True, help="Data-parallel size."
)
@click.option("--dp-attention", is_flag=True, help="DP attention (SGLang --enable-dp-attention).")
@click.option("--ep", is_flag=True, help="Expert parallelism.")
@click.option(
    "--role",
    type=click.Choice(ROLES),
    default="both",
    show_default=True,
    help="Prefill/decode disaggregation role (both = an aggregate server).",
)
@click.option(
    "--nodes",
    type=click.IntRange(min=1),
    default=None,
    help="Nodes available: a layout taking more than nodes x --gpus-per-node GPUs is reported "
    "once, not checked.",
)
@click.option(
    "--gpus-per-node",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="GPUs per node.",
)
@click.option(
    "--max-model-len",
    type=click.IntRange(min=1),
    default=None,
    help="Serving length (default: target max_position_embeddings).",
)
@click.option(
    "--method",
    type=click.Choice(METHOD_CHOICES),
    default="auto",
    show_default=True,
    help="Speculative method to check: auto = detect from the draft's config "
    "(EAGLE3 drafts are checked as before); mtp needs no DRAFT (the target's own MTP layers).",
)
@click.option(
    "--num-speculative-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="Tokens per step, for the method rules (vLLM's MTP n_predict multiple).",
)
@click.option(
    "--kernel",
    type=KERNEL_MODE,
    default="auto",
    show_default=True,
    help="Verify the fused RMSNorm kernel against its reference on the draft's own norms: "
    "auto = the cached verification of the same dtype, widths and eps (from an earlier "
    "--kernel on) when one matches, else a kernel.skipped note (no torch or triton import); "
    "on = run it now (CUDA if present, else Triton's CPU interpreter: a few seconds) and cache "
    "it; cpu, cuda = run on that device for this check; skip = do not. "
    "Without torch/triton installed: a kernel.skipped note.",
)
@click.option(
    "--aux-id-convention",
    type=click.Choice(AUX_ID_CONVENTIONS),
    default=None,
    help="Convention the draft's aux ids are written in, when its format does not say or says "
    "otherwise: layer-output (SpecForge/ModelOpt: hidden state id + 1), hidden-state "
    "(speculators/vLLM), boundary (0 = embedding output .. L = last layer's output). "
    "Read by the aux findings before the format's.",
)
@click.option("--revision", default=None, help="Hub revision for the target.")
@click.option("--draft-revision", default=None, help="Hub revision for the draft.")
@timeout_option
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON document: target, draft, findings, embed_sharing, ok.",
)
@click.option("--strict", is_flag=True, help="Warnings also fail (exit 1).")
@click.option(
    "--explain",
    is_flag=True,
    help="Also show each engine's accounting: every config key read, defaulted or ignored, "
    "every tensor loaded (into which parameter), skipped or dropped, every parameter filled "
    "or left at init (--json: engines.<engine>.accounting).",
)
@click.pass_context
def command(
    ctx: click.Context,
    target: str | None,
    draft: str | None,
    example: str | None,
    list_examples: bool,
    recipe: str | None,
    hardware: str | None,
    engine: str,
    tp: tuple[int, ...],
    draft_tp: int | None,
    max_model_len: int | None,
    pp: tuple[int, ...],
    dp: int,
    dp_attention: bool,
    ep: bool,
    role: Role,
    nodes: int | None,
    gpus_per_node: int,
    method: str,
    num_speculative_tokens: int | None,
    kernel: str,
    aux_id_convention: StatedConvention | None,
    revision: str | None,
    draft_revision: str | None,
    as_json: bool,
    strict: bool,
    explain: bool,
    timeout: float | None,
) -> int:
    """Will DRAFT (an EAGLE3 draft) serve with TARGET on vLLM, tokenspeed and SGLang, at each TP size?

    TARGET and DRAFT are checkpoint directories, snapshot .json files or Hub repo ids. Exit 0 when
    no finding is an error, 1 when some is, 2 for bad input.

    With --recipe, the target and draft of a recipe's hardware profile at the TP size, vLLM
    draft TP and --max-model-len of the serve command `recipecli render` prints for each engine.

    \b
    Examples:
      recipecli check --example llama3.1-8b-eagle3
      recipecli check --recipe llama3.1-8b-eagle3
      recipecli check --recipe ./my-recipe.yaml --hardware mi355x --engine vllm
      recipecli check ./Llama-3.1-8B-Instruct ./EAGLE3-LLaMA3.1-Instruct-8B --engine vllm --tp 1,2
      recipecli check nvidia/MiniMax-M3-NVFP4 Inferact/MiniMax-M3-EAGLE3 --json
      recipecli check --example llama3.1-8b-eagle3 --tp 4,8 --pp 1,2 --nodes 2
    """
    if list_examples:
        return _list_examples()
    layouts = _layout_request(
        ctx, LayoutRequest(pp, dp, dp_attention, ep, role, nodes, gpus_per_node)
    )
    if recipe is not None:
        _refuse_beside_recipe(ctx, target, draft, example)
        if layouts is not None:
            raise UsageError(_RECIPE_LAYOUT)
        return _check_recipe(
            recipe, hardware, engine, kernel, (revision, draft_revision), as_json, strict, timeout,
            explain,
        )  # fmt: skip
    if hardware is not None:
        raise UsageError("--hardware needs --recipe NAME_OR_FILE")
    target, draft = _pair(target, draft, example, method)
    settings: _RunSettings = {"tps": tp, "draft_tp": draft_tp, "max_model_len": max_model_len,
        "kernel": kernel, "layouts": layouts, "method": method,
        "num_speculative_tokens": num_speculative_tokens, "explain": explain,
        "aux_id_convention": aux_id_convention}  # fmt: skip
    return _check_pair(
        (target, revision), (draft, draft_revision), engine, settings, as_json, strict, timeout
    )


#: why ``check --recipe`` refuses the layout options: the recipe's serve fields are its layout
_RECIPE_LAYOUT = (
    "the layout options (--pp, --dp, --dp-attention, --ep, --role, --nodes, --gpus-per-node) "
    "do not take --recipe, whose serve command is the layout: put it in the recipe's serve "
    "fields (pipeline_parallel_size, data_parallel_size, enable_dp_attention, "
    "enable_expert_parallel) and its nodes, or check the recipe's pair as TARGET DRAFT with "
    "the layout options"
)

#: the options that make check look beyond TP (issue #25)
LAYOUT_OPTIONS: tuple[str, ...] = (
    "pp",
    "dp",
    "dp_attention",
    "ep",
    "role",
    "nodes",
    "gpus_per_node",
)


def _layout_request(ctx: click.Context, req: LayoutRequest) -> LayoutRequest | None:
    """``req`` when any of :data:`LAYOUT_OPTIONS` is given on the command line, else None
    (today's TP-only check and output)."""
    given = any(
        ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE
        for name in LAYOUT_OPTIONS
    )
    return req if given else None


def _list_examples() -> int:
    """``check --list-examples``: one ``name<TAB>description`` line per bundled example pair."""
    from recipecli.examples import DESCRIPTIONS, list_example_names

    for name in list_example_names():
        click.echo(f"{name}\t{DESCRIPTIONS.get(name, '')}")
    return EXIT_OK


def _refuse_beside_recipe(
    ctx: click.Context, target: str | None, draft: str | None, example: str | None
) -> None:
    """``--recipe`` names the pair and its serve settings: refuse a second pair and the
    :data:`RECIPE_SETTINGS` options given on the command line.

    Raises:
        UsageError: TARGET, DRAFT or --example given too, or --tp / --draft-tp /
            --max-model-len given, or --aux-id-convention.
    """
    if target or draft or example:
        raise UsageError("give --recipe NAME_OR_FILE, --example NAME or TARGET DRAFT, not two")
    if ctx.params.get("aux_id_convention") is not None:
        raise UsageError(
            "--aux-id-convention takes TARGET DRAFT or --example, not --recipe; check the "
            "recipe's pair as TARGET DRAFT --aux-id-convention ..."
        )
    for name, flag in RECIPE_SETTINGS:
        if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE:
            raise UsageError(
                f"{flag} comes from the recipe with --recipe (its serve command); drop "
                f"{flag}, change the recipe, or check TARGET DRAFT {flag} ..."
            )


def _pair(
    target: str | None, draft: str | None, example: str | None, method: str = "auto"
) -> tuple[str, str]:
    """The (target, draft) SOURCEs: the bundled example's, or TARGET DRAFT (TARGET TARGET for
    ``--method mtp`` without DRAFT: the engines load the MTP draft from the target's checkpoint).

    Raises:
        UsageError: both or neither given, or an unknown example name.
    """
    from recipecli.examples import example_pair

    if draft is None and method == "mtp" and target and not example:
        return target, target
    if example:
        if target or draft:
            raise UsageError("give either --example NAME or TARGET DRAFT, not both")
        _refuse_recipe_as_example(example)
        return example_pair(example)
    if target and not draft:
        raise UsageError(
            f"missing DRAFT (TARGET is {target}); give TARGET DRAFT, --example NAME or "
            "--recipe NAME_OR_FILE; see recipecli check --help"
        )
    if not (target and draft):
        raise UsageError(
            "missing TARGET and DRAFT (or --example NAME, or --recipe NAME_OR_FILE); "
            "see recipecli check --help"
        )
    return target, draft


def _refuse_recipe_as_example(name: str) -> None:
    """``--example NAME`` where NAME is a bundled recipe, not an example pair.

    Raises:
        UsageError: naming ``--recipe NAME``.
    """
    from recipecli.examples import EXAMPLES
    from recipecli.recipes.loader import bundled_names

    if name not in EXAMPLES and name in bundled_names():
        raise UsageError(
            f"--example {name}: {name} is a bundled recipe, not an example pair; check it with "
            f"recipecli check --recipe {name}"
        )


class _RunSettings(TypedDict):
    """The keyword arguments of :func:`recipecli.check.run_check` the options set."""

    tps: tuple[int, ...]
    draft_tp: int | None
    max_model_len: int | None
    kernel: str
    layouts: LayoutRequest | None
    method: str
    num_speculative_tokens: int | None
    explain: bool
    aux_id_convention: StatedConvention | None


def _check_pair(
    target: tuple[str, str | None],
    draft: tuple[str, str | None],
    engine: str,
    settings: _RunSettings,
    as_json: bool,
    strict: bool,
    timeout: float | None,
) -> int:
    """``check TARGET DRAFT``: open both (SOURCE, revision), run the checkpoint rules and the
    engine models (``engine`` or ``all``), print the result; exit 1 when it fails."""
    from recipecli.check import format_result, run_check
    from recipecli.checkpoint import open_checkpoint

    engines = ENGINES if engine == "all" else (engine,)
    target_ck = open_checkpoint(target[0], target[1], timeout=timeout)
    same = draft == target and settings["method"] == "mtp"
    draft_ck = target_ck if same else open_checkpoint(draft[0], draft[1], timeout=timeout)
    res = run_check(target_ck, draft_ck, engines=engines, **settings)
    if as_json:
        print_json(res.to_dict(strict), ok=res.ok(strict))
    else:
        look = style()
        click.echo(format_result(res, strict=strict, **look), color=look["color"])
    return EXIT_OK if res.ok(strict) else EXIT_FINDINGS


def _check_recipe(
    ref: str,
    hardware: str | None,
    engine: str,
    kernel: str,
    revisions: tuple[str | None, str | None],
    as_json: bool,
    strict: bool,
    timeout: float | None,
    explain: bool = False,
) -> int:
    """``check --recipe``: :func:`recipecli.recipecheck.check_recipe`, printed (with each run's
    accounting under ``--explain``); exit 1 when any run fails."""
    from recipecli.recipecheck import check_recipe

    result = check_recipe(
        ref,
        hardware=hardware,
        engine=engine,
        kernel=kernel,
        revision=revisions[0],
        draft_revision=revisions[1],
        timeout=timeout,
        explain=explain,
    )
    if as_json:
        print_json(result.to_dict(strict), ok=result.ok(strict))
    else:
        look = style()
        click.echo(result.format_text(strict=strict, **look), color=look["color"])
    return EXIT_OK if result.ok(strict) else EXIT_FINDINGS
