"""The training tools' default aux layers: what a draft that names no ids was trained on.

``recipecli/data/trainers/aux_defaults.json`` records, per draft format (A original EAGLE release,
B SpecForge, C ModelOpt, D speculators), the aux ids the format's training tool captures when a run
names none, as an expression in ``L`` (the target's ``num_hidden_layers``) in the tool's own id
convention, with the repository, commit, file, function and line it was read from. The file is
written by ``scripts/extract_trainer_defaults.py`` from the tools' code, never by hand. A format
with no entry (F vLLM-internal / AngelSlim, NeMo, nebius) has no known default.
"""

from __future__ import annotations

import ast
import json
from functools import cache
from importlib import resources
from typing import Any, Literal, TypedDict, cast

from recipecli.draft.formats import Convention, ids_convention, to_hidden_state
from recipecli.draft.model import DraftModel
from recipecli.findings import Severity

#: How to state the aux states a draft was trained on so that every engine reads them (vLLM reads
#: the top-level list as hidden-state indices; SGLang and tokenspeed read eagle_config's, +1).
AUX_HOW = (
    "hidden-state indices i as top-level eagle_aux_hidden_state_layer_ids and i - 1 under "
    "eagle_config.eagle_aux_hidden_state_layer_ids"
)

#: Functions a default expression may call (ModelOpt clamps with ``max(0, ...)``).
_CALLS = {"max": max, "min": min}


class TrainerDefault(TypedDict):
    """One format's record in ``aux_defaults.json`` (the keys the extraction script writes)."""

    tool: str
    repo: str
    commit: str
    file: str
    function: str
    line: int
    source_text: str
    default_ids: str
    convention: Literal["hidden-state", "layer-output"]
    convention_evidence: str
    convention_line: int
    convention_why: str


@cache
def trainer_defaults() -> dict[str, TrainerDefault]:
    """Format key -> its training tool's default aux ids record (``aux_defaults.json``)."""
    path = resources.files("recipecli.data") / "trainers" / "aux_defaults.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    return cast("dict[str, TrainerDefault]", doc["formats"])


def _eval(node: ast.expr, L: int) -> int:
    """The integer value of a default-id expression ``node`` with the target's layer count ``L``
    (integers, ``L``, ``+``, ``-``, ``//`` and ``max``/``min`` only; ValueError otherwise)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name) and node.id == "L":
        return L
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, L), _eval(node.right, L)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.FloorDiv):
            return a // b
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CALLS:
        return _CALLS[node.func.id](*(_eval(a, L) for a in node.args))
    raise ValueError(f"unsupported default-id expression {ast.unparse(node)!r}")


def default_ids(expr: str, L: int) -> list[int]:
    """The ids of default expression ``expr`` (e.g. ``"[1, L // 2 - 1, L - 4]"``) for a target of
    ``L`` layers, in the expression's order (ValueError for anything but a list of integer
    expressions)."""
    tree = ast.parse(expr, mode="eval").body
    if not isinstance(tree, ast.List):
        raise ValueError(f"default-id expression {expr!r} is not a list")
    return [_eval(e, L) for e in tree.elts]


def trainer_default(fmt: str | None) -> TrainerDefault | None:
    """The record of format ``fmt``'s training tool (None: no default is known for it)."""
    return trainer_defaults().get(fmt or "")


def trainer_default_states(fmt: str | None, L: int) -> list[int] | None:
    """Hidden-state indices (HF ``hidden_states[i]``, sorted, de-duplicated) format ``fmt``'s
    training tool captures by default on a target of ``L`` layers; None when not known."""
    rec = trainer_default(fmt)
    if rec is None:
        return None
    conv: Convention = rec["convention"]
    return sorted(set(to_hidden_state(default_ids(rec["default_ids"], L), conv)))


def trainer_citation(fmt: str | None) -> str | None:
    """``repo@commit8 file function`` for format ``fmt``'s default (None when unknown)."""
    rec = trainer_default(fmt)
    if rec is None:
        return None
    return f"{rec['repo']}@{rec['commit'][:8]} {rec['file']} {rec['function']}"


def trained_states(d: DraftModel, L: int | None = None) -> list[int] | None:
    """Hidden-state indices (HF ``hidden_states[i]``) draft ``d`` was trained on.

    Its own ids, read in the convention the user stated (``d.stated_convention``, ``check
    --aux-id-convention``), else in its format's convention (speculators and vLLM-internal drafts write
    hidden-state indices; SpecForge, ModelOpt and the original EAGLE release layer-output
    indices, ``hidden_states[id + 1]``; with ``L`` known, a layer-output list whose largest id is
    ``L`` holds boundary ids = hidden-state indices: :func:`~recipecli.draft.formats.ids_convention`),
    in the draft's order; with no ids, its format's trainer default on a target of ``L`` layers
    (sorted). None when the convention is unknown, or there are no ids and no known default (or
    no ``L``)."""
    if d.aux_ids is None:
        return trainer_default_states(d.format, L) if L is not None else None
    conv, _ = ids_convention(d.format, d.aux_ids, L, d.stated_convention)
    if conv is None:
        return None
    return list(to_hidden_state(d.aux_ids, conv))


def ids_read_as(d: DraftModel, L: int | None) -> str:
    """The words an ``aux.mismatch`` message reads draft ``d``'s ids with, ending in the verb
    that the trained states follow (``L``: the target's layer count): ``the draft's format (B)
    writes ids for`` (the format's convention), ``the draft's boundary ids (format C, the
    largest = L) name`` or ``the draft's ids, in the stated hidden-state convention, name``
    (``check --aux-id-convention``)."""
    _, reason = ids_convention(d.format, d.aux_ids, L, d.stated_convention)
    if reason == "stated":
        return f"the draft's ids, in the stated {d.stated_convention} convention, name"
    if reason == "boundary":
        return f"the draft's boundary ids (format {d.format}, the largest = L = {L}) name"
    return f"the draft's format ({d.format}) writes ids for"


def aux_default_verdict(
    title: str, layers: list[int], d: DraftModel, L: int
) -> tuple[Severity, str, dict[str, Any]]:
    """``aux.default`` when the draft names no ids and engine ``title`` captures the target's
    default hidden states ``layers``: compared with what the draft's format trains on by default
    (``recipecli/data/trainers``). Same: info; a one-layer shift: warning; other: error; no known
    default: info saying so. Returns (severity, message, evidence)."""
    trained, fmt = trained_states(d, L), d.format or "unknown"
    head = f"draft names no aux layer ids: {title} captures the target's default hidden states {layers}"
    ev: dict[str, Any] = {"trained_on": trained, "trainer": trainer_citation(d.format)}
    if trained is None:
        return (
            "info",
            (
                f"{head}; its format ({fmt}) records no trainer default, so the states it was trained "
                f"on cannot be known — if they are others, state them: {AUX_HOW}"
            ),
            ev,
        )
    if trained == sorted(set(layers)):
        return "info", f"{head}; the draft's format was trained on that default", ev
    shift = sorted(set(layers)) in ([i + 1 for i in trained], [i - 1 for i in trained])
    return (
        "warning" if shift else "error",
        (
            f"{head}, but the draft's format ({fmt}) trains on hidden states {trained} by default, so "
            f"it drafts from other layers than it was trained on; write top-level "
            f"eagle_aux_hidden_state_layer_ids {trained} and eagle_config.eagle_aux_hidden_state_layer_ids "
            f"{[i - 1 for i in trained]}"
        ),
        ev,
    )
