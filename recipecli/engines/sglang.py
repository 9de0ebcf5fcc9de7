"""SGLang 0.5.23's EAGLE3 load path, step by step (the PyPI wheel's source).

Each step is a function of SGLang 0.5.23 that decides whether a target + EAGLE3 draft pair starts
and drafts what it was trained for. The registry (the architectures ``EntryClass`` exports, which
target classes have ``set_eagle3_layers_to_capture`` and which id rule each applies, the draft
architecture renames) is data extracted from the wheel by ``scripts/build_engine_data.py sglang``;
transformers' config defaults (5.19.0, the release SGLang 0.5.23 pins) by
``scripts/build_engine_data.py transformers``. Paths are relative to the repository root
(``python/sglang/srt/...``).

Where SGLang differs from the engines it shares ancestry with: aux ids are read only from the
draft's ``eagle_config`` (never the top-level list), the id shift depends on the target family,
a vocabulary TP does not divide is padded further instead of refused, the target's embedding is
swapped into the draft without a shape check, a draft without ``draft_vocab_size`` fails at
start-up, and a draft whose context length is shorter than the target's refuses to start.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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
    resolve_geometry,
    shape_findings,
    sharing_row,
    trained_layers,
    unexpected_tensors,
)
from recipecli.findings import Finding

NAME = "sglang"
VERSION = "v0.5.23"
REPO = "sgl-project/sglang"
DATA = "sglang-0.5.23.json"
#: transformers release SGLang 0.5.23 pins (its wheel's METADATA: transformers==5.19.0)
TRANSFORMERS = "5.19.0"

P = "python/sglang/srt/"


def src(file: str, function: str, *refs: str) -> Source:
    return Source(REPO, VERSION, P + file, function, tuple(refs))


MODEL_CONFIG = src("configs/model_config.py", "ModelConfig.__init__ / from_server_args")
GET_CONFIG = src("utils/hf_transformers/config.py", "get_config (model_override_args)")
TEXT_CONFIG = src("utils/hf_transformers/common.py", "get_hf_text_config")
DRAFT_RENAME = src("configs/model_config.py", "ModelConfig._config_draft_model")
REGISTRY = src("models/registry.py", "_ModelRegistry.resolve_model_cls / _raise_for_unsupported")
DRAFT_MODEL = src("models/llama_eagle3.py", "LlamaModel.__init__ / forward")
DRAFT_LAYER = src("models/llama_eagle3.py", "LlamaDecoderLayer.__init__ / forward")
DRAFT_INIT = src("models/llama_eagle3.py", "LlamaForCausalLMEagle3.__init__")
DRAFT_LOAD = src("models/llama_eagle3.py", "LlamaForCausalLMEagle3.load_weights")
MLA_DRAFT = src(
    "models/kimi_k25_eagle3.py", "Eagle3MLAModel.__init__ / Eagle3DeepseekV2ForCausalLM.__init__"
)
AUX_IDS = src(
    "model_executor/model_runner_components/spec_aux_hidden_state.py",
    "_resolve_eagle_aux_hidden_state",
)
AUX_SETUP = src(
    "model_executor/model_runner_components/attention_backend_setup.py",
    "configure_aux_hidden_state_capture",
)
CAPTURE = src("models/llama.py", "LlamaForCausalLM.set_eagle3_layers_to_capture")
CAPTURE_LOOP = src("models/llama.py", "LlamaModel.forward")
INIT_LM_HEAD = src("speculative/eagle_worker_v2.py", "EagleDraftWorker.init_lm_head")
ARCH_WIRING = src(
    "speculative/eagle_worker_v2.py", "EagleDraftWorker.init_lm_head", "SGLang #36528"
)
SET_EMBED = src("models/llama.py", "LlamaForCausalLM.set_embed / set_embed_and_head")
VOCAB = src(
    "layers/vocab_parallel_embedding.py",
    "VocabParallelEmbedding.__init__ (padding_size *= tp_size)",
)
HEADS = src("models/llama.py", "LlamaAttention.__init__")
CONTEXT = src(
    "configs/model_config.py",
    "ModelConfig._derive_context_length",
    "SGLang PR #9388",
    "SGLang #18220",
)
DRAFT_WORKER = src("speculative/eagle_worker_v2.py", "EagleDraftWorker.__init__ (context_length)")
CONTEXT_LEN = src("utils/hf_transformers/common.py", "get_context_length")

steps = StepList()


def _data() -> Mapping[str, Any]:
    return load_data(DATA)


def _eagle_config(cfg: Mapping[str, Any]) -> dict[str, Any]:
    ec = cfg.get("eagle_config")
    return dict(ec) if isinstance(ec, dict) else {}


def pad_vocab(v: int, tp: int) -> int:
    """Vocabulary rows after ``VocabParallelEmbedding``'s padding at TP ``tp``: a multiple of 64,
    or of 64 x TP when the 64-padded size does not divide by TP (so it always splits)."""
    pad = 64 if (-(-v // 64) * 64) % tp == 0 else 64 * tp
    return -(-v // pad) * pad


# --------------------------------------------------------------------------- a. config


@steps.add(
    "a",
    "Draft config resolution",
    sources=(MODEL_CONFIG, GET_CONFIG, DRAFT_MODEL, DRAFT_INIT, MLA_DRAFT),
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
    """``ModelConfig`` builds the draft's config with ``get_config`` (transformers' ``AutoConfig``:
    ``LlamaConfig`` for ``llama``; a key the checkpoint lacks takes that class's default), after
    applying the same ``--json-model-override-args`` as the target's. The Llama draft reads
    ``target_hidden_size`` when the key exists (a null one makes the ``fc`` width None × k), k =
    ``num_aux_hidden_states``, else the length of ``eagle_config.eagle_aux_hidden_state_layer_ids``,
    else 3 (the top-level id list is not counted), ``norm_before_fc`` from ``eagle_config`` first,
    ``fc_norm`` (or ``use_aux_norm``) and ``norm_output`` from the top level, a ``bias`` key for
    ``fc``; ``norm_before_residual`` is never read. It builds ``num_hidden_layers`` decoder layers
    (no one-layer limit) and reads ``config.draft_vocab_size`` as an attribute: a config without
    the key fails with ``AttributeError``, a null one borrows the target's head. The MLA draft
    (``Eagle3DeepseekV2ForCausalLM``) reads everything with defaults and requires one layer."""
    ctx = run.ctx
    d = ctx.draft
    cfg = ctx.draft_ck.config
    ec = _eagle_config(cfg)
    mla = d.attention == "MLA"
    model_type = str(cfg.get("model_type") or "")
    if not model_type:
        yield missing_model_type(run, GET_CONFIG)
        run.stop = "config"
        return
    run.set("model_type", model_type, "config: model_type")
    try:
        refused = resolve_geometry(
            run, model_type, "get_config (AutoConfig)", transformers=TRANSFORMERS, source=GET_CONFIG
        )
    except KeyError:
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
    # k
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
    # norm flags
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
            f"target architecture {t.architecture!r} is not in SGLang 0.5.23's model registry: it falls "
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
        entry = {**_data()["targets"][inner], **{"module": entry["module"]}}
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
    top = cfg.get("eagle_aux_hidden_state_layer_ids")
    if ids is None:
        same = trained is not None and sorted(set(trained)) == layers
        named_other = bool(top) and not same
        yield finding(
            "aux.default",
            (
                f"SGLang reads aux ids only from eagle_config and ignores the top-level ids {list(top)}: "
                f"it captures the target's default hidden states {layers}"
                if top
                else f"draft names no aux layer ids: SGLang captures the target's default hidden states {layers}"
            )
            + (
                "; the draft's format was trained on that default"
                if same
                else (
                    "; the draft was trained on others, so it drafts from the wrong layers — move the ids "
                    'into "eagle_config": {"eagle_aux_hidden_state_layer_ids": [...]}'
                    if named_other
                    else "; if the draft was trained on others acceptance collapses silently — add "
                    "eagle_config.eagle_aux_hidden_state_layer_ids"
                )
            ),
            severity="info" if same else ("error" if named_other else "warning"),
            engine=NAME,
            source=(AUX_IDS, CAPTURE),
            layers=layers,
            L=L,
            top_level=list(top) if top else None,
        )
    bad = [j for j, i in zip(ids or [], wanted, strict=False) if i not in ok]
    if bad:
        how = run.get("not_captured")
        effect = {
            "dropped": "the draft gets fewer states than its fc takes (a shape error, or fc skipped "
            "silently when the width happens to equal H)",
            "raises_forward": "the packed capture fails the first forward ('captured X of Y aux hidden states')",
            "raises_startup": "setting the capture flags indexes past the last layer (IndexError at start-up)",
        }[how]
        top_index = f"0..{L}" if final else f"0..{L - 1}"
        yield finding(
            "aux.out_of_range",
            f"aux ids {bad} are never captured by SGLang's {ctx.target.architecture} (capture indices must lie "
            f"in {top_index} after its rule: {RULE_TEXT[rule]}): {effect}; fix the ids",
            engine=NAME,
            source=(CAPTURE, CAPTURE_LOOP, run.resolved["not_captured"].origin),
            ids=ids,
            L=L,
            captured=layers,
        )
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
            f"SGLang's {ctx.target.architecture} captures hidden states {layers} ({RULE_TEXT[rule]}) but the "
            f"draft's format ({d.format}) writes ids for {trained}: if it was trained that way it drafts from the "
            "wrong layers; write the ids the way this target family reads them",
            engine=NAME,
            source=(CAPTURE, run.resolved["capture_rule"].origin, "SGLang PR #32334"),
            captured=layers,
            trained_on=trained,
        )


# --------------------------------------------------------------------------- e. tensors


def allocated(run: EngineRun) -> dict[str, tuple[int, ...]]:
    """Checkpoint tensor name -> shape of every weight SGLang's ``LlamaForCausalLMEagle3`` loads
    (full, unsharded shapes; ``midlayer.`` names load as ``layers.0.``).

    Layer 0: q [nh*hd, 2H], k/v [nkv*hd, 2H] (no q/k/v bias whatever ``attention_bias`` says),
    o [H, nh*hd] (+ o bias [H] with ``attention_bias``/``bias``), gate/up [I, H], down [H, I],
    input_layernorm / hidden_norm / post_attention_layernorm [H]; later layers (``layers.i.``
    naming only) take H inputs. ``fc`` [H, k*Ht] (+ bias [H] with ``bias``), ``input_norm``
    [k*Ht] (``norm_before_fc``), ``fc_norm.i`` [Ht] (``fc_norm``), ``norm`` [H].
    """
    d = run.ctx.draft
    g = run.get
    cfg = run.ctx.draft_ck.config
    H, nh, nkv, hd, inter = g("H"), g("nh"), g("nkv"), g("hd"), g("I")
    o_bias = bool(cfg.get("attention_bias", False) or cfg.get("bias", False))
    prefixes = [d.tensor_prefix + d.layer_prefix]
    if d.layer_prefix.endswith("layers.0."):
        base = d.tensor_prefix + d.layer_prefix[: -len("0.")]
        prefixes += [f"{base}{i}." for i in range(1, int(g("layers") or 1))]
    out: dict[str, tuple[int, ...]] = {}
    for n, pre in enumerate(prefixes):
        width = 2 * H if n == 0 else H
        out.update({
            pre + "self_attn.q_proj.weight": (nh * hd, width),
            pre + "self_attn.k_proj.weight": (nkv * hd, width),
            pre + "self_attn.v_proj.weight": (nkv * hd, width),
            pre + "self_attn.o_proj.weight": (H, nh * hd),
            pre + "mlp.gate_proj.weight": (inter, H),
            pre + "mlp.up_proj.weight": (inter, H),
            pre + "mlp.down_proj.weight": (H, inter),
            pre + "input_layernorm.weight": (H,),
            pre + "hidden_norm.weight": (H,),
            pre + "post_attention_layernorm.weight": (H,),
        })  # fmt: skip
        if o_bias:
            out[pre + "self_attn.o_proj.bias"] = (H,)
    p = d.tensor_prefix
    out[p + "fc.weight"] = (H, g("fc_in"))
    if g("fc_bias"):
        out[p + "fc.bias"] = (H,)
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
    sources=(DRAFT_LOAD, DRAFT_MODEL, DRAFT_LAYER),
    codes=(
        "tensor.missing",
        "tensor.unchecked",
        "tensor.unexpected",
        "shape.*",
        "hidden.mismatch",
        "vocab.d2t_missing",
        "lm_head.missing",
    ),  # fmt: skip
)
def step_tensors(run: EngineRun) -> Iterable[Finding]:
    """``load_weights`` renames ``midlayer`` to ``layers.0`` (and ``aux_norm_low/mid/high`` to
    ``fc_norm.0/1/2``), stacks q/k/v and gate/up, turns ``d2t`` into absolute ``hot_token_id``
    (``d2t + arange``) and drops ``t2d``. Unknown names are skipped silently and missing weights
    are not detected (they keep uninitialised memory); a shape mismatch fails the weight
    loader's assertion. The draft's q/k/v are built without bias, so q/k/v biases are skipped.
    A draft without ``d2t`` whose head is smaller than the vocabulary proposes draft ids as target
    ids."""
    ctx = run.ctx
    d, t = ctx.draft, ctx.target
    cfg = ctx.draft_ck.config
    tensors = ctx.draft_ck.tensors
    H, Ht = run.get("H"), run.get("Ht")
    if t.H is not None and Ht is not None and t.H != Ht:
        yield finding(
            "hidden.mismatch",
            f"SGLang feeds the draft's fc target hidden states of width {t.H} but sizes it for {Ht} per state "
            f"({run.resolved['Ht'].origin}): this draft was trained for another target",
            engine=NAME,
            source=DRAFT_MODEL,
            draft_target_hidden=Ht,
            target_hidden=t.H,
        )
    if not tensors:
        yield from no_tensor_findings(run, DRAFT_LOAD)
        return
    if d.attention != "MLA":
        want = allocated(run)
        missing = [n for n in want if n not in tensors]
        if missing:
            yield finding(
                "tensor.missing",
                f"draft lacks {len(missing)} weight(s) SGLang allocates: {', '.join(missing[:6])}"
                + (" …" if len(missing) > 6 else "")
                + "; load_weights does not notice, so they keep uninitialised memory; re-export the draft",
                engine=NAME,
                source=DRAFT_LOAD,
                missing=missing,
            )
        shapes = {**want, **optional_shapes(d, H, run.get("V"), run.get("Vd"))}
        if run.get("head_from_target") or d.tie_word_embeddings:
            shapes.pop(d.tensor("lm_head"), None)
        yield from shape_findings(
            run, shapes, NAME, "SGLang", (DRAFT_MODEL, DRAFT_LAYER, DRAFT_LOAD)
        )
        pre = d.tensor_prefix + d.layer_prefix
        extra = [n for n in unexpected_tensors(ctx)]
        extra += [
            pre + f"self_attn.{p}_proj.bias"
            for p in "qkv"
            if pre + f"self_attn.{p}_proj.bias" in tensors
        ]
        if not cfg.get("bias") and d.tensor("fc").replace("weight", "bias") in tensors:
            extra.append(d.tensor("fc").replace("weight", "bias"))
        if extra:
            shown = ", ".join(extra[:5]) + (" …" if len(extra) > 5 else "")
            yield finding(
                "tensor.unexpected",
                f"SGLang silently skips tensor name(s) {shown} (its draft has no parameter for them: q/k/v "
                'are built without bias, fc has a bias only with a "bias" config key); check they are not '
                "weights the draft needs",
                severity="warning",
                engine=NAME,
                source=(DRAFT_LOAD, DRAFT_LAYER),
                unexpected=extra,
            )
    V, Vd = t.V, run.get("Vd")
    if V is not None and Vd is not None and Vd < V and "d2t" not in tensors:
        yield finding(
            "vocab.d2t_missing",
            f"draft_vocab_size {Vd} < vocab {V} but the draft ships no d2t: SGLang keeps hot_token_id None "
            "and proposes draft ids as target ids — it serves and accepts almost nothing; re-export with "
            "the d2t map",
            engine=NAME,
            source=(DRAFT_LOAD, INIT_LM_HEAD, "NeMo Automodel PR #2447"),
            Vd=Vd,
            V=V,
        )
    declared = "draft_vocab_size" in cfg or d.attention == "MLA"  # else said in step a
    if (
        not d.has_lm_head
        and not d.tie_word_embeddings
        and not run.get("head_from_target")
        and declared
    ):
        yield finding(
            "lm_head.missing",
            "no lm_head while draft_vocab_size is set: SGLang borrows the target's head only when "
            "draft_vocab_size is null, so the head keeps uninitialised memory (accept length 1.0); ship "
            "lm_head, or set draft_vocab_size to null when it equals the vocab",
            engine=NAME,
            source=(DRAFT_INIT, INIT_LM_HEAD, "SGLang PR #27908"),
            Vd=Vd,
        )


# --------------------------------------------------------------------------- f. sharing and TP


@steps.add(
    "f",
    "Embedding / head sharing and TP",
    sources=(INIT_LM_HEAD, SET_EMBED, VOCAB, HEADS),
    codes=("embed.width_mismatch", "embed.layout_mismatch", "tp.heads_indivisible"),
)
def step_sharing(run: EngineRun) -> Iterable[Finding]:
    """``init_lm_head`` calls ``set_embed_and_head`` (target embedding and head) when the draft
    borrows the head (``draft_vocab_size`` null), else ``set_embed``, which replaces the draft's
    embedding with the target's unless ``target_hidden_size`` is set and differs from
    ``hidden_size`` — a shipped ``embed_tokens`` is discarded otherwise. The tensor is swapped in
    with no shape check, so the draft's own vocab-parallel index math (from its ``vocab_size``)
    must match the target's layout. ``VocabParallelEmbedding`` pads to a multiple of 64, or of
    64 x TP when TP does not divide that, so no vocabulary is refused for its TP; attention heads
    must divide by TP and KV heads divide or be divided by it."""
    ctx = run.ctx
    d, t = ctx.draft, ctx.target
    if t.V is None or t.H is None:
        return
    H = run.get("H")
    vdraft = run.get("V") or t.V
    borrow_head = bool(run.get("head_from_target"))
    keeps_own = not borrow_head and d.target_hidden_size_declared and d.Ht is not None and d.Ht != H
    if keeps_own and not d.has_embed and ctx.draft_ck.tensors:
        yield finding(
            "embed.width_mismatch",
            f"target_hidden_size {d.Ht} != hidden_size {H}: SGLang's set_embed keeps the draft's own "
            f"embedding, but the draft ships no embed_tokens — it stays uninitialised and the draft drafts "
            f"from garbage; ship the draft's embed_tokens [{vdraft}, {H}]",
            engine=NAME,
            source=SET_EMBED,
            H=H,
            target_hidden=t.H,
        )
    elif not keeps_own and H != t.H:
        yield finding(
            "embed.width_mismatch",
            f"the draft's hidden size {H} differs from the target's {t.H} but SGLang swaps the target's "
            f"embedding into the draft anyway ({'set_embed_and_head' if borrow_head else 'set_embed: target_hidden_size absent or equal'}): "
            "the first forward fails on the width; set target_hidden_size to the target's hidden size "
            "(and ship the draft's embed_tokens)",
            engine=NAME,
            source=(INIT_LM_HEAD, SET_EMBED),
            H=H,
            target_hidden=t.H,
        )
    for tp in ctx.tps:
        for what, nh, nkv in (
            ("target", t.nh, None if t.mla else t.nkv),
            ("draft", run.get("nh"), run.get("nkv")),
        ):
            if not heads_ok(nh, nkv, tp):
                yield finding(
                    "tp.heads_indivisible",
                    f"{what} attention heads {nh} / KV heads {nkv} do not split over TP {tp} "
                    "(LlamaAttention asserts)",
                    engine=NAME,
                    tp=tp,
                    source=HEADS,
                    what=what,
                    heads=nh,
                    kv_heads=nkv,
                    tp_size=tp,
                )
        rows_t = pad_vocab(t.V, tp) // tp
        rows_d = pad_vocab(vdraft, tp) // tp
        target_shape = (rows_t, t.H)
        sharded = (rows_d, H)
        replicated = (pad_vocab(vdraft, 1), H)
        note = ""
        if keeps_own:
            verdict = "own" if d.has_embed else "none"
            note = "target_hidden_size != hidden_size: set_embed returns early, the draft keeps its own"
        elif vdraft == t.V and H == t.H:
            verdict = "share"
            if d.has_embed:
                note = "the draft's own embed_tokens is replaced by the target's"
        else:
            verdict = "error"
            if H == t.H and (tp > 1 or vdraft < t.V):
                yield finding(
                    "embed.layout_mismatch",
                    f"SGLang swaps the target's embedding ({t.V} rows, {target_shape[0]} per rank at TP {tp}) into "
                    f"a draft embedding built for vocab_size {vdraft} ({sharded[0]} per rank) with no shape check: "
                    "the draft's vocab-parallel lookup reads the wrong rows for some tokens, silently; set the "
                    f"draft's vocab_size to {t.V}",
                    engine=NAME,
                    tp=tp,
                    source=(INIT_LM_HEAD, SET_EMBED, VOCAB),
                    target_rows=target_shape[0],
                    draft_rows=sharded[0],
                    draft_vocab_size=vdraft,
                    target_vocab_size=t.V,
                )
            elif H == t.H:
                verdict, note = (
                    "share",
                    f"draft vocab_size {vdraft} > target {t.V}: lookups stay in range at TP 1",
                )
        if borrow_head:
            head = "share"
        elif d.tie_word_embeddings:
            head = "tied"
        else:
            head = "own" if d.has_lm_head else "none"
        if verdict == "share":
            embed_rows, width = rows_t, t.H
        elif verdict == "own":
            embed_rows, width = rows_d, H
        else:
            embed_rows, width = 0, H
        run.sharing.append(
            sharing_row(
                ctx,
                NAME,
                tp,
                (target_shape, sharded, replicated),
                verdict,
                head,
                embed_rows,
                tp,
                width or 0,
                note,
            )  # fmt: skip
        )


# --------------------------------------------------------------------------- g. positions


def context_length(cfg: Mapping[str, Any], maxpos: int) -> tuple[int, str]:
    """``get_context_length``: ``max_position_embeddings`` times the rope scaling factor (1 when
    the rope type is ``llama3`` or ``original_max_position_embeddings`` is given)."""
    rope = cfg.get("rope_scaling") or cfg.get("rope_parameters")
    factor = 1.0
    if isinstance(rope, dict):
        factor = float(rope.get("factor", 1) or 1)
        if "original_max_position_embeddings" in rope or rope.get("rope_type") == "llama3":
            factor = 1.0
    if factor == 1.0:
        return maxpos, "max_position_embeddings"
    return int(factor * maxpos), f"max_position_embeddings x rope factor {factor:g}"


@steps.add("g", "Positions", sources=(DRAFT_WORKER, CONTEXT, CONTEXT_LEN), codes=("maxpos.short",))
def step_positions(run: EngineRun) -> Iterable[Finding]:
    """The draft worker is built with the target's context length, and ``ModelConfig`` refuses a
    context length above the draft's derived one (``max_position_embeddings`` times the rope
    factor): start-up fails with ``Target model's context_length (X) is greater than the derived
    context_length (Y)`` unless ``SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1``, which raises the
    draft's ``max_position_embeddings`` to X. This holds without ``--context-length`` too: the
    target's own length is what the draft gets."""
    ctx = run.ctx
    maxpos = run.get("max_position_embeddings")
    want = ctx.max_model_len or ctx.target.max_position_embeddings
    if maxpos is None or want is None:
        return
    derived, how = context_length(ctx.draft_ck.config, int(maxpos))
    run.set("context_len", derived, how)
    if derived >= want:
        return
    yield finding(
        "maxpos.short",
        f"draft context length {derived} ({how}, {run.resolved['max_position_embeddings'].origin}) < the "
        f"target's context length {want}: SGLang refuses to start ('Target model's context_length ({want}) is "
        f"greater than the derived context_length ({derived})'); set SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 "
        f"(the draft's max_position_embeddings is then raised to {want}), serve with --context-length {derived}, "
        f"or set the draft's max_position_embeddings to {want}",
        engine=NAME,
        source=(DRAFT_WORKER, CONTEXT),
        draft=derived,
        serving=want,
    )


SECTIONS = (
    Section(
        "json-model-override-args",
        "--json-model-override-args placement",
        "`ModelConfig.from_server_args` passes the same `--json-model-override-args` JSON to the draft's "
        "config as to the target's. `get_config` applies it key by key: a dict value for a key that is "
        "already a sub-config (`text_config` on a multimodal wrapper) is merged into it one level deep "
        "(`PretrainedConfig.update`); `rope_scaling` / `rope_parameters` dicts are merged into the "
        "existing dict; anything else is set on the TOP-LEVEL config. So a flat key on a wrapped target "
        "(MiniMax-M3, Qwen3-VL) lands on the outer config, where the language model never reads it "
        "(only `pad/bos/eos_token_id` and `tie_word_embeddings` are copied across), while the nested "
        '`{"text_config": {...}}` form that reaches it also reaches the flat EAGLE3 draft, where it '
        "becomes a new `text_config` attribute: `get_hf_text_config` converts it to a bare "
        "`PretrainedConfig` and asserts it has `num_attention_heads`, so start-up fails with an "
        "`AssertionError` (or, if the override includes `num_attention_heads`, the draft's text config "
        "is replaced by that partial one). A key meant for the target's text model therefore has no "
        "placement that works for a wrapped target and a Llama draft at once; a flat key meant for both "
        "(a plain target) rewrites the draft too.",
        (GET_CONFIG, MODEL_CONFIG, TEXT_CONFIG),
    ),
    Section(
        "vocab-padding",
        "Vocabulary padding and TP",
        "`VocabParallelEmbedding` pads the vocabulary to a multiple of 64; when that padded size does not "
        "divide by the TP size it pads to a multiple of 64 x TP instead, so every TP size splits the "
        "embedding and head (e.g. 151552 rows at TP 6: 151552 is not divisible by 6, so it pads to "
        "151680 = 395 x 384, 25280 rows per rank). vLLM and tokenspeed refuse such a TP.",
        (VOCAB,),
    ),
)

MODEL = EngineModel(
    name=NAME,
    title="SGLang",
    repo=REPO,
    version=VERSION,
    steps=tuple(steps.items),
    notes=(
        "Read from the sglang 0.5.23 wheel on PyPI. The registry data (EntryClass exports, which "
        "target classes have set_eagle3_layers_to_capture and the id rule each applies, the draft "
        "architecture renames) is extracted by `scripts/build_engine_data.py sglang` (ast, no import); "
        "how the common target families capture is read by hand and verified by the script.",
        f"transformers' config defaults come from {TRANSFORMERS}, the release SGLang 0.5.23 pins.",
        "The draft's tensor-parallel size is the target's (the Llama draft runs in the target's TP "
        "group); there is no separate draft TP.",
        "No conformance run against SGLang's own code yet: its config code needs the torch and "
        "torchvision versions SGLang pins.",
    ),
    sections=SECTIONS,
    data=(DATA, f"transformers-{TRANSFORMERS}-defaults.json"),
)
