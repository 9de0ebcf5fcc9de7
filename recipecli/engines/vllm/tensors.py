"""vLLM steps e (tensors), f (embedding / head sharing and TP) and g (positions)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from recipecli.codes import finding
from recipecli.engines.accounting import TensorUse, stack
from recipecli.engines.base import (
    EngineRun,
    SharingRow,
)
from recipecli.engines.common import (
    heads_findings,
    missing_tensor_findings,
    no_tensor_findings,
    optional_shapes,
    pad64,
    shape_findings,
    sharing_row,
    split_rows,
    target_vocab_hidden,
    unexpected_tensors,
)
from recipecli.engines.positions import (
    input_norm_dropped_findings,
    rope_mismatch_findings,
    t2d_invalid_findings,
    tie_reduced_vocab_findings,
)
from recipecli.engines.vllm.sources import (
    AUX_CAPTURE,
    CACHE_ONLY_ROPE_TYPES,
    DRAFT_TP,
    EAGLE3_CAUSAL,
    EAGLE3_LAYER,
    EAGLE3_LOAD,
    EAGLE3_MODEL,
    LOGITS,
    MAXPOS,
    NAME,
    ROPE,
    SHARE_EMBED,
    SHARE_HEAD,
    VOCAB_PARALLEL,
    WEIGHTS_LOADER,
    src,
    steps,
)
from recipecli.findings import Finding

# --------------------------------------------------------------------------- e. tensors


def allocated(run: EngineRun) -> dict[str, tuple[int, ...]]:
    """Checkpoint tensor name -> shape of every weight vLLM's ``Eagle3LlamaForCausalLM`` loads
    from the checkpoint for the resolved config (after ``load_weights``' renames: ``midlayer.`` is
    ``layers.0.``; q/k/v and gate/up are checkpoint names before stacking).

    Layer 0: q [nh*hd, 2H], k/v [nkv*hd, 2H] (+ biases with ``attention_bias``), o [H, nh*hd]
    (+ bias [H] with ``attention_bias`` or ``bias``, llama layers), gate/up [I, H], down [H, I]
    (+ biases with ``mlp_bias``, llama layers), input_layernorm / hidden_norm /
    post_attention_layernorm [H];
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
        llama = not g("qwen3_layer")  # llama.py LlamaDecoderLayer: o_proj and MLP biases
        if llama and any(bool(run.config.get(b, False)) for b in ("attention_bias", "bias")):
            out[pre + "self_attn.o_proj.bias"] = (H,)
        if g("qwen3_layer"):  # Qwen3Attention: per-head RMSNorm of q and k
            out[pre + "self_attn.q_norm.weight"] = (hd,)
            out[pre + "self_attn.k_norm.weight"] = (hd,)
        out[pre + "mlp.gate_proj.weight"] = (inter, H)
        out[pre + "mlp.up_proj.weight"] = (inter, H)
        out[pre + "mlp.down_proj.weight"] = (H, inter)
        if llama and bool(run.config.get("mlp_bias", False)):
            out[pre + "mlp.gate_proj.bias"] = out[pre + "mlp.up_proj.bias"] = (inter,)
            out[pre + "mlp.down_proj.bias"] = (H,)
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
        "vocab.t2d_invalid",
        "tie.reduced_vocab",
        "aux.fc_unused",
    ),  # fmt: skip
)
def step_tensors(run: EngineRun) -> Iterable[Finding]:
    """``Eagle3LlamaForCausalLM`` allocates its weights from the resolved config and
    ``load_weights`` fills them: ``t2d`` is dropped, ``d2t`` becomes ``draft_id_to_target_id``
    (allocated, as zeros, only when Vd != V), ``midlayer.`` is renamed ``layers.0.``, every other
    name gets ``model.``; ``AutoWeightsLoader`` raises on a name it has no parameter for and on a
    shape that does not match. ``load_weights`` returns nothing, so the model loader's check for
    weights the checkpoint did not provide is skipped: a missing weight stays uninitialised and
    the draft serves garbage without an error. Without aux hidden states
    (``eagle_config.use_aux_hidden_state`` false) there is no fc and ``fc.`` names are dropped;
    without ``norm_before_fc`` ``input_norm.`` names are. The head is never tied to the
    embedding (``__init__`` calls ``nn.Module.__init__`` and builds ``lm_head`` [Vd, H]), so
    ``tie_word_embeddings`` is not read."""
    ctx = run.ctx
    tensors = ctx.draft_ck.tensors
    yield from _t2d_and_tie(run)
    if not tensors:
        yield from no_tensor_findings(run, EAGLE3_LOAD)
        return
    if ctx.draft.attention == "MLA":
        return  # Eagle3DeepseekV2ForCausalLM (MLA, issue #31): not modelled tensor by tensor
    want = allocated(run)
    yield from missing_tensor_findings(
        run,
        want,
        engine=NAME,
        title="vLLM",
        source=(EAGLE3_LOAD, EAGLE3_MODEL),
        consequence="load_weights does not check, so they stay uninitialised and the draft serves "
        "garbage; re-export the draft with all weights",
    )
    shapes = {**want, **optional_shapes(ctx.draft, run.get("H"), run.get("V"), run.get("Vd"))}
    yield from shape_findings(
        run, shapes, NAME, "vLLM", (EAGLE3_LAYER, EAGLE3_MODEL, WEIGHTS_LOADER)
    )
    # names vLLM has no parameter for
    # load_weights maps "fc." to None without aux states and "input_norm." without
    # norm_before_fc: those names are skipped, not refused
    skipped = ("fc.",) * (not run.get("use_aux")) + ("input_norm.",) * (
        not run.get("norm_before_fc")
    )
    params = {param_name(n): None for n in want} | dict.fromkeys(_HEADS)
    extra = [
        n
        for n in unexpected_tensors(ctx)
        if n not in want
        and not _mapped_away(n, skipped)
        and tensor_use(run, n, params).status == "refused"
    ]
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
    yield from _vocab_and_bias(run)
    yield from _biases_dropped(run, params)
    yield from _fc_unused(run)
    yield from _input_norm_dropped(run, want)


def _input_norm_dropped(run: EngineRun, want: dict[str, tuple[int, ...]]) -> Iterator[Finding]:
    """``tensor.dropped`` (error: a trained weight the draft runs without) for a shipped
    ``input_norm.weight`` that :func:`tensor_use` drops: without ``norm_before_fc`` (read from
    ``eagle_config`` first, then the top level, default false) ``LlamaModel.__init__`` builds no
    ``input_norm`` and ``load_weights`` maps ``input_norm.`` to None, so fc takes the aux states
    un-normalised, without a word."""
    if not run.get("use_aux"):
        return  # no fc at all: aux.fc_unused says so
    params = {param_name(n): None for n in want}
    names = [
        n
        for n in run.ctx.draft_ck.tensors
        if "input_norm." in n and tensor_use(run, n, params).status == "dropped"
    ]
    yield from input_norm_dropped_findings(
        run,
        names,
        engine=NAME,
        title="vLLM",
        reads="from eagle_config first, then the top level",
        source=(EAGLE3_MODEL, EAGLE3_LOAD),
    )


def param_name(name: str) -> str:
    """The vLLM parameter a checkpoint name loads into, once it gets that far: ``lm_head``
    names stay, every other name gets ``model.`` (``Eagle3LlamaForCausalLM.load_weights``),
    ``midlayer.`` becomes ``layers.0.`` and q/k/v, gate/up fold into ``qkv_proj`` /
    ``gate_up_proj`` (``LlamaModel.hf_to_vllm_mapper``); ``d2t`` is ``draft_id_to_target_id``."""
    if "d2t" in name:
        return name.replace("d2t", "draft_id_to_target_id")
    full = name if "lm_head" in name else "model." + name
    return stack(full.replace("midlayer.", "layers.0."))


def tensor_use(run: EngineRun, name: str, params: Mapping[str, Any]) -> TensorUse:
    """What vLLM's ``load_weights`` does with checkpoint tensor ``name``: ``t2d`` and
    ``mask_hidden`` (without parallel drafting) are skipped before mapping; ``fc.`` names without
    aux hidden states and ``input_norm.`` names without ``norm_before_fc`` are mapped to None
    (``WeightsMapper(orig_to_new_substr={...: None})``: dropped); a name with a parameter loads;
    an unexpected ``.bias`` is ignored (``AutoWeightsLoader.load_weights`` adds the suffix to
    ``ignore_unexpected_suffixes``: dropped); any other name raises."""
    if "t2d" in name:
        return TensorUse(name, "skipped", None, "load_weights skips names containing t2d")
    if "mask_hidden" in name:
        return TensorUse(name, "skipped", None, "mask_hidden without parallel drafting")
    if not run.get("use_aux") and "fc." in name:
        return TensorUse(name, "dropped", None, "no fc without aux hidden states ('fc.': None)")
    if not run.get("norm_before_fc") and "input_norm." in name:
        return TensorUse(name, "dropped", None, "no input_norm without norm_before_fc")
    param = param_name(name)
    if param in params:
        return TensorUse(name, "loaded", param, "")
    layer = param[: -len("bias")]
    if name.endswith(".bias") and any(p.startswith(layer) for p in params):
        return TensorUse(name, "dropped", None, _BIAS_NOTE)
    return TensorUse(name, "refused", None, "no module or parameter of that name: the load raises")


#: the heads every ``Eagle3LlamaForCausalLM`` builds (filled from the checkpoint or the target)
_HEADS = ("model.embed_tokens.weight", "lm_head.weight")
_LLAMA_LAYER = src("vllm/model_executor/models/llama.py", "LlamaDecoderLayer.__init__")
_LINEAR_LOAD = src("vllm/model_executor/layers/linear.py", "QKVParallelLinear.load_weights")
_BIAS_NOTE = (
    "its layer is built without bias: AutoWeightsLoader ignores an unexpected .bias "
    "(qkv_proj/gate_up_proj's own load_weights skip it)"
)


def _biases_dropped(run: EngineRun, params: Mapping[str, Any]) -> Iterator[Finding]:
    """``tensor.dropped`` (error: trained weights the draft runs without) for the ``.bias``
    tensors other than ``fc.bias`` (:func:`_vocab_and_bias`) that :func:`tensor_use` drops: their
    layer exists without a bias (``attention_bias``/``bias``/``mlp_bias`` false, or an RMSNorm),
    and ``AutoWeightsLoader._load_module`` ignores an unexpected ``.bias`` while
    ``QKVParallelLinear``/``MergedColumnParallelLinear.load_weights`` skip a bias they lack
    (``vllm/model_executor/layers/linear.py``), so the load succeeds without them."""
    fc_bias = run.ctx.draft.tensor_prefix + "fc.bias"
    names = [
        n
        for n in run.ctx.draft_ck.tensors
        if n.endswith(".bias") and n != fc_bias and tensor_use(run, n, params).status == "dropped"
    ]
    if not names:
        return
    shown = ", ".join(names[:4]) + (" …" if len(names) > 4 else "")
    yield finding(
        "tensor.dropped",
        f"the draft ships {shown}, but vLLM builds those layers without a bias (attention_bias / "
        "mlp_bias false, or an RMSNorm, which has none) and its loader skips the tensors silently: "
        "the draft runs without trained weights; set attention_bias / mlp_bias if the draft was "
        "trained with them, else drop the tensors",
        engine=NAME,
        source=(EAGLE3_LAYER, _LLAMA_LAYER, WEIGHTS_LOADER, _LINEAR_LOAD),
        dropped=names,
    )


def _fc_unused(run: EngineRun) -> Iterator[Finding]:
    """``aux.fc_unused`` when ``eagle_config.use_aux_hidden_state`` is false but the checkpoint
    ships ``fc.weight``: ``LlamaModel.__init__`` builds no fc, ``load_weights`` maps ``fc.`` to
    None (dropped) and ``combine_hidden_states`` returns the target's hidden state unchanged;
    an fc exists only to combine aux states, so the draft was likely trained with them."""
    name = run.ctx.draft.tensor("fc")
    if run.get("use_aux") or name not in run.ctx.draft_ck.tensors:
        return
    yield finding(
        "aux.fc_unused",
        f"eagle_config.use_aux_hidden_state is false but the draft ships {name}: vLLM builds no fc, "
        "its load_weights drops the tensor and the draft gets the target's last hidden state "
        "instead of aux states; if it was trained with aux states, remove use_aux_hidden_state "
        "(default true), else drop fc.weight",
        engine=NAME,
        source=(EAGLE3_MODEL, EAGLE3_LOAD),
        dropped=[name],
    )


def _mapped_away(name: str, substrings: tuple[str, ...]) -> bool:
    """True when ``load_weights``' ``WeightsMapper(orig_to_new_substr={s: None})`` drops
    ``name`` (it contains one of ``substrings``)."""
    return any(s in name for s in substrings)


def _t2d_and_tie(run: EngineRun) -> Iterator[Finding]:
    """``t2d`` and ``tie_word_embeddings`` as vLLM uses them: ``load_weights`` skips every name
    containing ``t2d`` (a stale one changes nothing), and ``Eagle3LlamaForCausalLM.__init__``
    calls ``nn.Module.__init__`` and builds its own ``ParallelLMHead(draft_vocab_size, H)``,
    never tying it to the embedding (``tie_word_embeddings`` is not read): both are infos."""
    yield from t2d_invalid_findings(
        run, engine=NAME, title="vLLM", source=EAGLE3_LOAD, severity="info"
    )
    head = (
        f"loads the draft's own lm_head [{run.ctx.draft.Vd}, H]"
        if run.ctx.draft.has_lm_head
        else "borrows the target's head (see lm_head.missing)"
    )
    yield from tie_reduced_vocab_findings(
        run,
        engine=NAME,
        effect=", but vLLM's Eagle3LlamaForCausalLM never ties its head to the embedding: it "
        + head,
        source=EAGLE3_CAUSAL,
        severity="info",
    )


def _vocab_and_bias(run: EngineRun) -> Iterator[Finding]:
    """The vocabulary map as vLLM loads it (``draft_id_to_target_id`` exists only when Vd != V),
    and an ``fc.bias`` its loader skips."""
    tensors = run.ctx.draft_ck.tensors
    t = run.ctx.target
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
        yield from _tp_findings(run, tp)


def _tp_findings(run: EngineRun, tp: int) -> Iterator[Finding]:
    """At target TP ``tp``: the draft TP, the vocabularies and heads over TP, and the sharing row
    (appended to ``run.sharing`` when the draft TP is valid)."""
    ctx = run.ctx
    d, t = ctx.draft, ctx.target
    H = run.get("H")
    Vd = run.get("Vd")
    V_draft = run.get("V")
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
        return
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
    yield from heads_findings(
        run,
        tp,
        draft_tp=dtp,
        engine=NAME,
        source=src("vllm/model_executor/models/llama.py", "LlamaAttention.__init__"),
    )
    run.sharing.append(_sharing(run, tp, dtp))


def _sharing(run: EngineRun, tp: int, dtp: int) -> SharingRow:
    """The sharing-table row at target TP ``tp`` and draft TP ``dtp``: vLLM shares the target's
    embedding when the draft ships none and the widths match, keeps a shipped one (``own``), and
    shares the head when the draft has none and Vd == V."""
    ctx = run.ctx
    d = ctx.draft
    tV, tH = target_vocab_hidden(ctx)
    H = run.get("H")
    vd = run.get("V") or tV
    rows_t, rows_d = split_rows(tV, tp), split_rows(vd, dtp)
    shapes = (
        (rows_t, tH) if rows_t else None,
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
        verdict = "share" if H == tH else "error"
    head = "own" if d.has_lm_head else ("share" if run.get("Vd") == tV else "none")
    rows = {"share": rows_t or 0, "own": rows_d or 0}.get(verdict, 0)
    width = tH if verdict == "share" else H
    return sharing_row(ctx, NAME, tp, shapes, verdict, head, rows, dtp, width or 0, note)


# --------------------------------------------------------------------------- g. positions


def _rope(run: EngineRun) -> Iterator[Finding]:
    """``rope.mismatch`` (info) when the draft config's rotary settings differ from the
    target text config's (:func:`recipecli.engines.common.rope_differences`): vLLM builds
    the draft's rotary embedding from the draft config alone, so it serves with the draft's
    settings, as the draft's config says it was trained (EAGLE's, SpecForge's and speculators'
    trainers build the draft's rotary embedding from the same config): it serves as trained, so
    by the severity policy (docs/check.md#severity) an info that names the difference."""
    yield from rope_mismatch_findings(run, run.config, engine=NAME, title="vLLM", source=ROPE)


@steps.add("g", "Positions", sources=(MAXPOS, ROPE), codes=("maxpos.short", "rope.mismatch"))
def step_positions(run: EngineRun) -> Iterable[Finding]:
    """A draft whose ``max_position_embeddings`` is below the target's ``max_model_len`` has it
    raised to that length (its rotary cache is resized) when every RoPE type it uses only sizes a
    cache (default, linear, llama3, ntk, proportional) — nothing to do; with another RoPE type
    (yarn, dynamic, longrope …) vLLM limits the serving length to the draft's instead. The
    draft's rotary embedding is built from the draft config's ``rope_parameters`` alone, whatever
    the target's are."""
    yield from _rope(run)
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
