"""`recipecli report`: the A/B table of a `vllm bench serve --save-result` comparison (the
layout of the benchmark in vLLM PR #47391) from its result files.

Only parses options and calls :mod:`recipecli.report`; see docs/report.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypedDict

import click

from recipecli.cli.params import LABELS
from recipecli.cli.terminal import print_json
from recipecli.errors import EXIT_FINDINGS, EXIT_OK, UsageError
from recipecli.findings import has_errors
from recipecli.output import envelope, json_text, to_jsonable
from recipecli.report import (
    DEFAULT_LABELS,
    Report,
    load_report,
    plot_png,
    render_markdown,
)
from recipecli.safe_write import Input, OutputFile, OutputKind, prepare_file, write_outputs


class _Where(TypedDict):
    """The :func:`recipecli.safe_write.prepare_file` keywords of one output: what messages call
    it (``-o file``), the option it comes from (``-o path``) and what it holds."""

    what: str
    noun: str
    kind: OutputKind


Role = tuple[str, str]
"""(what the file is to report, e.g. ``baseline bench file``; its path)."""


def _globbed(paths: Iterable[str]) -> list[str]:
    """``paths`` with quoted globs expanded (what report will read), for the early -o check."""
    import glob

    return [q for p in paths for q in ([p] if glob.escape(p) == p else sorted(glob.glob(p)))]


def _roles(
    base: Iterable[str], cand: Iterable[str], eval_a: Iterable[str], eval_b: Iterable[str]
) -> list[Role]:
    return [
        *(("baseline bench file", p) for p in base),
        *(("candidate bench file", p) for p in cand),
        *(("--eval-a file", p) for p in eval_a),
        *(("--eval-b file", p) for p in eval_b),
    ]


def _outputs(output: str | None, plot: str | None) -> dict[str, _Where]:
    """-o and --plot as {path: safe_write keywords} (what they are called, what they write).

    Raises:
        UsageError: both name the same file.
    """
    import os

    from recipecli.safe_write import PLOT, REPORT

    out: dict[str, _Where] = {}
    if plot:
        out[plot] = {"what": "--plot file", "noun": "--plot path", "kind": PLOT}
    if output:
        if plot and os.path.realpath(output) == os.path.realpath(plot):
            raise UsageError(
                "-o and --plot name the same file", path=output, hint="give them different paths"
            )
        out[output] = {"what": "-o file", "noun": "-o path", "kind": REPORT}
    return out


def _input_list(read: list[Role], outputs: dict[str, _Where], this: str) -> list[Input]:
    """The files report reads, as (role, path), and the other output of this run, as
    safe_write inputs of the output ``this``."""
    inputs: list[Input] = [(f"the {role} {p}", p) for role, p in dict.fromkeys(read)]
    inputs += [(f"the {w['what']} {p} of this run", p) for p, w in outputs.items() if p != this]
    return inputs


@click.command("report")
@click.argument("files", nargs=-1, metavar="[BASELINE CANDIDATE]")
@click.option(
    "-a",
    "--baseline",
    "baseline",
    multiple=True,
    metavar="FILE",
    help="A baseline bench JSON (repeat, or a quoted glob, for repeated runs).",
)
@click.option(
    "-b",
    "--candidate",
    "candidate",
    multiple=True,
    metavar="FILE",
    help="A candidate bench JSON (repeat, or a quoted glob, for repeated runs).",
)
@click.option(
    "--gpus",
    type=click.IntRange(min=1),
    default=None,
    help="GPUs per run: throughput is shown per GPU (vLLM saves the total).",
)
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option(
    "--plot",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write a PNG bar chart of the relative changes (needs the plot extra: "
    'pip install -e ".[plot]").',
)
@click.option(
    "--labels", type=LABELS, default=None, help="Column names for A and B, e.g. 'Baseline,This PR'."
)
@click.option(
    "--eval-a", multiple=True, metavar="FILE", help="lm-eval results JSON of A (repeatable)."
)
@click.option(
    "--eval-b", multiple=True, metavar="FILE", help="lm-eval results JSON of B (repeatable)."
)
@click.option(
    "--allow-different-workloads",
    is_flag=True,
    help="Report workload differences as warnings instead of failing.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the table (md or json) to this file, atomically, instead of stdout.",
)
def command(
    files: tuple[str, ...],
    baseline: tuple[str, ...],
    candidate: tuple[str, ...],
    gpus: int | None,
    fmt: str,
    as_json: bool,
    plot: str | None,
    labels: tuple[str, str] | None,
    eval_a: tuple[str, ...],
    eval_b: tuple[str, ...],
    allow_different_workloads: bool,
    output: str | None,
) -> int:
    """Compare baseline and candidate `vllm bench serve --save-result` runs.

    Give BASELINE CANDIDATE, or -a FILE / -b FILE (each repeatable, quoted globs allowed) for
    repeated runs: cells then show the mean and the min-max, and each change its 95% interval
    (it is called an improvement or a regression only when significant). Notes flag collapsed
    or confounded acceptance, failed requests, differing settings and TTFT/TPOT trade-offs.
    Exit 0 ok, 1 a run had failed requests (said under Notes, or on stderr with -o), 2 unusable input (an unusable run:
    duration <= 0, nothing completed, zero throughput), different workloads, or an -o/--plot
    path that cannot be written.

    Example: recipecli report base.json cand.json --gpus 4 --labels 'Baseline,This PR'
    """
    base, cand = _sides(files, baseline, candidate)
    given = _roles(*(_globbed(p) for p in (base, cand, eval_a, eval_b)))
    outputs = _outputs(output, plot)
    for path, where in outputs.items():  # refuse a bad -o/--plot before any work
        prepare_file(path, inputs=_input_list(given, outputs, path), **where)
    report = load_report(
        base,
        cand,
        gpus=gpus,
        labels=labels or DEFAULT_LABELS,
        eval_baseline_paths=eval_a,
        eval_candidate_paths=eval_b,
        allow_different_workloads=allow_different_workloads,
    )
    as_json = as_json or fmt == "json"
    read = [*_roles(report.baseline_files, report.candidate_files, *report.eval_files), *given]
    _write_outputs(report, outputs, plot, output, as_json, read)
    if plot:
        click.echo(f"recipecli: wrote {plot}", err=True)
    if output:
        _say_findings(report)
    elif as_json:  # the findings are in the document
        print_json(report, ok=not has_errors(report.findings))
    else:  # the findings are the table's Notes: not repeated on stderr
        click.echo(render_markdown(report), nl=False)
    return EXIT_FINDINGS if has_errors(report.findings) else EXIT_OK


def _sides(
    files: tuple[str, ...], baseline: tuple[str, ...], candidate: tuple[str, ...]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The baseline and candidate bench files (or globs): BASELINE CANDIDATE, then -a / -b.

    Raises:
        UsageError: FILES is not two files, or a side has none.
    """
    if files and len(files) != 2:
        raise UsageError(
            f"expected BASELINE CANDIDATE (2 files), got {len(files)}",
            hint="for several runs per side use -a FILE -b FILE (repeat them) or quote a glob: "
            "-a 'base-*.json' -b 'cand-*.json'",
        )
    base = (*files[:1], *baseline)
    cand = (*files[1:], *candidate)
    if not base or not cand:
        raise UsageError(
            "need a baseline and a candidate bench file",
            hint="recipecli report BASELINE.json CANDIDATE.json, or -a FILE -b FILE",
        )
    return base, cand


def _write_outputs(
    report: Report,
    outputs: dict[str, _Where],
    plot: str | None,
    output: str | None,
    as_json: bool,
    read: list[Role],
) -> None:
    """--plot FILE (the PNG chart) and -o FILE (the table: markdown, or strict JSON with
    non-finite floats null) written all or none (:func:`recipecli.safe_write.write_outputs`):
    when one cannot be written, neither is.

    Raises:
        UsageError: a destination refused or a failed write; one line, nothing written.
    """
    data: dict[str, bytes] = {}
    if plot:
        data[plot] = plot_png(report, name=plot)
    if output:
        doc = envelope(to_jsonable(report), ok=not has_errors(report.findings))
        text = json_text(doc) + "\n" if as_json else render_markdown(report)
        data[output] = text.encode("utf-8")
    write_outputs(
        [
            OutputFile(path, blob, inputs=tuple(_input_list(read, outputs, path)), **outputs[path])
            for path, blob in data.items()
        ]
    )


def _say_findings(report: Report) -> None:
    """With -o stdout stays empty, so the errors and warnings (also in the file) are said once
    on stderr; the info notes are only in the file."""
    for finding in report.findings:
        if finding.severity == "info":
            continue
        click.echo(f"recipecli: {finding.severity}: {finding.message}", err=True)
