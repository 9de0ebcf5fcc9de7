"""The one error family of recipecli.

Every error a user can cause derives from :class:`RecipeCliError`. The CLI maps the family to
exit codes in one place (:func:`recipecli.cli.main`): a ``RecipeCliError`` prints one line on
stderr and exits with its ``exit_code`` (2 = bad input or usage). Exit code 1 is not an error: it
is returned by commands whose checked object has findings of severity ``error``.
"""

from __future__ import annotations

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
        return " ".join(text.split("\n"))


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
