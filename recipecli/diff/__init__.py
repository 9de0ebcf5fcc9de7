"""Semantic diff of two rendered commands: `recipecli diff A B`.

A side is one rendered command (:func:`recipecli.recipes.render.render_command`): a recipe, an
engine, a hardware profile and which command (``serve``, ``bench`` or ``eval``). The diff does not
compare text: it compares

* the command head (program, subcommands, positional model),
* the environment (``export`` lines): added / removed / changed variables,
* the flags, by long name and regardless of order: added / removed / changed,
* JSON-valued flag values (``--speculative-config``, ``--hf-overrides``, any value that parses as a
  JSON object or array) key by key, down to the leaves, with a ``moved`` verdict when the same
  leaf value sits under another path (vLLM nests text-config overrides under ``text_config``,
  tokenspeed takes them flat: docs/engines/vllm.md#hf-overrides, docs/engines/tokenspeed.md#hf-overrides),
* ``key=value,…`` flags of lm-eval (``--model_args``, ``--gen_kwargs``) key by key.

Everything here is pure: :func:`diff_commands` takes two :class:`~recipecli.recipes.render.Rendered`
(or any env + argv) and returns a :class:`CommandDiff`.
"""

from __future__ import annotations

from recipecli.diff.compare import (
    KV_LIST_FLAGS,
    WHATS_ALL,
    diff_all,
    diff_commands,
    diff_recipes,
    diff_structured,
    leaves,
    parse_flags,
    rendered_flags,
    structured_value,
)
from recipecli.diff.model import AllDiff, Change, CommandDiff, KeyChange, Side
from recipecli.diff.text import format_all, format_diff

__all__ = [
    "KV_LIST_FLAGS",
    "WHATS_ALL",
    "AllDiff",
    "Change",
    "CommandDiff",
    "KeyChange",
    "Side",
    "diff_all",
    "diff_commands",
    "diff_recipes",
    "diff_structured",
    "format_all",
    "format_diff",
    "leaves",
    "parse_flags",
    "rendered_flags",
    "structured_value",
]
