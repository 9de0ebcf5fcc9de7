"""Findings: what `check`, `lint` and `verify-kernel` report.

A finding is data: a stable ``code``, a ``severity``, the ``engine`` it concerns, the TP size when
it depends on it, a one-line ``message`` that says what to change, the ``evidence`` (numbers), and
the ``source`` of the engine rule (engine repository, version, file and function, PR or issue).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]
#: A registered engine name (recipecli.engines.ENGINES, a plug-in may add one) or "any" (a
#: verdict about the checkpoint or recipe itself).
Engine = str
SEVERITIES: tuple[str, ...] = ("error", "warning", "info")


@dataclass(frozen=True)
class Finding:
    """One verdict about a checkpoint pair, a recipe or a kernel run.

    Attributes:
        code: stable dotted code, e.g. ``vocab.d2t_missing``.
        severity: ``error`` (will not load or drafts wrongly), ``warning``, or ``info``.
        engine: ``vllm``, ``tokenspeed``, ``sglang`` or ``any``.
        message: one line that says what is wrong and what to change.
        tp: tensor-parallel size when the verdict depends on it, else None.
        evidence: the numbers behind the verdict (expected vs found, shapes, ids).
        source: where the engine rule comes from (engine repository, version, file, function, PR).
    """

    code: str
    severity: Severity
    engine: Engine
    message: str
    tp: int | None = None
    evidence: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "engine": self.engine,
            "tp": self.tp,
            "message": self.message,
            "evidence": dict(self.evidence),
            "source": self.source,
        }


def has_errors(findings: Iterable[Finding], *, strict: bool = False) -> bool:
    """True when any finding is an error (or, with ``strict``, a warning)."""
    bad = {"error", "warning"} if strict else {"error"}
    return any(f.severity in bad for f in findings)
