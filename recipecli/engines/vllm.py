"""vLLM 0.33.0's EAGLE3 load path, step by step (the released wheel's source).

Each step below is a function of vLLM 0.33.0 that decides whether a target + EAGLE3 draft pair
loads and drafts what it was trained for; the step's ``sources`` name file and function, and every
finding it yields carries them. The registry (which draft architectures vLLM registers, which
target classes implement ``SupportsEagle3``) is data extracted from the wheel by
``scripts/build_engine_data.py vllm``; transformers' config defaults come from
``scripts/build_engine_data.py transformers``. ``tests/conformance/`` runs vLLM's own config classes,
draft model and ``load_weights`` on the same pairs and compares.
"""

from __future__ import annotations

from collections.abc import Iterable

from recipecli.codes import finding
from recipecli.draft import DraftModel
from recipecli.engines.base import (
    EngineModel,
    EngineRun,
    Section,
    Source,
    StepList,
    load_data,
)
from recipecli.engines.common import (
    default_aux_layers,
    fc_fits_k,
    heads_ok,
    missing_model_type,
    no_tensor_findings,
    optional_shapes,
    pad64,
    resolve_geometry,
    shape_findings,
    sharing_row,
    split_rows,
    trained_layers,
    unexpected_tensors,
)
from recipecli.findings import Finding

NAME = "vllm"
VERSION = "v0.33.0"
REPO = "vllm-project/vllm"
DATA = "vllm-0.33.0.json"
#: transformers release the conformance environment pins beside vLLM 0.33.0 (it asks >=5.16.1,<5.21)
TRANSFORMERS = "5.20.2"


def src(file: str, function: str, *refs: str) -> Source:
    return Source(REPO, VERSION, file, function, tuple(refs))


EAGLE_CFG = src("vllm/transformers_utils/configs/eagle.py", "EAGLEConfig.__init__")
SPEC_ALGOS = src("vllm/transformers_utils/configs/speculators/algos.py", "update_eagle3")
SPEC_CFG = src("vllm/config/speculative.py", "SpeculativeConfig.__post_init__")
SPEC_BASE = src(
    "vllm/transformers_utils/configs/speculators/base.py",
    "SpeculatorsConfig.extract_transformers_pre_trained_config",
)
#: transformer_layer_config keys vLLM's Llama layers read with plain attribute access
SPECULATORS_REQUIRED = (
    "hidden_size",
    "intermediate_size",
    "num_attention_heads",
    "num_hidden_layers",
    "rms_norm_eps",
    "vocab_size",
    "hidden_act",
)
REGISTRY = src("vllm/model_executor/models/registry.py", "_SPECULATIVE_DECODING_MODELS")
EAGLE3_MODEL = src("vllm/model_executor/models/llama_eagle3.py", "LlamaModel.__init__")
EAGLE3_LAYER = src("vllm/model_executor/models/llama_eagle3.py", "LlamaDecoderLayer.__init__")
EAGLE3_CAUSAL = src("vllm/model_executor/models/llama_eagle3.py", "Eagle3LlamaForCausalLM.__init__")
EAGLE3_LOAD = src(
    "vllm/model_executor/models/llama_eagle3.py", "Eagle3LlamaForCausalLM.load_weights"
)
WEIGHTS_LOADER = src("vllm/model_executor/models/utils.py", "AutoWeightsLoader._load_module")
AUX_FROM_CONFIG = src(
    "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py",
    "get_eagle3_aux_layers_from_config",
    "vLLM PR #25961",
)
AUX_FROM_CONFIG_V1 = src(
    "vllm/v1/worker/gpu_model_runner.py", "GPUModelRunner._get_eagle3_aux_layers_from_config"
)
RUNNER = src(
    "vllm/config/vllm.py", "VllmConfig (VLLM_USE_V2_MODEL_RUNNER: the V2 runner is the default)"
)
AUX_SETUP = src(
    "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py",
    "set_eagle3_aux_hidden_state_layers (supports_eagle3 check)",
)
AUX_CAPTURE = src(
    "vllm/model_executor/models/interfaces.py",
    "EagleModelMixin._set_aux_hidden_state_layers / _maybe_add_hidden_state",
)
AUX_DEFAULT = src(
    "vllm/model_executor/models/interfaces.py",
    "SupportsEagle3.get_eagle3_default_aux_hidden_state_layers",
    "vLLM PR #50170",
)
SHARE_EMBED = src(
    "vllm/v1/worker/gpu/spec_decode/eagle/utils.py",
    "maybe_share_target_embed / _should_share",
    "vLLM #18906",
    "vLLM #50158",
)
SHARE_HEAD = src(
    "vllm/v1/worker/gpu/spec_decode/eagle/utils.py", "load_eagle_model (lm_head, _should_share)"
)
VOCAB_PARALLEL = src(
    "vllm/model_executor/layers/vocab_parallel_embedding.py",
    "VocabParallelEmbedding.__init__ (pad_vocab_size, divide)",
    "vLLM #31474",
)
DRAFT_TP = src("vllm/config/speculative.py", "SpeculativeConfig._verify_and_get_draft_tp")
MAXPOS = src(
    "vllm/config/speculative.py",
    "SpeculativeConfig._maybe_override_draft_max_position_embeddings",
    "vLLM #48894",
)
LOGITS = src("vllm/model_executor/models/llama_eagle3.py", "Eagle3LlamaForCausalLM.compute_logits")

#: speculative.py SpeculativeConfig.hf_config_override: draft model types rewritten to deepseek_mtp
MTP_REWRITTEN = frozenset({"deepseek_v3", "deepseek_v32", "glm_moe_dsa"})

#: speculative.py _CACHE_ONLY_ROPE_TYPES: RoPE types whose cache vLLM may simply resize
CACHE_ONLY_ROPE_TYPES = frozenset({"default", "linear", "llama3", "ntk", "proportional"})

steps = StepList()


def _registry() -> dict:
    return dict(load_data(DATA))


# --------------------------------------------------------------------------- a. config


def speculators_hf_config(raw: dict) -> dict:
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
    sources=(SPEC_CFG, EAGLE_CFG, SPEC_ALGOS, EAGLE3_MODEL),
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
    wrapping transformers' config class for its ``model_type``; a key the checkpoint lacks takes
    that class's default (``LlamaConfig``: ``hidden_size`` 4096, 32 heads, ``rms_norm_eps`` 1e-6 …),
    and ``norm_before_residual`` defaults to **false**. The draft model then reads
    ``num_aux_hidden_states`` (top level) or the length of ``eagle_config.eagle_aux_hidden_state_layer_ids``,
    else 3, as the number of aux hidden states k; ``target_hidden_size`` (default
    ``hidden_size``) as the width of each; ``norm_before_fc`` from ``eagle_config`` first, then
    the top level; ``fc_norm``, ``norm_output`` and ``norm_before_residual`` from the top level
    only."""
    ctx = run.ctx
    d = ctx.draft
    raw = ctx.draft_ck.config
    speculators = d.format == "D"
    run.set("speculators", speculators, "speculators_model_type" if speculators else "absent")
    cfg = run.config = speculators_hf_config(raw) if speculators else dict(raw)
    if speculators:
        model_type = str(cfg.get("model_type") or "llama")
        run.set("model_type", model_type, "transformer_layer_config.model_type")
        if model_type not in ("llama", "qwen3"):
            yield finding(
                "config.model_type",
                f"vLLM refuses this speculators draft: 'Unsupported model_type {model_type} for "
                "Eagle3 speculator' (only llama and qwen3 layers); re-export it with a llama layer",
                engine=NAME,
                source=SPEC_ALGOS,
                model_type=model_type,
            )
            run.stop = "config"
            return
    else:
        model_type = str(cfg.get("model_type") or "")
        if not model_type:
            yield missing_model_type(run, EAGLE_CFG)
            run.stop = "config"
            return
        run.set("model_type", model_type, "config: model_type")
    try:
        refused = resolve_geometry(
            run,
            model_type,
            "EAGLEConfig(model=AutoConfig)",
            transformers=TRANSFORMERS,
            source=(SPEC_CFG, EAGLE_CFG),
        )
    except KeyError:
        yield finding(
            "config.model_type",
            f"draft model_type {model_type!r} has no transformers config class: vLLM cannot build "
            "the draft config; use model_type 'llama'",
            engine=NAME,
            source=EAGLE_CFG,
            model_type=model_type,
        )
        run.stop = "config"
        return
    if speculators:
        # SpeculatorsConfig is a bare PreTrainedConfig built from transformer_layer_config: a key
        # it lacks has no class default, and the model build reads these without getattr
        layer = raw.get("transformer_layer_config") or {}
        lacking = [k for k in SPECULATORS_REQUIRED if layer.get(k) is None]
        if lacking:
            refused.append(
                finding(
                    "config.model_type",
                    f"transformer_layer_config lacks {', '.join(lacking)}: vLLM's SpeculatorsConfig has no "
                    f"class defaults, so building the draft raises AttributeError ('SpeculatorsConfig' object "
                    f"has no attribute {lacking[0]!r}); write them",
                    engine=NAME,
                    source=(SPEC_BASE, EAGLE3_LAYER),
                    missing=lacking,
                )
            )
    if refused:
        yield from refused
        run.stop = "config"
        return
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
    eagle_cfg = cfg.get("eagle_config") if isinstance(cfg.get("eagle_config"), dict) else {}
    use_aux = bool(eagle_cfg.get("use_aux_hidden_state", True))
    run.set(
        "use_aux",
        use_aux,
        "eagle_config.use_aux_hidden_state"
        if "use_aux_hidden_state" in eagle_cfg
        else "LlamaModel.__init__ default (true)",
    )
    # the draft class: Eagle3Qwen3ForCausalLM (qwen3_eagle3.py) counts k differently
    arch = draft_architecture(cfg, d, model_type)[0]
    module = (_registry()["eagle3_drafts"].get(arch) or ["", ""])[0]
    qwen3 = module.endswith("qwen3_eagle3")
    run.set("qwen3_layer", qwen3, f"{arch} -> {module or 'unregistered'}")
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
    # norm flags
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


def draft_architecture(cfg: dict, d: DraftModel, model_type: str) -> tuple[str, str]:
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
            f"target architecture {t.architecture!r} is not in vLLM 0.33.0's model registry: vLLM "
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


def captured_layers(d: DraftModel, cfg: dict, L: int) -> tuple[list[int], str]:
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
    eagle_cfg = cfg.get("eagle_config") if isinstance(cfg.get("eagle_config"), dict) else {}
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
    hidden size)."""
    ctx = run.ctx
    d, L = ctx.draft, ctx.target.L
    if L is None:
        return
    cfg = run.config
    layers, where = captured_layers(d, cfg, L)
    run.set("aux_layers", layers, where)
    k = run.get("k")
    eagle_cfg = cfg.get("eagle_config") if isinstance(cfg.get("eagle_config"), dict) else {}
    top = list(cfg.get("eagle_aux_hidden_state_layer_ids") or [])
    nested = list(eagle_cfg.get("eagle_aux_hidden_state_layer_ids") or [])
    given = top or list(eagle_cfg.get("layer_ids") or [])
    trained = trained_layers(d, L)
    if not given:
        same = trained is not None and sorted(set(trained)) == layers
        if nested:
            sev = "info" if same else "error"
            tail = (
                "; they equal that default"
                if same
                else f"; the draft's ids {nested} are ignored and it drafts from the wrong layers — copy them to a "
                "top-level eagle_aux_hidden_state_layer_ids"
                + (f" as hidden-state indices {trained}" if trained is not None else "")
            )
            msg = f"aux ids sit only under eagle_config, which vLLM's default (V2) runner does not read: it captures the target's default hidden states {layers}{tail}"
        else:
            sev = "info" if same else "warning"
            msg = (
                f"draft names no aux layer ids: vLLM captures the target's default hidden states {layers}"
                + (
                    "; the draft's format was trained on that default"
                    if same
                    else "; if the draft was trained on others acceptance collapses silently — add "
                    "eagle_aux_hidden_state_layer_ids"
                )
            )
        yield finding(
            "aux.default",
            msg,
            severity=sev,
            engine=NAME,
            source=(AUX_FROM_CONFIG, AUX_DEFAULT),
            layers=layers,
            L=L,
            nested_ids=nested,
        )
    bad = [i for i in given if not 0 <= i <= L]
    if bad:
        yield finding(
            "aux.out_of_range",
            f"aux ids {bad} lie outside the target's hidden states 0..{L}: vLLM never captures them, "
            f"so the draft gets {len(layers)} state(s) where its fc takes {k}; fix the ids",
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
            f"vLLM captures hidden states {layers} but the draft's format ({d.format}) writes ids for "
            f"{trained}: if it was trained that way it drafts from the wrong layers and acceptance collapses "
            f"silently; write top-level eagle_aux_hidden_state_layer_ids {trained} (hidden-state indices)",
            engine=NAME,
            source=(AUX_FROM_CONFIG, AUX_CAPTURE, "vLLM PR #43671"),
            captured=layers,
            trained_on=trained,
        )


# --------------------------------------------------------------------------- e. tensors


def allocated(run: EngineRun) -> dict[str, tuple[int, ...]]:
    """Checkpoint tensor name -> shape of every weight vLLM's ``Eagle3LlamaForCausalLM`` loads
    from the checkpoint for the resolved config (after ``load_weights``' renames: ``midlayer.`` is
    ``layers.0.``; q/k/v and gate/up are checkpoint names before stacking).

    Layer 0: q [nh*hd, 2H], k/v [nkv*hd, 2H] (+ biases with ``attention_bias``), o [H, nh*hd],
    gate/up [I, H], down [H, I], input_layernorm / hidden_norm / post_attention_layernorm [H];
    later layers take H inputs. ``fc`` [H, k*Ht] (with aux states), ``input_norm`` [k*Ht]
    (``norm_before_fc``), ``fc_norm.i`` [Ht] (``fc_norm``), ``norm`` [H], ``lm_head`` [Vd, H],
    ``d2t`` [Vd] when Vd != V, ``embed_tokens`` [V, H] (optional: shared from the target).
    """
    d = run.ctx.draft
    g = run.get
    H, nh, nkv, hd, inter = g("H"), g("nh"), g("nkv"), g("hd"), g("I")
    out: dict[str, tuple[int, ...]] = {}
    layers = g("layers") or 1
    for i in range(layers):
        # layer 0 keeps the checkpoint's naming (midlayer. is mapped to layers.0.); later layers
        # load only as layers.{i}. (a midlayer.{i}. name would map to layers.0.{i}.)
        lp = d.layer_prefix if i == 0 else f"layers.{i}."
        pre = d.tensor_prefix + lp
        qkv_in = 2 * H if i == 0 else H
        out[pre + "self_attn.q_proj.weight"] = (nh * hd, qkv_in)
        out[pre + "self_attn.k_proj.weight"] = (nkv * hd, qkv_in)
        out[pre + "self_attn.v_proj.weight"] = (nkv * hd, qkv_in)
        if bool(run.config.get("attention_bias", False)):
            out[pre + "self_attn.q_proj.bias"] = (nh * hd,)
            out[pre + "self_attn.k_proj.bias"] = (nkv * hd,)
            out[pre + "self_attn.v_proj.bias"] = (nkv * hd,)
        out[pre + "self_attn.o_proj.weight"] = (H, nh * hd)
        if g("qwen3_layer"):  # Qwen3Attention: per-head RMSNorm of q and k
            out[pre + "self_attn.q_norm.weight"] = (hd,)
            out[pre + "self_attn.k_norm.weight"] = (hd,)
        out[pre + "mlp.gate_proj.weight"] = (inter, H)
        out[pre + "mlp.up_proj.weight"] = (inter, H)
        out[pre + "mlp.down_proj.weight"] = (H, inter)
        for norm in ("input_layernorm", "post_attention_layernorm"):
            out[pre + norm + ".weight"] = (H,)
        if i == 0:
            out[pre + "hidden_norm.weight"] = (H,)
    p = d.tensor_prefix
    if g("use_aux"):
        out[p + "fc.weight"] = (H, g("fc_in"))
        if g("norm_before_fc"):
            out[p + "input_norm.weight"] = (g("fc_in"),)
        if g("fc_norm"):
            for i in range(g("k")):
                out[f"{p}fc_norm.{i}.weight"] = (g("Ht"),)
    out[p + "norm.weight"] = (H,)
    return out


@steps.add(
    "e",
    "Tensors",
    sources=(EAGLE3_CAUSAL, EAGLE3_LAYER, EAGLE3_MODEL, EAGLE3_LOAD, WEIGHTS_LOADER),
    codes=(
        "tensor.missing",
        "tensor.unchecked",
        "tensor.unexpected",
        "shape.*",
        "hidden.mismatch",
        "vocab.d2t_missing",
        "vocab.d2t_ignored",
        "tensor.dropped",
    ),  # fmt: skip
)
def step_tensors(run: EngineRun) -> Iterable[Finding]:
    """``Eagle3LlamaForCausalLM`` allocates its weights from the resolved config and
    ``load_weights`` fills them: ``t2d`` is dropped, ``d2t`` becomes ``draft_id_to_target_id``
    (allocated, as zeros, only when Vd != V), ``midlayer.`` is renamed ``layers.0.``, every other
    name gets ``model.``; ``AutoWeightsLoader`` raises on a name it has no parameter for and on a
    shape that does not match. ``load_weights`` returns nothing, so the model loader's check for
    weights the checkpoint did not provide is skipped: a missing weight stays uninitialised and
    the draft serves garbage without an error."""
    ctx = run.ctx
    tensors = ctx.draft_ck.tensors
    if not tensors:
        yield from no_tensor_findings(run, EAGLE3_LOAD)
        return
    want = allocated(run)
    missing = [n for n in want if n not in tensors]
    if missing:
        yield finding(
            "tensor.missing",
            f"draft lacks {len(missing)} weight(s) vLLM allocates: {', '.join(missing[:6])}"
            + (" …" if len(missing) > 6 else "")
            + "; load_weights does not check, so they stay uninitialised and the draft serves garbage; "
            "re-export the draft with all weights",
            engine=NAME,
            source=(EAGLE3_LOAD, EAGLE3_MODEL),
            missing=missing,
        )
    shapes = {**want, **optional_shapes(ctx.draft, run.get("H"), run.get("V"), run.get("Vd"))}
    yield from shape_findings(
        run, shapes, NAME, "vLLM", (EAGLE3_LAYER, EAGLE3_MODEL, WEIGHTS_LOADER)
    )
    # names vLLM has no parameter for
    extra = [n for n in unexpected_tensors(ctx) if n not in want]
    if not run.get("use_aux"):
        extra += [n for n in tensors if n.endswith("fc.weight")]
    if extra:
        shown = ", ".join(extra[:5]) + (" …" if len(extra) > 5 else "")
        yield finding(
            "tensor.unexpected",
            f"vLLM's weights loader has no parameter for {shown}: the load raises "
            "'There is no module or parameter named ...'; drop or rename them",
            engine=NAME,
            source=(EAGLE3_LOAD, WEIGHTS_LOADER),
            unexpected=extra,
        )
    # hidden widths against the target
    t = ctx.target
    Ht = run.get("Ht")
    if t.H is not None and Ht != t.H:
        yield finding(
            "hidden.mismatch",
            f"vLLM feeds the draft's fc target hidden states of width {t.H} but sizes it for "
            f"{Ht} per state ({run.resolved['Ht'].origin}): this draft was trained for another target",
            engine=NAME,
            source=(EAGLE3_MODEL, AUX_CAPTURE),
            draft_target_hidden=Ht,
            target_hidden=t.H,
        )
    # vocabulary map as vLLM uses it
    V, Vd = t.V, run.get("Vd")
    if V is not None and Vd is not None and Vd != V and "d2t" not in tensors:
        yield finding(
            "vocab.d2t_missing",
            f"draft_vocab_size {Vd} != vocab {V} but the draft ships no d2t: vLLM keeps "
            f"draft_id_to_target_id all zeros and maps draft ids onto target ids 0..{Vd - 1} — it serves "
            "and accepts almost nothing; re-export with the d2t map",
            engine=NAME,
            source=(EAGLE3_CAUSAL, EAGLE3_LOAD, "NeMo Automodel PR #2447"),
            Vd=Vd,
            V=V,
        )
    if V is not None and Vd == V and "d2t" in tensors:
        # load_weights renames d2t to draft_id_to_target_id and keeps it (includes_draft_id_mapping),
        # but with Vd == V that attribute is None, not a parameter: AutoWeightsLoader raises
        yield finding(
            "vocab.d2t_ignored",
            "draft_vocab_size equals the target vocab, so vLLM allocates no draft_id_to_target_id and "
            "the checkpoint's d2t has no parameter to load into: the load raises ('There is no module or "
            "parameter named ...'); drop d2t (and t2d), or set draft_vocab_size to the draft head's rows",
            engine=NAME,
            source=(EAGLE3_CAUSAL, EAGLE3_LOAD, WEIGHTS_LOADER),
        )
    bias = [n for n in tensors if n.endswith("fc.bias")]
    if bias:
        yield finding(
            "tensor.dropped",
            f"the draft ships {bias[0]}, but vLLM's fc has no bias and its weights loader skips any "
            "unexpected '.bias' name silently: the draft runs without a trained weight (an EAGLE-1 head?)",
            engine=NAME,
            source=(
                EAGLE3_MODEL,
                src("vllm/model_executor/models/utils.py", "AutoWeightsLoader.load_weights"),
            ),
            dropped=bias,
        )


def _shape_basis(run: EngineRun) -> str:
    r = run.resolved
    return ", ".join(
        f"{k} {r[k].show()}" for k in ("H", "nh", "nkv", "hd", "I", "k", "Ht") if k in r
    )


# --------------------------------------------------------------------------- f. sharing and TP


@steps.add(
    "f",
    "Embedding / head sharing and TP",
    sources=(SHARE_EMBED, SHARE_HEAD, VOCAB_PARALLEL, DRAFT_TP, LOGITS),
    codes=(
        "embed.width_mismatch",
        "lm_head.missing",
        "tp.vocab_indivisible",
        "tp.heads_indivisible",
        "draft_tp.invalid",
    ),  # fmt: skip
)
def step_sharing(run: EngineRun) -> Iterable[Finding]:
    """After loading, the proposer shares the target's embedding when the draft has none and the
    widths match (a draft embedding is kept unless ``torch.equal`` to the target's, per rank), and
    the target's ``lm_head`` when the draft has none; with pipeline parallelism the embedding is
    never shared. ``VocabParallelEmbedding`` pads vocabularies to a multiple of 64 and splits them
    over TP: the padded size must divide. The draft's TP must be 1 or the target's."""
    ctx = run.ctx
    d, t = ctx.draft, ctx.target
    H = run.get("H")
    Vd = run.get("Vd")
    V_draft = run.get("V")
    if t.V is None or t.H is None:
        return
    if not d.has_embed and ctx.draft_ck.tensors and H != t.H:
        yield finding(
            "embed.width_mismatch",
            f"draft has no embed_tokens and its hidden size {H} differs from the target's {t.H}: vLLM "
            "refuses to share the target's embedding and keeps the draft's uninitialised one — it drafts "
            f"from garbage; ship the draft's own embed_tokens [{V_draft}, {H}]",
            engine=NAME,
            source=SHARE_EMBED,
            H=H,
            target_hidden=t.H,
        )
    if not d.has_lm_head and ctx.draft_ck.tensors and Vd is not None and Vd != t.V:
        yield finding(
            "lm_head.missing",
            f"no lm_head and draft_vocab_size {Vd} != {t.V}: vLLM shares the target's [{t.V}, {t.H}] head, "
            "whose logits do not fit the draft's d2t map (compute_logits fails); ship the draft's lm_head",
            engine=NAME,
            source=(SHARE_HEAD, LOGITS),
            Vd=Vd,
            V=t.V,
        )
    for tp in ctx.tps:
        dtp = ctx.draft_tp_for(tp)
        if dtp not in (1, tp):
            yield finding(
                "draft_tp.invalid",
                f"draft_tensor_parallel_size {dtp} must be 1 or the target TP {tp}",
                engine=NAME,
                tp=tp,
                source=DRAFT_TP,
                draft_tp=dtp,
            )
            continue
        items = [("target embedding", t.V, tp)]
        if d.has_embed or H != t.H:
            items.append(("draft embedding", V_draft, dtp))
        if Vd:
            items.append(("draft lm_head", Vd, dtp))
        for what, v, n in items:
            if v and pad64(v) % n:
                yield finding(
                    "tp.vocab_indivisible",
                    f"{what}: padded vocab {pad64(v)} (vocab {v} padded to 64) is not divisible by TP {n}; "
                    "pick another TP",
                    engine=NAME,
                    tp=tp,
                    source=VOCAB_PARALLEL,
                    what=what,
                    vocab=v,
                    padded=pad64(v),
                    tp_size=n,
                )
        for what, nh, nkv, n in (
            ("target", t.nh, None if t.mla else t.nkv, tp),
            ("draft", run.get("nh"), run.get("nkv"), dtp),
        ):
            if not heads_ok(nh, nkv, n):
                yield finding(
                    "tp.heads_indivisible",
                    f"{what} attention heads {nh} / KV heads {nkv} do not split over TP {n}",
                    engine=NAME,
                    tp=tp,
                    source=src("vllm/model_executor/models/llama.py", "LlamaAttention.__init__"),
                    what=what,
                    heads=nh,
                    kv_heads=nkv,
                    tp_size=n,
                )
        run.sharing.append(_sharing(run, tp, dtp))


def _sharing(run: EngineRun, tp: int, dtp: int):
    ctx = run.ctx
    d, t = ctx.draft, ctx.target
    H = run.get("H")
    vd = run.get("V") or t.V
    rows_t, rows_d = split_rows(t.V, tp), split_rows(vd, dtp)
    shapes = (
        (rows_t, t.H) if rows_t else None,
        (rows_d, H) if rows_d else None,
        (pad64(vd), H),
    )
    note = ""
    if d.has_embed:
        verdict = "own"
        note = (
            "draft ships embed_tokens: vLLM shares only if torch.equal per rank (ranks may disagree, "
            "vLLM #50158); drop it if byte-identical to the target's"
        )
    else:
        verdict = "share" if H == t.H else "error"
    head = "own" if d.has_lm_head else ("share" if run.get("Vd") == t.V else "none")
    rows = {"share": rows_t or 0, "own": rows_d or 0}.get(verdict, 0)
    width = t.H if verdict == "share" else H
    return sharing_row(ctx, NAME, tp, shapes, verdict, head, rows, dtp, width or 0, note)


# --------------------------------------------------------------------------- g. positions


@steps.add("g", "Positions", sources=(MAXPOS,), codes=("maxpos.short",))
def step_positions(run: EngineRun) -> Iterable[Finding]:
    """A draft whose ``max_position_embeddings`` is below the target's ``max_model_len`` has it
    raised to that length (its rotary cache is resized) when every RoPE type it uses only sizes a
    cache (default, linear, llama3, ntk, proportional) — nothing to do; with another RoPE type
    (yarn, dynamic, longrope …) vLLM limits the serving length to the draft's instead."""
    ctx = run.ctx
    maxpos = run.get("max_position_embeddings")
    want = ctx.max_model_len or ctx.target.max_position_embeddings
    if maxpos is None or want is None or maxpos >= want:
        return
    rope = run.config.get("rope_parameters") or run.config.get("rope_scaling") or {}
    rope_type = (
        (rope.get("rope_type") or rope.get("type") or "default")
        if isinstance(rope, dict)
        else "default"
    )
    if rope_type not in CACHE_ONLY_ROPE_TYPES:
        yield finding(
            "maxpos.short",
            f"draft max_position_embeddings {maxpos} < serving length {want} with rope_type {rope_type!r}: "
            f"vLLM does not resize that rotary cache and limits max_model_len to the draft's {maxpos}",
            severity="warning",
            engine=NAME,
            source=MAXPOS,
            draft=maxpos,
            serving=want,
            rope_type=rope_type,
        )
        return
    yield finding(
        "maxpos.short",
        f"draft max_position_embeddings {maxpos} ({run.resolved['max_position_embeddings'].origin}) < "
        f"serving length {want}: vLLM raises it to the target's max_model_len automatically",
        severity="info",
        engine=NAME,
        source=MAXPOS,
        draft=maxpos,
        serving=want,
    )


SECTIONS = (
    Section(
        "target-config",
        "Target config and wrapped targets",
        "vLLM resolves the target's config with `get_config` and takes the language model's config "
        "with `get_hf_text_config`: for a multimodal or VL wrapper (MiniMax-M3 `minimax_m3_vl`, "
        "Qwen3-VL) that is the `text_config` sub-config, so the target's hidden size, vocabulary and "
        "layer count come from there, and the aux hidden states are captured by its language model "
        "(`SupportsEagle3.set_aux_hidden_state_layers` goes through `get_language_model()`).",
        (
            src("vllm/transformers_utils/config.py", "get_config / get_hf_text_config"),
            src(
                "vllm/model_executor/models/interfaces.py",
                "SupportsEagle3.set_aux_hidden_state_layers",
            ),
        ),
    ),
    Section(
        "vocabulary-maps",
        "Vocabulary maps",
        "`d2t` holds offsets: target id = draft id + `d2t[draft id]`. `Eagle3LlamaForCausalLM` "
        "allocates `draft_id_to_target_id` (zeros) only when `draft_vocab_size` differs from the "
        "target's vocabulary, loads `d2t` into it and drops `t2d`; `compute_logits` scatters the "
        "draft's logits to `arange(Vd) + draft_id_to_target_id`. A missing `d2t` therefore maps draft "
        "ids onto target ids 0..Vd-1 without an error, and a `d2t` with equal vocabularies has no "
        "parameter to load into.",
        (EAGLE3_CAUSAL, EAGLE3_LOAD, LOGITS),
    ),
    Section(
        "hf-overrides",
        "--hf-overrides placement",
        "`ModelConfig.__post_init__` splits the JSON: non-dict values are passed to `get_config` and "
        "set on the TOP-LEVEL config; each dict value goes through `_apply_dict_overrides`, which "
        "merges it recursively into an existing sub-config of that name (`text_config`) and otherwise "
        "replaces the attribute whole. On a wrapper, a flat key therefore lands on the outer config, "
        "where the language model never reads it — text-model keys must sit under `text_config`. "
        "Dict overrides apply to the target's config only, never to the draft's. Engine flags such "
        "as `tensor_parallel_size` inside `--hf-overrides` are config attributes nobody reads.",
        (
            src(
                "vllm/config/model.py",
                "ModelConfig.__post_init__ / _apply_dict_overrides",
                "vLLM PR #25727",
            ),
            src("vllm/transformers_utils/config.py", "get_config"),
        ),
    ),
    Section(
        "bench-serve",
        "vllm bench serve results",
        "`--save-result` writes one JSON document per run: the request rate is saved as the string "
        '`"inf"` when unbounded, `max_concurrency` as null when unset, and each `--metadata KEY=VALUE` '
        "as a top-level key (the dataset name and random lengths are not saved otherwise); "
        "`--result-filename` names the file and `--label` the run.",
        (src("vllm/benchmarks/serve.py", "main / add_cli_args (--save-result, --metadata)"),),
    ),
    Section(
        "removed-flags",
        "Flags removed from the 0.33.0 CLI",
        "`--rope-scaling` and `--rope-theta` are no longer engine arguments in 0.33.0 (set rope "
        "parameters through `--hf-overrides`); `EnableDisableAction` switches accept a hidden "
        "`--no-<flag>` form; `-sc` is short for `--speculative-config`.",
        (src("vllm/engine/arg_utils.py", "EngineArgs.add_cli_args"),),
    ),
)

MODEL = EngineModel(
    name=NAME,
    title="vLLM",
    repo=REPO,
    version=VERSION,
    steps=tuple(steps.items),
    notes=(
        "The registry and SupportsEagle3 data are extracted from the vllm 0.33.0 wheel by "
        "`scripts/build_engine_data.py vllm` (ast, no import); transformers' config defaults by "
        f"`scripts/build_engine_data.py transformers` at {TRANSFORMERS}, the release the conformance "
        "environment installs beside vLLM.",
        "vLLM 0.33.0 runs the V2 model runner by default; this model follows it. With "
        "`VLLM_USE_V2_MODEL_RUNNER=0` the V1 runner also reads `eagle_config.eagle_aux_hidden_state_layer_ids` "
        "and refuses to share an embedding of another width.",
        "`tests/conformance/` checks this model against vLLM's own config classes, draft model and "
        "`load_weights` (on the meta device).",
    ),
    sections=SECTIONS,
    data=(DATA, f"transformers-{TRANSFORMERS}-defaults.json"),
)
