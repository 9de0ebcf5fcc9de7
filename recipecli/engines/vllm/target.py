"""vLLM steps c (target support) and d (aux hidden states)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from recipecli.codes import finding
from recipecli.draft import DraftModel
from recipecli.draft.trainers import aux_default_verdict, ids_read_as
from recipecli.engines.base import (
    EngineRun,
)
from recipecli.engines.common import (
    default_aux_layers,
    fc_fits_k,
    trained_layers,
)
from recipecli.engines.vllm.config import _eagle_config
from recipecli.engines.vllm.pin import PIN
from recipecli.engines.vllm.sources import (
    AUX_CAPTURE,
    AUX_DEFAULT,
    AUX_FROM_CONFIG,
    AUX_SETUP,
    EAGLE3_MODEL,
    NAME,
    RUNNER,
    _registry,
    src,
    steps,
)
from recipecli.findings import Finding, Severity

# --------------------------------------------------------------------------- c. target


@steps.add(
    "c",
    "Target support",
    sources=(AUX_SETUP, src("vllm/model_executor/models/interfaces.py", "supports_eagle3")),
    codes=("target.no_eagle3", "target.unregistered"),
)
def step_target(run: EngineRun) -> Iterable[Finding]:
    """The target's model class must implement ``SupportsEagle3`` (it captures the aux hidden
    states the draft's ``fc`` consumes); otherwise ``_setup_eagle3_aux_hidden_state_outputs`` raises
    ``RuntimeError: Model does not support EAGLE3 interface but aux_hidden_state_outputs was
    requested``. The set of classes that do is extracted from the wheel."""
    t = run.ctx.target
    targets = _registry()["targets"]
    entry = targets.get(t.architecture)
    if entry is None:
        yield finding(
            "target.unregistered",
            f"target architecture {t.architecture!r} is not in vLLM {PIN.version}'s model registry: vLLM "
            "falls back to its Transformers backend (or refuses the model), and EAGLE3 needs a "
            "native model class that captures aux hidden states; check that vLLM supports this target",
            severity="warning",
            engine=NAME,
            source=src(
                "vllm/model_executor/models/registry.py",
                "_TEXT_GENERATION_MODELS / _MULTIMODAL_MODELS",
            ),
            architecture=t.architecture,
        )
        return
    run.set("target_class", f"{entry['module']}.{entry['class']}", "registry")
    if not entry["supports_eagle3"]:
        yield finding(
            "target.no_eagle3",
            f"vLLM's {entry['class']} does not implement SupportsEagle3: serving an EAGLE3 draft with it "
            "raises 'Model does not support EAGLE3 interface but aux_hidden_state_outputs was requested'",
            engine=NAME,
            source=(AUX_SETUP, src(entry["evidence"].split(":")[0], entry["class"])),
            architecture=t.architecture,
        )


# --------------------------------------------------------------------------- d. aux layers


def captured_layers(d: DraftModel, cfg: Mapping[str, Any], L: int) -> tuple[list[int], str]:
    """Hidden-state indices vLLM captures for this draft, in capture order, and from where.

    ``get_eagle3_aux_layers_from_config`` (the V2 model runner, vLLM 0.33.0's default): the
    top-level ``eagle_aux_hidden_state_layer_ids``; else ``eagle_config["layer_ids"]``; else the
    target's default (2, L//2, L-3). ``eagle_config.eagle_aux_hidden_state_layer_ids`` is NOT read
    there (the V1 runner, ``VLLM_USE_V2_MODEL_RUNNER=0``, reads it). ``_set_aux_hidden_state_layers``
    then sorts and de-duplicates the ids, and the target appends a state when it reaches index i
    (0 = the embedding output, i = the output of layer i-1, L = the last layer's output before the
    final norm).
    """
    top = cfg.get("eagle_aux_hidden_state_layer_ids")
    eagle_cfg = _eagle_config(cfg)
    if top:
        ids, where = list(top), "eagle_aux_hidden_state_layer_ids"
    elif eagle_cfg.get("layer_ids"):
        ids, where = list(eagle_cfg["layer_ids"]), "eagle_config.layer_ids"
    else:
        ids, where = default_aux_layers(L), "target default (2, L//2, L-3)"
    captured = sorted({i for i in ids if 0 <= i <= L})
    return captured, where


@steps.add(
    "d",
    "Aux hidden states",
    sources=(AUX_FROM_CONFIG, RUNNER, AUX_CAPTURE, AUX_DEFAULT),
    codes=("aux.default", "aux.out_of_range", "aux.count", "aux.order", "aux.mismatch"),
)
def step_aux(run: EngineRun) -> Iterable[Finding]:
    """The V2 model runner (the default) reads the draft's top-level
    ``eagle_aux_hidden_state_layer_ids``, else ``eagle_config["layer_ids"]``, else the target's
    default (2, L//2, L-3), with an info log only; ids under
    ``eagle_config.eagle_aux_hidden_state_layer_ids`` (SpecForge, ModelOpt) are not read (the V1
    runner reads them). The ids index hidden states (0 = embedding output, i = output of layer
    i-1, valid 0..L); they are sorted and de-duplicated, ids outside 0..L are never captured, and
    the captured states, concatenated in index order, must fill the ``fc`` input (k × target
    hidden size). A draft whose ``eagle_config.use_aux_hidden_state`` is false takes no aux
    states: ``requires_aux_hidden_states`` is false, nothing is captured and there is nothing to
    compare."""
    ctx = run.ctx
    d, L = ctx.draft, ctx.target.L
    if L is None or ("use_aux" in run.resolved and not run.get("use_aux")):
        return
    cfg = run.config
    layers, where = captured_layers(d, cfg, L)
    run.set("aux_layers", layers, where)
    eagle_cfg = _eagle_config(cfg)
    top = list(cfg.get("eagle_aux_hidden_state_layer_ids") or [])
    nested = list(eagle_cfg.get("eagle_aux_hidden_state_layer_ids") or [])
    given = top or list(eagle_cfg.get("layer_ids") or [])
    trained = trained_layers(d, L)
    if not given:
        yield _aux_default(layers, d, trained, nested, L)
    bad = [i for i in given if not 0 <= i <= L]
    yield from _given_ids(run, given, bad, layers, L)
    yield from _capture_fit(run, given, bad, (layers, where), trained)


def _given_ids(
    run: EngineRun, given: list[int], bad: list[int], layers: list[int], L: int
) -> Iterator[Finding]:
    """The ids the draft names, as vLLM captures them: ``aux.out_of_range`` for ``bad`` (ids
    outside the hidden states 0..L), ``aux.order`` when they are not ascending."""
    if bad:
        yield finding(
            "aux.out_of_range",
            f"aux ids {bad} lie outside the target's hidden states 0..{L}: vLLM never captures them, "
            f"so the draft gets {len(layers)} state(s) where its fc takes {run.get('k')}; fix the ids",
            engine=NAME,
            source=AUX_CAPTURE,
            ids=given,
            L=L,
            captured=layers,
        )
    if given and given != sorted(given):
        yield finding(
            "aux.order",
            f"aux ids {given} are not ascending: vLLM captures them in index order {sorted(set(given))}, "
            "so the fc chunks arrive in another order than the draft was trained with; write them ascending "
            "(and permute fc's input columns to match)",
            engine=NAME,
            source=AUX_CAPTURE,
            ids=given,
        )


def _capture_fit(
    run: EngineRun,
    given: list[int],
    bad: list[int],
    captured: tuple[list[int], str],
    trained: list[int] | None,
) -> Iterator[Finding]:
    """The captured hidden states (``captured``: indices and where the ids came from) against
    the ``fc``: ``aux.count`` when their number is not k, ``aux.mismatch`` when they are not the
    states the draft's format says it was trained on."""
    d = run.ctx.draft
    layers, where = captured
    k = run.get("k")
    if run.get("use_aux") and len(layers) != k and not bad and fc_fits_k(run):
        yield finding(
            "aux.count",
            f"vLLM captures {len(layers)} aux hidden state(s) {layers} ({where}) but sizes fc for k={k} "
            f"({run.resolved['k'].origin}): the first forward fails on the fc width; make the captured ids and "
            "num_aux_hidden_states agree",
            engine=NAME,
            source=(AUX_FROM_CONFIG, EAGLE3_MODEL),
            captured=layers,
            k=k,
        )
    if given and trained is not None and sorted(set(trained)) != layers and not bad:
        yield finding(
            "aux.mismatch",
            f"vLLM captures hidden states {layers} but {ids_read_as(d, run.ctx.target.L)} "
            f"{trained}: if it was trained that way it drafts from the wrong layers and acceptance collapses "
            f"silently; write top-level eagle_aux_hidden_state_layer_ids {trained} (hidden-state indices)",
            engine=NAME,
            source=(AUX_FROM_CONFIG, AUX_CAPTURE, "vLLM PR #43671"),
            captured=layers,
            trained_on=trained,
        )


def _aux_default(
    layers: list[int], d: DraftModel, trained: list[int] | None, nested: list[int], L: int
) -> Finding:
    """``aux.default``: the draft names no ids vLLM's V2 runner reads, so it captures the target's
    default, compared with what the draft was trained on: its ids under ``eagle_config`` (an
    error when they differ beyond a one-layer shift), else its format's trainer default
    (:func:`~recipecli.engines.common.aux_default_verdict`)."""
    ev: dict[str, Any] = {}
    if nested:
        same = trained is not None and sorted(set(trained)) == layers
        # the severity policy (docs/check.md#severity): captured states that the ids explain
        # under the other id convention (a one-layer shift) are aux.mismatch's warning on every
        # engine; states no convention explains are an error
        shift = layers in (sorted(set(nested)), sorted({i + 1 for i in nested}))
        sev: Severity = "info" if same else ("warning" if shift else "error")
        tail = (
            "; they equal that default"
            if same
            else f"; the draft's ids {nested} are ignored and it drafts from the wrong layers — copy them to a "
            "top-level eagle_aux_hidden_state_layer_ids"
            + (f" as hidden-state indices {trained}" if trained is not None else "")
        )
        msg = f"aux ids sit only under eagle_config, which vLLM's default (V2) runner does not read: it captures the target's default hidden states {layers}{tail}"
    else:
        sev, msg, ev = aux_default_verdict("vLLM", layers, d, L)
    return finding(
        "aux.default",
        msg,
        severity=sev,
        engine=NAME,
        source=(AUX_FROM_CONFIG, AUX_DEFAULT),
        layers=layers,
        L=L,
        nested_ids=nested,
        **ev,
    )
