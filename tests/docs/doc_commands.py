"""The ``recipecli`` commands of README.md and docs/**/*.md, as the pages show them.

A command is a line of a fenced block that starts with ``recipecli `` or ``$ recipecli ``
(a transcript: the output follows), joined with its backslash continuations. What a page says
about a block goes in an HTML comment on the line before its opening fence (blank lines
between are allowed), which renders as nothing:

- ``<!-- docs-test: skip (REASON) -->``: the block's commands are not run; the test prints
  ``skipped PAGE:LINE: REASON`` for each.
- ``<!-- docs-test: exit N -->``: every command of the block exits with code N.

Without a marker a command must exit with the code the page states for it: ``exits N`` in
its trailing ``#`` comment, else the ``exit N:`` verdict line of its transcript
output (``check`` ends its report with one), else 0. A usage synopsis (an option in ``[...]``,
alternatives ``a|b``, ``...``) is not a command: it is reported as skipped ("usage line").
``NAME=value`` lines of a block set ``$NAME`` for the block's later commands.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"<!--\s*docs-test:\s*(skip|exit)\s*(.*?)\s*-->")
FENCE = re.compile(r"^\s*(```|~~~)")
ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(\S+)$")
EXIT_COMMENT = re.compile(r"#.*\bexits\s+(\d+)\b")
EXIT_LINE = re.compile(r"^exit (\d+):")
USAGE = re.compile(r"(^|\s)\[|\||\.\.\.|…")


@dataclass(frozen=True)
class DocCommand:
    """One command of a page.

    Attributes:
        page: the page, relative to the repository root (``docs/check.md``).
        line: 1-based line of the command's first line.
        text: the command as written (continuations joined, ``$ `` and comments kept out).
        argv: its words after ``recipecli`` (shlex, ``$NAME`` of the block substituted).
        exit_code: the exit code the page states (0 when it states none).
        skip: why it is not run, or None.
    """

    page: str
    line: int
    text: str
    argv: tuple[str, ...]
    exit_code: int
    skip: str | None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def doc_pages() -> list[Path]:
    """README.md and every page under docs/ (generated ones too), sorted."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def _blocks(lines: list[str]) -> list[tuple[int, list[str], str | None]]:
    """(first line number, the block's lines, the marker before it) of each fenced block."""
    out: list[tuple[int, list[str], str | None]] = []
    marker: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        found = MARKER.search(line)
        fenced = FENCE.match(line)
        if found:
            marker = f"{found.group(1)} {found.group(2)}".strip()
        elif fenced:
            fence = fenced.group(1)
            body: list[str] = []
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(fence):
                body.append(lines[j])
                j += 1
            out.append((i + 2, body, marker))
            marker = None
            i = j
        elif line.strip():
            marker = None
        i += 1
    return out


def _joined(body: list[str], k: int) -> tuple[str, int]:
    """Line ``k`` of ``body`` with its backslash continuations, and the index after them."""
    text = body[k].rstrip()
    k += 1
    while text.endswith("\\") and k < len(body):
        text = text[:-1].rstrip() + " " + body[k].strip()
        k += 1
    return text, k


def _expected(text: str, output: list[str]) -> int:
    found = EXIT_COMMENT.search(text)
    if found:
        return int(found.group(1))
    for line in reversed(output):
        verdict = EXIT_LINE.match(line.strip())
        if verdict:
            return int(verdict.group(1))
    return 0


def _command(
    page: str, line: int, text: str, output: list[str], marker: str | None, env: dict[str, str]
) -> DocCommand:
    words = shlex.split(text, comments=True)
    bare = " ".join(shlex.quote(w) for w in words)
    for name, value in env.items():
        words = [w.replace(f"${name}", value) for w in words]
    skip = None
    if marker and marker.startswith("skip"):
        skip = marker[4:].strip(" ()") or "marked skip"
    elif USAGE.search(text.split(" #", 1)[0]):
        skip = "usage line"
    exit_code = _expected(text, output)
    if marker and marker.startswith("exit"):
        exit_code = int(marker.split()[1])
    return DocCommand(page, line, bare, tuple(words[1:]), exit_code, skip)


def page_commands(path: Path) -> list[DocCommand]:
    """Every ``recipecli`` command of the page at ``path``, in page order."""
    page = path.relative_to(REPO).as_posix()
    out: list[DocCommand] = []
    for first, body, marker in _blocks(path.read_text(encoding="utf-8").splitlines()):
        env: dict[str, str] = {}
        k = 0
        while k < len(body):
            raw = body[k].strip()
            assign = ASSIGN.match(raw)
            if assign:
                env[assign.group(1)] = assign.group(2)
            if not (raw.startswith("recipecli ") or raw.startswith("$ recipecli ")):
                k += 1
                continue
            start = k
            text, k = _joined(body, k)
            text = text.strip().removeprefix("$ ")
            output: list[str] = []
            if raw.startswith("$ "):
                while k < len(body) and not body[k].startswith("$ "):
                    output.append(body[k])
                    k += 1
            out.append(_command(page, first + start, text, output, marker, env))
    return out


def all_commands() -> list[DocCommand]:
    """The commands of every page of :func:`doc_pages`."""
    return [cmd for path in doc_pages() for cmd in page_commands(path)]
