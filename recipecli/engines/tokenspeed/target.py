"""tokenspeed steps c (target support) and d (aux hidden states)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from recipecli.codes import finding
from recipecli.draft.formats import ids_convention, to_hidden_state
from recipecli.draft.model import DraftModel
from recipecli.draft.trainers import aux_default_verdict, ids_read_as
from recipecli.engines.base import (
    EngineRun,
)
from recipecli.engines.common import (
    default_aux_layers,
    fc_fits_k,
    trained_layers,
)
from recipecli.engines.tokenspeed.config import _nested_or_top
from recipecli.engines.tokenspeed.sources import (
    CAPTURE,
    CAPTURE_LOOP,
    DRAFT_MODEL,
    LOGITS,
    NAME,
    REGISTRY,
    WIRE,
    P,
    _data,
    src,
    steps,
)
from recipecli.findings import Finding

# --------------------------------------------------------------------------- c. target


@steps.add(
    "c",
    "Target support",
    sources=(WIRE, CAPTURE, LOGITS, REGISTRY),
    codes=("target.unregistered", "target.no_aux_capture"),
)
def step_target(run: EngineRun) -> Iterable[Finding]:
    """The target's architecture must be registered. ``_wire_draft_to_target_model`` then calls the
    target's ``set_eagle3_layers_to_capture`` — but several model classes never read the layers it
    sets (their model's ``forward`` returns ``hidden_states, None``): the draft then receives the
    target's final normed hidden state, skips ``fc`` when its width equals the draft's, and drafts
    from the wrong features with no error. Which classes capture is extracted from the source."""
    t = run.ctx.target
    data = _data()
    entry = data["targets"].get(t.architecture)
    if entry is None:
        yield finding(
            "target.unregistered",
            f"target architecture {t.architecture!r} is not in tokenspeed's model registry: the load fails "
            f"with 'Model architectures [{t.architecture!r}] are not supported for now'",
            engine=NAME,
            source=REGISTRY,
            architecture=t.architecture,
        )
        run.stop = "target"
        return
    run.set("target_module", entry["module"], "registry")
    run.set("target_final_residual", bool(entry.get("final_residual")), "registry data")
    run.set("target_embed_replicated", bool(entry.get("embed_replicated")), "registry data")
    if not entry["captures_aux"]:
        yield finding(
            "target.no_aux_capture",
            f"tokenspeed's {t.architecture} never hands the draft its aux hidden states ({entry['evidence']}): "
            "the draft gets the final hidden state, fc is skipped and acceptance collapses without an "
            "error; serve this pair on vLLM",
            engine=NAME,
            source=(WIRE, src(entry["evidence"].split(":")[0].replace(P, ""), "forward"), LOGITS),
            architecture=t.architecture,
            evidence=entry["evidence"],
        )


# --------------------------------------------------------------------------- d. aux layers


def captured_layers(
    cfg: Mapping[str, Any], L: int, *, final_residual: bool
) -> tuple[list[int], list[int], str]:
    """(HF hidden-state indices captured, ids as read, where from) for a non-K3 target.

    Ids come from ``_eagle_aux_layer_ids`` (a config with ``eagle_config`` gives its nested list,
    else the top-level list); ``BaseCausalLM.set_eagle3_layers_to_capture`` adds 1 to explicit ids
    and not to the default (2, L//2, L-3). A capture index i in 0..L-1 is the residual entering
    layer i (HF ``hidden_states[i]``); index L is never captured; index L+1 is the final residual
    (HF ``hidden_states[L]`` before the norm) on ``BaseTransformerModel`` targets only.
    """
    ids = _nested_or_top(cfg)
    if ids is None:
        return default_aux_layers(L), [], "target default (2, L//2, L-3), no +1"
    where = (
        "eagle_config.eagle_aux_hidden_state_layer_ids"
        if cfg.get("eagle_config") is not None
        else "eagle_aux_hidden_state_layer_ids"
    )
    out: set[int] = set()
    for j in ids:
        i = j + 1
        if 0 <= i <= L - 1:
            out.add(i)
        elif i == L + 1 and final_residual:
            out.add(L)
    return sorted(out), ids, f"{where}, +1"


@steps.add(
    "d",
    "Aux hidden states",
    sources=(WIRE, CAPTURE, CAPTURE_LOOP, DRAFT_MODEL),
    codes=("aux.default", "aux.out_of_range", "aux.count", "aux.mismatch", "aux.top_level_ignored"),
)
def step_aux(run: EngineRun) -> Iterable[Finding]:
    """Ids come from ``--eagle3-layers-to-capture``, else the draft config: the nested
    ``eagle_config`` list when the config has ``eagle_config`` (its top-level list is then
    ignored), else the top-level list; none → the target default (2, L//2, L-3). Explicit ids get
    +1 (an id names a layer's output); the default does not. Ids whose capture index falls outside
    the layers (-1..L-2 capture; L-1 never; L only on ``BaseTransformerModel`` targets) are dropped
    silently, and the number captured is never compared with the k the draft's ``fc`` expects."""
    L = run.ctx.target.L
    if L is None:
        return
    final_residual = bool(
        run.resolved.get("target_final_residual") and run.get("target_final_residual")
    )
    layers, ids, where = captured_layers(run.ctx.draft_ck.config, L, final_residual=final_residual)
    run.set("aux_layers", layers, where)
    yield from _ids_not_given(run, ids, layers, L)
    # capture index j+1 must lie in 0..L-1, or be L+1 (the final residual) where the target has it
    bad = [j for j in ids if not (-1 <= j <= L - 2 or (j == L and final_residual))]
    yield from _capture_findings(run, ids, bad, (layers, where), L)


def _capture_findings(
    run: EngineRun, ids: list[int], bad: list[int], captured: tuple[list[int], str], L: int
) -> Iterator[Finding]:
    """The ids as tokenspeed captures them (``captured``: hidden-state indices and where the ids
    came from): ``aux.out_of_range`` for ``bad`` (ids never captured), ``aux.count`` when the
    number captured is not the k ``fc`` takes, ``aux.mismatch`` when the captured states are not
    those the draft's format says it was trained on."""
    d = run.ctx.draft
    layers, where = captured
    if bad:
        yield finding(
            "aux.out_of_range",
            f"aux ids {bad} are never captured by tokenspeed on this target (capture indices id+1 must lie in "
            f"0..{L - 1}, or be {L + 1} for the final residual on BaseTransformerModel targets): the draft gets "
            f"{len(layers)} state(s) for an fc that takes {run.get('k')}; fix the ids",
            engine=NAME,
            source=(CAPTURE, CAPTURE_LOOP),
            ids=ids,
            L=L,
            captured=layers,
        )
    k = run.get("k")
    if len(layers) != k and not bad and fc_fits_k(run):
        yield finding(
            "aux.count",
            f"tokenspeed captures {len(layers)} aux hidden state(s) {layers} ({where}) but sizes fc for k={k} "
            f"({run.resolved['k'].origin}): the draft's input width is wrong (a runtime shape error, or fc is "
            "skipped silently when the width happens to equal H); make the top-level id list the one captured",
            engine=NAME,
            source=(WIRE, DRAFT_MODEL),
            captured=layers,
            k=k,
        )
    trained = trained_layers(d, L)
    if ids and trained is not None and sorted(set(trained)) != layers and not bad:
        fix = _ids_for(trained, L)
        yield finding(
            "aux.mismatch",
            f"tokenspeed captures hidden states {layers} but {ids_read_as(d, L)} "
            f"{trained}: if it was trained that way it drafts from the wrong layers; write "
            f"eagle_config.eagle_aux_hidden_state_layer_ids {fix} (tokenspeed adds 1"
            + (f"; id {L} + 1 is the final residual" if L in fix else "")
            + ")",
            engine=NAME,
            source=(CAPTURE, "vLLM PR #43671", "SGLang PR #32334"),
            captured=layers,
            trained_on=trained,
            fix_ids=fix,
        )


def _ids_for(states: list[int], L: int) -> list[int]:
    """The explicit ids that make tokenspeed capture hidden states ``states`` on a target of
    ``L`` layers: id i - 1 for the residual entering layer i (capture index i = id + 1, in
    0..L-1), id L for the last layer's output (capture index L + 1, the final residual of
    ``BaseTransformerModel.forward``)."""
    return [L if i == L else i - 1 for i in states]


def _ids_not_given(run: EngineRun, ids: list[int], layers: list[int], L: int) -> Iterator[Finding]:
    """Ids tokenspeed does not read (a top-level list beside ``eagle_config``), or none at all
    (``L``: the target's layer count)."""
    d = run.ctx.draft
    cfg = run.ctx.draft_ck.config
    top = list(cfg.get("eagle_aux_hidden_state_layer_ids") or [])
    ignored = bool(top) and cfg.get("eagle_config") is not None and top != list(ids)
    if ignored and not _same_effect(d, top, layers, L):
        yield finding(
            "aux.top_level_ignored",
            f"the draft config has eagle_config, so tokenspeed captures {('the ids ' + str(ids)) if ids else 'its default layers'} "
            f"(hidden states {layers}) and ignores the top-level ids {list(top)} (which size fc), which name "
            "other states: make both lists agree",
            severity="error" if len(top) != len(ids or default_aux_layers(L)) else "warning",
            engine=NAME,
            source=WIRE,
            top_level=list(top),
            nested=ids,
            captured=layers,
        )
    if not ids:
        sev, msg, ev = aux_default_verdict("tokenspeed", layers, d, L)
        yield finding(
            "aux.default",
            msg,
            severity=sev,
            engine=NAME,
            source=(WIRE, CAPTURE),
            layers=layers,
            L=L,
            **ev,
        )


def _same_effect(d: DraftModel, top: list[int], layers: list[int], L: int) -> bool:
    """Whether the ignored top-level ids ``top`` name the hidden states ``layers`` tokenspeed
    captures anyway (target of ``L`` layers): read in the convention the user stated, else the
    draft format's id convention (:func:`~recipecli.draft.formats.ids_convention`, boundary ids
    included), or as the hidden-state indices vLLM reads a top-level list as
    (``get_eagle3_aux_layers_from_config``).
    Equal in effect, the ignored list changes nothing tokenspeed computes (issue #31)."""
    ids = [int(i) for i in top]
    conv, _ = ids_convention(d.format, ids, L, d.stated_convention)
    readings = [sorted(set(ids))]
    if conv is not None:
        readings.append(sorted(set(to_hidden_state(ids, conv))))
    return sorted(set(layers)) in readings
