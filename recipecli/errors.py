"""The one error family of recipecli.

Every error a user can cause derives from :class:`RecipeCliError`. The CLI maps the family to
exit codes in one place (:func:`recipecli.cli.main`): a ``RecipeCliError`` prints one line on
stderr and exits with its ``exit_code`` (2 = bad input or usage). Exit code 1 is not an error: it
is returned by commands whose checked object has findings of severity ``error``.
"""

from __future__ import annotations

import errno
import os
import unicodedata

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_BAD_INPUT = 2


class RecipeCliError(Exception):
    """Base of every recipecli error: a one-line message that says what, where and what to do.

    Args:
        message: the one-line message shown to the user.
        path: the file or source the error is about (shown before the message), if any.
        hint: what to do about it (appended after the message), if any.
    """

    exit_code: int = EXIT_BAD_INPUT

    def __init__(self, message: str, *, path: str | None = None, hint: str | None = None):
        self.message = message
        self.path = path
        self.hint = hint
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """The message as shown on stderr: ``PATH: message (hint)``, newlines folded."""
        text = self.message
        if self.path:
            text = f"{self.path}: {text}"
        if self.hint:
            text = f"{text} — {self.hint}"
        return escape_invisible(" ".join(text.split("\n")))


#: Characters that show as nothing or as a plain space, or reorder the text around them, yet
#: are not a space: Unicode format characters (``Cf``: bidirectional embeddings, overrides and
#: isolates U+202A-202E and U+2066-2069, marks U+200E/U+200F/U+061C, zero-width U+200B-200D,
#: U+2060, U+FEFF, tags), controls (``Cc``, but tab and newline), line and paragraph separators
#: (``Zl``, ``Zp``), spaces other than U+0020 (``Zs``: U+00A0, U+2000-200A, U+3000, ...) and the
#: Hangul fillers (U+115F, U+1160, U+3164, U+FFA0).
INVISIBLE_CATEGORIES = frozenset({"Cf", "Cc", "Zl", "Zp", "Zs"})
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")


def is_invisible(ch: str) -> bool:
    """Whether the one character ``ch`` is invisible or misleading on a terminal
    (:data:`INVISIBLE_CATEGORIES`); tab, newline and the plain space are not."""
    if ch in " \t\n":
        return False
    return unicodedata.category(ch) in INVISIBLE_CATEGORIES or ch in _FILLERS


def has_invisible(text: str) -> bool:
    """Whether ``text`` holds a character :func:`is_invisible` (ASCII text never does, but
    for its controls)."""
    if text.isascii():
        return any(c < " " and c not in "\t\n" or c == "\x7f" for c in text)
    return any(is_invisible(c) for c in text)


def invisible_escape(ch: str) -> str:
    """``\\uXXXX`` (``\\UXXXXXXXX`` above U+FFFF) for ``ch``: the escape Python, JSON, YAML's
    double quotes and bash's ``$'...'`` all read back as ``ch``."""
    n = ord(ch)
    return f"\\u{n:04x}" if n <= 0xFFFF else f"\\U{n:08x}"


def escape_invisible(text: str) -> str:
    """``text`` with every character :func:`is_invisible` written as its escape
    (:func:`invisible_escape`), so that what is shown is what is there: a message naming a
    value with U+202E shows ``\\u202e``, not text reversed from there on."""
    if not has_invisible(text):
        return text
    return "".join(invisible_escape(c) if is_invisible(c) else c for c in text)


class UsageError(RecipeCliError):
    """A command-line option or argument is invalid."""


class SourceError(RecipeCliError):
    """A checkpoint SOURCE cannot be resolved (no such directory, repo, snapshot, revision)."""


class CheckpointFormatError(RecipeCliError):
    """A checkpoint file is malformed: bad JSON, bad safetensors header, broken index, truncation."""


class MissingDependencyError(RecipeCliError):
    """An optional dependency (torch, triton, matplotlib) is needed for this operation."""


class RecipeError(RecipeCliError):
    """A recipe file is invalid (schema, YAML, unknown field)."""


class ReportError(RecipeCliError):
    """Benchmark or eval result files are unusable (missing keys, failed requests, workloads differ)."""


class ConvertError(RecipeCliError):
    """A draft cannot be converted without losing or inventing information."""


#: Exit status of a run stopped by Ctrl-C (SIGINT), SIGTERM or SIGHUP: 128 + SIGINT, as shells
#: report an interrupted command.
EXIT_INTERRUPTED = 130

#: Exit status after stdout's reader went away (EPIPE, ``recipecli … | head``): 128 + SIGPIPE,
#: what a shell reports for ``cat`` or ``grep`` stopped the same way. Nothing is printed.
EXIT_BROKEN_PIPE = 141

# errno -> (what happened, what to do), in recipecli's words (never the C library's text alone)
_OS_ERRORS: dict[int, tuple[str, str]] = {
    errno.ENOSPC: ("no space left on the device", "free some space or write somewhere else"),
    errno.EDQUOT: ("disk quota exceeded", "free some space or write somewhere else"),
    errno.EFBIG: (
        "the file would be larger than the file-size limit (`ulimit -f`) or the file system allows",
        "raise the limit or write somewhere else",
    ),
    errno.EACCES: ("permission denied", "check the permissions or give another path"),
    errno.EPERM: ("operation not permitted", "check the permissions or give another path"),
    errno.EISDIR: ("it is a directory, not a file", "give a file"),
    errno.ENOTDIR: ("a folder on the way is a file", "check the path"),
    errno.ENOENT: ("no such file or directory", "check the path"),
    errno.ENXIO: (
        "no such device or address (a FIFO with no reader, or a device that is gone)",
        "give a regular file",
    ),
    errno.ELOOP: ("too many levels of symbolic links (a loop of links)", "give the real path"),
    errno.EROFS: ("read-only file system", "write somewhere else"),
    errno.ENAMETOOLONG: ("the file name is too long", "give a shorter path"),
    errno.EMFILE: ("too many open files", "raise `ulimit -n`"),
    errno.EIO: ("input/output error", "check the device"),
}


def os_error_parts(exc: OSError) -> tuple[str, str]:
    """(what happened, what to do) for an OS error, in recipecli's words: the first part ends
    with the errno's symbolic name in brackets (``ENOSPC``, ``EFBIG``, …) so that it can be
    looked up; an unknown errno gives its C-library text and no hint (``""``)."""
    code = exc.errno if isinstance(exc.errno, int) else None
    name = errno.errorcode.get(code, "") if code is not None else ""
    what, hint = _OS_ERRORS.get(code if code is not None else -1, (exc.strerror or str(exc), ""))
    return (f"{what} ({name})" if name else what), hint


def os_error_line(exc: OSError) -> str:
    """One line for an operating-system error no command turned into a ``RecipeCliError``:
    ``PATH: what happened (ENAME) — what to do`` (:func:`os_error_parts`; the path when the
    error names one).

    Args:
        exc: the error (``exc.errno`` may be None for errors raised without one).

    Returns:
        The line, without the ``recipecli: error:`` prefix; newlines folded.
    """
    text, hint = os_error_parts(exc)
    if exc.filename is not None:
        text = f"{os.fsdecode(exc.filename)}: {text}"
    if hint:
        text = f"{text} — {hint}"
    return " ".join(text.split())
