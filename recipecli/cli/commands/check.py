"""`recipecli check TARGET DRAFT` and `recipecli check --recipe RECIPE`."""

from __future__ import annotations

from typing import Any

import click

from recipecli.cli.completion import complete_example, complete_hardware, complete_recipe
from recipecli.cli.hub_option import timeout_option
from recipecli.cli.params import KERNEL_MODE, TP_SIZES
from recipecli.cli.terminal import print_json, style
from recipecli.engines import ENGINES
from recipecli.errors import EXIT_FINDINGS, EXIT_OK, UsageError

#: Options ``--recipe`` takes from the recipe's serve command instead.
RECIPE_SETTINGS: tuple[tuple[str, str], ...] = (
    ("tp", "--tp"),
    ("draft_tp", "--draft-tp"),
    ("max_model_len", "--max-model-len"),
)


@click.command("check")
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
    "--max-model-len",
    type=click.IntRange(min=1),
    default=None,
    help="Serving length (default: target max_position_embeddings).",
)
@click.option(
    "--kernel",
    type=KERNEL_MODE,
    default="auto",
    show_default=True,
    help="Run the fused RMSNorm kernel against its reference on the draft's own norms: "
    "auto = CUDA if present, else Triton's CPU interpreter; skip = do not (no torch import). "
    "Without torch/triton installed: a kernel.skipped note.",
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
@click.pass_context
def command(
    ctx: click.Context,
    target,
    draft,
    example,
    list_examples,
    recipe,
    hardware,
    engine,
    tp,
    draft_tp,
    max_model_len,
    kernel,
    revision,
    draft_revision,
    as_json,
    strict,
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
    """
    from recipecli.check import ENGINES, format_result, run_check
    from recipecli.checkpoint import open_checkpoint
    from recipecli.examples import example_pair, list_example_names

    if list_examples:
        from recipecli.examples import DESCRIPTIONS

        for name in list_example_names():
            click.echo(f"{name}\t{DESCRIPTIONS.get(name, '')}")
        return EXIT_OK
    if recipe is not None:
        if target or draft or example:
            raise UsageError("give --recipe NAME_OR_FILE, --example NAME or TARGET DRAFT, not two")
        for name, flag in RECIPE_SETTINGS:
            if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE:
                raise UsageError(
                    f"{flag} comes from the recipe with --recipe (its serve command); drop "
                    f"{flag}, change the recipe, or check TARGET DRAFT {flag} ..."
                )
        return _check_recipe(
            recipe, hardware, engine, kernel, revision, draft_revision, as_json, strict
        )
    if hardware is not None:
        raise UsageError("--hardware needs --recipe NAME_OR_FILE")
    if example:
        if target or draft:
            raise UsageError("give either --example NAME or TARGET DRAFT, not both")
        target, draft = example_pair(example)
    elif not (target and draft):
        raise UsageError(
            "missing TARGET and DRAFT (or --example NAME, or --recipe NAME_OR_FILE); "
            "see recipecli check --help"
        )
    engines = ENGINES if engine == "all" else (engine,)
    target_ck = open_checkpoint(target, revision)
    draft_ck = open_checkpoint(draft, draft_revision)
    res = run_check(
        target_ck,
        draft_ck,
        engines=engines,
        tps=tp,
        draft_tp=draft_tp,
        max_model_len=max_model_len,
        kernel=kernel,
    )
    if as_json:
        print_json(res.to_dict(strict))
    else:
        look = style()
        click.echo(format_result(res, strict=strict, **look), color=look["color"])
    return EXIT_OK if res.ok(strict) else EXIT_FINDINGS


def _open_source(source: str, revision: str | None) -> Any:
    """A recipe's target or draft: recipecli's bundled snapshot of that repo id when it ships
    one (offline), else :func:`recipecli.checkpoint.open_checkpoint` (directory, snapshot file,
    HF cache, then the Hub)."""
    from recipecli.checkpoint import open_checkpoint
    from recipecli.docsgen import bundled_snapshots

    snap = bundled_snapshots().get(source) if revision is None else None
    return open_checkpoint(snap if snap is not None else source, revision)


def _check_recipe(
    ref: str,
    hardware: str | None,
    engine: str,
    kernel: str,
    revision: str | None,
    draft_revision: str | None,
    as_json: bool,
    strict: bool,
) -> int:
    """``check --recipe``: one check run per distinct deployment of the recipe's engines
    (:func:`recipecli.recipecheck.group_deployments`); exit 1 when any fails."""
    from recipecli.check import run_check
    from recipecli.recipecheck import group_deployments, recipe_deployments, unsupported_engines
    from recipecli.recipes.loader import load_recipe

    rec = load_recipe(ref)
    reasons = unsupported_engines(rec)
    engines, skipped = _recipe_engines(rec.name, ref, engine, reasons)
    deps = recipe_deployments(rec, engines, hardware)
    opened: dict[tuple[str, str | None], Any] = {}

    def source(name: str, rev: str | None) -> Any:
        if (name, rev) not in opened:
            opened[(name, rev)] = _open_source(name, rev)
        return opened[(name, rev)]

    runs = []
    for group in group_deployments(deps):
        d = group[0]
        res = run_check(
            source(d.target, revision),
            source(d.draft, draft_revision),
            engines=tuple(x.engine for x in group),
            tps=(d.tp,),
            draft_tp=d.draft_tp,
            max_model_len=d.max_model_len,
            kernel=kernel,
        )
        runs.append((group, res))
    ok = all(res.ok(strict) for _, res in runs)
    hw = deps[0].hardware if deps else hardware
    if as_json:
        print_json(
            {
                "recipe": {
                    "name": rec.name,
                    "ref": ref,
                    "bundled": rec.bundled,
                    "hardware": hw,
                    "deployments": [d.to_dict() for d in deps],
                    "unsupported": reasons,
                    "not_checked": sorted(skipped),
                },
                "checks": [
                    {
                        "settings": {
                            "tp": group[0].tp,
                            "draft_tp": group[0].draft_tp,
                            "max_model_len": group[0].max_model_len,
                        },
                        **res.to_dict(strict),
                    }
                    for group, res in runs
                ],
                "ok": ok,
            }
        )
    else:
        _print_recipe_text(rec.name, hw, runs, skipped, strict)
    return EXIT_OK if ok else EXIT_FINDINGS


def _recipe_engines(
    name: str, ref: str, engine: str, reasons: dict[str, str]
) -> tuple[tuple[str, ...], dict[str, str]]:
    """The engines ``check --recipe`` checks, and those it leaves out with their reasons
    (``reasons``: engine -> why the recipe marks it unsupported): ``--engine all`` = the
    engines recipes render for, less those the recipe marks unsupported (checked only on
    request)."""
    from recipecli.check import ENGINES
    from recipecli.recipes.engines import ENGINES as RECIPE_ENGINES

    if engine == "all":
        renderable = tuple(e for e in ENGINES if e in RECIPE_ENGINES)
        engines = tuple(e for e in renderable if e not in reasons)
        if not engines:
            raise UsageError(
                f"recipe {name} marks every engine unsupported; check one with --engine",
                path=ref,
            )
        return engines, {e: reasons[e] for e in renderable if e in reasons}
    if engine not in RECIPE_ENGINES:
        raise UsageError(
            f"--recipe: recipes render for {', '.join(RECIPE_ENGINES)}, not {engine}; check "
            f"its pair with `recipecli check TARGET DRAFT --engine {engine}`"
        )
    return (engine,), {}


def _print_recipe_text(
    name: str, hw: str | None, runs: list, skipped: dict[str, str], strict: bool
) -> None:
    """One block per check run (titled with the recipe, hardware and deployments), then one
    note per engine left out."""
    from recipecli.check import format_result
    from recipecli.output import paint, wrap_line
    from recipecli.recipecheck import describe

    look = style()
    blocks = []
    for group, res in runs:
        title = f"recipe {name}" + (f", hardware {hw}" if hw else "")
        blocks.append(f"{title}: {describe(group)}\n" + format_result(res, strict=strict, **look))
    for e, reason in skipped.items():
        note = (
            f"{e}: not checked: the recipe marks it unsupported ({' '.join(reason.split())}); "
            f"--engine {e} checks it anyway"
        )
        lines = wrap_line(note, look["width"])
        lines[0] = paint(e, "warning", look["color"]) + lines[0][len(e) :]
        blocks.append("\n".join(lines))
    click.echo("\n\n".join(blocks), color=look["color"])
