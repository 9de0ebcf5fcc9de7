"""Flags by meaning, for a diff across engines: each engine spells the same setting its own way
(``--max-model-len`` / SGLang's ``--context-length``; vLLM's ``--speculative-config`` key
``num_speculative_tokens`` / tokenspeed's and SGLang's ``--speculative-num-steps``), so two
engines' commands are compared by what each flag sets, not by its spelling.

What a flag sets is read from each engine's registry entry (``EngineSpec``): ``serve_flags``
(recipe serve field -> the engine's flag) and the speculative flag builder
(``speculative_flags``), run once on probe values to see which flag (or which key of a JSON
flag) carries the draft, the number of speculative tokens (and ``n + 1`` draft tokens), the
draft TP size and the method. Nothing is typed by hand here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import Any

from recipecli.engines import engine_spec

#: probe values handed to an engine's speculative flag builder: each comes back only in the
#: flag (or JSON key) that carries that setting
_DRAFT = "recipecli-probe/draft"
_N = 9973
_DRAFT_TP = 9967
_METHOD = "eagle3"
_PROBED: dict[Any, str] = {
    _DRAFT: "speculative.draft",
    _N: "speculative.num_speculative_tokens",
    _N + 1: "speculative.num_draft_tokens",
    _DRAFT_TP: "speculative.draft_tensor_parallel_size",
}

#: what a flag of a command sets: ``(flag, None)`` or ``(JSON flag, key)`` -> meaning
Meanings = Mapping[tuple[str, str | None], str]


def _probed(value: Any) -> str | None:
    if isinstance(value, str) and value.lower() == _METHOD:
        return "speculative.method"
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return _PROBED.get(value)
    return None


@cache
def meanings(engine: str) -> Meanings:
    """``engine``'s flags by what they set: each serve field's flag (``tensor_parallel_size``,
    ``max_model_len``, ...) and each speculative flag or JSON key the builder fills
    (``speculative.draft``, ``speculative.num_speculative_tokens``, ...).

    Raises:
        KeyError: ``engine`` is not registered.
    """
    spec = engine_spec(engine)
    out: dict[tuple[str, str | None], str] = {
        (flag, None): field for field, flag in spec.serve_flags.items()
    }
    extra = {"draft_tensor_parallel_size": _DRAFT_TP}
    for flag, value in spec.speculative_flags(_METHOD, _DRAFT, _N, extra):
        if isinstance(value, Mapping):
            for key, sub in value.items():
                found = _probed(sub)
                if found:
                    out[(flag, str(key))] = found
        elif _probed(value):
            out[(flag, None)] = str(_probed(value))
    return out


def _norm(meaning: str, value: Any) -> Any:
    """A value as two engines compare it: numbers as text (JSON 3 and argv ``3`` agree), the
    method in lower case (vLLM's ``eagle3``, tokenspeed's ``EAGLE3``)."""
    if meaning == "speculative.method" and isinstance(value, str):
        return value.lower()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def by_meaning(engine: str, flags: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """``flags`` of an ``engine`` command keyed by meaning where the engine's entry says what a
    flag sets (other flags keep their name), and the spelling each key had.

    Args:
        engine: the engine whose command it is.
        flags: ``{flag: value}`` (:func:`recipecli.diff.compare.rendered_flags`).

    Returns:
        ``({key: value}, {key: spelling})``: a JSON flag's probed keys become keys of their own
        (spelled ``--speculative-config.model``); what is left of it stays under its flag.
    """
    known = meanings(engine)
    values: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for flag, value in flags.items():
        parsed = _json_object(value) if any(f == flag and k for f, k in known) else None
        if parsed is not None:
            rest: dict[str, Any] = {}
            for key, sub in parsed.items():
                meaning = known.get((flag, str(key)))
                if meaning is None:
                    rest[key] = sub
                else:
                    values[meaning], spelled[meaning] = _norm(meaning, sub), f"{flag}.{key}"
            if rest:
                values[flag], spelled[flag] = json.dumps(rest), flag
            continue
        meaning = known.get((flag, None))
        key = meaning or flag
        values[key] = _norm(key, value) if meaning else value
        spelled[key] = flag
    return values, spelled


def _json_object(value: Any) -> dict[str, Any] | None:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def label(key: str, spelled_a: Mapping[str, str], spelled_b: Mapping[str, str]) -> str:
    """How a change names ``key``: its spelling on the side(s) that have it, ``A / B`` when
    the two engines spell it differently."""
    sa, sb = spelled_a.get(key), spelled_b.get(key)
    if sa is None or sb is None or sa == sb:
        return str(sa or sb or key)
    return f"{sa} / {sb}"
