"""`recipecli verify-kernel`: run the fused EAGLE3 norm kernels against plain references.

Exit codes: 0 every case passes, 1 any case fails, 2 bad input (options, SOURCE, missing torch).
"""

from __future__ import annotations

import click

from recipecli.cli.params import TOKEN_COUNTS, WIDTHS
from recipecli.cli.terminal import print_json
from recipecli.errors import UsageError


@click.command("verify-kernel")
@click.option(
    "--draft", "source", default=None, help="Draft SOURCE: directory, snapshot .json or org/name."
)
@click.option("--revision", default=None, help="Hub revision for --draft.")
@click.option(
    "--widths",
    type=WIDTHS,
    default=None,
    help="D1,D2: test these widths with synthesised weights (no --draft).",
)
@click.option(
    "--chunks",
    type=int,
    default=None,
    help="K: also test the grouped fc_norm kernel with K chunks.",
)
@click.option(
    "--dtype", type=click.Choice(["bf16", "fp16", "fp32"]), default=None, help="Override the dtype."
)
@click.option(
    "--tokens",
    type=TOKEN_COUNTS,
    default="0,1,7,64,512",
    show_default=True,
    help="Token counts N to test.",
)
@click.option(
    "--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def command(
    source: str | None,
    revision: str | None,
    widths: tuple[int, ...] | None,
    chunks: int | None,
    dtype: str | None,
    tokens: tuple[int, ...],
    device: str,
    seed: int,
    as_json: bool,
) -> int:
    """Run the fused EAGLE3 norm kernels on a draft's own norms against plain references.

    Reports per case max abs error, max error in ulps, fraction bit-identical and pass/fail, and
    whether vLLM's and tokenspeed's fused paths will be taken for this draft. On CPU the kernel
    runs under Triton's interpreter on numpy arrays (no torch), each case once as a register
    tile and once as the looped reduction (keep --tokens small).
    """

    from recipecli import kernelcheck as kc

    if chunks is not None and chunks < 1:
        raise UsageError(f"--chunks {chunks}: expected K >= 1")
    if (source is None) == (widths is None):
        raise UsageError("give exactly one of --draft SOURCE or --widths D1,D2")
    if widths is not None:
        # every --dtype choice (bf16, fp16, fp32) is a key of the table of dtype names
        norms = kc.synthetic_norms(widths[0], widths[1], chunks, kc.DTYPE_NAMES[dtype or "bf16"])
    else:
        assert source is not None  # exactly one of --draft and --widths, checked above
        from recipecli.checkpoint import open_checkpoint

        norms = kc.draft_norms(open_checkpoint(source, revision), dtype)
        if chunks is not None:
            if norms.fc_norm and len(norms.fc_norm) != chunks:
                raise UsageError(
                    f"--chunks {chunks}: the draft has {len(norms.fc_norm)} fc_norm weights",
                    path=source,
                )
            norms = kc.with_fc_norm_chunks(norms, chunks)
    dev = kc.resolve_device(device)
    results = kc.run_cases(norms, list(tokens), dev, seed=seed)
    result = kc.report(norms, results, dev)
    if as_json:
        print_json(result)
    else:
        click.echo(kc.format_report(result))
    return 0 if result.passed else 1
