"""SGLang steps a (draft config resolution) and b (draft architecture)."""

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
from recipecli.engines.sglang.sources import (
    ARCH_WIRING,
    DRAFT_INIT,
    DRAFT_LAYER,
    DRAFT_MODEL,
    DRAFT_RENAME,
    GET_CONFIG,
    MLA_DRAFT,
    MODEL_CONFIG,
    NAME,
    REGISTRY,
    TRANSFORMERS,
    _data,
    _eagle_config,
    src,
    steps,
)
from recipecli.findings import Finding

#: SGLang's own config classes: ``get_config`` builds a model type in ``_CONFIG_REGISTRY`` with
#: SGLang's class (``kimi_k2`` -> ``_KimiK2ConfigAlias(DeepseekV3Config)``, "For kimi_k25_eagle3")
CONFIG_REGISTRY = src("utils/hf_transformers/common.py", "_CONFIG_REGISTRY")

# --------------------------------------------------------------------------- a. config


@steps.add(
    "a",
    "Draft config resolution",
    sources=(MODEL_CONFIG, GET_CONFIG, CONFIG_REGISTRY, DRAFT_MODEL, DRAFT_INIT, MLA_DRAFT),
    codes=(
        "config.model_type",
        "config.null_value",
        "config.invalid",
        "config.target_hidden_null",
        "config.draft_vocab_size_absent",
        "draft.layers",
        "norm.flag_ignored",
        "norm.residual_unsupported",
    ),
)
def step_config(run: EngineRun) -> Iterable[Finding]:
    """``ModelConfig`` builds the draft's config with ``get_config`` (SGLang's ``_CONFIG_REGISTRY``
    class for a type it registers: ``kimi_k2`` is ``_KimiK2ConfigAlias(DeepseekV3Config)``; else
    transformers' ``AutoConfig``: ``LlamaConfig`` for ``llama``; a key the checkpoint lacks takes
    that class's default), after
    applying the same ``--json-model-override-args`` as the target's. The Llama draft reads
    ``target_hidden_size`` when the key exists (a null one makes the ``fc`` width None × k), k =
    ``num_aux_hidden_states``, else the length of ``eagle_config.eagle_aux_hidden_state_layer_ids``,
    else 3 (the top-level id list is not counted), ``norm_before_fc`` from ``eagle_config`` first,
    ``fc_norm`` (or ``use_aux_norm``) and ``norm_output`` from the top level, a ``bias`` key for
    ``fc``; ``norm_before_residual`` is never read. It builds ``num_hidden_layers`` decoder layers
    (no one-layer limit) and reads ``config.draft_vocab_size`` as an attribute: a config without
    the key fails with ``AttributeError``, a null one borrows the target's head. The MLA draft
    (``Eagle3DeepseekV2ForCausalLM``) reads everything with defaults and requires one layer."""
    yield from _draft_config(run)
    if run.stopped():
        return
    yield from _widths(run)
    if run.stopped():
        return
    _aux_count(run)
    yield from _norm_flags(run)
    d = run.ctx.draft
    mla = d.attention == "MLA"
    layers = run.get("layers")
    if mla and layers != 1:
        yield finding(
            "draft.layers",
            f"SGLang's MLA EAGLE3 draft raises 'EAGLE3 currently only supports 1 layer': "
            f"num_hidden_layers is {run.resolved['layers'].show()}; set it to 1",
            engine=NAME,
            source=MLA_DRAFT,
            num_hidden_layers=layers,
        )


def _draft_config(run: EngineRun) -> Iterator[Finding]:
    """The draft's config class (transformers' ``AutoConfig``) and its geometry with the class
    defaults; sets ``run.stop`` when ``get_config`` fails."""
    cfg = run.ctx.draft_ck.config
    model_type = str(cfg.get("model_type") or "")
    if not model_type:
        yield (
            _speculators(run, None)
            if run.ctx.draft.format == "D"
            else missing_model_type(run, GET_CONFIG)
        )
        run.stop = "config"
        return
    run.set("model_type", model_type, "config: model_type")
    own = registered_configs(_config_registry(), "SGLang", TRANSFORMERS)
    try:
        refused = resolve_geometry(
            run,
            model_type,
            "get_config (_CONFIG_REGISTRY)" if model_type in own else "get_config (AutoConfig)",
            transformers=TRANSFORMERS,
            source=(GET_CONFIG, CONFIG_REGISTRY) if model_type in own else GET_CONFIG,
            overrides=own,
        )
    except KeyError:
        if run.ctx.draft.format == "D":
            yield _speculators(run, model_type)
            run.stop = "config"
            return
        yield finding(
            "config.model_type",
            f"draft model_type {model_type!r} has no config class in transformers {TRANSFORMERS}: "
            "get_config fails; use model_type 'llama'",
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


def _config_registry() -> Mapping[str, Mapping[str, Any]]:
    """SGLang's ``_CONFIG_REGISTRY`` as extracted (data file key ``config_registry``)."""
    data = cast(Mapping[str, Any], _data())
    return cast(Mapping[str, Mapping[str, Any]], data.get("config_registry", {}))


def _speculators(run: EngineRun, model_type: str | None) -> Finding:
    """``config.model_type`` for a speculators draft (format D) that ``get_config`` cannot build:
    SGLang reads no speculators config (its layer geometry sits under
    ``transformer_layer_config``, which transformers' ``AutoConfig`` does not look into), so
    adding a ``model_type`` only moves the failure to the architecture; the fix is converting
    the draft to the EAGLE3 layout (``LlamaForCausalLMEagle3``, flat geometry)."""
    what = f"model_type {model_type!r}" if model_type else "no model_type"
    return finding(
        "config.model_type",
        f"the draft is a speculators checkpoint (speculators_model_type, geometry under "
        f"transformer_layer_config) with {what}: SGLang's get_config (transformers' AutoConfig) cannot "
        "build it and SGLang reads no speculators format; convert it: recipecli convert DRAFT OUT --to eagle3",
        engine=NAME,
        source=GET_CONFIG,
        model_type=model_type,
    )


def _widths(run: EngineRun) -> Iterator[Finding]:
    """``target_hidden_size`` and ``draft_vocab_size`` as SGLang's drafts read them (and whether
    the head is borrowed from the target)."""
    d = run.ctx.draft
    cfg = run.ctx.draft_ck.config
    mla = d.attention == "MLA"
    H = run.get("H")
    # target_hidden_size: hasattr -> value (Llama draft); getattr(...) or hidden_size (MLA draft)
    if "target_hidden_size" in cfg and cfg["target_hidden_size"] is None and not mla:
        yield finding(
            "config.target_hidden_null",
            "target_hidden_size is null: SGLang's LlamaModel takes it whenever the key exists and "
            "builds fc with None * k inputs — start-up raises TypeError; write the target's hidden "
            "size or drop the key",
            engine=NAME,
            source=DRAFT_MODEL,
        )
        run.stop = "config"
        return
    if cfg.get("target_hidden_size") is not None:
        run.set("Ht", int(cfg["target_hidden_size"]), "config: target_hidden_size")
    else:
        run.set("Ht", H, "LlamaModel.__init__: target_hidden_size absent, = hidden_size")
    # draft_vocab_size
    dvs_present = "draft_vocab_size" in cfg
    run.set("head_from_target", False, "draft_vocab_size given")
    if dvs_present and cfg["draft_vocab_size"] is not None:
        run.set("Vd", int(cfg["draft_vocab_size"]), "config: draft_vocab_size")
    else:
        run.set("Vd", run.get("V"), "LlamaForCausalLMEagle3.__init__: = vocab_size")
        if not d.tie_word_embeddings and (dvs_present or mla):
            run.set(
                "head_from_target",
                True,
                "draft_vocab_size null: load_lm_head_from_target",
            )
    if not dvs_present and not mla:
        yield finding(
            "config.draft_vocab_size_absent",
            "the draft config has no draft_vocab_size: SGLang's LlamaForCausalLMEagle3 reads "
            "config.draft_vocab_size as an attribute and start-up fails with AttributeError "
            f"('LlamaConfig' object has no attribute 'draft_vocab_size'); add \"draft_vocab_size\": "
            f"{d.Vd if d.has_lm_head else 'null'}"
            + (" (the lm_head's rows)" if d.has_lm_head else " (borrow the target's head)"),
            engine=NAME,
            source=DRAFT_INIT,
        )


def _aux_count(run: EngineRun) -> None:
    """k (the number of aux hidden states ``fc`` takes), the ``fc`` input width and bias, and
    whether aux hidden states are used at all."""
    cfg = run.ctx.draft_ck.config
    ec = _eagle_config(cfg)
    mla = run.ctx.draft.attention == "MLA"
    ids = ec.get("eagle_aux_hidden_state_layer_ids")
    top = cfg.get("eagle_aux_hidden_state_layer_ids")
    if cfg.get("num_aux_hidden_states") is not None and not mla:
        run.set("k", int(cfg["num_aux_hidden_states"]), "config: num_aux_hidden_states")
    elif ids:
        run.set("k", len(ids), "len(eagle_config.eagle_aux_hidden_state_layer_ids)")
    elif mla and top:
        run.set("k", len(top), "len(eagle_aux_hidden_state_layer_ids) (MLA draft)")
    else:
        note = " (top-level ids are not counted)" if top else ""
        run.set("k", 3, f"LlamaModel.__init__ default (3){note}")
    run.set("fc_in", run.get("Ht") * run.get("k"), "target_hidden_size * k")
    run.set("fc_bias", bool(cfg.get("bias", False)),
            "config: bias" if "bias" in cfg else "default (false)")  # fmt: skip
    run.set(
        "use_aux",
        bool(ec.get("use_aux_hidden_state", True)),
        "eagle_config.use_aux_hidden_state" if "use_aux_hidden_state" in ec else "default (true)",
    )


def _norm_flags(run: EngineRun) -> Iterator[Finding]:
    """The norm flags where SGLang reads them (``norm_before_fc`` from ``eagle_config`` first, the
    others from the top level; ``norm_before_residual`` never)."""
    d = run.ctx.draft
    cfg = run.ctx.draft_ck.config
    ec = _eagle_config(cfg)
    if "norm_before_fc" in ec:
        run.set("norm_before_fc", bool(ec["norm_before_fc"]), "eagle_config.norm_before_fc")
    else:
        run.set("norm_before_fc", bool(cfg.get("norm_before_fc", False)),
                "config: norm_before_fc" if "norm_before_fc" in cfg else "default (false)")  # fmt: skip
    if cfg.get("fc_norm") or cfg.get("use_aux_norm"):
        run.set(
            "fc_norm", True, "config: fc_norm" if cfg.get("fc_norm") else "config: use_aux_norm"
        )
    else:
        run.set("fc_norm", False, "config: fc_norm" if "fc_norm" in cfg else "default (false)")
    run.set("norm_output", bool(cfg.get("norm_output", False)),
            "config: norm_output" if "norm_output" in cfg else "default (false)")  # fmt: skip
    run.set("norm_before_residual", False, "not read by SGLang (residual = raw hidden states)")
    for flag in ("fc_norm", "norm_output"):
        if flag in ec and flag not in cfg and bool(ec[flag]) != run.get(flag):
            yield finding(
                "norm.flag_ignored",
                f"eagle_config.{flag} = {ec[flag]} is not read by SGLang, which uses the top-level key "
                f"(default {run.get(flag)}): the draft runs without what it was trained with; copy it "
                f'to a top-level "{flag}"',
                engine=NAME,
                source=DRAFT_MODEL,
                flag=flag,
                nested=ec[flag],
                used=run.get(flag),
            )
    if cfg.get("norm_before_residual") is True or ec.get("norm_before_residual") is True:
        yield finding(
            "norm.residual_unsupported",
            "norm_before_residual is true but SGLang never reads it (the first layer's residual is the "
            "raw hidden state): the draft runs unlike it was trained; serve it on vLLM or retrain with it "
            "false",
            engine=NAME,
            source=DRAFT_LAYER,
            source_key=d.sources.get("norm_before_residual"),
        )


# --------------------------------------------------------------------------- b. architecture


def draft_architecture(arch: str) -> tuple[str, str]:
    """``ModelConfig._config_draft_model`` renames a few target architectures for the draft
    (``DeepseekV3ForCausalLM`` -> ``DeepseekV3ForCausalLMNextN`` …); every other name is kept."""
    renames = _data()["draft_renames"]
    if arch in renames:
        return renames[arch], f"_config_draft_model: {arch!r} -> {renames[arch]!r}"
    return arch, "_config_draft_model: kept"


@steps.add(
    "b",
    "Draft architecture",
    sources=(DRAFT_RENAME, REGISTRY, ARCH_WIRING),
    codes=("draft.arch_name",),
)
def step_architecture(run: EngineRun) -> Iterable[Finding]:
    """The draft's ``architectures[0]`` is kept (a few target architectures are renamed to their
    MTP/NextN class) and looked up in the model registry; only ``LlamaForCausalLMEagle3`` and
    ``Eagle3DeepseekV2ForCausalLM`` are EAGLE3 draft classes. A registered non-draft name
    (``LlamaForCausalLM``, the original EAGLE3 release) builds that target class as the draft,
    which start-up cannot wire (it has no ``hot_token_id``, or no ``set_embed``); an unknown name falls back to the
    Transformers backend or fails with ``Model architectures [...] are not supported for now``."""
    d = run.ctx.draft
    arch, how = draft_architecture(d.architecture)
    run.set("architecture", arch, how)
    data = _data()
    if arch in data["eagle3_drafts"]:
        run.set("model_class", data["eagle3_drafts"][arch], "registry")
        return
    fix = (
        'recipecli convert DRAFT OUT --to eagle3 (writes architectures ["LlamaForCausalLMEagle3"])'
        if d.attention != "MLA"
        else 'set architectures to ["Eagle3DeepseekV2ForCausalLM"]'
    )
    why = (
        f"registers {arch!r} as a target model, not an EAGLE3 draft class: the draft is built as that "
        "model and start-up fails wiring it (it has no hot_token_id, or no set_embed)"
        if arch in data["architectures"]
        else f"does not register {arch!r}: it falls back to the Transformers backend or fails with "
        f"'Model architectures [{arch!r}] are not supported for now'"
    )
    yield finding(
        "draft.arch_name",
        f"SGLang looks up the draft as {arch!r} ({how}) and {why}; fix: {fix}",
        engine=NAME,
        source=(DRAFT_RENAME, REGISTRY, ARCH_WIRING),
        architecture=d.architecture,
        looked_up=arch,
    )
    run.stop = "architecture"
