"""SGLang steps c (target support) and d (aux hidden states)."""

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
from recipecli.engines.sglang.pin import PIN
from recipecli.engines.sglang.sources import (
    AUX_IDS,
    AUX_SETUP,
    CAPTURE,
    CAPTURE_LOOP,
    DRAFT_MODEL,
    NAME,
    REGISTRY,
    P,
    _data,
    src,
    steps,
)
from recipecli.findings import Finding, Severity

# --------------------------------------------------------------------------- c. target

#: multimodal wrappers that hand the ids to an inner model whose rule applies (read by hand:
#: models/kimi_k25.py KimiK25ForConditionalGeneration.set_eagle3_layers_to_capture -> its
#: DeepseekV3ForCausalLM language model)
DELEGATES: Mapping[str, str] = {"KimiK25ForConditionalGeneration": "DeepseekV3ForCausalLM"}

RULE_TEXT: Mapping[str, str] = {
    "plus1": "explicit ids +1, the default unshifted",
    "plus1_if_first_is_1": "ids +1 only when the first id is 1, else as written; the default unshifted",
    "as_is_if_max_is_L": "ids as written when the largest is the layer count, else +1; the default unshifted",
    "plus1_default_too": "ids +1, the default (2, L//2, L-3) too",
}


@steps.add(
    "c",
    "Target support",
    sources=(AUX_SETUP, REGISTRY, CAPTURE),
    codes=("target.unregistered", "target.no_eagle3"),
)
def step_target(run: EngineRun) -> Iterable[Finding]:
    """The target's architecture must be registered (an unregistered one falls back to the
    Transformers backend, which has no EAGLE3 capture) and its class must have
    ``set_eagle3_layers_to_capture``: ``configure_aux_hidden_state_capture`` raises ``Model X does
    not implement set_eagle3_layers_to_capture`` otherwise. Which classes have it, and the id rule
    each applies, are extracted from the wheel."""
    t = run.ctx.target
    entry = _data()["targets"].get(t.architecture)
    if entry is None:
        yield finding(
            "target.unregistered",
            f"target architecture {t.architecture!r} is not in SGLang {PIN.version}'s model registry: it falls "
            "back to the Transformers backend (or is refused), whose model has no "
            "set_eagle3_layers_to_capture, so EAGLE3 start-up fails; check that SGLang supports this target",
            engine=NAME,
            source=(REGISTRY, AUX_SETUP),
            architecture=t.architecture,
        )
        return
    run.set("target_module", entry["module"], "registry")
    if not entry["captures_aux"]:
        yield finding(
            "target.no_eagle3",
            f"SGLang's {t.architecture} ({entry['module']}) has no set_eagle3_layers_to_capture: EAGLE3 "
            f"start-up raises 'Model {t.architecture} does not implement set_eagle3_layers_to_capture'",
            engine=NAME,
            source=(AUX_SETUP, src(entry["module"].replace(P, ""), t.architecture)),
            architecture=t.architecture,
        )
        return
    rule, origin = entry["rule"], f"{entry['evidence']}"
    inner = DELEGATES.get(t.architecture)
    if rule == "delegates" and inner:
        rule = _data()["targets"][inner]["rule"]
        entry = {**_data()["targets"][inner], "module": entry["module"]}
        origin += f" -> {inner}"
    if rule not in RULE_TEXT:
        rule, origin = "plus1", origin + " (rule not read; assumed +1)"
    run.set("capture_rule", rule, origin)
    run.set(
        "final_index",
        bool(entry.get("final_index", False)),
        entry.get("capture_evidence", "assumed: layer loop (index L not captured)"),
    )
    run.set(
        "not_captured",
        entry.get("not_captured", "dropped"),
        entry.get("capture_evidence", "assumed: dropped"),
    )


# --------------------------------------------------------------------------- d. aux layers


def capture_indices(rule: str, ids: list[int] | None, L: int) -> list[int]:
    """Capture indices (HF ``hidden_states[i]``: i = 0 embedding output, i = output of layer i-1)
    the target's ``set_eagle3_layers_to_capture`` sets for ``ids`` (None = the default), in id
    order, before range filtering."""
    if ids is None:
        base = default_aux_layers(L)
        return [i + 1 for i in base] if rule == "plus1_default_too" else base
    if rule == "plus1_if_first_is_1" and not (ids and ids[0] == 1):
        return list(ids)
    if rule == "as_is_if_max_is_L" and ids and max(ids) == L:
        return list(ids)
    return [j + 1 for j in ids]


def draft_ids(cfg: Mapping[str, Any]) -> tuple[list[int] | None, str]:
    """The ids SGLang hands the target: ``eagle_config["eagle_aux_hidden_state_layer_ids"]`` only
    (``_resolve_eagle_aux_hidden_state``; anything failing there gives None = the default)."""
    ec = cfg.get("eagle_config")
    if isinstance(ec, dict) and ec.get("eagle_aux_hidden_state_layer_ids") is not None:
        return list(
            ec["eagle_aux_hidden_state_layer_ids"]
        ), "eagle_config.eagle_aux_hidden_state_layer_ids"
    return None, "target default (2, L//2, L-3)"


@steps.add(
    "d",
    "Aux hidden states",
    sources=(AUX_IDS, CAPTURE, CAPTURE_LOOP, DRAFT_MODEL),
    codes=("aux.default", "aux.out_of_range", "aux.count", "aux.order", "aux.mismatch"),
)
def step_aux(run: EngineRun) -> Iterable[Finding]:
    """The ids come only from the draft's ``eagle_config.eagle_aux_hidden_state_layer_ids``; a
    top-level ``eagle_aux_hidden_state_layer_ids`` is never read, and without nested ids the
    target captures its default (2, L//2, L-3). How ids become capture indices depends on the
    target family: Llama, Qwen and most others add 1 to explicit ids; DeepSeek-V2/V3 (and Kimi
    K2.5) add 1 only when the first id is 1; gpt-oss keeps ids whose largest is the layer count;
    MiniMax-M3 shifts the default too. A capture index i (0..L-1) is the residual entering layer i
    (HF ``hidden_states[i]``), captured in layer order; index L only on gpt-oss. An id outside is
    dropped silently (Llama family), fails the first forward (DeepSeek's packed capture) or fails
    start-up (Qwen-MoE's per-layer flags); the number captured is never compared with k."""
    ctx = run.ctx
    d, L = ctx.draft, ctx.target.L
    if L is None or "capture_rule" not in run.resolved or not run.get("use_aux"):
        return
    cfg = ctx.draft_ck.config
    rule, final = run.get("capture_rule"), run.get("final_index")
    ids, where = draft_ids(cfg)
    wanted = capture_indices(rule, ids, L)
    ok = [i for i in wanted if 0 <= i <= L - 1 or (i == L and final)]
    layers = sorted(set(ok))
    run.set("aux_layers", layers, f"{where} ({RULE_TEXT[rule]})")
    trained = trained_layers(d, L)
    if ids is None:
        yield _aux_default(layers, d, trained, cfg.get("eagle_aux_hidden_state_layer_ids"), L)
    bad = [j for j, i in zip(ids or [], wanted, strict=False) if i not in ok]
    if bad:
        yield _not_captured(run, bad, ids, layers, L)
    yield from _capture_fit(run, ids, bad, (layers, where), trained)


def _capture_fit(
    run: EngineRun,
    ids: list[int] | None,
    bad: list[int],
    captured: tuple[list[int], str],
    trained: list[int] | None,
) -> Iterator[Finding]:
    """The captured hidden states (``captured``: indices and where the ids came from) against
    the draft: ``aux.order`` when its ids are not ascending, ``aux.count`` when their number is
    not the k ``fc`` takes, ``aux.mismatch`` when they are not the states the draft's format
    says it was trained on."""
    ctx = run.ctx
    d = ctx.draft
    layers, where = captured
    rule = run.get("capture_rule")
    given = list(ids or [])
    if given and given != sorted(given):
        yield finding(
            "aux.order",
            f"aux ids {given} are not ascending: SGLang captures the states in layer order {layers}, so "
            "the fc chunks arrive in another order than the draft was trained with; write them ascending "
            "(and permute fc's input columns to match)",
            engine=NAME,
            source=CAPTURE_LOOP,
            ids=given,
            captured=layers,
        )
    k = run.get("k")
    if len(layers) != k and not bad and fc_fits_k(run):
        yield finding(
            "aux.count",
            f"SGLang captures {len(layers)} aux hidden state(s) {layers} ({where}) but sizes fc for k={k} "
            f"({run.resolved['k'].origin}): the draft's input width is wrong (a shape error at the first "
            "forward, or fc skipped silently when the width equals H); make eagle_config's id list the "
            "one the draft was trained with",
            engine=NAME,
            source=(AUX_IDS, DRAFT_MODEL),
            captured=layers,
            k=k,
        )
    if ids is not None and trained is not None and sorted(set(trained)) != layers and not bad:
        yield finding(
            "aux.mismatch",
            f"SGLang's {ctx.target.architecture} captures hidden states {layers} ({RULE_TEXT[rule]}) but "
            f"{ids_read_as(d, ctx.target.L)} {trained}: if it was trained that way it drafts from the "
            "wrong layers; write the ids the way this target family reads them",
            engine=NAME,
            source=(CAPTURE, run.resolved["capture_rule"].origin, "SGLang PR #32334"),
            captured=layers,
            trained_on=trained,
        )


def _aux_default(
    layers: list[int], d: DraftModel, trained: list[int] | None, top: Any, L: int
) -> Finding:
    """``aux.default``: the draft names no ids SGLang reads, so the target's default is captured,
    compared with what the draft was trained on: its ignored top-level ids (an error when they
    differ beyond a one-layer shift), else its format's trainer default
    (:func:`~recipecli.engines.common.aux_default_verdict`)."""
    ev: dict[str, Any] = {}
    if top:
        same = trained is not None and sorted(set(trained)) == layers
        # the severity policy (docs/check.md#severity): a default that the ignored ids explain
        # under the other id convention (a one-layer shift) is aux.mismatch's warning on every engine
        shift = layers in (sorted(set(top)), sorted({i + 1 for i in top}))
        msg = (
            f"SGLang reads aux ids only from eagle_config and ignores the top-level ids {list(top)}: "
            f"it captures the target's default hidden states {layers}"
        ) + (
            "; the draft's format was trained on that default"
            if same
            else "; the draft was trained on others, so it drafts from the wrong layers — move the ids "
            'into "eagle_config": {"eagle_aux_hidden_state_layer_ids": [...]}'
        )
        sev: Severity = "info" if same else ("warning" if shift else "error")
    else:
        sev, msg, ev = aux_default_verdict("SGLang", layers, d, L)
    return finding(
        "aux.default",
        msg,
        severity=sev,
        engine=NAME,
        source=(AUX_IDS, CAPTURE),
        layers=layers,
        L=L,
        top_level=list(top) if top else None,
        **ev,
    )


def _not_captured(
    run: EngineRun, bad: list[int], ids: list[int] | None, layers: list[int], L: int
) -> Finding:
    """``aux.out_of_range``: ids whose capture index lies outside what the target captures
    (``L``: the target's layer count), and what that does on this target family."""
    ctx = run.ctx
    rule, final = run.get("capture_rule"), run.get("final_index")
    how = run.get("not_captured")
    effect = {
        "dropped": "the draft gets fewer states than its fc takes (a shape error, or fc skipped "
        "silently when the width happens to equal H)",
        "raises_forward": "the packed capture fails the first forward ('captured X of Y aux hidden states')",
        "raises_startup": "setting the capture flags indexes past the last layer (IndexError at start-up)",
    }[how]
    top_index = f"0..{L}" if final else f"0..{L - 1}"
    return finding(
        "aux.out_of_range",
        f"aux ids {bad} are never captured by SGLang's {ctx.target.architecture} (capture indices must lie "
        f"in {top_index} after its rule: {RULE_TEXT[rule]}): {effect}; fix the ids",
        engine=NAME,
        source=(CAPTURE, CAPTURE_LOOP, run.resolved["not_captured"].origin),
        ids=ids,
        L=L,
        captured=layers,
    )
