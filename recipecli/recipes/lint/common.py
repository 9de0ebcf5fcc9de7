"""The one constructor of lint findings: ``source`` is ``file:line``, then the rule's origin."""

from __future__ import annotations

from typing import Any

from recipecli import codes
from recipecli.display import shown_text
from recipecli.findings import Finding


def finding(
    code: str, severity: str, engine: str, message: str, where: str, rule: str = "", **evidence: Any
) -> Finding:
    """A lint finding of ``code`` at ``where`` (``file:line``). The message quotes recipe values,
    so it is stored as text shows it (:func:`recipecli.display.shown_text`: words over 256
    characters and messages over 4096 cut with a marker, invisible characters escaped), in the
    JSON too; ``evidence`` keeps the values whole (a recipe is at most 256 KiB)."""
    source = f"{where}; {rule}" if rule else where
    return codes.finding(
        code, shown_text(message), severity=severity, engine=engine, source=source, **evidence
    )
