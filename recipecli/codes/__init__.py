"""The catalog of finding codes: every code ``check``, ``verify-kernel``, ``lint``, ``render`` and
``report`` can emit, with its default severity, what it means, how the failure shows, and where
the rule is written down. Codes are a public interface: keep every code listed here, and alias a
rename in :data:`ALIASES`.

Findings are built only through :func:`finding`, which refuses a code missing here (and fills in
the default severity and source). ``tests/codes/test_engine_codes.py`` scans the source for emitted codes
and fails on one the catalog lacks.

Which engines a code applies to is not written here: it is derived from the engine models, whose
steps list the codes they may emit (:attr:`recipecli.engines.base.Step.codes`);
:func:`recipecli.engines.code_engines` gives code -> engine names (a code no step lists is a
property of the checkpoint or recipe itself, engine ``any``). docs/engines/codes.md is generated
from this catalog and the models (``recipecli docs --engines``).

The entries live in :mod:`recipecli.codes.check` (check's own, engine and kernel codes),
:mod:`recipecli.codes.lint` (``recipe.*``: lint and render) and :mod:`recipecli.codes.report`
(``report.*``); :class:`~recipecli.codes.spec.Code` is one entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeGuard

from recipecli.codes import check as _check
from recipecli.codes import lint as _lint
from recipecli.codes import report as _report
from recipecli.codes.spec import Code
from recipecli.findings import SEVERITIES, Finding, Severity

__all__ = ["ALIASES", "CATALOG", "Code", "catalog_code", "entry", "finding"]

_ENTRIES: tuple[Code, ...] = (*_check.ENTRIES, *_lint.ENTRIES, *_report.ENTRIES)

#: code -> its catalog entry, in catalog order (check and kernel codes first, as
#: docs/engines/codes.md lists them).
CATALOG: Mapping[str, Code] = {c.code: c for c in _ENTRIES}


#: old code -> current code (none renamed yet).
ALIASES: Mapping[str, str] = {}


def catalog_code(code: str) -> str:
    """The catalog entry a reported code belongs to (``shape.fc`` -> ``shape.<role>``; an alias
    -> the code it was renamed to)."""
    code = ALIASES.get(code, code)
    if code.startswith("shape.") and code not in CATALOG:
        return "shape.<role>"
    return code


def entry(code: str) -> Code:
    """The catalog entry of ``code`` (``shape.fc`` -> the ``shape.<role>`` entry).

    Raises:
        KeyError: ``code`` is not in the catalog (a programming error: add it to
            :data:`CATALOG` with its severity, meaning and source).
    """
    key = catalog_code(code)
    if key not in CATALOG:
        raise KeyError(
            f"finding code {code!r} is not in the catalog: add it to recipecli/codes/ "
            "(check.py, lint.py or report.py)"
        )
    return CATALOG[key]


def _is_severity(value: str) -> TypeGuard[Severity]:
    return value in SEVERITIES


def _source_text(source: object) -> str:
    if isinstance(source, str):
        return source
    if isinstance(source, Iterable):
        return " | ".join(str(s) for s in source)
    return str(source)


def finding(
    code: str,
    message: str,
    *,
    severity: str | None = None,
    engine: str = "any",
    tp: int | None = None,
    source: object = None,
    **evidence: Any,
) -> Finding:
    """Build a :class:`~recipecli.findings.Finding` of a catalogued code.

    Args:
        code: a code of :data:`CATALOG` (or ``shape.<tensor role>``, or an alias).
        message: one line that says what is wrong and what to change.
        severity: ``error`` / ``warning`` / ``info``; None = the code's default severity.
        engine: the engine's name, or ``any`` for a property of the checkpoint or recipe.
        tp: the TP size when the verdict depends on it.
        source: where the rule comes from: a string, an object whose ``str`` cites it (an engine
            :class:`~recipecli.engines.base.Source`), or several of them (joined with `` | ``);
            None = the code's catalog ``source``.
        **evidence: the numbers behind the verdict (JSON values).

    Raises:
        KeyError: ``code`` is not in the catalog.
        ValueError: ``severity`` is not one of error, warning, info; or no source at all (every
            finding cites one).
    """
    spec = entry(code)
    sev = spec.severity if severity is None else severity
    if not _is_severity(sev):
        raise ValueError(
            f"finding {code!r}: severity {sev!r} is not one of {', '.join(SEVERITIES)}"
        )
    text = spec.source if source is None else _source_text(source)
    if not text:
        raise ValueError(f"finding {code!r} has no source: pass source= or give the code one")
    return Finding(
        code=code,
        severity=sev,
        engine=engine,
        message=message,
        tp=tp,
        evidence=evidence,
        source=text,
    )
