"""Lint rules on the text of a recipe's values: invisible and bidirectional characters.

A value or key holding U+202E (right-to-left override), U+2066-2069 (isolates), U+200B
(zero-width space), U+FEFF or a control character shows, pasted or printed raw, as something
other than what an engine receives ("Trojan Source", CVE-2021-42574). ``render`` writes such
characters escaped in the text formats (``$'\\u202e'`` in shell, ``"\\u202e"`` in the vLLM
config file, ``\\u202e`` in messages) and keeps them in ``argv-json``; ``lint`` flags each
(``recipe.invisible_char``, a warning: the recipe may mean it, but it rarely does).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any

from recipecli.errors import escape_invisible, has_invisible, is_invisible
from recipecli.findings import Finding
from recipecli.recipes.lint.common import finding
from recipecli.recipes.loader import Recipe

#: Most findings one recipe gets from this rule (a recipe of 256 KiB could hold thousands).
MAX_FINDINGS = 20


def _strings(value: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], str]]:
    """(key path, text) of every key and string value under ``value``, depth first."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(value, path)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            yield at, item
        elif isinstance(item, Mapping):
            for k, v in reversed(list(item.items())):
                stack.append((v, (*at, str(k))))
                yield at, str(k)
        elif isinstance(item, list):
            stack.extend((v, (*at, str(i))) for i, v in reversed(list(enumerate(item))))


def _names(text: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE, U+200B ZERO WIDTH SPACE`` for the invisible characters
    of ``text`` (each once, in order)."""
    seen = dict.fromkeys(c for c in text if is_invisible(c))
    return ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'control')}" for c in seen)


def lint_text(recipe: Recipe) -> list[Finding]:
    """``recipe.invisible_char`` for each key or string value of ``recipe`` holding an
    invisible or bidirectional character (:func:`recipecli.errors.is_invisible`), at its line;
    at most :data:`MAX_FINDINGS`."""
    out: list[Finding] = []
    for path, text in _strings(recipe.data, ()):
        if not has_invisible(text):
            continue
        where = escape_invisible(".".join(path)) or "a key"
        out.append(
            finding(
                "recipe.invisible_char",
                "warning",
                "any",
                f"{where} holds {_names(text)}, which a terminal shows as nothing or reorders "
                f"({escape_invisible(text)}); render writes it escaped, the engine gets it",
                recipe.where(*path),
                "docs/hostile-input.md#invisible-characters",
            )
        )
        if len(out) >= MAX_FINDINGS:
            break
    return out
