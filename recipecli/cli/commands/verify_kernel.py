"""`recipecli verify-kernel`: run the fused EAGLE3 norm kernels against plain references.

Exit codes: 0 every case passes, 1 any case fails, 2 bad input (options, SOURCE, missing torch).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from recipecli.cli.params import TOKEN_COUNTS, WIDTHS
from recipecli.cli.terminal import print_json
from recipecli.errors import UsageError

if TYPE_CHECKING:
    from recipecli.kernelcheck.cases import CaseResult
    from recipecli.kernelcheck.norms import DraftNorms


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
    default=None,
    help="Token counts N to test [default: 0,1,7 on CPU (Triton's interpreter: a few seconds), "
    "0,1,7,64,512 on CUDA].",
)
@click.option(
    "--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="A progress bar of the cases on stderr [default: when stderr is a terminal].",
)
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
    progress: bool | None,
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
    tokens = tokens or kc.VERIFY_TOKENS[dev]
    _check_budget(norms, tokens)
    results = _run(norms, tokens, dev, seed, progress)
    result = kc.report(norms, results, dev)
    if as_json:
        print_json(result, ok=result.passed)
    else:
        click.echo(kc.format_report(result))
    return 0 if result.passed else 1


def _run(
    norms: DraftNorms, tokens: tuple[int, ...], dev: str, seed: int, progress: bool | None
) -> list[CaseResult]:
    """The cases, with a tqdm bar of them on stderr when ``progress`` (None: when stderr is a
    terminal; tqdm's ``disable=None``), left off the screen when done."""
    from tqdm import tqdm

    from recipecli import kernelcheck as kc

    total = kc.case_count(norms, tokens, dev)
    with tqdm(total=total, desc="verify-kernel", unit="case", file=sys.stderr, leave=False,
              disable=None if progress is None else not progress) as bar:  # fmt: skip

        def tick(result: CaseResult) -> None:
            bar.update()

        return kc.run_cases(norms, list(tokens), dev, seed=seed, on_case=tick)


#: Most elements (tokens x the summed widths of the norms one case runs) a ``verify-kernel``
#: case may hold per tensor: 2**25, 128 MiB in float32, so that a case's inputs, references
#: and outputs stay under 1 GB. The default --tokens (512 at most) on a 16384-wide draft needs
#: 512 x 32768 = 16.8M.
MAX_ELEMENTS = 1 << 25


def _check_budget(norms: DraftNorms, tokens: tuple[int, ...]) -> None:
    """Refuse, before anything is allocated, token counts whose widest case exceeds
    :data:`MAX_ELEMENTS` (``N x (D1 + D2)`` for the layer-0 pair, ``N x K x D2`` for fc_norm).

    Raises:
        UsageError: one line naming the largest N that fits.
    """
    widths = [sum(w.width for w in norms.layer0)] if norms.layer0 else []
    widths.append(sum(w.width for w in norms.fc_norm))
    widest = max(max(widths), 1)
    n = max(tokens, default=0)
    if n * widest > MAX_ELEMENTS:
        raise UsageError(
            f"--tokens {n} x {widest} elements per token is more than the {MAX_ELEMENTS} "
            "elements per tensor recipecli allocates",
            hint=f"give --tokens up to {MAX_ELEMENTS // widest} for these widths",
        )
