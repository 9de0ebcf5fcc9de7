"""Markdown helpers of the generated pages: code fences and spans that no value can break out of
(CommonMark), table cells, recipe prose folded to one paragraph."""

from __future__ import annotations

import re
from typing import Any


def _longest_backtick_run(text: str) -> int:
    return max((len(m) for m in re.findall(r"`+", text)), default=0)


def fence(text: str, lang: str = "bash") -> str:
    """A fenced code block holding ``text`` verbatim; the fence is longer than any backtick run
    inside (CommonMark), so a value with backticks cannot close it.

    Args:
        text: block content (a trailing newline is kept as the last line end).
        lang: info string.

    Returns:
        the block, ending with the closing fence (no trailing newline).
    """
    ticks = "`" * max(3, _longest_backtick_run(text) + 1)
    body = text if text.endswith("\n") else text + "\n"
    return f"{ticks}{lang}\n{body}{ticks}"


def code(text: Any) -> str:
    """Inline code span for ``text`` (CommonMark: longer delimiters, padded when needed)."""
    text = str(text).replace("\n", " ")
    ticks = "`" * (_longest_backtick_run(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def cell(text: Any) -> str:
    """Text safe inside a markdown table cell (pipes escaped, newlines folded)."""
    return " ".join(str(text).split("\n")).replace("|", "\\|")


def prose(text: Any) -> str:
    """Recipe prose (description, notes) folded to one paragraph."""
    return " ".join(str(text).split())


def sentence(text: Any) -> str:
    """:func:`prose` starting with a capital and ending with a full stop (unless it already ends
    with ``.``, ``!`` or ``?``)."""
    folded = prose(text)
    if not folded:
        return folded
    folded = folded[0].upper() + folded[1:]
    return folded if folded.endswith((".", "!", "?")) else folded + "."
