"""The human report of a :class:`~recipecli.check.run.CheckResult` (``recipecli check`` without
``--json``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recipecli.check.run import CheckResult
from recipecli.display import shown_text, shown_value
from recipecli.engines import ENGINES
from recipecli.findings import Finding

# --------------------------------------------------------------------------- human output


def _shape(s: tuple[int, ...] | None) -> str:
    return f"[{', '.join(str(x) for x in s)}]" if s else "-"


def _bytes(n: int | None) -> str:
    if not n:
        return "-"
    return f"{n / 1e9:.2f} GB" if n >= 1e8 else f"{n / 1e6:.1f} MB"


_SHOWN = (
    ("architecture", "arch"),
    ("H", "H"),
    ("Ht", "Ht"),
    ("Vd", "Vd"),
    ("k", "k"),
    ("aux_layers", "aux hidden states"),
)


def _resolved_line(values: Mapping[str, Mapping[str, Any]]) -> str:
    """``arch Eagle3LlamaForCausalLM, H 4096, Vd 32000, k 3*, aux hidden states [2, 16, 29]*``;
    ``*`` marks a value the engine filled in (a default), not one the checkpoint gave; a value
    the engine model did not reach (None) shows as ``-``, unmarked."""
    parts = []
    for key, label in _SHOWN:
        if key not in values:
            continue
        v = values[key]
        value = v["value"]
        if value is None:
            parts.append(f"{label} -")
            continue
        given = str(v["origin"]).startswith(
            ("config:", "len(", "eagle_aux", "eagle_config", "registry")
        )
        mark = "" if given or key == "architecture" else "*"
        shown = shown_value(list(value) if isinstance(value, tuple) else value)
        parts.append(f"{label} {shown}{mark}")
    return ", ".join(parts) + (
        " (* = engine default)" if any(p.endswith("*") for p in parts) else ""
    )


def _engine_names() -> dict[str, str]:
    """Every spelling of each engine in messages (``vllm``, ``vLLM``) -> its ``--engine`` name."""
    from recipecli.engines import engine_models

    out: dict[str, str] = {}
    for m in engine_models():
        out[m.name] = m.name
        out[m.title] = m.name
    return out


_ANY_ENGINE = "\x00engine\x00"


def _generic(message: str, names: Iterable[str]) -> str:
    """``message`` with every engine name replaced by one placeholder (whole words only)."""
    import re

    alts = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.sub(rf"(?<![\w.-])(?:{alts})(?![\w-])", _ANY_ENGINE, message)


@dataclass(frozen=True)
class FindingLine:
    """One line of the human report: a finding, or identical findings of several engines.

    Attributes:
        severity, code, tp: as in :class:`~recipecli.findings.Finding`.
        engines: the engines it holds for (``("any",)`` for checkpoint rules), in report order.
        message: the message; when several engines are merged and their messages differ only by
            the engine's name, the name reads "each engine".
    """

    severity: str
    code: str
    tp: int | None
    engines: tuple[str, ...]
    message: str

    @property
    def where(self) -> str:
        return ", ".join(self.engines) + (f" tp{self.tp}" if self.tp is not None else "")


def merge_findings(
    findings: Sequence[Finding], engines: Sequence[str] = ENGINES
) -> list[FindingLine]:
    """Group findings that are the same for several engines: same severity, code, TP and
    message once the engine's name is ignored (``vLLM captures …`` = ``tokenspeed captures …``).
    Order: each group where its first finding was; its engines in ``engines`` order. ``--json``
    keeps every finding."""
    names = _engine_names()
    groups: dict[tuple[str, str, int | None, str], list[Finding]] = {}
    for f in findings:
        key = (f.severity, f.code, f.tp, _generic(f.message, names))
        groups.setdefault(key, []).append(f)
    lines = []
    for (sev, code, tp, generic), group in groups.items():
        rank = {e: i for i, e in enumerate(engines)}
        names_of = sorted(
            dict.fromkeys(f.engine for f in group), key=lambda e: rank.get(e, len(rank))
        )
        if len(names_of) == 1:
            message = group[0].message
        else:
            message = generic.replace(_ANY_ENGINE, "each engine")
        lines.append(FindingLine(sev, code, tp, tuple(names_of), message))
    return lines


_SHARING_HEADER = (
    "engine",
    "tp",
    "target embed",
    "draft sharded",
    "draft replicated",
    "embed",
    "head",
    "embed bytes",
    "draft bytes",
)
#: Column groups when the sharing table is wider than the terminal: shapes, then verdicts.
_SHARING_SPLIT = ((0, 1, 2, 3, 4), (0, 1, 5, 6, 7, 8))


def _table(rows: Sequence[Sequence[str]], cols: Sequence[int]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in cols]
    return [
        "  " + "  ".join(row[i].ljust(w) for i, w in zip(cols, widths, strict=True)).rstrip()
        for row in rows
    ]


def format_result(
    res: CheckResult,
    *,
    strict: bool = False,
    color: bool = False,
    width: int | None = None,
    verdict: bool = True,
) -> str:
    """Human report: header, READY/NOT READY per engine, findings by severity, sharing table,
    and (``verdict``) a last line naming the exit code (:func:`verdict_line`).

    Args:
        res: the result of :func:`run_check`.
        strict: warnings count as failures (the ``--strict`` verdict).
        color: ANSI colour (READY green, NOT READY and errors red, warnings yellow); the caller
            decides (:func:`recipecli.output.color_enabled`: a terminal, no ``NO_COLOR``, no
            ``--no-color``).
        width: wrap lines to this many columns at word boundaries (None: no wrapping), and
            split the sharing table into two when it is wider.
        verdict: end with the verdict line (``check --recipe`` writes one for all its runs).

    Identical findings of several engines are shown once with their engines
    (:func:`merge_findings`).
    """
    lines = _header(res, width)
    lines.append("")
    lines += _verdicts(res, strict, color)
    lines += _layout_matrix(res, color, width)
    lines += _finding_lines(res, color, width)
    lines += _sharing_table(res, width)
    lines += _layout_sharing_table(res, width)
    lines += accounting_lines(res)
    if verdict:
        lines += ["", *verdict_line([res], strict=strict, color=color, width=width)]
    return "\n".join(lines)


def _header(res: CheckResult, width: int | None) -> list[str]:
    """Both models, and one line per engine with the values it resolved."""
    from recipecli.output import wrap_line

    t = res.target
    v = shown_value  # the sources and the architecture come from the user's files: cut, escaped
    head = [
        f"target  {v(res.target_source)}: {v(t.architecture)}"
        + (f" (text config under {t.wrapper})" if t.wrapper else "")
        + f", H {t.H}, layers {t.L}, vocab {t.V}",
        _draft_head(res, v),
    ]
    for engine, values in res.resolved.items():
        if read := _resolved_line(values):  # empty when the engine's config was not built
            head.append(f"  as {engine} reads it: {read}")
    lines = [w for h in head for w in wrap_line(h, width)]
    return lines


def checked_method(res: CheckResult) -> str | None:
    """The method ``check --method`` checked (asked or detected by ``auto``), read from its
    ``method.*`` findings' evidence; None for the EAGLE3 check (no ``--method``, or ``auto`` on an
    EAGLE3 draft)."""
    for f in res.findings:
        if f.code in ("method.detected", "method.supported", "method.unsupported"):
            m = f.evidence.get("method")
            return str(m) if m else None
    return None


def _draft_head(res: CheckResult, v: Callable[[str], str]) -> str:
    """The header's draft line: the EAGLE3 format and aux ids, or the method checked (issue #27:
    MTP without DRAFT reads the target's own MTP layers)."""
    d, method = res.draft, checked_method(res)
    if method == "mtp" and res.draft_source == res.target_source:
        return "draft   none: method mtp, the target's own MTP layers"
    if method not in (None, "eagle3"):
        return f"draft   {v(res.draft_source)}: method {method} (its method.* findings below)"
    if d.is_eagle3:
        aux = str(list(d.aux_ids)) if d.aux_ids is not None else "absent"
        return f"draft   {v(res.draft_source)}: format {d.format} ({d.format_name}), aux ids {aux}"
    return f"draft   {v(res.draft_source)}: not an EAGLE3 draft"


def _verdicts(res: CheckResult, strict: bool, color: bool) -> list[str]:
    """``READY at TP …`` / ``NOT READY (why)`` per engine."""
    from recipecli.output import paint

    lines = []
    for engine in res.engines:
        ready = res.ready_tps(engine)
        warn = [f for f in res.findings if f.severity == "warning" and f.engine in (engine, "any")]
        if ready and not (strict and warn):
            verdict = paint("READY", "ok", color) + " " * 5
            lines.append(f"{engine:<11} {verdict} at TP {', '.join(map(str, ready))}")
        else:
            general = any(
                f.severity == "error" and f.tp is None and f.engine in (engine, "any")
                for f in res.findings
            )
            why = (
                "see errors"
                if general
                else ("no TP size works" if not ready else "warnings under --strict")
            )
            lines.append(f"{engine:<11} {paint('NOT READY', 'error', color)}  ({why})")
    return lines


def _layout_matrix(res: CheckResult, color: bool, width: int | None) -> list[str]:
    """With a layout option: per engine, one row per layout checked (READY / NOT READY and the
    first deciding finding's code and message), then one line per layout not checked because
    it does not fit the GPUs given. Nothing without a layout option."""
    from recipecli.output import paint, wrap_line

    if res.layouts is None:
        return []
    lines = ["", "layouts:"]
    seen: set[tuple[str, str]] = set()  # a finding's full message is printed once
    for engine in res.engines:
        lines.append(f"  {engine}")
        for lay in res.layouts:
            ready, why = res.layout_verdict(engine, lay)
            mark = (
                paint("READY", "ok", color) + " " * 4
                if ready
                else paint("NOT READY", "error", color)
            )
            reason = ""
            if why:
                key = (why[0].code, why[0].message)
                said = key in seen
                seen.add(key)
                text = "(as above)" if said else shown_text(why[0].message)
                reason = f"  {why[0].code}: {text}"
            lines += wrap_line(f"    {lay.label():<28} {mark}{reason}".rstrip(), width)
    for _lay, f in res.layout_findings:
        if f.code == "layout.unfit":
            unfit = shown_text(f.message).removesuffix(": not checked")
            lines += wrap_line(f"  not checked: {unfit}", width)
    return lines


def _finding_lines(res: CheckResult, color: bool, width: int | None) -> list[str]:
    """The findings by severity, identical ones of several engines merged."""
    from recipecli.output import paint, wrap_line

    lines: list[str] = []
    merged = merge_findings(res.findings, res.engines)
    for sev in ("error", "warning", "info"):
        group = [m for m in merged if m.severity == sev]
        if not group:
            continue
        lines += ["", paint(f"{sev}s ({len(group)}):", sev, color)]
        for m in group:
            text = f"  [{m.where}] {m.code}: {shown_text(m.message)}"
            wrapped = wrap_line(text, width)
            prefix = f"  [{m.where}] "
            if wrapped[0].startswith(prefix + m.code):  # else a very narrow terminal: plain
                rest = wrapped[0][len(prefix) + len(m.code) :]
                wrapped[0] = prefix + paint(m.code, "code", color) + rest
            lines += wrapped
    return lines


def _sharing_table(res: CheckResult, width: int | None) -> list[str]:
    """The embedding / head sharing table, split in two when wider than ``width``."""
    lines: list[str] = []
    if res.embed_sharing:
        lines += ["", "embedding / head sharing (per rank):"]
        table = [_SHARING_HEADER] + [
            (
                r.engine,
                str(r.tp),
                _shape(r.target_shape),
                _shape(r.draft_sharded_shape),
                _shape(r.draft_replicated_shape),
                r.verdict,
                r.head_verdict,
                _bytes(r.embed_bytes_per_rank),
                _bytes(r.draft_bytes_per_rank),
            )
            for r in res.embed_sharing
        ]
        full = _table(table, range(len(_SHARING_HEADER)))
        if width is None or max(len(x) for x in full) <= width:
            lines += full
        else:
            for i, cols in enumerate(_SHARING_SPLIT):
                lines += ([""] if i else []) + _table(table, cols)
    return lines + _sharing_missing(res, bool(lines), width)


def _layout_sharing_table(res: CheckResult, width: int | None) -> list[str]:
    """With a layout option: the sharing per layout (the draft's PP stage and ranks, the embed
    and head verdicts there, whether the TP row's sharing holds), then each row's note."""
    from recipecli.engines.layout import rank_text
    from recipecli.output import wrap_line

    if not res.layout_sharing:
        return []
    holds = {True: "yes", False: "NO", None: "?"}
    table = [("engine", "layout", "stage", "draft ranks", "embed", "head", "holds")] + [
        (
            s.row.engine,
            s.layout.label(),
            "-" if s.stage is None else str(s.stage),
            rank_text(s.ranks),
            s.embed,
            s.head,
            holds[s.holds],
        )
        for s in res.layout_sharing
    ]
    lines = ["", "embedding / head sharing per layout (the draft's ranks):"]
    lines += _table(table, range(7))
    for s in res.layout_sharing:
        if s.note:
            lines += wrap_line(f"  {s.row.engine} {s.layout.label()}: {s.note}", width)
    return lines


def _sharing_missing(res: CheckResult, shown: bool, width: int | None = None) -> list[str]:
    """One line per engine checked that has no sharing rows: its model stopped at an error
    before the embedding step (the architecture lookup, say), so nothing was shared; wrapped to
    ``width`` like the other lines."""
    from recipecli.output import wrap_line

    have = {r.engine for r in res.embed_sharing}
    out: list[str] = []
    if checked_method(res) not in (None, "eagle3"):
        return out  # the EAGLE3 load paths (and their sharing) do not run for another method
    for engine in res.engines:
        if engine in have:
            continue
        stop = next((f for f in res.findings if f.engine == engine and f.severity == "error"), None)
        why = (
            f"its load path stops at {stop.code} before the embedding step (errors above)"
            if stop
            else "its model reached no embedding step"
        )
        out += wrap_line(f"  {engine}: no rows: {why}", width)
    if out and not shown:
        out.insert(0, "embedding / head sharing (per rank):")
        out.insert(0, "")
    return out


# --------------------------------------------------------------------------- the verdict line


def _engine_failure(res: CheckResult, engine: str, strict: bool) -> tuple[str, list[int]] | None:
    """Why ``engine`` fails in ``res``, or None when it passes.

    Returns:
        ``("not ready", [])`` (an error at every TP size checked), ``("tp", [tp, ...])`` (errors
        at those TP sizes only) or ``("strict", [])`` (warnings, failing under ``--strict``).
    """
    mine = [f for f in res.findings if f.engine in (engine, "any")]
    if any(f.severity == "error" for f in mine):
        ready = res.ready_tps(engine)
        return ("not ready", []) if not ready else ("tp", [t for t in res.tps if t not in ready])
    if strict and any(f.severity == "warning" for f in mine):
        return ("strict", [])
    return None


def _tp_list(tps: Sequence[int]) -> str:
    return ", ".join(map(str, tps))


def _ready_text(runs: Sequence[CheckResult]) -> str:
    """``ready on vllm, sglang at TP 1, 2; tokenspeed at TP 4``: engines grouped by the TP sizes
    they were checked at, in report order."""
    by_tps: dict[tuple[int, ...], list[str]] = {}
    for res in runs:
        for engine in res.engines:
            by_tps.setdefault(tuple(res.tps), []).append(engine)
    groups = [f"{', '.join(names)} at TP {_tp_list(tps)}" for tps, names in by_tps.items()]
    return "ready on " + "; ".join(groups)


def _failure_text(failures: Sequence[tuple[str, str, list[int]]]) -> str:
    """``not ready on tokenspeed, sglang; vllm not ready at TP 8; warnings fail --strict on x``."""
    kinds: dict[str, list[str]] = {"not ready": [], "strict": []}
    parts: list[str] = []
    for engine, kind, tps in failures:
        if kind == "tp":
            parts.append(f"{engine} not ready at TP {_tp_list(tps)}")
        else:
            kinds[kind].append(engine)
    if kinds["not ready"]:
        parts.insert(0, "not ready on " + ", ".join(kinds["not ready"]))
    if kinds["strict"]:
        parts.append("warnings fail --strict on " + ", ".join(kinds["strict"]))
    return "; ".join(parts)


def verdict_line(
    runs: Sequence[CheckResult],
    *,
    strict: bool = False,
    color: bool = False,
    width: int | None = None,
    not_checked: Sequence[str] = (),
) -> list[str]:
    """The last line of ``check``'s human report: the exit code and why, e.g.
    ``exit 0: ready on vllm at TP 1, 2, 4, 8`` or
    ``exit 1: not ready on tokenspeed, sglang (errors above)``.

    Args:
        runs: the check runs the command printed (one, or one per ``check --recipe`` group);
            the exit code is 1 when any of them fails (:meth:`CheckResult.ok`).
        strict: warnings fail too (``--strict``).
        color: paint ``exit N`` green (0) or red (1).
        width: wrap to this many columns (None: one line).
        not_checked: engines left out (``check --recipe``: the recipe marks them unsupported),
            named at the end so that "ready" is not read as covering them.

    Returns:
        the line (more than one only when wrapped to ``width``).
    """
    from recipecli.errors import EXIT_FINDINGS, EXIT_OK
    from recipecli.output import paint, wrap_line

    failures = [
        (engine, *why)
        for res in runs
        for engine in res.engines
        if (why := _engine_failure(res, engine, strict)) is not None
    ]
    findings = [f for res in runs for f in res.findings]
    warned = any(f.severity == "warning" for f in findings)
    left_out = f"; not checked: {', '.join(not_checked)}" if not_checked else ""
    if all(res.ok(strict) for res in runs):
        text = _ready_text(runs) + left_out + (" (warnings above)" if warned else "")
        return wrap_line(paint(f"exit {EXIT_OK}", "ok", color) + ": " + text, width)
    erred = any(f.severity == "error" for f in findings)
    above = (
        "errors and warnings" if erred and strict and warned else "errors" if erred else "warnings"
    )
    text = f"{_failure_text(failures) or 'failed'}{left_out} ({above} above)"
    return wrap_line(paint(f"exit {EXIT_FINDINGS}", "error", color) + ": " + text, width)


def accounting_lines(res: CheckResult) -> list[str]:
    """``check --explain``: per engine, every config key (read / defaulted / ignored, with the
    value the engine uses and where it reads it), every checkpoint tensor (loaded into which
    parameter, skipped, dropped, refused), every parameter (filled, from target, left at init)
    and the target's text-config keys the engine reads (read / defaulted, and its rotary keys as
    ignored); nothing without ``--explain`` (docs/check.md#accounting)."""
    out: list[str] = []
    for engine, acc in res.accounting.items():
        out += ["", f"Accounting ({engine}): config keys"]
        for k in acc.keys:
            value = "" if k.status == "ignored" else f" = {k.value!r} ({k.where}: {k.origin})"
            out.append(f"  {k.status:<9} {k.key}{value}")
        out.append(f"Accounting ({engine}): checkpoint tensors")
        for t in acc.tensors:
            into = f" -> {t.param}" if t.param else ""
            note = f" ({t.note})" if t.note else ""
            out.append(f"  {t.status:<9} {t.name}{into}{note}")
        out.append(f"Accounting ({engine}): parameters")
        for p in acc.params:
            by = f" <- {p.by}" if p.by else ""
            out.append(f"  {p.status:<12} {p.param}{by}")
        if acc.target_keys:
            out.append(f"Accounting ({engine}): target text-config keys")
        for k in acc.target_keys:
            value = f" = {k.value!r}" if k.status == "read" else ""
            out.append(f"  {k.status:<9} {k.key}{value} ({k.where}: {k.origin})")
    return [shown_text(line) for line in out]  # keys, values, tensor names: cut, escaped
