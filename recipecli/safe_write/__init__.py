"""The one writer every recipecli output goes through.

Every file or folder a command writes (``inspect --save-metadata``, ``report -o``/``--plot``,
``docs -o`` pages, ``convert`` OUT) is checked here first and written here:

* **Never an input.** The destination is refused when it *is*, *contains* or *lies inside* any
  input of the command (checkpoint folders and their files, the ``--target``, recipe files,
  bench files). Paths are compared after resolving symbolic links **and** by device/inode, so a
  hard link, a bind mount or ``..`` detours are caught as well.
* **Only regular files and our own folders.** An existing FIFO, device (``/dev/null``), socket
  or folder is never replaced by a regular file. An existing regular file is replaced only when
  it is a previous output of the same kind (an :class:`OutputKind` recognises it: the snapshot
  key, the report layout, the PNG tag, the generated-page marker) or empty; anything else is
  refused. ``convert`` replaces an existing OUT only with ``--force`` and only when OUT is empty
  or a previous ``convert`` output (its :data:`CONVERT_MARKER` lists the files it wrote) holding
  nothing else; only those files are deleted.
* **One folder rule.** The folder that holds the output must exist: recipecli creates the output
  itself (a file; ``convert``'s OUT and ``docs``' ``-o DIR`` folders) but never a folder above
  it, so a typo cannot scatter folders. The missing-folder message is the same for every writer
  (:func:`check_parent`).
* **Atomic.** Data goes to a temporary file in the destination's folder (``.NAME.recipecli-*.tmp``,
  locked while in use: a killed run's is removed by the next write of NAME), is flushed with
  ``fsync`` and renamed over the destination (then the folder is flushed). The temporary file is
  removed on every exit path: errors, Ctrl-C (SIGINT), SIGTERM and SIGHUP
  (:func:`interrupt_on_signals` turns the latter two into ``KeyboardInterrupt``).

Errors are :class:`recipecli.errors.UsageError`: one line naming the destination, what is wrong
and what to do (exit 2); nothing is written or removed.
"""

from __future__ import annotations

from recipecli.safe_write.files import (
    OutputFile,
    current_umask,
    fsync_dir,
    interrupt_on_signals,
    prepare_file,
    remove_stale_temp,
    write_file,
    write_files,
    write_outputs,
)
from recipecli.safe_write.folders import (
    BACKUP_MARKER,
    CONVERT_MARKER,
    CONVERT_MARKER_KEY,
    STAGING_MARKER,
    convert_marker_text,
    mark_staging,
    prepare_dir,
    read_convert_marker,
    remove_stale_staging,
    replace_dir,
)
from recipecli.safe_write.kinds import (
    PLOT,
    PLOT_SOFTWARE_TAG,
    RECOGNISE_MAX_BYTES,
    REPORT,
    SNAPSHOT,
    OutputKind,
    generated_page_kind,
)
from recipecli.safe_write.paths import (
    Input,
    check_inputs,
    check_parent,
    check_within,
    checkpoint_inputs,
    path_inputs,
)

__all__ = [
    "BACKUP_MARKER",
    "CONVERT_MARKER",
    "CONVERT_MARKER_KEY",
    "PLOT",
    "PLOT_SOFTWARE_TAG",
    "RECOGNISE_MAX_BYTES",
    "REPORT",
    "SNAPSHOT",
    "STAGING_MARKER",
    "Input",
    "OutputFile",
    "OutputKind",
    "check_inputs",
    "check_parent",
    "check_within",
    "checkpoint_inputs",
    "convert_marker_text",
    "current_umask",
    "fsync_dir",
    "generated_page_kind",
    "interrupt_on_signals",
    "mark_staging",
    "path_inputs",
    "prepare_dir",
    "prepare_file",
    "read_convert_marker",
    "remove_stale_staging",
    "remove_stale_temp",
    "replace_dir",
    "write_file",
    "write_files",
    "write_outputs",
]
