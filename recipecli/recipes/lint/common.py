"""The one constructor of lint findings: ``source`` is ``file:line``, then the rule's origin."""

from __future__ import annotations

from typing import Any

from recipecli import codes
from recipecli.findings import Finding


def finding(
    code: str, severity: str, engine: str, message: str, where: str, rule: str = "", **evidence: Any
) -> Finding:
    source = f"{where}; {rule}" if rule else where
    return codes.finding(code, message, severity=severity, engine=engine, source=source, **evidence)
