"""tokenspeed steps a (draft config resolution) and b (draft architecture)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, cast

from recipecli.codes import finding
from recipecli.engines.base import (
    EngineRun,
)
from recipecli.engines.common import (
    missing_model_type,
    registered_configs,
    resolve_geometry,
)
from recipecli.engines.tokenspeed.sources import (
    DRAFT_INIT,
    DRAFT_MODEL,
    GET_CONFIG,
    MODEL_CONFIG,
    NAME,
    REGISTRY,
    TRANSFORMERS,
    WIRE,
    _data,
    src,
    steps,
)
from recipecli.findings import Finding

#: tokenspeed's own config classes: ``get_config`` builds a model type in ``_CONFIG_REGISTRY``
#: with tokenspeed's class (``kimi_k2`` -> ``KimiK2Config(DeepseekV3Config)``, kimi_k2_config.py)
CONFIG_REGISTRY = src("utils/hf_transformers_utils.py", "_CONFIG_REGISTRY")

# --------------------------------------------------------------------------- a. config


@steps.add(
    "a",
    "Draft config resolution",
    sources=(GET_CONFIG, CONFIG_REGISTRY, MODEL_CONFIG, DRAFT_INIT),
    codes=(
        "config.model_type",
        "config.null_value",
        "config.invalid",
        "draft.layers",
        "config.aux_ids_null",
        "norm.flag_ignored",
        "aux.use_aux_ignored",
    ),
)
def step_config(run: EngineRun) -> Iterable[Finding]:
    """``get_config`` reads the draft's ``config.json`` and builds tokenspeed's own config class for
    the model types it registers (``qwen2``, ``qwen3``, … — e.g. its ``Qwen3Config`` defaults
    ``head_dim`` to 128; ``KimiK2Config`` only renames transformers' ``DeepseekV3Config``, whose
    defaults apply), else transformers' class through ``AutoConfig`` (``LlamaConfig`` for
    ``llama``); a key the checkpoint lacks takes that class's default. The same
    ``--hf-overrides`` are applied to the draft's config as to the target's. The Llama draft then
    requires ``num_hidden_layers == 1`` (a missing value is ``LlamaConfig``'s 32) and sizes ``fc``
    for k = ``len(eagle_aux_hidden_state_layer_ids)`` at the top level, else 3 — the ids under
    ``eagle_config`` are not counted. It reads ``norm_before_fc``, ``fc_norm`` and ``norm_output``
    from the top level and never reads ``norm_before_residual``; ``target_hidden_size`` is ignored
    (``fc`` is [H, k·H])."""
    yield from _draft_config(run)
    if run.stopped():
        return
    yield from _widths(run)
    if run.stopped():
        return
    _aux_count_and_flags(run)
    yield from _nested_flags(run)
    yield from _use_aux_ignored(run)
    layers = run.get("layers")
    if layers != 1:
        yield finding(
            "draft.layers",
            f"tokenspeed raises 'EAGLE3 currently only supports 1 layer': num_hidden_layers is "
            f"{run.resolved['layers'].show()}; set num_hidden_layers to 1",
            engine=NAME,
            source=DRAFT_INIT,
            num_hidden_layers=layers,
        )


def _draft_config(run: EngineRun) -> Iterator[Finding]:
    """The config class ``get_config`` builds (tokenspeed's own for the types it registers, else
    transformers') and the geometry with its defaults; sets ``run.stop`` when it fails."""
    cfg = run.ctx.draft_ck.config
    data = _data()
    model_type = str(cfg.get("model_type") or "")
    # tokenspeed's classes with their own defaults, then the registered transformers subclasses
    # (KimiK2Config(DeepseekV3Config)) with their transformers base's defaults
    subclassed = registered_configs(
        cast(Mapping[str, Any], data).get("config_registry", {}), "tokenspeed", TRANSFORMERS
    )
    own = {**subclassed, **data.get("config_classes", {})}
    if not model_type and "llama" not in own:
        yield (
            _speculators(run, None)
            if run.ctx.draft.format == "D"
            else missing_model_type(run, GET_CONFIG)
        )
        run.stop = "config"
        return
    run.set("model_type", model_type, "config: model_type")
    try:
        refused = resolve_geometry(
            run,
            model_type,
            "get_config (_CONFIG_REGISTRY)" if model_type in subclassed else "get_config",
            transformers=TRANSFORMERS,
            source=(GET_CONFIG, CONFIG_REGISTRY) if model_type in subclassed else GET_CONFIG,
            overrides=own,
        )
    except KeyError:
        if run.ctx.draft.format == "D":
            yield _speculators(run, model_type)
            run.stop = "config"
            return
        yield finding(
            "config.model_type",
            f"draft model_type {model_type!r} has no config class in tokenspeed or transformers "
            f"{TRANSFORMERS}: get_config fails; use model_type 'llama'",
            engine=NAME,
            source=GET_CONFIG,
            model_type=model_type,
        )
        run.stop = "config"
        return
    if refused:
        yield from refused
        run.stop = "config"
        return


def _speculators(run: EngineRun, model_type: str | None) -> Finding:
    """``config.model_type`` for a speculators draft (format D) that ``get_config`` cannot build:
    tokenspeed reads no speculators config (its layer geometry sits under
    ``transformer_layer_config``, which transformers' ``AutoConfig`` does not look into), so
    adding a ``model_type`` only moves the failure to the architecture; the fix is converting
    the draft to the EAGLE3 layout (``LlamaForCausalLMEagle3``, flat geometry)."""
    what = f"model_type {model_type!r}" if model_type else "no model_type"
    return finding(
        "config.model_type",
        f"the draft is a speculators checkpoint (speculators_model_type, geometry under "
        f"transformer_layer_config) with {what}: tokenspeed's get_config (transformers' AutoConfig) cannot "
        "build it and tokenspeed reads no speculators format; convert it: recipecli convert DRAFT OUT --to eagle3",
        engine=NAME,
        source=GET_CONFIG,
        model_type=model_type,
    )


def _widths(run: EngineRun) -> Iterator[Finding]:
    """The fc input width (hidden_size: ``target_hidden_size`` is not read) and draft_vocab_size;
    a null aux id list stops the load."""
    cfg = run.ctx.draft_ck.config
    H = run.get("H")
    run.set(
        "Ht", H, "LlamaModel.__init__: fc input uses hidden_size (target_hidden_size is not read)"
    )
    Vd = cfg.get("draft_vocab_size")
    run.set("Vd", int(Vd) if Vd is not None else run.get("V"),
            "config: draft_vocab_size" if Vd is not None else "= vocab_size (draft_vocab_size absent)")  # fmt: skip
    if (
        "eagle_aux_hidden_state_layer_ids" in cfg
        and cfg["eagle_aux_hidden_state_layer_ids"] is None
    ):
        yield finding(
            "config.aux_ids_null",
            "eagle_aux_hidden_state_layer_ids is null: tokenspeed's Llama draft takes len() of it "
            "(hasattr is true) and the load raises TypeError; drop the key or write the ids",
            engine=NAME,
            source=DRAFT_MODEL,
        )
        run.stop = "config"
        return


def _aux_count_and_flags(run: EngineRun) -> None:
    """k (the aux hidden states ``fc`` takes), the ``fc`` input width and the norm flags."""
    d = run.ctx.draft
    cfg = run.ctx.draft_ck.config
    H = run.get("H")
    if d.attention == "MLA":
        ids = _nested_or_top(cfg)
        run.set("k", len(ids) if ids else 3,
                "Eagle3MlaModel._get_eagle_layer_ids (eagle_config, else top level)" if ids else "default (3)")  # fmt: skip
    elif cfg.get("eagle_aux_hidden_state_layer_ids"):
        run.set(
            "k",
            len(cfg["eagle_aux_hidden_state_layer_ids"]),
            "len(eagle_aux_hidden_state_layer_ids)",
        )
    else:
        nested = " (eagle_config ids are not counted)" if _nested(cfg) else ""
        run.set("k", 3, f"LlamaModel.__init__ default (3){nested}")
    run.set("fc_in", run.get("k") * H, "k * hidden_size")
    ec = cfg.get("eagle_config")
    for flag in ("norm_before_fc", "fc_norm", "norm_output"):
        if flag in cfg:
            run.set(flag, bool(cfg[flag]), f"config: {flag}")
        else:
            nested = (
                f" (eagle_config.{flag} is not read)" if isinstance(ec, dict) and flag in ec else ""
            )
            run.set(flag, False, f"default (false){nested}")
    run.set("norm_before_residual", False, "not read by tokenspeed (residual = raw hidden states)")


#: what a norm flag tokenspeed does not build leaves out of the draft's forward
_FLAG_EFFECT = {
    "norm_before_fc": "it builds no input_norm and load_weights skips input_norm.weight, so fc "
    "gets the concatenated aux states unnormalised",
    "fc_norm": "it builds no fc_norm and load_weights skips the fc_norm.* weights, so fc gets "
    "the aux states unnormalised",
    "norm_output": "the next draft step gets the pre-norm hidden state",
}


def _use_aux_ignored(run: EngineRun) -> Iterator[Finding]:
    """``aux.use_aux_ignored`` for ``eagle_config.use_aux_hidden_state`` false: tokenspeed reads
    that key nowhere (``_wire_draft_to_target_model`` always sets the target's EAGLE3 capture,
    and ``Eagle3LlamaModel.forward`` runs ``fc`` whenever the incoming width differs from the
    embedding's), so a draft trained on the target's last hidden state gets k aux states through
    an ``fc`` instead; vLLM and SGLang honour the key."""
    ec = run.ctx.draft_ck.config.get("eagle_config")
    if not isinstance(ec, dict) or ec.get("use_aux_hidden_state", True) is not False:
        return
    yield finding(
        "aux.use_aux_ignored",
        "eagle_config.use_aux_hidden_state is false but tokenspeed never reads it: it captures "
        f"{run.get('k')} aux hidden states and feeds them through fc [H, {run.get('fc_in')}], "
        "while the draft was trained on the target's last hidden state; serve it on vLLM or "
        "SGLang, which build it without aux states",
        engine=NAME,
        source=(WIRE, DRAFT_MODEL),
        k=run.get("k"),
    )


def _nested_flags(run: EngineRun) -> Iterator[Finding]:
    """``norm.flag_ignored`` for a norm flag written only under ``eagle_config`` (NVIDIA's
    exports put ``norm_before_fc`` there): ``Eagle3LlamaModel.__init__`` reads
    ``getattr(config, flag, False)`` at the top level only, so the draft computes on other
    inputs than it was trained with. The fix, a top-level copy, is what vLLM and SGLang read
    too (they read ``norm_before_fc`` from ``eagle_config`` first, the others from the top)."""
    cfg = run.ctx.draft_ck.config
    ec = cfg.get("eagle_config")
    if not isinstance(ec, dict) or run.ctx.draft.attention == "MLA":
        return
    for flag, effect in _FLAG_EFFECT.items():
        if flag in ec and flag not in cfg and bool(ec[flag]) != run.get(flag):
            yield finding(
                "norm.flag_ignored",
                f"eagle_config.{flag} = {ec[flag]} is not read by tokenspeed, which reads the top-level "
                f"key only (default {run.get(flag)}): {effect}; the draft runs without what it was "
                f'trained with; copy it to a top-level "{flag}"',
                engine=NAME,
                source=DRAFT_MODEL,
                flag=flag,
                nested=ec[flag],
                used=run.get(flag),
            )


def _nested(cfg: Mapping[str, Any]) -> list[int] | None:
    """The ids under ``eagle_config.eagle_aux_hidden_state_layer_ids``, None when absent or empty."""
    ec = cfg.get("eagle_config")
    if isinstance(ec, dict) and ec.get("eagle_aux_hidden_state_layer_ids"):
        return list(ec["eagle_aux_hidden_state_layer_ids"])
    return None


def _nested_or_top(cfg: Mapping[str, Any]) -> list[int] | None:
    """``_eagle_aux_layer_ids``: a config that HAS ``eagle_config`` gives its nested ids (the
    top-level list is then ignored, even when the nested one is missing); else the top level."""
    ec = cfg.get("eagle_config")
    if ec is not None:
        return _nested(cfg)
    top = cfg.get("eagle_aux_hidden_state_layer_ids")
    return list(top) if top else None


# --------------------------------------------------------------------------- b. architecture


def draft_architecture(arch: str) -> tuple[str, str]:
    """``get_config`` (draft worker): an architecture containing none of ``NextN``, ``Eagle``,
    ``DFlash``, ``DSpark`` becomes ``LlamaForCausalLMEagle3`` when it is ``MiniMaxM2ForCausalLM``
    and gets ``NextN`` appended otherwise."""
    if any(s in arch for s in ("NextN", "Eagle", "DFlash", "DSpark")):
        return arch, "get_config: kept (contains NextN/Eagle/DFlash/DSpark)"
    if arch == "MiniMaxM2ForCausalLM":
        return (
            "LlamaForCausalLMEagle3",
            "get_config: MiniMaxM2ForCausalLM -> LlamaForCausalLMEagle3",
        )
    return f"{arch}NextN", f"get_config: {arch!r} + 'NextN'"


@steps.add(
    "b",
    "Draft architecture",
    sources=(GET_CONFIG, REGISTRY),
    codes=("draft.arch_name",),
)
def step_architecture(run: EngineRun) -> Iterable[Finding]:
    """The draft's ``architectures[0]`` is renamed by ``get_config`` (``NextN`` appended unless the
    name contains ``NextN``, ``Eagle``, ``DFlash`` or ``DSpark``) and looked up in the model
    registry; only ``LlamaForCausalLMEagle3`` and ``Eagle3DeepseekV2ForCausalLM`` are EAGLE3 draft
    classes. Any other name fails at load (``Model architectures [...] are not supported for now``)
    or loads a class that is not an EAGLE3 draft."""
    d = run.ctx.draft
    arch, how = draft_architecture(d.architecture)
    run.set("architecture", arch, how)
    data = _data()
    drafts = data["eagle3_drafts"]
    if arch in drafts:
        run.set("model_class", drafts[arch], "registry")
        return
    registered = arch in data["architectures"]
    fix = (
        'recipecli convert DRAFT OUT --to eagle3 (writes architectures ["LlamaForCausalLMEagle3"])'
        if d.attention != "MLA"
        else 'set architectures to ["Eagle3DeepseekV2ForCausalLM"]'
    )
    why = (
        f"registers {arch!r}, but not as an EAGLE3 draft class"
        if registered
        else f"does not register {arch!r}: the load fails with 'Model architectures [{arch!r}] are not supported for now'"
    )
    yield finding(
        "draft.arch_name",
        f"tokenspeed looks up the draft as {arch!r} ({how}) and {why}; fix: {fix}",
        engine=NAME,
        source=(GET_CONFIG, REGISTRY),
        architecture=d.architecture,
        looked_up=arch,
    )
    run.stop = "architecture"
