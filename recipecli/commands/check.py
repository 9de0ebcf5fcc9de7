"""`recipecli check TARGET DRAFT`."""

from __future__ import annotations

import click

from recipecli.checkpoint.hub_timeout import timeout_option
from recipecli.commands.completion import complete_example
from recipecli.errors import EXIT_FINDINGS, EXIT_OK, UsageError
from recipecli.output import emit_json


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
    "--engine", type=click.Choice(["vllm", "tokenspeed", "all"]), default="all", show_default=True
)
@click.option(
    "--tp",
    "tp",
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
    type=click.Choice(["auto", "cpu", "cuda", "skip"]),
    default="auto",
    show_default=True,
    help="Run the fused RMSNorm kernel against the torch reference on the draft's own norms: "
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
def command(
    target,
    draft,
    example,
    list_examples,
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
    """Will DRAFT (an EAGLE3 draft) serve with TARGET on vLLM and tokenspeed, at each TP size?

    TARGET and DRAFT are checkpoint directories, snapshot .json files or Hub repo ids. Exit 0 when
    no finding is an error, 1 when some is, 2 for bad input.

    \b
    Examples:
      recipecli check --example llama3.1-8b-eagle3
      recipecli check ./Llama-3.1-8B-Instruct ./EAGLE3-LLaMA3.1-Instruct-8B --engine vllm --tp 1,2
      recipecli check nvidia/MiniMax-M3-NVFP4 Inferact/MiniMax-M3-EAGLE3 --json
    """
    from recipecli.check import ENGINES, format_result, parse_tps, run_check
    from recipecli.checkpoint import open_checkpoint
    from recipecli.examples import example_pair, list_example_names

    if list_examples:
        from recipecli.examples import DESCRIPTIONS

        for name in list_example_names():
            click.echo(f"{name}\t{DESCRIPTIONS.get(name, '')}")
        return EXIT_OK
    if example:
        if target or draft:
            raise UsageError("give either --example NAME or TARGET DRAFT, not both")
        target, draft = example_pair(example)
    elif not (target and draft):
        raise UsageError("missing TARGET and DRAFT (or --example NAME); see recipecli check --help")
    tps = parse_tps(tp)
    engines = ENGINES if engine == "all" else (engine,)
    target_ck = open_checkpoint(target, revision)
    draft_ck = open_checkpoint(draft, draft_revision)
    res = run_check(
        target_ck,
        draft_ck,
        engines=engines,
        tps=tps,
        draft_tp=draft_tp,
        max_model_len=max_model_len,
        kernel=kernel,
    )
    if as_json:
        emit_json(res.to_dict(strict))
    else:
        click.echo(format_result(res, strict=strict))
    return EXIT_OK if res.ok(strict) else EXIT_FINDINGS
