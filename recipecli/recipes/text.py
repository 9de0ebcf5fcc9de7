"""Text of rendered commands: the one shell formatter (:func:`format_shell`) and its inverse, the
``vllm serve --config`` YAML (:func:`vllm_config_text`) and the shell text ``recipecli render``
prints (:func:`shell_text`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

import recipecli.recipes.engines as E
from recipecli.errors import UsageError, has_invisible, invisible_escape, is_invisible
from recipecli.recipes.argv import Rendered
from recipecli.recipes.templating import render_template

ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def quote_word(word: str) -> str:
    """One shell word for ``word``: :func:`shlex.quote`, unless ``word`` holds an invisible or
    bidirectional character (:func:`recipecli.errors.is_invisible`: U+202A-202E, U+2066-2069,
    U+200B-200F, U+FEFF, controls, ...). Such a word is written in ANSI-C quotes, ``$'...'``
    (bash, zsh, ksh, busybox and dash 0.5.12+ read them), with that character as ``\\uXXXX``,
    so that a pasted command looks like what runs: bash gives back ``word`` exactly, and so
    does :func:`split_shell`."""
    if not has_invisible(word):
        return shlex.quote(word)
    out = []
    for ch in word:
        if ch in "\\'":
            out.append("\\" + ch)
        elif is_invisible(ch):
            out.append(invisible_escape(ch))
        else:
            out.append(ch)
    return "$'" + "".join(out) + "'"


_ANSI_C = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b",
           "e": "\x1b", "f": "\f", "v": "\v"}  # fmt: skip
_HEX = {"x": 2, "u": 4, "U": 8}


def _ansi_c_value(text: str, start: int) -> tuple[str, int]:
    """The value of the ``$'...'`` word whose body starts at ``text[start]`` and the index after
    its closing quote (bash's escapes: ``\\n``, ``\\xHH``, ``\\uXXXX``, ``\\UXXXXXXXX``, ...).

    Raises:
        ValueError: no closing quote.
    """
    out: list[str] = []
    i = start
    while i < len(text):
        c = text[i]
        if c == "'":
            return "".join(out), i + 1
        if c == "\\" and i + 1 < len(text):
            e = text[i + 1]
            width = _HEX.get(e)
            digits = text[i + 2 : i + 2 + width] if width else ""
            if width and digits and all(d in "0123456789abcdefABCDEF" for d in digits):
                out.append(chr(int(digits, 16)))
                i += 2 + width
                continue
            out.append(_ANSI_C.get(e, "\\" + e))
            i += 2
            continue
        out.append(c)
        i += 1
    raise ValueError("split_shell: no closing quote of $'...'")


def expand_ansi_c(text: str) -> str:
    """Rewrite each ``$'...'`` word outside other quotes as the :func:`shlex.quote` of its value
    (:func:`quote_word` writes them), so that ``shlex`` reads what bash reads."""
    out: list[str] = []
    i, n, state = 0, len(text), ""  # state: "" (unquoted), "'" or '"'
    while i < n:
        c = text[i]
        if state == "" and c == "$" and text.startswith("$'", i):
            value, i = _ansi_c_value(text, i + 2)
            out.append(shlex.quote(value))
            continue
        if state == "'":
            state = "" if c == "'" else state
        elif c == "\\" and i + 1 < n:
            out.append(text[i : i + 2])
            i += 2
            continue
        elif c in "'\"" and (state == "" or state == c):
            state = "" if state == c else c
        out.append(c)
        i += 1
    return "".join(out)


def format_shell(
    env: Mapping[str, str], argv: Sequence[str], *, head: int | None = None, indent: str = "  "
) -> str:
    """Format ``env`` + ``argv`` as copy-pasteable POSIX shell.

    ``export NAME=VALUE`` lines, a blank line, then the command: the first ``head`` argv items
    on the first line (default: up to the first item starting with ``-``), then one flag with its
    values per line, every line but the last ending in `` \\``. Every item is quoted with
    :func:`quote_word` (:func:`shlex.quote`, or ``$'...'`` with invisible and bidirectional
    characters escaped), so :func:`split_shell` of the command lines gives back ``argv`` exactly
    and nothing is expanded by the shell (``$``, backticks, ``{{ }}`` stay literal).

    Args:
        env: environment variables (names must match ``[A-Za-z_][A-Za-z0-9_]*``).
        argv: the command, at least one item.
        head: argv items on the first line; None = up to the first ``-`` item.
        indent: indentation of continuation lines.

    Returns:
        the shell text, ending with a newline.

    Raises:
        ValueError: empty argv or an invalid env var name.
    """
    if not argv:
        raise ValueError("format_shell: empty argv")
    lines: list[str] = []
    for name, value in env.items():
        if not ENV_NAME_RE.match(name):
            raise ValueError(f"format_shell: invalid environment variable name {name!r}")
        lines.append(f"export {name}={quote_word(str(value))}")
    if lines:
        lines.append("")
    if head is None:
        head = next((i for i, a in enumerate(argv) if a.startswith("-") and i > 0), len(argv))
    head = max(1, min(head, len(argv)))
    groups: list[list[str]] = [list(argv[:head])]
    for item in argv[head:]:
        if item.startswith("-") or len(groups) == 1:
            groups.append([item])
        else:
            groups[-1].append(item)
    parts = [" ".join(quote_word(a) for a in g) for g in groups]
    command = (" \\\n" + indent).join(parts)
    lines.append(command)
    return "\n".join(lines) + "\n"


def unfold_continuations(text: str) -> str:
    """Remove backslash-newline line continuations outside single quotes, as a POSIX shell does
    (``shlex`` does not), so ``shlex.split(unfold_continuations(text))`` sees what bash sees."""
    out: list[str] = []
    i, n, state = 0, len(text), ""  # state: "" (unquoted), "'" or '"'
    while i < n:
        c = text[i]
        if state == "'":
            state = "" if c == "'" else state
        elif c == "\\" and i + 1 < n:
            if text[i + 1] != "\n":
                out.append(text[i : i + 2])
            i += 2
            continue
        elif c in "'\"" and (state == "" or state == c):
            state = "" if state == c else c
        out.append(c)
        i += 1
    return "".join(out)


def split_shell(text: str) -> tuple[dict[str, str], list[str]]:
    """Inverse of :func:`format_shell`: ``(env, argv)`` from its output (``$'...'`` words
    read as bash reads them, :func:`expand_ansi_c`).

    Raises:
        ValueError: unbalanced quotes or an ``export`` without ``NAME=VALUE``.
    """
    tokens = shlex.split(unfold_continuations(expand_ansi_c(text)))
    env: dict[str, str] = {}
    while len(tokens) >= 2 and tokens[0] == "export":
        name, sep, value = tokens[1].partition("=")
        if not sep:
            raise ValueError(f"split_shell: export without NAME=VALUE: {tokens[1]!r}")
        env[name] = value
        tokens = tokens[2:]
    return env, tokens


def vllm_config_mapping(rendered: Rendered, target: str | None = None) -> dict[str, Any]:
    """The ``vllm serve --config FILE`` mapping of a rendered vLLM serve command: keys are long
    flag names without dashes, ``true`` for bare flags (``no-x: true`` for ``--no-x``), nested
    mappings for JSON flags.

    vLLM 0.33.0 ``FlexibleArgumentParser.load_config_file`` (vllm/utils/argparse_utils.py) turns
    ``x: false`` into ``--no-x`` only when the TOP-LEVEL parser has ``--no-x``, which ``vllm serve
    --config`` never has (the flags live on the serve subparser): a ``false`` is dropped silently.
    ``no-x: true`` becomes ``--no-x``, which the serve parser accepts.
    """
    out: dict[str, Any] = {"model": target or rendered.argv[2]}
    for flag, value in rendered.flags:
        out[flag[2:]] = value
    return out


def check_config_file_format(fmt: str, engine: str, what: str) -> None:
    """Refuse ``recipecli render --format FMT`` for an engine whose serve command reads no such
    ``--config`` file (``EngineSpec.serve_config_format``: vLLM's ``vllm-config``) or for
    a command other than serve.

    Raises:
        UsageError: ``engine`` has no config-file format ``fmt``, or ``what`` is not ``serve``.
    """
    if E.SERVE_CONFIG_FILE_FORMAT.get(engine) != fmt or what != "serve":
        engines = [e for e, f in E.SERVE_CONFIG_FILE_FORMAT.items() if f == fmt]
        raise UsageError(f"--format {fmt} needs --engine {' or '.join(engines)} and --what serve")


def vllm_config_text(rendered: Rendered, recipe_name: str, *, templates: str | None = None) -> str:
    """``recipecli render --format vllm-config``: the YAML file for ``vllm serve --config FILE``
    (:func:`vllm_config_mapping`), with the serve command's ``export`` lines as comments, through
    the ``vllm-config.yaml.j2`` template.

    Args:
        rendered: a rendered vLLM serve command.
        recipe_name: the recipe's name (shown in the header).
        templates: directory overriding the bundled templates.

    Returns:
        the file text (the template's own line ends).

    Raises:
        UsageError: ``rendered`` is not a vLLM serve command; a bad template.
    """
    import yaml

    check_config_file_format("vllm-config", rendered.engine, rendered.what)
    env_text = format_shell(rendered.env, ["true"]) if rendered.env else ""
    env_lines = [line for line in env_text.splitlines() if line.startswith("export ")]
    mapping = vllm_config_mapping(rendered)
    body = yaml.safe_dump(mapping, sort_keys=False, allow_unicode=True, width=1 << 16)
    if has_invisible(body):  # every non-ASCII character as \\uXXXX in double quotes, which
        # vLLM's YAML reader turns back into the same value: nothing invisible in the file
        body = yaml.safe_dump(mapping, sort_keys=False, allow_unicode=False, width=1 << 16)
    return render_template(
        "vllm-config.yaml.j2",
        {
            "recipe": recipe_name,
            "hardware": rendered.hardware,
            "env_lines": env_lines,
            "body": body.rstrip("\n"),
        },
        user_dir=templates,
    )


def shell_text(rendered: Sequence[Rendered], *, templates: str | None = None) -> str:
    """``recipecli render``'s default output: every command through :func:`format_shell` in the
    ``shell.sh.j2`` template (headers naming what, engine, hardware and sweep point when there
    are several).

    Raises:
        UsageError: a bad template.
    """
    blocks = [
        {
            "what": r.what,
            "engine": r.engine,
            "hardware": r.hardware,
            "point": r.point,
            "shell": format_shell(r.env, r.argv, head=r.head),
        }
        for r in rendered
    ]
    return render_template(
        "shell.sh.j2", {"blocks": blocks, "show_headers": len(blocks) > 1}, user_dir=templates
    )
