"""One entry of the finding-code catalog (:class:`Code`); the entries are in the sibling modules."""

from __future__ import annotations

from dataclasses import dataclass

from recipecli.findings import Severity


@dataclass(frozen=True)
class Code:
    """One finding code.

    Attributes:
        code: the stable dotted code (``vocab.d2t_missing``; ``shape.<role>`` stands for every
            ``shape.*`` tensor code).
        severity: the default severity, used when :func:`finding` is given none; a rule may
            report another one (``aux.default`` is info, warning or error, see its meaning).
        how: how the failure shows when the pair is served (``raises at load``, ``runs wrong
            silently``, ``depends on training``, ``nothing to do`` …).
        meaning: one or two sentences: what the finding says.
        source: where the rule is written down when recipecli's own check reports it (a docs
            section such as ``docs/check.md#vocabulary-maps``); the default ``source`` of its
            findings. Empty for engine codes: each engine finding cites the engine file and
            function of the step that emits it.
    """

    code: str
    severity: Severity
    how: str
    meaning: str
    source: str = ""

    @property
    def family(self) -> str:
        """``check`` (check's own and engine codes), ``kernel``, ``lint`` (``recipe.*``, from
        lint and render) or ``report``."""
        head = self.code.split(".", 1)[0]
        return {"kernel": "kernel", "recipe": "lint", "report": "report"}.get(head, "check")


def code(code: str, severity: Severity, how: str, meaning: str, *, source: str = "") -> Code:
    return Code(code, severity, how, meaning, source)
