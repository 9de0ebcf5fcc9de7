"""`recipecli convert DRAFT OUT --to speculators|eagle3` (``--to``: the registered output
formats, :mod:`recipecli.convert.formats`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from recipecli.cli.params import AUX_IDS, SHARD_SIZE, TrueFalse
from recipecli.cli.terminal import print_json
from recipecli.convert.formats import output_formats, to_help
from recipecli.errors import EXIT_OK

if TYPE_CHECKING:
    from recipecli.convert.options import DtypeOption, EmbedOption
    from recipecli.draft import Convention


@click.command("convert")
@click.argument("draft")
@click.argument("out")
@click.option(
    "--to",
    "to",
    type=click.Choice([f.key for f in output_formats()]),
    required=True,
    help=to_help(),
)
@click.option(
    "--target",
    default=None,
    help="Target model (dir, snapshot or repo id): the speculators verifier, the --embed drop proof, "
    "and a post-write `check`.",
)
@click.option(
    "--verifier",
    default=None,
    metavar="NAME",
    help="speculators_config.verifier.name_or_path to write: the target's repo id (default: "
    "from --target; a local --target needs it unless its config names the repo) or a path.",
)
@click.option(
    "--aux-ids",
    type=AUX_IDS,
    default=None,
    help="Aux layer ids, e.g. 1,23,44 (needs --aux-id-convention).",
)
@click.option(
    "--aux-id-convention",
    type=click.Choice(["hidden-state", "layer-output"]),
    default=None,
    help="Convention of the draft's aux ids (or of --aux-ids): hidden-state = vLLM/speculators, "
    "layer-output (= hidden-state - 1) = SpecForge/SGLang/ModelOpt/tokenspeed.",
)
@click.option(
    "--norm-before-residual",
    type=TrueFalse(),
    default=None,
    help="How the draft was trained, when its format does not record it (A/B/C).",
)
@click.option(
    "--dtype",
    type=click.Choice(["keep", "bf16", "fp16"]),
    default="keep",
    show_default=True,
    help="Cast floating weights (int64/bool buffers are never cast).",
)
@click.option(
    "--embed",
    type=click.Choice(["keep", "drop"]),
    default="keep",
    show_default=True,
    help="drop: omit embed_tokens when byte-identical to the target's (needs --target).",
)
@click.option(
    "--max-shard-size",
    type=SHARD_SIZE,
    default="5GB",
    show_default=True,
    help="Largest output shard.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Replace OUT when it is a previous convert output (only its files); accept "
    "tokenspeed-unservable eagle3 output, flag conflicts, check errors.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document: every mapping.")
def command(
    draft: str,
    out: str,
    to: str,
    target: str | None,
    verifier: str | None,
    aux_ids: tuple[int, ...] | None,
    aux_id_convention: Convention | None,
    norm_before_residual: bool | None,
    dtype: DtypeOption,
    embed: EmbedOption,
    max_shard_size: int,
    force: bool,
    as_json: bool,
) -> int:
    """Convert the EAGLE3 draft in DRAFT into OUT, translating fields by meaning.

    DRAFT is a local directory (safetensors, single or sharded, or pytorch_model.bin). OUT is
    written to a temporary directory, verified bit for bit against DRAFT, and only then renamed
    into place; its directory must exist, and OUT is never DRAFT, the target, a folder holding
    them or inside them. Refuses (exit 2) whatever would lose or invent information.

    \b
    Examples:
      recipecli convert ./EAGLE3-LLaMA3.1-Instruct-8B ./eagle3-spec --to speculators \\
          --target meta-llama/Llama-3.1-8B-Instruct --norm-before-residual false
      recipecli convert ./spec-draft ./flat-draft --to eagle3 --json
    """
    from recipecli.convert import ConvertOptions, convert, format_result

    opts = ConvertOptions(
        to=to,
        aux_ids=aux_ids,
        aux_id_convention=aux_id_convention,
        norm_before_residual=norm_before_residual,
        dtype=dtype,
        embed=embed,
        max_shard_size=max_shard_size,
        force=force,
        verifier=verifier,
    )

    # convert() turns SIGTERM/SIGHUP into KeyboardInterrupt: no OUT, no temp dir is left
    res = convert(
        draft,
        out,
        opts,
        target=target,
        progress=True,
        log=lambda msg: click.echo(f"recipecli: {msg}", err=True),
    )
    if as_json:
        print_json(res.to_dict(), ok=True)
    else:
        click.echo(format_result(res))
    return EXIT_OK
