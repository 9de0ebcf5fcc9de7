"""Checks shared by the hostile-input tests (no tests here)."""

from __future__ import annotations

from pathlib import Path


def one_error_line(stderr: str) -> str:
    """The one line of stderr, checked: exactly one line, no traceback."""
    lines = stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def hidden(root: Path) -> list[str]:
    """Hidden entries (temporary files and folders) under ``root``, except convert's marker."""
    return sorted(
        str(p.relative_to(root)) for p in root.rglob(".*") if p.name != ".recipecli-convert.json"
    )
