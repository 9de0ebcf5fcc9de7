"""`recipecli inspect SOURCE`."""

from __future__ import annotations

import click

from recipecli.cli.hub_option import timeout_option
from recipecli.cli.terminal import print_json
from recipecli.output import atomic_write_text, envelope, json_text, to_jsonable

#: Tensor tables longer than this are printed as compact JSON (see docs/inspect.md).
COMPACT_JSON_TENSORS = 5000


@click.command("inspect")
@click.argument("source", required=False)
@click.option("--revision", default=None, help="Hub revision (branch, tag or commit) for repo ids.")
@timeout_option
@click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON document (summary + tensor table)."
)
@click.option(
    "--bundled",
    is_flag=True,
    help="List the snapshots shipped with recipecli (repo id, kind, where its config and "
    "tensor table came from); SOURCE is not given.",
)
@click.option(
    "--save-metadata",
    "save_metadata",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write a self-contained snapshot (config, tensor table, small tensor values) to FILE "
    "(its directory must exist; never SOURCE or a file in it; replaces only a previous snapshot).",
)
def command(
    source: str | None,
    revision: str | None,
    as_json: bool,
    bundled: bool,
    save_metadata: str | None,
    timeout: float | None,
) -> int:
    """Summarise a checkpoint from config.json and safetensors headers, never the weights.

    SOURCE is a local directory, a snapshot .json, or a Hugging Face repo id: your HF cache
    first (offline), else the snapshot bundled with recipecli when one ships (offline;
    --bundled lists them), else the Hub (headers only).

    \b
    Examples:
      recipecli inspect --bundled
      recipecli inspect meta-llama/Llama-3.1-8B-Instruct
      recipecli inspect yuhuili/EAGLE3-LLaMA3.1-Instruct-8B --json
      recipecli inspect ./draft --save-metadata draft.snapshot.json
    """
    from recipecli.errors import UsageError

    if bundled:
        return _bundled(source, bool(save_metadata or revision), as_json)
    if source is None:
        raise UsageError(
            "missing SOURCE",
            hint="give a directory, a snapshot .json or an org/name repo id "
            "(`recipecli inspect --bundled` lists the repo ids that ship with recipecli)",
        )
    from recipecli.checkpoint import open_checkpoint
    from recipecli.checkpoint.snapshot import dumps_snapshot, snapshot_dict
    from recipecli.inspect import format_summary, summarize, tensor_table, tensor_table_json
    from recipecli.safe_write import SNAPSHOT, checkpoint_inputs, path_inputs, prepare_file

    what, noun = "--save-metadata file", "--save-metadata path"
    label = f"SOURCE {source}"
    if save_metadata:  # refuse a bad FILE before any work (checked again when written)
        prepare_file(
            save_metadata,
            what=what,
            noun=noun,
            kind=SNAPSHOT,
            inputs=path_inputs(label, source),
            existing=False,
        )
    ck = open_checkpoint(source, revision, timeout=timeout)
    if ck.notes and ck.notes[0].startswith("bundled snapshot of "):
        click.echo(ck.notes[0], err=True)
    summary = summarize(ck)
    if save_metadata:
        inputs = checkpoint_inputs(ck, label)
        text = dumps_snapshot(snapshot_dict(ck))
        atomic_write_text(save_metadata, text, inputs=inputs, what=what, noun=noun, kind=SNAPSHOT)
        click.echo(f"snapshot written to {save_metadata}", err=True)
    if as_json:
        if len(ck.tensors) > COMPACT_JSON_TENSORS:
            # Large tables (DeepSeek-V3: 92k tensors) print compact: Python's indenting encoder
            # would cost seconds; pipe through `jq` for a pretty view.
            head = json_text(envelope(to_jsonable(summary), ok=True), plain=True, compact=True)
            click.echo(head[:-1] + ',"tensors":' + tensor_table_json(ck) + "}")
        else:
            print_json({**to_jsonable(summary), "tensors": tensor_table(ck)}, ok=True, plain=True)
    else:
        click.echo(format_summary(summary))
    return 0


def _bundled(source: str | None, other: bool, as_json: bool) -> int:
    """``inspect --bundled``: the bundled snapshots, as text or a JSON list.

    Raises:
        UsageError: SOURCE, --revision or --save-metadata (``other``) given with --bundled.
    """
    from recipecli.errors import UsageError
    from recipecli.inspect import bundled_catalog, format_bundled

    if source is not None or other:
        raise UsageError(
            "--bundled takes no SOURCE, --revision or --save-metadata",
            hint="run `recipecli inspect --bundled`, then `recipecli inspect REPO_ID`",
        )
    rows = bundled_catalog()
    if as_json:
        print_json({"bundled": to_jsonable(rows)}, plain=True)
    else:
        click.echo(format_bundled(rows))
    return 0
