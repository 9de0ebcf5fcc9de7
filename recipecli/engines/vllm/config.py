"""vLLM steps a (draft config resolution) and b (draft architecture)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, cast

from recipecli.codes import finding
from recipecli.draft import DraftModel
from recipecli.engines.base import (
    EngineRun,
)
from recipecli.engines.common import (
    missing_model_type,
    registered_configs,
    resolve_geometry,
)
from recipecli.engines.vllm.sources import (
    EAGLE3_LAYER,
    EAGLE3_MODEL,
    EAGLE_CFG,
    MTP_REWRITTEN,
    NAME,
    REGISTRY,
    SPEC_ALGOS,
    SPEC_BASE,
    SPEC_CFG,
    SPECULATORS_REQUIRED,
    TRANSFORMERS,
    _registry,
    src,
    steps,
)
from recipecli.findings import Finding

#: vLLM's own config classes: ``get_config`` builds a registered model_type with its class
#: (``kimi_k2`` -> transformers ``DeepseekV3Config``) before transformers' AutoConfig
CONFIG_REGISTRY = src("vllm/transformers_utils/config.py", "_CONFIG_REGISTRY / get_config")

# --------------------------------------------------------------------------- a. config


def speculators_hf_config(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The draft config vLLM's model code sees for a speculators checkpoint: ``SpeculatorsConfig``
    starts from ``transformer_layer_config`` and ``update_eagle3`` adds ``draft_vocab_size``,
    ``target_hidden_size`` (only when not null), ``norm_before_residual`` (default true),
    ``norm_before_fc`` / ``fc_norm`` / ``norm_output`` (default false) and the top-level aux ids.
    Nothing else of the top level (``num_aux_hidden_states``, ``eagle_config``) gets through."""
    layer = raw.get("transformer_layer_config")
    hf = dict(layer) if isinstance(layer, dict) else {}
    hf["draft_vocab_size"] = raw.get("draft_vocab_size")
    if raw.get("target_hidden_size") is not None:
        hf["target_hidden_size"] = raw["target_hidden_size"]
    hf["norm_before_residual"] = raw.get("norm_before_residual", True)
    for flag in ("norm_before_fc", "fc_norm", "norm_output"):
        hf[flag] = raw.get(flag, False)
    if raw.get("eagle_aux_hidden_state_layer_ids"):
        hf["eagle_aux_hidden_state_layer_ids"] = raw["eagle_aux_hidden_state_layer_ids"]
    return hf


@steps.add(
    "a",
    "Draft config resolution",
    sources=(SPEC_CFG, EAGLE_CFG, SPEC_ALGOS, EAGLE3_MODEL, CONFIG_REGISTRY),
    codes=(
        "config.model_type",
        "config.null_value",
        "config.invalid",
        "config.target_hidden_null",
        "norm.residual_default",
        "norm.flag_ignored",
    ),
)
def step_config(run: EngineRun) -> Iterable[Finding]:
    """``SpeculativeConfig`` builds the draft's config. A speculators checkpoint
    (``speculators_model_type: eagle3``) goes through ``SpeculatorsConfig`` and ``update_eagle3``:
    the layer geometry comes from ``transformer_layer_config``, whose ``model_type`` must be
    ``llama`` or ``qwen3`` (it picks ``Eagle3LlamaForCausalLM`` / ``Eagle3Qwen3ForCausalLM``), and a
    missing ``norm_before_residual`` becomes **true**. Any other draft becomes an ``EAGLEConfig``
    wrapping the config class for its ``model_type`` (vLLM's own ``_CONFIG_REGISTRY`` first:
    ``kimi_k2`` is transformers' ``DeepseekV3Config``; else transformers'); a key the checkpoint lacks takes
    that class's default (``LlamaConfig``: ``hidden_size`` 4096, 32 heads, ``rms_norm_eps`` 1e-6 …),
    and ``norm_before_residual`` defaults to **false**. The draft model then reads
    ``num_aux_hidden_states`` (top level) or the length of ``eagle_config.eagle_aux_hidden_state_layer_ids``,
    else 3, as the number of aux hidden states k; ``target_hidden_size`` (default
    ``hidden_size``) as the width of each; ``norm_before_fc`` from ``eagle_config`` first, then
    the top level; ``fc_norm``, ``norm_output`` and ``norm_before_residual`` from the top level
    only."""
    yield from _draft_config(run)
    if run.stopped():
        return
    yield from _widths(run)
    if run.stopped():
        return
    _aux_count(run)
    yield from _norm_flags(run)


def _eagle_config(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The draft config's ``eagle_config`` mapping, or an empty dict when it has none (or not a
    mapping)."""
    ec = cfg.get("eagle_config")
    return ec if isinstance(ec, dict) else {}


def _draft_config(run: EngineRun) -> Iterator[Finding]:
    """The config class vLLM builds for the draft (``SpeculatorsConfig`` or ``EAGLEConfig``) and
    its geometry with that class's defaults; sets ``run.stop`` when vLLM refuses the draft."""
    raw = run.ctx.draft_ck.config
    speculators = run.ctx.draft.format == "D"
    run.set("speculators", speculators, "speculators_model_type" if speculators else "absent")
    run.config = speculators_hf_config(raw) if speculators else dict(raw)
    refused = _model_type(run, speculators) or _geometry(run, speculators)
    if refused:
        yield from refused
        run.stop = "config"


def _model_type(run: EngineRun, speculators: bool) -> list[Finding]:
    """Set ``model_type`` (a speculators draft's ``transformer_layer_config.model_type``, default
    ``llama``; else the config's own); the refusal when vLLM cannot build a draft of that type
    (a speculators layer other than llama/qwen3, or no ``model_type`` at all), else nothing."""
    cfg = run.config
    if speculators:
        model_type = str(cfg.get("model_type") or "llama")
        run.set("model_type", model_type, "transformer_layer_config.model_type")
        if model_type not in ("llama", "qwen3"):
            return [
                finding(
                    "config.model_type",
                    f"vLLM refuses this speculators draft: 'Unsupported model_type {model_type} for "
                    "Eagle3 speculator' (only llama and qwen3 layers); re-export it with a llama layer",
                    engine=NAME,
                    source=SPEC_ALGOS,
                    model_type=model_type,
                )
            ]
        return []
    model_type = str(cfg.get("model_type") or "")
    if not model_type:
        return [missing_model_type(run, EAGLE_CFG)]
    run.set("model_type", model_type, "config: model_type")
    return []


def _geometry(run: EngineRun, speculators: bool) -> list[Finding]:
    """Resolve the geometry with the config class's defaults (:func:`resolve_geometry`); the
    findings that make vLLM refuse the config (a ``model_type`` without a transformers class, a
    ``@strict`` null, or a speculators layer config that lacks a key ``SpeculatorsConfig`` has no
    default for), else nothing."""
    model_type = run.get("model_type")
    own = registered_configs(_config_registry(), "vLLM", TRANSFORMERS)
    try:
        refused = resolve_geometry(
            run,
            model_type,
            "get_config (_CONFIG_REGISTRY), EAGLEConfig"
            if model_type in own
            else "EAGLEConfig(model=AutoConfig)",
            transformers=TRANSFORMERS,
            source=(SPEC_CFG, EAGLE_CFG, CONFIG_REGISTRY)
            if model_type in own
            else (SPEC_CFG, EAGLE_CFG),
            overrides=own,
        )
    except KeyError:
        return [
            finding(
                "config.model_type",
                f"draft model_type {model_type!r} has no transformers config class: vLLM cannot build "
                "the draft config; use model_type 'llama'",
                engine=NAME,
                source=EAGLE_CFG,
                model_type=model_type,
            )
        ]
    if speculators:
        refused.extend(_speculators_lacking(run.ctx.draft_ck.config))
    return refused


def _config_registry() -> Mapping[str, Mapping[str, Any]]:
    """vLLM's ``_CONFIG_REGISTRY`` as extracted (data file key ``config_registry``)."""
    data = cast(Mapping[str, Any], _registry())
    return cast(Mapping[str, Mapping[str, Any]], data.get("config_registry", {}))


def _speculators_lacking(raw: Mapping[str, Any]) -> list[Finding]:
    """``SpeculatorsConfig`` is a bare ``PreTrainedConfig`` built from
    ``transformer_layer_config``: a key it lacks has no class default, and the model build reads
    these without ``getattr``; the refusal when any of them is missing or null."""
    layer = raw.get("transformer_layer_config") or {}
    lacking = [k for k in SPECULATORS_REQUIRED if layer.get(k) is None]
    if not lacking:
        return []
    return [
        finding(
            "config.model_type",
            f"transformer_layer_config lacks {', '.join(lacking)}: vLLM's SpeculatorsConfig has no "
            f"class defaults, so building the draft raises AttributeError ('SpeculatorsConfig' object "
            f"has no attribute {lacking[0]!r}); write them",
            engine=NAME,
            source=(SPEC_BASE, EAGLE3_LAYER),
            missing=lacking,
        )
    ]


def _widths(run: EngineRun) -> Iterator[Finding]:
    """``draft_vocab_size`` and ``target_hidden_size`` as vLLM's draft model reads them."""
    cfg = run.config
    speculators = run.get("speculators")
    H = run.get("H")
    # draft_vocab_size: Eagle3LlamaForCausalLM.__init__ defaults it to vocab_size
    if cfg.get("draft_vocab_size") is not None:
        run.set("Vd", int(cfg["draft_vocab_size"]), "config: draft_vocab_size")
    else:
        run.set("Vd", run.get("V"), "Eagle3LlamaForCausalLM.__init__: = vocab_size")
    # target_hidden_size: getattr(config, 'target_hidden_size', hidden_size)
    if "target_hidden_size" in cfg and cfg["target_hidden_size"] is None and not speculators:
        yield finding(
            "config.target_hidden_null",
            "target_hidden_size is null: vLLM's LlamaModel reads it with getattr (the key exists, so "
            "no default) and computes None * k for the fc width — the load raises TypeError; "
            "write the target's hidden size or drop the key",
            engine=NAME,
            source=EAGLE3_MODEL,
        )
        run.stop = "config"
        return
    if cfg.get("target_hidden_size") is not None:
        run.set("Ht", int(cfg["target_hidden_size"]), "config: target_hidden_size")
    else:
        run.set("Ht", H, "LlamaModel.__init__: target_hidden_size absent, = hidden_size")


def _aux_count(run: EngineRun) -> None:
    """k, the number of aux hidden states the draft's ``fc`` takes (Llama and Qwen3 drafts count
    differently), and the ``fc`` input width."""
    cfg = run.config
    d = run.ctx.draft
    eagle_cfg = _eagle_config(cfg)
    use_aux = bool(eagle_cfg.get("use_aux_hidden_state", True))
    run.set(
        "use_aux",
        use_aux,
        "eagle_config.use_aux_hidden_state"
        if "use_aux_hidden_state" in eagle_cfg
        else "LlamaModel.__init__ default (true)",
    )
    # the draft class: Eagle3Qwen3ForCausalLM (qwen3_eagle3.py) counts k differently
    arch = draft_architecture(cfg, d, run.get("model_type"))[0]
    module = (_registry()["eagle3_drafts"].get(arch) or ["", ""])[0]
    qwen3 = module.endswith("qwen3_eagle3")
    run.set("qwen3_layer", qwen3, f"{arch} -> {module or 'unregistered'}")
    if not use_aux:
        # LlamaModel.__init__ builds fc (and sets num_aux_hidden_states / fc_input_size) only
        # under `if self.use_aux_hidden_state:`
        run.set("k", None, "LlamaModel.__init__: no fc without aux hidden states")
        run.set("fc_in", None, "LlamaModel.__init__: no fc without aux hidden states")
        return
    top_ids = cfg.get("eagle_aux_hidden_state_layer_ids")
    if qwen3 and isinstance(cfg.get("num_aux_layers"), int):
        run.set("k", cfg["num_aux_layers"], "config: num_aux_layers")
    elif isinstance(cfg.get("num_aux_hidden_states"), int):
        run.set("k", cfg["num_aux_hidden_states"], "config: num_aux_hidden_states")
    elif qwen3 and top_ids:
        run.set("k", len(top_ids), "Eagle3Qwen3 model: len(eagle_aux_hidden_state_layer_ids)")
    elif eagle_cfg.get("eagle_aux_hidden_state_layer_ids"):
        run.set(
            "k",
            len(eagle_cfg["eagle_aux_hidden_state_layer_ids"]),
            "len(eagle_config.eagle_aux_hidden_state_layer_ids)",
        )
    elif qwen3:
        run.set("k", 3, "Eagle3Qwen3 model default (3)")
    else:
        run.set("k", 3, "LlamaModel.__init__ default (3; top-level ids are not counted)")
    run.set("fc_in", run.get("Ht") * run.get("k"), "target_hidden_size * k")


def _norm_flags(run: EngineRun) -> Iterator[Finding]:
    """The norm flags, read where vLLM reads them (``norm_before_fc`` from ``eagle_config`` first,
    the others from the top level only)."""
    cfg = run.config
    raw = run.ctx.draft_ck.config
    speculators = run.get("speculators")
    eagle_cfg = _eagle_config(cfg)
    if "norm_before_fc" in eagle_cfg:
        run.set("norm_before_fc", bool(eagle_cfg["norm_before_fc"]), "eagle_config.norm_before_fc")
    else:
        run.set("norm_before_fc", bool(cfg.get("norm_before_fc", False)),
                "config: norm_before_fc" if "norm_before_fc" in cfg else "default (false)")  # fmt: skip
    for flag in ("fc_norm", "norm_output"):
        if flag in cfg:
            run.set(flag, bool(cfg[flag]), f"config: {flag}")
        else:
            nested = f" (eagle_config.{flag} is not read)" if flag in eagle_cfg else ""
            run.set(flag, False, f"default (false){nested}")
    if "norm_before_residual" in raw and raw["norm_before_residual"] is not None:
        run.set(
            "norm_before_residual",
            bool(cfg["norm_before_residual"]),
            "config: norm_before_residual",
        )
    elif speculators:
        run.set("norm_before_residual", True, "update_eagle3 default (true)")
        yield finding(
            "norm.residual_default",
            "speculators config without norm_before_residual: vLLM's update_eagle3 assumes true "
            "(speculators' own default is false); write the value the draft was trained with",
            engine=NAME,
            source=SPEC_ALGOS,
        )
    else:
        nested = (
            " (eagle_config.norm_before_residual is not read)"
            if "norm_before_residual" in eagle_cfg
            else ""
        )
        run.set("norm_before_residual", False, f"LlamaDecoderLayer default (false){nested}")
    for flag in ("fc_norm", "norm_before_residual", "norm_output"):
        if flag in eagle_cfg and flag not in cfg and bool(eagle_cfg[flag]) != run.get(flag):
            yield finding(
                "norm.flag_ignored",
                f"eagle_config.{flag} = {eagle_cfg[flag]} is not read by vLLM, which uses the top-level "
                f"key (default {run.get(flag)}): the draft runs without what it was trained with; "
                f'copy it to a top-level "{flag}"',
                engine=NAME,
                source=EAGLE3_LAYER if flag == "norm_before_residual" else EAGLE3_MODEL,
                flag=flag,
                nested=eagle_cfg[flag],
                used=run.get(flag),
            )


# --------------------------------------------------------------------------- b. architecture


def draft_architecture(cfg: Mapping[str, Any], d: DraftModel, model_type: str) -> tuple[str, str]:
    """The architecture vLLM looks up for the draft, and how it got there.

    Speculators drafts: ``update_eagle3``'s map (llama → ``Eagle3LlamaForCausalLM``, qwen3 →
    ``Eagle3Qwen3ForCausalLM``). Others: ``EAGLEConfig`` keeps a name that starts or ends with
    ``Eagle3`` and prefixes ``Eagle3`` to any other.
    """
    if d.format == "D":
        return (
            {"llama": "Eagle3LlamaForCausalLM", "qwen3": "Eagle3Qwen3ForCausalLM"}[model_type],
            "update_eagle3 (model_type map)",
        )
    arch = d.architecture
    if model_type in MTP_REWRITTEN:
        # SpeculativeConfig.hf_config_override runs on every draft config: these model types
        # become deepseek_mtp with architectures [DeepSeekMTPModel] before EAGLEConfig renames
        mtp = "DeepseekV32MTPModel" if model_type == "deepseek_v32" else "DeepSeekMTPModel"
        return f"Eagle3{mtp}", (
            f"hf_config_override: model_type {model_type!r} -> deepseek_mtp, "
            f"architectures [{mtp}]; EAGLEConfig: 'Eagle3' + {mtp!r}"
        )
    if arch.startswith("Eagle3") or arch.endswith("Eagle3"):
        return arch, "EAGLEConfig: kept (starts or ends with Eagle3)"
    return f"Eagle3{arch}", f"EAGLEConfig: 'Eagle3' + {arch!r}"


@steps.add(
    "b",
    "Draft architecture",
    sources=(
        EAGLE_CFG,
        REGISTRY,
        src("vllm/config/speculative.py", "SpeculativeConfig.hf_config_override"),
    ),
    codes=("draft.arch_name",),
)
def step_architecture(run: EngineRun) -> Iterable[Finding]:
    """The draft's ``architectures[0]`` is rewritten (``EAGLEConfig`` prefixes ``Eagle3`` unless the
    name already starts or ends with it; speculators drafts take ``update_eagle3``'s map; before
    that, ``hf_config_override`` turns a ``deepseek_v3``/``deepseek_v32``/``glm_moe_dsa`` draft
    into ``DeepSeekMTPModel``) and looked up in ``_SPECULATIVE_DECODING_MODELS``. An unregistered
    name fails at load."""
    ctx = run.ctx
    arch, how = draft_architecture(run.config, ctx.draft, run.get("model_type"))
    run.set("architecture", arch, how)
    drafts = _registry()["eagle3_drafts"]
    if arch not in drafts:
        run.set("model_class", None, "not registered")
        known = ", ".join(sorted(drafts))
        yield finding(
            "draft.arch_name",
            f"vLLM looks up the draft as {arch!r} ({how}), which it does not register as an EAGLE3 "
            f"draft: the load fails; set architectures to one of {known}",
            engine=NAME,
            source=(EAGLE_CFG, REGISTRY),
            architecture=arch,
        )
        run.stop = "architecture"
        return
    module, cls = drafts[arch]
    run.set("model_class", f"{module}.{cls}", "registry")
