"""The driver: open the sources, check OUT, plan, write and verify, check against the target,
and put OUT in place only after all of that passed."""

from __future__ import annotations

import errno
import os
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from recipecli.checkpoint.model import Checkpoint
from recipecli.convert.formats import output_format
from recipecli.convert.options import ConvertOptions
from recipecli.convert.plan import ConvertPlan, plan_conversion
from recipecli.convert.progress import progress_bars_shown
from recipecli.convert.reader import TensorReader, open_reader
from recipecli.convert.result import ConvertResult, Verification
from recipecli.convert.verify import Verifier, verify_reopened
from recipecli.convert.write import fsync_tree, make_temp_out, write_new_file, write_output
from recipecli.errors import ConvertError, UsageError, os_error_parts
from recipecli.safe_write import (
    CONVERT_MARKER,
    STAGING_MARKER,
    Input,
    checkpoint_inputs,
    convert_marker_text,
    fsync_dir,
    interrupt_on_signals,
    mark_staging,
    path_inputs,
    prepare_dir,
    remove_stale_staging,
    replace_dir,
)

if TYPE_CHECKING:
    from recipecli.check import CheckResult


class _OutRules(TypedDict):
    """How OUT is checked: the keywords of :func:`recipecli.safe_write.prepare_dir`."""

    what: str
    noun: str
    force: bool


def convert_inputs(ck: Checkpoint, target_ck: Checkpoint | None) -> list[Input]:
    """What convert reads, for the OUT checks: the draft's folder and files, the target's."""
    inputs = checkpoint_inputs(ck, f"the draft {ck.source}")
    if target_ck is not None:
        inputs += checkpoint_inputs(target_ck, f"the --target {target_ck.source}")
    return inputs


def convert(
    draft: str | Checkpoint,
    out: str | os.PathLike[str],
    options: ConvertOptions,
    *,
    target: str | Checkpoint | None = None,
    progress: bool = True,
    fsync: bool = True,
    run_target_check: bool = True,
    log: Callable[[str], None] | None = None,
) -> ConvertResult:
    """Convert ``draft`` into ``out`` (see the module docstring for what is translated).

    Args:
        draft: source directory (or an opened checkpoint).
        out: output directory; must not exist, or with ``options.force`` be empty or a
            previous convert output holding only the files its marker lists (only those are
            deleted). Never an input, a folder holding one or inside one
            (:func:`recipecli.safe_write.prepare_dir`).
        options: the request.
        target: ``--target`` source (speculators verifier, ``--embed drop`` proof, post-write check).
        progress: show progress bars on stderr when it is a terminal (:class:`Progress`);
            otherwise one summary line through ``log`` at the end.
        fsync: flush every shard to disk before the rename.
        run_target_check: run ``check`` against ``target`` after writing (when given).
        log: where notes go (stderr lines in the CLI).

    Returns:
        :class:`ConvertResult`.

    Raises:
        ConvertError: refusals (see :func:`plan_conversion`), verification failures, check errors
            without ``--force``.
        UsageError: OUT is, holds or lies inside the draft or the target, is the current
            directory, exists (without ``--force``), is not a previous convert output (with
            it), is a link or a file; inconsistent flags; OUT's directory is missing (never
            created), a file, or not writable (:func:`recipecli.safe_write.prepare_dir`,
            :func:`make_temp_out`).
        KeyboardInterrupt: Ctrl-C, SIGTERM or SIGHUP (nothing is left behind).
    """
    with interrupt_on_signals():  # SIGTERM/SIGHUP clean up like Ctrl-C: no OUT, no temp dir
        return _convert(draft, out, options, target, progress, fsync, run_target_check, log)


def _open_with_weights(source: str, *, bundled: bool) -> Checkpoint:
    """``source`` opened for convert, whose errors never suggest a snapshot (the draft's
    weights are copied, and a snapshot leaves them out). ``bundled``: a repo id may open
    recipecli's bundled snapshot (the ``--target``, read for its config and tensor table).

    Raises:
        SourceError: as :func:`recipecli.checkpoint.open_checkpoint` raises it, its hint
            rewritten when it offers a snapshot.
    """
    from recipecli.checkpoint import open_checkpoint
    from recipecli.errors import SourceError

    try:
        return open_checkpoint(source, bundled=bundled)
    except SourceError as exc:
        if exc.hint and "snapshot" in exc.hint:
            raise SourceError(
                exc.message,
                path=exc.path,
                hint="convert reads the weights: give the checkpoint directory, or download the "
                "repo into the HF cache (hf download REPO_ID) and run again",
            ) from None
        raise


#: the drafts of other methods convert refuses, in words
_OTHER = {"eagle": "an EAGLE-1 head", "dflash": "a DFlash draft", "dspark": "a DSpark draft"}


def _refuse_other_method(ck: Checkpoint) -> None:
    """convert writes EAGLE3 formats only: a draft of another method (DFlash, DSpark, an EAGLE-1
    head; :func:`recipecli.draft.method.method_draft`) is refused in one line (issue #27).

    Raises:
        ConvertError: the draft is not an EAGLE3 draft but one of another method.
    """
    from recipecli.draft import canonical_draft
    from recipecli.draft.method import method_draft

    d = canonical_draft(ck)
    m = method_draft(ck, d)
    if d.format is None and m.method in _OTHER:
        raise ConvertError(
            f"{_OTHER[m.method]} ({m.reason}): convert writes EAGLE3 draft formats only",
            path=ck.source,
            hint=f"serve it as it is (recipecli check TARGET DRAFT --method {m.method})",
        )


def _open_sources(
    draft: str | Checkpoint, out: Path, options: ConvertOptions, target: str | Checkpoint | None
) -> tuple[Checkpoint, Checkpoint | None, list[Input], _OutRules]:
    """(draft, target, what convert reads, OUT's rules): the draft opened, OUT checked against
    it (before the target is opened, so a bad OUT fails fast), then the target opened."""
    ck = draft if isinstance(draft, Checkpoint) else _open_with_weights(draft, bundled=False)
    _refuse_other_method(ck)
    where = _OutRules(what="OUT", noun="OUT", force=options.force)
    early = convert_inputs(ck, None)
    if isinstance(target, str):
        early += path_inputs(f"the --target {target}", target)
    prepare_dir(out, inputs=early, existing=False, **where)  # a bad OUT before opening the target
    target_ck = (
        target
        if isinstance(target, Checkpoint) or target is None
        else _open_with_weights(target, bundled=True)
    )
    return ck, target_ck, convert_inputs(ck, target_ck), where


def _write_verified(
    plan: ConvertPlan,
    reader: TensorReader,
    tmp: Path,
    progress: bool,
    fsync: bool,
    post: Callable[[Checkpoint], CheckResult | None],
) -> tuple[list[str], Verification, CheckResult | None]:
    """Write the plan into ``tmp``, prove it and run ``post`` (the check against the target) on
    the reopened output (shard names, the verification record, what ``post`` returned).

    Written on this thread, each finished tensor compared with the source on another; the
    shards flushed to disk on a third while this one reopens the output (:func:`verify_reopened`)
    and runs ``post``, as the last comparisons finish. All finish before this returns, and a
    failure is reported in that order of precedence: a byte that differs, then a failed
    ``fsync``, then a write, reopen or ``post`` error.
    """
    verifier = Verifier(plan, reader, tmp, progress)
    failure: BaseException | None = None
    with ThreadPoolExecutor(1) as pool:
        flushed = None
        try:
            shards = write_output(
                plan,
                reader,
                tmp,
                progress=progress,
                fsync=False,  # fsync_tree below, while the last comparisons run
                on_written=verifier.submit,
                start_writeback=fsync,
            )
            # the mark that lets a later --force replace this folder, and only its files
            files = sorted(p.name for p in tmp.iterdir() if p.name != STAGING_MARKER)
            write_new_file(tmp / CONVERT_MARKER, convert_marker_text(files, plan.options.to))
            flushed = pool.submit(fsync_tree, tmp) if fsync else None
            out_ck = verify_reopened(plan, tmp)
            check_res = post(out_ck)
        except BaseException as exc:  # re-raised below unless a comparison failed first
            failure = exc
        compared = verifier.finish()
        if flushed is not None:
            flushed.result()
    if failure is not None:
        raise failure
    verification = Verification(
        tensors_compared=len(plan.moves),
        bytes_compared=compared,
        semantic_differences={},
        out_checkpoint=out_ck,
    )
    return shards, verification, check_res


def _put_in_place(
    tmp: Path,
    out: Path,
    inputs: list[Input],
    where: _OutRules,
    fsync: bool,
    notes: list[str],
) -> None:
    """Rename ``tmp`` to OUT, checking OUT again first (it may have changed meanwhile)."""
    out_abs, owned = prepare_dir(out, inputs=inputs, **where)
    try:
        os.unlink(tmp / STAGING_MARKER)  # OUT holds only what its marker lists
        left = replace_dir(tmp, out_abs, owned)
    except OSError as exc:
        raise UsageError(
            f"cannot write OUT: {exc.strerror or exc}",
            path=str(out),
            hint="give another OUT",
        ) from None
    if left:
        notes.append(left)
    if fsync:
        fsync_dir(out_abs.parent)


def _convert(
    draft: str | Checkpoint,
    out_arg: str | os.PathLike[str],
    options: ConvertOptions,
    target: str | Checkpoint | None,
    progress: bool,
    fsync: bool,
    run_target_check: bool,
    log: Callable[[str], None] | None,
) -> ConvertResult:
    """:func:`convert`, under its signal handlers."""
    t0 = time.perf_counter()
    out = Path(out_arg)
    ck, target_ck, inputs, where = _open_sources(draft, out, options, target)
    out_abs, _owned = prepare_dir(out, inputs=inputs, **where)
    for name in remove_stale_staging(out_abs):
        if log:
            log(f"removed {name}, the temporary folder of a convert onto {out} that was killed")
    reader = open_reader(ck)
    try:
        plan = plan_conversion(ck, options, target_ck)
        for note in plan.notes:
            if log:
                log(note)
        tmp = make_temp_out(out_abs)
        lock: int | None = None
        try:
            lock = mark_staging(tmp)
            notes: list[str] = []
            checked = target_ck if run_target_check else None
            shards, verification, check_res = _write_verified(
                plan, reader, tmp, progress, fsync, partial(_post_check, checked, options, notes)
            )
            _put_in_place(tmp, out, inputs, where, fsync, notes)
        except BaseException as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            _raise_write_error(exc, out)
            raise
        finally:
            if lock is not None:
                os.close(lock)
    finally:
        reader.close()
    seconds = time.perf_counter() - t0
    if progress and log and not progress_bars_shown():
        log(
            f"wrote and verified {plan.total_bytes / 1e6:.1f} MB in {len(shards)} "
            f"shard(s) into {out} ({seconds:.1f} s)"
        )
    return ConvertResult(
        ck.display_name, str(out), plan, shards, verification, check_res, seconds, notes
    )


#: OS errors of a write that no retry on the same OUT can fix: convert names OUT for them.
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})


def _raise_write_error(exc: BaseException, out: Path) -> None:
    """Raise a write-side OS error (full disk, file-size limit, read-only) as one line naming
    OUT (the temporary folder is already gone); return for any other exception."""
    if isinstance(exc, OSError) and exc.errno in _WRITE_ERRNOS:
        what, hint = os_error_parts(exc)
        raise UsageError(
            f"cannot write OUT: {what}; nothing was left behind", path=str(out), hint=hint
        ) from None


def _post_check(
    target_ck: Checkpoint | None, opts: ConvertOptions, notes: list[str], out_ck: Checkpoint
) -> CheckResult | None:
    """Run ``check`` on the written output against the target for the engine the output is for
    (the output format's :attr:`~recipecli.convert.formats.OutputFormatSpec.check_engine`:
    speculators → vLLM, eagle3 → tokenspeed) at TP 1; errors refuse unless ``--force``.
    No target (or no check asked for): None."""
    if target_ck is None:
        return None
    from recipecli.check import run_check

    engine = output_format(opts.to).check_engine
    res = run_check(target_ck, out_ck, engines=(engine,), tps=(1,))
    errors = [f for f in res.findings if f.severity == "error"]
    if errors and not opts.force:
        first = errors[0]
        raise ConvertError(
            f"check against the target found {len(errors)} error(s) for {engine}, first: "
            f"[{first.code}] {first.message}",
            path=out_ck.source,
            hint="fix the draft (or the flags), or add --force to write it anyway",
        )
    notes += [f"--force: check error [{f.code}] {f.message}" for f in errors]
    return res
