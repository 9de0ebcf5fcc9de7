"""tokenspeed's EAGLE3 load path at a pinned commit of lightseekorg/tokenspeed, step by step.

tokenspeed is not on PyPI, so this model is checked against data extracted from the pinned source
snapshot (``scripts/build_engine_data.py tokenspeed``): the architectures its registry exports,
which target classes hand the draft their aux hidden states, which build their embedding
replicated, and the config classes it builds for a ``model_type``. Paths are relative to the
repository root (``python/tokenspeed/...``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from recipecli.codes import finding
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

NAME = "tokenspeed"
COMMIT = "f4d8ec6e039c028c7ee71317ccfb84e56ae2b45c"
VERSION = COMMIT[:12]
REPO = "lightseekorg/tokenspeed"
DATA = f"tokenspeed-{VERSION}.json"
#: transformers release tokenspeed pins at that commit (python/pyproject.toml)
TRANSFORMERS = "5.12.0"

P = "python/tokenspeed/runtime/"


def src(file: str, function: str, *refs: str) -> Source:
    return Source(REPO, VERSION, P + file, function, tuple(refs))


GET_CONFIG = src("utils/hf_transformers_utils.py", "get_config")
MODEL_CONFIG = src("configs/model_config.py", "ModelConfig.__init__")
REGISTRY = src("models/registry.py", "ModelRegistry.resolve_model_cls / _raise_for_unsupported")
DRAFT_INIT = src("models/llama_eagle3.py", "LlamaForCausalLMEagle3.__init__")
DRAFT_MODEL = src("models/llama_eagle3.py", "LlamaModel.__init__ / forward")
DRAFT_LOAD = src("models/llama_eagle3.py", "LlamaForCausalLMEagle3.load_weights")
SET_EMBED = src(
    "models/llama_eagle3.py",
    "LlamaForCausalLMEagle3.set_embed_and_head",
    "lightseekorg/tokenspeed PR #837",
)
MLA_SET_EMBED = src(
    "models/deepseek_v3.py",
    "Eagle3DeepseekV2ForCausalLM.set_embed_and_head",
    "lightseekorg/tokenspeed PR #958",
    "lightseekorg/tokenspeed #913",
)
WIRE = src(
    "execution/factory.py",
    "_wire_draft_to_target_model / _eagle_aux_layer_ids",
    "lightseekorg/tokenspeed PR #526",
)
CAPTURE = src("models/base/causal_lm.py", "BaseCausalLM.set_eagle3_layers_to_capture")
CAPTURE_LOOP = src(
    "models/base/transformer_model.py",
    "BaseTransformerModel.forward",
    "lightseekorg/tokenspeed PR #526",
)
LOGITS = src(
    "layers/logits_processor.py", "LogitsProcessor.forward (hidden states for the drafter)"
)
VOCAB = src(
    "layers/vocab_parallel_embedding.py", "VocabParallelEmbedding.__init__ (pad_vocab_size, divide)"
)
HEADS = src("models/utils.py", "validate_attention_partition")
CONTEXT = src("configs/model_config.py", "ModelConfig.__init__ (context_length check)")

steps = StepList()


def _data() -> dict[str, Any]:
    return dict(load_data(DATA))


# --------------------------------------------------------------------------- a. config


@steps.add(
    "a",
    "Draft config resolution",
    sources=(GET_CONFIG, MODEL_CONFIG, DRAFT_INIT),
    codes=(
        "config.model_type",
        "config.null_value",
        "config.invalid",
        "draft.layers",
        "config.aux_ids_null",
    ),
)
def step_config(run: EngineRun) -> Iterable[Finding]:
    """``get_config`` reads the draft's ``config.json`` and builds tokenspeed's own config class for
    the model types it registers (``qwen2``, ``qwen3``, … — e.g. its ``Qwen3Config`` defaults
    ``head_dim`` to 128), else transformers' class through ``AutoConfig`` (``LlamaConfig`` for
    ``llama``); a key the checkpoint lacks takes that class's default. The same
    ``--hf-overrides`` are applied to the draft's config as to the target's. The Llama draft then
    requires ``num_hidden_layers == 1`` (a missing value is ``LlamaConfig``'s 32) and sizes ``fc``
    for k = ``len(eagle_aux_hidden_state_layer_ids)`` at the top level, else 3 — the ids under
    ``eagle_config`` are not counted. It reads ``norm_before_fc``, ``fc_norm`` and ``norm_output``
    from the top level and never reads ``norm_before_residual``; ``target_hidden_size`` is ignored
    (``fc`` is [H, k·H])."""
    ctx = run.ctx
    d = ctx.draft
    cfg = ctx.draft_ck.config
    data = _data()
    model_type = str(cfg.get("model_type") or "")
    own = data.get("config_classes", {})
    if not model_type and "llama" not in own:
        yield missing_model_type(run, GET_CONFIG)
        run.stop = "config"
        return
    run.set("model_type", model_type, "config: model_type")
    try:
        refused = resolve_geometry(
            run,
            model_type,
            "get_config",
            transformers=TRANSFORMERS,
            source=GET_CONFIG,
            overrides=own,
        )
    except KeyError:
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
    for flag in ("norm_before_fc", "fc_norm", "norm_output"):
        if flag in cfg:
            run.set(flag, bool(cfg[flag]), f"config: {flag}")
        else:
            run.set(flag, False, "default (false)")
    run.set("norm_before_residual", False, "not read by tokenspeed (residual = raw hidden states)")
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


def _nested(cfg: Any) -> list[int] | None:
    ec = cfg.get("eagle_config")
    if isinstance(ec, dict) and ec.get("eagle_aux_hidden_state_layer_ids"):
        return list(ec["eagle_aux_hidden_state_layer_ids"])
    return None


def _nested_or_top(cfg: Any) -> list[int] | None:
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


def captured_layers(cfg: Any, L: int, *, final_residual: bool) -> tuple[list[int], list[int], str]:
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
    out = set()
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
    ctx = run.ctx
    d, L = ctx.draft, ctx.target.L
    if L is None:
        return
    cfg = ctx.draft_ck.config
    layers, ids, where = captured_layers(
        cfg,
        L,
        final_residual=bool(
            run.resolved.get("target_final_residual") and run.get("target_final_residual")
        ),
    )
    run.set("aux_layers", layers, where)
    top = cfg.get("eagle_aux_hidden_state_layer_ids")
    if top and cfg.get("eagle_config") is not None and list(top) != list(ids):
        yield finding(
            "aux.top_level_ignored",
            f"the draft config has eagle_config, so tokenspeed captures {('the ids ' + str(ids)) if ids else 'its default layers'} "
            f"and ignores the top-level ids {list(top)} (which size fc): make both lists agree",
            severity="error" if len(top) != len(ids or default_aux_layers(L)) else "warning",
            engine=NAME,
            source=WIRE,
            top_level=list(top),
            nested=ids,
        )
    if not ids:
        trained = trained_layers(d, L)
        yield finding(
            "aux.default",
            f"draft names no aux layer ids: tokenspeed captures the target's default hidden states {layers}"
            + (
                "; the draft's format was trained on that default"
                if trained == layers
                else "; if the draft was trained on others acceptance collapses silently — add eagle_aux_hidden_state_layer_ids"
            ),
            severity="info" if trained == layers else "warning",
            engine=NAME,
            source=(WIRE, CAPTURE),
            layers=layers,
            L=L,
        )
    bad = [
        j
        for j in ids
        if not (
            -1 <= j <= L - 2
            or (
                j == L
                and run.resolved.get("target_final_residual")
                and run.get("target_final_residual")
            )
        )
    ]
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
        yield finding(
            "aux.mismatch",
            f"tokenspeed captures hidden states {layers} but the draft's format ({d.format}) writes ids for "
            f"{trained}: if it was trained that way it drafts from the wrong layers; write the ids as layer-output "
            "indices (tokenspeed adds 1)",
            engine=NAME,
            source=(CAPTURE, "vLLM PR #43671", "SGLang PR #32334"),
            captured=layers,
            trained_on=trained,
        )


# --------------------------------------------------------------------------- e. tensors


def allocated(run: EngineRun) -> dict[str, tuple[int, ...]]:
    """Checkpoint tensor name -> shape of every weight tokenspeed's ``LlamaForCausalLMEagle3``
    loads (full, unsharded shapes; ``layers.0.`` names load as ``midlayer.``).

    q [nh*hd, 2H], k/v [nkv*hd, 2H] (+ biases with ``attention_bias``), o [H, nh*hd], gate/up
    [I, H], down [H, I], input_layernorm / hidden_norm / post_attention_layernorm [H], ``fc``
    [H, k*H], ``input_norm`` [k*H] (``norm_before_fc``), ``fc_norm.i`` [H] (``fc_norm``), ``norm``
    [H], ``lm_head`` [Vd, H] (unless borrowed or tied), ``embed_tokens`` [V, H] (replaced by the
    target's when shared).
    """
    d = run.ctx.draft
    g = run.get
    H, nh, nkv, hd, inter = g("H"), g("nh"), g("nkv"), g("hd"), g("I")
    pre = d.tensor_prefix + d.layer_prefix
    out: dict[str, tuple[int, ...]] = {
        pre + "self_attn.q_proj.weight": (nh * hd, 2 * H),
        pre + "self_attn.k_proj.weight": (nkv * hd, 2 * H),
        pre + "self_attn.v_proj.weight": (nkv * hd, 2 * H),
        pre + "self_attn.o_proj.weight": (H, nh * hd),
        pre + "mlp.gate_proj.weight": (inter, H),
        pre + "mlp.up_proj.weight": (inter, H),
        pre + "mlp.down_proj.weight": (H, inter),
        pre + "input_layernorm.weight": (H,),
        pre + "hidden_norm.weight": (H,),
        pre + "post_attention_layernorm.weight": (H,),
    }
    if bool(run.ctx.draft_ck.config.get("attention_bias", False)):
        out[pre + "self_attn.q_proj.bias"] = (nh * hd,)
        out[pre + "self_attn.k_proj.bias"] = (nkv * hd,)
        out[pre + "self_attn.v_proj.bias"] = (nkv * hd,)
    p = d.tensor_prefix
    out[p + "fc.weight"] = (H, g("fc_in"))
    if g("norm_before_fc"):
        out[p + "input_norm.weight"] = (g("fc_in"),)
    if g("fc_norm"):
        for i in range(g("k")):
            out[f"{p}fc_norm.{i}.weight"] = (H,)
    out[p + "norm.weight"] = (H,)
    return out


@steps.add(
    "e",
    "Tensors",
    sources=(DRAFT_INIT, DRAFT_MODEL, DRAFT_LOAD),
    codes=(
        "tensor.missing",
        "tensor.unchecked",
        "tensor.unexpected",
        "shape.*",
        "hidden.tokenspeed_target_hidden",
        "hidden.mismatch",
        "norm.residual_unsupported",
        "vocab.d2t_missing",
        "lm_head.missing",
        "norm.qk_dropped",
        "tensor.dropped",
    ),  # fmt: skip
)
def step_tensors(run: EngineRun) -> Iterable[Finding]:
    """``load_weights`` maps ``layers.0.`` to ``midlayer.``, stacks q/k/v and gate/up, turns
    ``d2t`` into absolute ``hot_token_id`` (``d2t + arange``) and drops ``t2d``. Unknown names are
    skipped silently and missing weights are not detected (they keep uninitialised memory); a
    shape mismatch is a bare ``AssertionError`` in the layer's weight loader. ``fc`` is [H, k·H]
    whatever ``target_hidden_size`` says, and ``norm_before_residual`` is never read."""
    ctx = run.ctx
    d, t = ctx.draft, ctx.target
    cfg = ctx.draft_ck.config
    tensors = ctx.draft_ck.tensors
    H = run.get("H")
    if cfg.get("norm_before_residual") is True or (
        isinstance(cfg.get("eagle_config"), dict)
        and cfg["eagle_config"].get("norm_before_residual") is True
    ):
        yield finding(
            "norm.residual_unsupported",
            "norm_before_residual is true but tokenspeed never reads it (its residual is the raw hidden "
            "state): the draft runs unlike it was trained; serve it on vLLM or retrain with it false",
            engine=NAME,
            source=DRAFT_MODEL,
            source_key=d.sources.get("norm_before_residual"),
        )
    if d.Ht is not None and H is not None and d.Ht != H and d.attention != "MLA":
        yield finding(
            "hidden.tokenspeed_target_hidden",
            f"tokenspeed builds fc as [H, k*H] and ignores target_hidden_size, so a draft with H={H} != "
            f"target_hidden_size={d.Ht} cannot load its fc (shape assertion); serve it on vLLM",
            engine=NAME,
            source=DRAFT_MODEL,
            H=H,
            Ht=d.Ht,
        )
    if t.H is not None and d.Ht is not None and t.H != d.Ht:
        yield finding(
            "hidden.mismatch",
            f"the draft's fc expects target hidden states of width {d.Ht} but the target's text hidden_size is "
            f"{t.H}: this draft was trained for another target",
            engine=NAME,
            source=DRAFT_MODEL,
            draft_target_hidden=d.Ht,
            target_hidden=t.H,
        )
    if not tensors:
        yield from no_tensor_findings(run, DRAFT_LOAD)
        return
    if d.attention == "MLA":
        return  # the MLA draft's attention tensors follow DeepseekV3's layout; not modelled tensor by tensor
    want = allocated(run)
    missing = [n for n in want if n not in tensors]
    if missing:
        yield finding(
            "tensor.missing",
            f"draft lacks {len(missing)} weight(s) tokenspeed allocates: {', '.join(missing[:6])}"
            + (" …" if len(missing) > 6 else "")
            + "; load_weights does not notice, so they keep uninitialised memory; re-export the draft",
            engine=NAME,
            source=DRAFT_LOAD,
            missing=missing,
        )
    shapes = {**want, **optional_shapes(d, H, run.get("V"), run.get("Vd"))}
    if d.Ht != H:
        shapes.pop(d.tensor("fc"), None)  # said above (hidden.tokenspeed_target_hidden)
    yield from shape_findings(run, shapes, NAME, "tokenspeed", (DRAFT_MODEL, DRAFT_LOAD))
    extra = unexpected_tensors(ctx)
    bias = [n for n in tensors if n.endswith("fc.bias")]
    if bias:
        yield finding(
            "tensor.dropped",
            f"the draft ships {bias[0]}, but tokenspeed's fc is ColumnParallelLinear(bias=False) and "
            "load_weights skips unknown names silently: the draft runs without a trained weight",
            engine=NAME,
            source=(DRAFT_MODEL, DRAFT_LOAD),
            dropped=bias,
        )
    qk = [n for n in extra if n.endswith(("self_attn.q_norm.weight", "self_attn.k_norm.weight"))]
    if qk:
        yield finding(
            "norm.qk_dropped",
            f"the draft has Qwen3-style QK norms ({', '.join(qk)}) but tokenspeed's only Llama EAGLE3 "
            "draft class has none: load_weights skips them silently and the draft runs without its "
            "trained q/k norms; serve it on vLLM (Eagle3Qwen3ForCausalLM)",
            engine=NAME,
            source=DRAFT_LOAD,
            dropped=qk,
        )
        extra = [n for n in extra if n not in qk]
    if extra:
        shown = ", ".join(extra[:5]) + (" …" if len(extra) > 5 else "")
        yield finding(
            "tensor.unexpected",
            f"tokenspeed silently skips tensor name(s) {shown}; check they are not weights it needs under another name",
            severity="warning",
            engine=NAME,
            source=DRAFT_LOAD,
            unexpected=extra,
        )
    V, Vd = t.V, run.get("Vd")
    if V is not None and Vd is not None and Vd < V and "d2t" not in tensors:
        yield finding(
            "vocab.d2t_missing",
            f"draft_vocab_size {Vd} < vocab {V} but the draft ships no d2t: tokenspeed uses draft ids as "
            "target ids unchanged — it serves and accepts almost nothing; re-export with the d2t map",
            engine=NAME,
            source=DRAFT_LOAD,
            Vd=Vd,
            V=V,
        )
    if not d.has_lm_head and d.draft_vocab_size_declared and not d.tie_word_embeddings:
        yield finding(
            "lm_head.missing",
            "no lm_head while draft_vocab_size is set: tokenspeed borrows the target head only when "
            "draft_vocab_size is absent, so the head keeps uninitialised memory (accept length 1.0); ship "
            "lm_head, or drop draft_vocab_size when it equals the vocab",
            engine=NAME,
            source=(DRAFT_INIT, SET_EMBED, "SGLang PR #27908"),
            Vd=d.Vd,
        )


# --------------------------------------------------------------------------- f. sharing and TP


@steps.add(
    "f",
    "Embedding / head sharing and TP",
    sources=(SET_EMBED, MLA_SET_EMBED, VOCAB, HEADS),
    codes=("embed.share_error", "embed.tied_stale", "tp.vocab_indivisible", "tp.heads_indivisible"),
)
def step_sharing(run: EngineRun) -> Iterable[Finding]:
    """``set_embed_and_head`` shares nothing when ``target_hidden_size`` is set and differs from
    ``hidden_size``. Otherwise the Llama draft shares the target's embedding when its per-rank
    shape equals the draft's sharded one [pad64(V)/TP, H], rebuilds its embedding replicated when
    the target's is replicated [pad64(V), H], and raises ``Cannot share target embed of shape …``
    otherwise; the MLA draft (replicated) shares only on an exact match, else keeps its own.
    The head is shared only when the draft is untied and declares no ``draft_vocab_size``.
    ``VocabParallelEmbedding`` pads to 64 and the padded rows must divide by the attention TP;
    heads and KV heads must split too (``validate_attention_partition``)."""
    ctx = run.ctx
    d, t = ctx.draft, ctx.target
    if t.V is None or t.H is None:
        return
    H = run.get("H")
    vdraft = run.get("V") or t.V
    replicated_target = (
        run.get("target_embed_replicated")
        if "target_embed_replicated" in run.resolved
        else t.tokenspeed_embed_replicated
    )
    for tp in ctx.tps:
        for what, v, n in (("target embedding", t.V, 1 if replicated_target else tp),
                           ("draft embedding", vdraft, 1 if d.attention == "MLA" else tp),
                           ("draft lm_head", run.get("Vd"), tp)):  # fmt: skip
            if v and pad64(v) % n:
                yield finding(
                    "tp.vocab_indivisible",
                    f"{what}: padded vocab {pad64(v)} (vocab {v} padded to 64) is not divisible by TP {n}: "
                    f"'{pad64(v)} is not divisible by {n}'; pick another TP",
                    engine=NAME,
                    tp=tp,
                    source=VOCAB,
                    what=what,
                    vocab=v,
                    padded=pad64(v),
                    tp_size=n,
                )
        for what, nh, nkv in (
            ("target", t.nh, None if t.mla else t.nkv),
            ("draft", run.get("nh"), run.get("nkv")),
        ):
            if not heads_ok(nh, nkv, tp):
                yield finding(
                    "tp.heads_indivisible",
                    f"{what} attention heads {nh} / KV heads {nkv} do not split over TP {tp} "
                    "(validate_attention_partition raises)",
                    engine=NAME,
                    tp=tp,
                    source=HEADS,
                    what=what,
                    heads=nh,
                    kv_heads=nkv,
                    tp_size=tp,
                )
        row, found = _sharing(run, tp, H, vdraft, bool(replicated_target))
        run.sharing.append(row)
        yield from found


def _sharing(run: EngineRun, tp: int, H: int, vdraft: int, replicated_target: bool):
    ctx = run.ctx
    d, t = ctx.draft, ctx.target
    findings: list[Finding] = []
    target_rows = pad64(t.V) if replicated_target else split_rows(t.V, tp)
    target_shape = (target_rows, t.H) if target_rows else None
    mla = d.attention == "MLA"
    rows_d = None if mla else split_rows(vdraft, tp)
    sharded = (rows_d, H) if rows_d else None
    replicated = (pad64(vdraft), H)
    head_shared = not d.tie_word_embeddings and not d.draft_vocab_size_declared
    head = (
        "share"
        if head_shared
        else ("own" if d.has_lm_head else ("tied" if d.tie_word_embeddings else "none"))
    )
    note = ""
    if d.target_hidden_size_declared and d.Ht != H:
        verdict = "own" if d.has_embed else "none"
        head = "own" if d.has_lm_head else "none"
        note = "target_hidden_size != hidden_size: set_embed_and_head returns early, shares nothing"
    elif mla:
        verdict = "share" if target_shape == replicated else ("own" if d.has_embed else "error")
        if verdict == "own":
            note = "MLA draft keeps its own embed_tokens (shapes differ; tokenspeed PR #958)"
    elif target_shape == sharded:
        verdict = "share"
    elif target_shape == replicated:
        verdict = "share-replicated"
        note = "draft embedding rebuilt replicated to match the target (tokenspeed PR #837)"
    else:
        verdict = "error"
    if verdict == "error":
        a, s = target_shape or ("?", t.H), sharded or ("?", H)
        text = (
            f"Cannot share target embed of shape ({a[0]}, {a[1]}): draft expects ({s[0]}, {s[1]}) (sharded) "
            f"or ({replicated[0]}, {replicated[1]}) (replicated)."
            if not mla
            else f"EAGLE3 draft cannot share the target embedding (target {tuple(a)} vs draft {replicated}) and "
            "the draft checkpoint provided no embed_tokens weight"
        )
        findings.append(
            finding(
                "embed.share_error",
                f"tokenspeed set_embed_and_head raises at TP {tp}: {text} Make the draft's vocab_size/hidden_size "
                "match the target",
                engine=NAME,
                tp=tp,
                source=MLA_SET_EMBED if mla else SET_EMBED,
                target_shape=list(a),
                draft_sharded_shape=list(s),
                draft_replicated_shape=list(replicated),
            )
        )
    if verdict == "share-replicated" and d.tie_word_embeddings:
        findings.append(
            finding(
                "embed.tied_stale",
                f"tie_word_embeddings with a rebuilt (replicated) embedding at TP {tp}: the tied head keeps pointing "
                "at the old sharded weight (open review on tokenspeed PR #837); set tie_word_embeddings false",
                engine=NAME,
                tp=tp,
                source=SET_EMBED,
            )
        )
    if verdict in ("share", "share-replicated"):
        embed_rows = target_rows or 0
    elif verdict == "own":
        embed_rows = replicated[0] if mla else (rows_d or 0)
    else:
        embed_rows = 0
    width = t.H if verdict.startswith("share") else H
    row = sharing_row(ctx, NAME, tp, (target_shape, sharded, replicated), verdict, head, embed_rows,
                      1 if mla else tp, width or 0, note)  # fmt: skip
    return row, findings


# --------------------------------------------------------------------------- g. positions


@steps.add("g", "Positions", sources=(CONTEXT,), codes=("maxpos.short",))
def step_positions(run: EngineRun) -> Iterable[Finding]:
    """``ModelConfig`` derives the draft's context length from its config (``max_position_embeddings``
    and rope scaling) and refuses a ``--max-model-len`` above it (``User-specified context_length (X)
    is greater than the derived context_length (Y)``) unless
    ``TOKENSPEED_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1``; nothing raises it automatically. Without
    ``--max-model-len`` nothing compares the two and positions past the draft's rotary cache read
    out of range."""
    ctx = run.ctx
    maxpos = run.get("max_position_embeddings")
    want = ctx.max_model_len or ctx.target.max_position_embeddings
    if maxpos is None or want is None or maxpos >= want:
        return
    yield finding(
        "maxpos.short",
        f"draft max_position_embeddings {maxpos} ({run.resolved['max_position_embeddings'].origin}) < serving "
        f"length {want}: "
        + (
            f"tokenspeed refuses --max-model-len {want} ('User-specified context_length ({want}) is greater than "
            f"the derived context_length ({maxpos})')"
            if ctx.max_model_len
            else "tokenspeed does not raise it, so positions past it index the draft's rotary cache out of range"
        )
        + f"; set the draft's max_position_embeddings to {want}",
        severity="error" if ctx.max_model_len else "warning",
        engine=NAME,
        source=CONTEXT,
        draft=maxpos,
        serving=want,
    )


SECTIONS = (
    Section(
        "hf-overrides",
        "--hf-overrides placement",
        "`get_config` applies the `--hf-overrides` JSON with `text_config.update(...)`: flat keys, set on "
        "the TEXT config (for a wrapper such as MiniMax-M3 that is its `text_config`; for a plain "
        "config the config itself), with no recursion. The same overrides are applied to the draft's "
        "config (`_load_model_config(..., is_draft_worker=True)` passes the same server args), so a key "
        "meant for the target (`num_hidden_layers`, `vocab_size`, `hidden_size`) also rewrites the "
        'draft. A nested `{"text_config": {...}}` sets an attribute named `text_config` holding a '
        "dict: on a wrapper it is a silent no-op, on a plain config (every Llama EAGLE3 draft) "
        "`ModelConfig` then fails with `text_config must define num_attention_heads.`",
        (GET_CONFIG, MODEL_CONFIG, src("engine/event_loop.py", "EventLoop._load_model_config")),
    ),
    Section(
        "serve-flags",
        "tokenspeed serve flags for EAGLE3",
        "`--speculative-algorithm` takes EAGLE3, MTP, DFLASH or DSPARK; `--speculative-eagle-topk` "
        "accepts only 1; `--speculative-num-draft-tokens` defaults to `--speculative-num-steps` + 1; "
        "`--speculative-config` JSON is read for `method`, `model` and `num_speculative_tokens` only; "
        "`--eagle3-layers-to-capture` (comma-separated ids) overrides the draft config's ids; "
        "`--tensor-parallel-size`/`--tp` is an alias of `--attn-tp-size` (giving both is an error); "
        "there is no separate draft TP.",
        (src("utils/server_args.py", "ServerArgs.add_cli_args / resolve_speculative_decoding"),),
        aliases=("speculative-flags",),
    ),
)

MODEL = EngineModel(
    name=NAME,
    title="tokenspeed",
    repo=REPO,
    version=VERSION,
    steps=tuple(steps.items),
    notes=(
        f"Pinned at commit {COMMIT} of lightseekorg/tokenspeed (2026-08-22, the newest available).",
        "tokenspeed is not on PyPI, so there is no conformance run against its own code: this "
        "model is checked against data extracted from the pinned source snapshot by "
        "`scripts/build_engine_data.py tokenspeed` (the registry's `EntryClass` exports, its own "
        "config classes' defaults, and hand-read facts about each target class that the script "
        "verifies still hold at the commit).",
        f"transformers' config defaults come from {TRANSFORMERS}, the release tokenspeed pins.",
    ),
    sections=SECTIONS,
    data=(DATA, f"transformers-{TRANSFORMERS}-defaults.json"),
)
