"""Bounded, escaped display of untrusted strings in text output (layer 0).

Values shown in recipecli's text (``inspect``, ``check``, ``lint``) come from files anyone can
write: a config's ``architectures`` or ``model_type``, a repo id, a recipe value. Shown raw, a
10 MB string is 10 MB of terminal output, and a U+202E reorders the line it is on. Text output
therefore shows each value through :func:`shown_value` and each message or line through
:func:`shown_text`:

* **Cut at a documented length, visibly.** A value, or a run of characters without white
  space inside a message (a word: an architecture, a path, a repo id), longer than
  :data:`VALUE_CHARS` keeps its first :data:`VALUE_CHARS` characters and ends in
  ``[… N more characters]``. A message longer than :data:`TEXT_CHARS` keeps its start and its
  end (where the hint is) around ``[… N characters cut …]``. The longest word of any golden
  output is 153 characters and the longest line 1,623 (a docs page), so nothing ordinary is cut.
* **Escaped.** Then every invisible or bidirectional character is written as its escape
  (:func:`recipecli.errors.escape_invisible`: ``\\u202e``), so what is shown is what is there.

Both run in time linear in the input. JSON output keeps values whole: the inputs they come from
are bounded by the readers (``config.json`` at 16 MiB, ``recipecli.checkpoint.local
.MAX_CONFIG_BYTES``; a recipe at 256 KiB, ``recipecli.recipes.loader.MAX_RECIPE_BYTES``).
"""

from __future__ import annotations

import re

from recipecli.errors import escape_invisible

#: Longest value, or word of a message, shown whole (characters).
VALUE_CHARS = 256
#: Longest message or line shown whole (characters); a longer one keeps its first three
#: quarters and its last quarter of this length.
TEXT_CHARS = 4096

_LONG_WORD = re.compile(rf"\S{{{VALUE_CHARS + 1},}}")


def _cut_word(word: str, limit: int) -> str:
    return f"{word[:limit]} [… {len(word) - limit} more characters]"


def shown_value(value: object, limit: int = VALUE_CHARS) -> str:
    """``str(value)`` as text output shows it: at most ``limit`` characters of it, then
    ``[… N more characters]`` when longer; invisible characters escaped.

    Args:
        value: any value (a config string, a repo id, a path).
        limit: characters kept (default :data:`VALUE_CHARS`).

    Returns:
        The text, at most ``limit`` characters plus the marker before escaping (each escaped
        character takes 6 or 10).
    """
    text = str(value)
    if len(text) > limit:
        text = _cut_word(text, limit)
    return escape_invisible(text)


def shown_text(text: str) -> str:
    """A message or line as text output shows it: cut in its middle to :data:`TEXT_CHARS`
    (``[… N characters cut …]``), then each word (run without white space) longer than
    :data:`VALUE_CHARS` cut (:func:`shown_value`'s marker), invisible characters escaped. Applying it
    to its own result changes nothing unless escapes made a word longer than the limit.

    Args:
        text: the message (one line, or several: newlines are white space and stay).

    Returns:
        The text to print.
    """
    if len(text) > TEXT_CHARS:  # first, so that the word pass reads a bounded text
        head, tail = TEXT_CHARS * 3 // 4, TEXT_CHARS // 4
        cut = len(text) - head - tail
        text = f"{text[:head]} [… {cut} characters cut …] {text[len(text) - tail :]}"
    if len(text) > VALUE_CHARS:
        text = _LONG_WORD.sub(lambda m: _cut_word(m.group(), VALUE_CHARS), text)
    return escape_invisible(text)
