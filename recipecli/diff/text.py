"""The human output of ``recipecli diff``: a ``---``/``+++`` header, then ``command:``, ``env:``
and ``flags:`` sections of ``+`` added, ``-`` removed, ``~`` changed lines, and a summary."""

from __future__ import annotations

import json
import shlex
from typing import Any

from recipecli.diff.model import AllDiff, Change, CommandDiff, KeyChange


def format_all(d: AllDiff) -> str:
    """Human output of :class:`AllDiff`: each command's :func:`format_diff`, a blank line
    between them."""
    return "\n".join(format_diff(x) for x in d.diffs)


def _show(value: Any) -> str:
    """A value as shown to humans: JSON for structured leaves, shell-quoted text otherwise."""
    if value is True:
        return "(bare flag)"
    if isinstance(value, str):
        return shlex.quote(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return " ".join(shlex.quote(v) for v in value)
    return json.dumps(value, ensure_ascii=False)


def _show_leaf(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _path(p: tuple[str, ...]) -> str:
    return ".".join(p) if p else "(whole value)"


def _command_lines(changes: list[Change]) -> list[str]:
    lines = ["command:"]
    for c in changes:
        if c.op == "added":
            lines.append(f"  + {c.name}: only in B ({c.b})")
        elif c.op == "removed":
            lines.append(f"  - {c.name}: only in A ({c.a})")
        else:
            lines.append(f"  ~ {c.name}: {_show(c.a)} -> {_show(c.b)}")
    return lines


def _env_lines(changes: list[Change]) -> list[str]:
    lines = ["env:"]
    for c in changes:
        if c.op == "added":
            lines.append(f"  + {c.name}={shlex.quote(c.b)}")
        elif c.op == "removed":
            lines.append(f"  - {c.name}={shlex.quote(c.a)}")
        else:
            lines.append(f"  ~ {c.name}: {shlex.quote(c.a)} -> {shlex.quote(c.b)}")
    return lines


def _key_line(k: KeyChange) -> str:
    """One key change of a structured flag value, indented below its flag."""
    if k.op == "added":
        return f"      + {_path(k.path)}: {_show_leaf(k.b)}"
    if k.op == "removed":
        return f"      - {_path(k.path)}: {_show_leaf(k.a)}"
    if k.op == "moved":
        return f"      > {_path(k.from_path or ())} moved to {_path(k.path)}: {_show_leaf(k.b)}"
    return f"      ~ {_path(k.path)}: {_show_leaf(k.a)} -> {_show_leaf(k.b)}"


def _flag_lines(changes: list[Change]) -> list[str]:
    lines = ["flags:"]
    for c in changes:
        if c.op == "added":
            lines.append(f"  + {c.name}" + ("" if c.b is True else f" {_show(c.b)}"))
        elif c.op == "removed":
            lines.append(f"  - {c.name}" + ("" if c.a is True else f" {_show(c.a)}"))
        elif c.keys:
            lines.append(f"  ~ {c.name}")
            lines += [_key_line(k) for k in c.keys]
        else:
            lines.append(f"  ~ {c.name}: {_show(c.a)} -> {_show(c.b)}")
    return lines


def format_diff(d: CommandDiff) -> str:
    """Human-readable diff: a ``---``/``+++`` header, then ``command:``, ``env:`` and ``flags:``
    sections with ``+`` added, ``-`` removed, ``~`` changed lines, JSON keys indented below their
    flag, and a one-line summary.

    Args:
        d: the diff.

    Returns:
        text ending with a newline.
    """
    lines = [f"--- {d.a.label()}", f"+++ {d.b.label()}"]
    if d.identical:
        lines.append(f"identical ({len(d.unchanged_flags)} flags)")
        return "\n".join(lines) + "\n"
    for kind, section in (("command", _command_lines), ("env", _env_lines), ("flag", _flag_lines)):
        changes = d.of(kind)
        if changes:
            lines += section(changes)
    s = d.summary()
    lines.append(
        f"{s['flag_added']} flags added, {s['flag_removed']} removed, {s['flag_changed']} changed, "
        f"{s['flags_unchanged']} unchanged; env {s['env_added']} added, {s['env_removed']} removed, "
        f"{s['env_changed']} changed"
    )
    return "\n".join(lines) + "\n"
