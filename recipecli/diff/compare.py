"""Comparing two rendered commands: flags parsed from argv (or taken from a render's typed
flags), structured values (JSON, ``key=value`` lists) diffed key by key, and the library entries
:func:`diff_commands`, :func:`diff_recipes` and :func:`diff_all`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from recipecli.diff.model import AllDiff, Change, CommandDiff, KeyChange, Side
from recipecli.engines import ENGINES
from recipecli.recipes.render import Rendered, render_command, serve_flag_argv

#: Flags whose value is a ``key=value`` list, diffed key by key: lm-eval's ``key=value,…``
#: (``--model_args``, ``--gen_kwargs``) and ``vllm bench serve --metadata K=V K=V``.
KV_LIST_FLAGS: frozenset[str] = frozenset({"--model_args", "--gen_kwargs", "--metadata"})

#: One side of :func:`diff_commands`: a render, or ``(env, argv, head)`` (``head`` = number of
#: leading argv items before the first flag).
CommandInput = Rendered | tuple[Mapping[str, str], Sequence[str], int]


# --------------------------------------------------------------------------- parsing argv


def parse_flags(argv: Sequence[str], head: int) -> dict[str, Any]:
    """Split ``argv[head:]`` into ``{flag: value}`` in order of appearance.

    A flag is an item starting with ``-``; the items after it up to the next flag are its values:
    none -> ``True`` (bare flag), one -> that text, several -> a list of texts. A repeated flag
    collects its values in a list.

    Args:
        argv: the rendered command.
        head: number of leading items that are not flags (program, subcommands, model).

    Returns:
        ordered mapping of flag -> value.
    """
    flags: dict[str, Any] = {}
    current: str | None = None
    values: list[str] = []

    def close() -> None:
        if current is None:
            return
        value: Any = True if not values else values[0] if len(values) == 1 else list(values)
        if current in flags:
            prev = flags[current]
            flags[current] = [*(prev if isinstance(prev, list) else [prev]), value]
        else:
            flags[current] = value

    for item in argv[head:]:
        if item.startswith("-") and len(item) > 1 and not _is_number(item):
            close()
            current, values = item, []
        elif current is None:
            current, values = "", [item]  # stray positional after the head
        else:
            values.append(item)
    close()
    return flags


def rendered_flags(rendered: Rendered) -> dict[str, Any]:
    """``{flag: value text}`` of a render: from its typed ``flags`` when it has them (serve:
    exact even for values starting with ``-``), else parsed from ``argv``
    (:func:`parse_flags`)."""
    if not rendered.flags:
        return parse_flags(rendered.argv, rendered.head)
    out: dict[str, Any] = {}
    for flag, value in rendered.flags:
        items = serve_flag_argv(rendered.engine, flag, value)
        if items:
            out[flag] = True if len(items) == 1 else items[1] if len(items) == 2 else items[1:]
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def structured_value(flag: str, value: Any) -> Mapping[str, Any] | list[Any] | None:
    """The parsed form of a structured flag value, or None for plain text.

    JSON objects/arrays (``--speculative-config '{"method": …}'``) are parsed with ``json``;
    lm-eval ``k=v,k=v`` flags (:data:`KV_LIST_FLAGS`) become ``{k: v}`` (values stay text).
    """
    if isinstance(value, list) and flag in KV_LIST_FLAGS:
        # vllm bench serve --metadata K=V K=V (nargs="*"): one item per key
        if value and all(isinstance(v, str) and "=" in v for v in value):
            return dict(v.split("=", 1) for v in value)
        return None
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.startswith(("{", "[")):
        try:
            parsed = json.loads(text)
        except ValueError:
            return None
        return parsed if isinstance(parsed, (dict, list)) else None
    if flag in KV_LIST_FLAGS and "=" in text:
        out: dict[str, Any] = {}
        for part in text.split(","):
            key, sep, val = part.partition("=")
            if not sep:
                return None
            out[key] = val
        return out
    return None


# --------------------------------------------------------------------------- key-by-key diff


def leaves(value: Any, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    """Flatten nested mappings into ``{key path: leaf}``; lists and empty mappings are leaves."""
    if isinstance(value, Mapping) and value:
        out: dict[tuple[str, ...], Any] = {}
        for key, sub in value.items():
            out.update(leaves(sub, (*prefix, str(key))))
        return out
    return {prefix: value}


def diff_structured(a: Any, b: Any) -> tuple[KeyChange, ...]:
    """Leaf-level diff of two parsed structured values (mappings, possibly nested).

    A removed leaf and an added leaf with the same last key and an equal value are reported
    once as ``moved`` (e.g. ``text_config.index_topk_freq`` -> ``index_topk_freq``).

    Args:
        a, b: parsed JSON values (mappings or lists).

    Returns:
        key changes, in the order: moved/changed/removed along A's leaves, then added along B's.
    """
    la, lb = leaves(a), leaves(b)
    removed = [p for p in la if p not in lb]
    added = [p for p in lb if p not in la]
    moved: dict[tuple[str, ...], tuple[str, ...]] = {}  # A path -> B path
    for pa in removed:
        for pb in added:
            if pb in moved.values() or not pa or not pb:
                continue
            if pa[-1] == pb[-1] and la[pa] == lb[pb]:
                moved[pa] = pb
                break
    out: list[KeyChange] = []
    for path, va in la.items():
        if path in moved:
            out.append(KeyChange("moved", moved[path], va, lb[moved[path]], from_path=path))
        elif path not in lb:
            out.append(KeyChange("removed", path, va, None))
        elif lb[path] != va:
            out.append(KeyChange("changed", path, va, lb[path]))
    taken = set(moved.values())
    for path, vb in lb.items():
        if path not in la and path not in taken:
            out.append(KeyChange("added", path, None, vb))
    return tuple(out)


def _flag_change(flag: str, va: Any, vb: Any) -> Change | None:
    if va == vb:
        return None
    sa, sb = structured_value(flag, va), structured_value(flag, vb)
    if sa is not None and sb is not None:
        if sa == sb:
            return None  # same JSON, other spelling (key order, spacing)
        if isinstance(sa, Mapping) and isinstance(sb, Mapping):
            return Change("flag", "changed", flag, va, vb, diff_structured(sa, sb))
    return Change("flag", "changed", flag, va, vb)


def _head_role(i: int, n: int, what: str) -> str:
    """Role of head item ``i`` of ``n``: ``program``, ``model`` (last item of a serve head), or
    ``argument i``."""
    if i == 0:
        return "program"
    if what == "serve" and i == n - 1:
        return "model"
    return f"argument {i}"


def _unpack(x: CommandInput) -> tuple[Mapping[str, str], Sequence[str], int, str, dict[str, Any]]:
    """``(env, argv, head, what, flags)`` of a :class:`Rendered` or an ``(env, argv, head)``."""
    if isinstance(x, Rendered):
        return x.env, x.argv, x.head, x.what, rendered_flags(x)
    env, argv, head = x
    return env, argv, head, "", parse_flags(argv, head)


def _head_changes(ha: list[str], hb: list[str], what: str) -> list[Change]:
    """``command`` changes between two command heads: item by item when they are as long,
    else one change of the whole head."""
    if ha == hb:
        return []
    if len(ha) != len(hb):
        return [Change("command", "changed", "command", ha, hb)]
    return [
        Change("command", "changed", _head_role(i, len(ha), what), x, y)
        for i, (x, y) in enumerate(zip(ha, hb, strict=True))
        if x != y
    ]


def _env_changes(env_a: Mapping[str, str], env_b: Mapping[str, str]) -> list[Change]:
    """``env`` changes: removed and changed along A, then added along B."""
    changes: list[Change] = []
    for name, va in env_a.items():
        if name not in env_b:
            changes.append(Change("env", "removed", name, va, None))
        elif env_b[name] != va:
            changes.append(Change("env", "changed", name, va, env_b[name]))
    for name, vb in env_b.items():
        if name not in env_a:
            changes.append(Change("env", "added", name, None, vb))
    return changes


def _flag_changes(fa: dict[str, Any], fb: dict[str, Any]) -> tuple[list[Change], list[str]]:
    """``(changes, unchanged flags)``: the changes removed, then changed, then added."""
    unchanged: list[str] = []
    removed = [Change("flag", "removed", f, v, None) for f, v in fa.items() if f not in fb]
    changed: list[Change] = []
    for flag, va in fa.items():
        if flag in fb:
            c = _flag_change(flag, va, fb[flag])
            if c is None:
                unchanged.append(flag)
            else:
                changed.append(c)
    added = [Change("flag", "added", f, None, v) for f, v in fb.items() if f not in fa]
    return removed + changed + added, unchanged


def _flag_changes_by_meaning(
    engine_a: str, fa: dict[str, Any], engine_b: str, fb: dict[str, Any]
) -> tuple[list[Change], list[str]]:
    """:func:`_flag_changes` across two engines: flags compared by what they set
    (:func:`recipecli.diff.meaning.by_meaning`), each change named by both spellings."""
    from dataclasses import replace

    from recipecli.diff.meaning import by_meaning, label

    ka, spelled_a = by_meaning(engine_a, fa)
    kb, spelled_b = by_meaning(engine_b, fb)
    changes, unchanged = _flag_changes(ka, kb)
    named = [
        replace(
            c,
            name=label(c.name, spelled_a, spelled_b),
            meaning=None if c.name.startswith("-") else c.name,
        )
        for c in changes
    ]
    return named, [label(k, spelled_a, spelled_b) for k in unchanged]


def diff_commands(
    a: CommandInput,
    b: CommandInput,
    *,
    side_a: Side | None = None,
    side_b: Side | None = None,
) -> CommandDiff:
    """Semantic diff of two commands. Two renders for different engines are compared by
    meaning: a flag is matched with the other engine's flag that sets the same serve field or
    speculative setting (each engine's ``serve_flags`` and speculative flag builder:
    :mod:`recipecli.diff.meaning`), so a spelling alone is no change.

    Args:
        a, b: rendered commands, or ``(env, argv, head)`` tuples (``head`` = number of leading
            argv items before the first flag).
        side_a, side_b: descriptions of the sides (for output); default: derived from ``a``/``b``.

    Returns:
        :class:`CommandDiff`.
    """
    env_a, argv_a, head_a, what, fa = _unpack(a)
    env_b, argv_b, head_b, what_b, fb = _unpack(b)
    what = what if what == what_b else ""
    changes = _head_changes(list(argv_a[:head_a]), list(argv_b[:head_b]), what)
    changes += _env_changes(env_a, env_b)
    if isinstance(a, Rendered) and isinstance(b, Rendered) and a.engine != b.engine:
        flag_changes, unchanged = _flag_changes_by_meaning(a.engine, fa, b.engine, fb)
    else:
        flag_changes, unchanged = _flag_changes(fa, fb)
    changes += flag_changes
    if side_a is None:
        side_a = _side_of(a)
    if side_b is None:
        side_b = _side_of(b)
    return CommandDiff(side_a, side_b, tuple(changes), tuple(unchanged))


def _side_of(x: CommandInput) -> Side:
    if isinstance(x, Rendered):
        return Side("", x.engine, x.hardware, x.what)
    return Side("", "", None, "")


def diff_recipes(
    recipe_a: str,
    recipe_b: str | None = None,
    *,
    engine: str = ENGINES[0],
    vs_engine: str | None = None,
    hardware: str | None = None,
    vs_hardware: str | None = None,
    what: str = "serve",
    sets: Sequence[str] = (),
    vs_sets: Sequence[str] = (),
    target_config: str | None = None,
) -> CommandDiff:
    """Render both sides and diff them: the library entry of ``recipecli diff``.

    Args:
        recipe_a: recipe file or bundled name for A.
        recipe_b: recipe for B (default: ``recipe_a``).
        engine: engine of A (default: the registry's first, ``recipecli.engines.ENGINES[0]``);
            ``vs_engine`` that of B (default: ``engine``).
        hardware: hardware profile of A (default: the recipe's ``default_hardware``);
            ``vs_hardware`` that of B (default: ``hardware``).
        what: ``serve``, ``bench`` or ``eval``.
        sets: ``NAME=VALUE`` overrides for A; ``vs_sets`` for B.
        target_config: ``--target-config SOURCE`` used for both sides.

    Returns:
        :class:`CommandDiff`.

    Raises:
        RecipeError, UsageError: from loading or rendering either side.
    """
    from recipecli.recipes.loader import load_recipe

    ra = load_recipe(recipe_a)
    rb = ra if recipe_b is None or recipe_b == recipe_a else load_recipe(recipe_b)
    vs_engine = vs_engine or engine
    vs_hardware = vs_hardware or hardware
    a = render_command(
        ra, engine, hardware=hardware, what=what, sets=sets, target_config=target_config
    )
    b = render_command(
        rb, vs_engine, hardware=vs_hardware, what=what, sets=vs_sets, target_config=target_config
    )
    return diff_commands(
        a,
        b,
        side_a=Side(ra.name, engine, a.hardware, what, tuple(sets)),
        side_b=Side(rb.name, vs_engine, b.hardware, what, tuple(vs_sets)),
    )


WHATS_ALL: tuple[str, ...] = ("serve", "bench", "eval")


def diff_all(
    recipe_a: str,
    recipe_b: str | None = None,
    *,
    engine: str = ENGINES[0],
    vs_engine: str | None = None,
    hardware: str | None = None,
    vs_hardware: str | None = None,
    sets: Sequence[str] = (),
    vs_sets: Sequence[str] = (),
    target_config: str | None = None,
) -> AllDiff:
    """:func:`diff_recipes` for every command (serve, bench, eval) the two sides render.

    Raises:
        RecipeError, UsageError: from loading or rendering either side.
    """
    from recipecli.recipes.loader import load_recipe

    ra = load_recipe(recipe_a)
    rb = ra if recipe_b is None or recipe_b == recipe_a else load_recipe(recipe_b)
    out: list[CommandDiff] = []
    for what in WHATS_ALL:
        has_a = what == "serve" or ra.get(what) is not None
        has_b = what == "serve" or rb.get(what) is not None
        if not (has_a or has_b):
            continue
        if has_a and has_b:
            out.append(
                diff_recipes(
                    recipe_a,
                    recipe_b,
                    engine=engine,
                    vs_engine=vs_engine,
                    hardware=hardware,
                    vs_hardware=vs_hardware,
                    what=what,
                    sets=sets,
                    vs_sets=vs_sets,
                    target_config=target_config,
                )
            )
            continue
        side_a = Side(ra.name, engine, hardware, what, tuple(sets))
        side_b = Side(rb.name, vs_engine or engine, vs_hardware or hardware, what, tuple(vs_sets))
        op = "removed" if has_a else "added"
        change = Change(
            "command",
            op,
            what,
            f"{ra.name} has a {what} section" if has_a else None,
            f"{rb.name} has a {what} section" if has_b else None,
        )
        out.append(CommandDiff(side_a, side_b, (change,), ()))
    return AllDiff(tuple(out))
