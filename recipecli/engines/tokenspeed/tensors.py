"""tokenspeed steps e (tensors), f (embedding / head sharing and TP) and g (positions)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from recipecli.codes import finding
from recipecli.draft import DraftModel
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
from recipecli.engines.tokenspeed.sources import (
    CONTEXT,
    DRAFT_INIT,
    DRAFT_LOAD,
    DRAFT_MODEL,
    HEADS,
    MLA_SET_EMBED,
    NAME,
    ROPE,
    SET_EMBED,
    VOCAB,
    steps,
)
from recipecli.findings import Finding

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


def param_name(name: str, params: Mapping[str, Any]) -> str:
    """The tokenspeed parameter a checkpoint name loads into: a leading ``layers.0.`` becomes
    ``midlayer.``, q/k/v and gate/up fold into ``qkv_proj`` / ``gate_up_proj``, then the name
    itself when ``params`` has it, else ``model.`` + name
    (``LlamaForCausalLMEagle3.load_weights``); ``d2t`` is ``hot_token_id``."""
    if name.startswith("layers.0."):
        name = "midlayer." + name[len("layers.0.") :]
    if "d2t" in name:
        return "hot_token_id"
    name = stack(name)
    return name if name in params else f"model.{name}"


def tensor_use(name: str, params: Mapping[str, Any]) -> TensorUse:
    """What tokenspeed's ``load_weights`` does with checkpoint tensor ``name``: ``d2t`` becomes
    ``hot_token_id`` (``d2t + arange``), ``t2d`` is skipped, a name with a parameter loads, and
    any other name is passed over without a word (dropped)."""
    if "t2d" in name and "d2t" not in name:
        return TensorUse(name, "skipped", None, "load_weights skips names containing t2d")
    param = param_name(name, params)
    if param in params:
        return TensorUse(name, "loaded", param, "")
    return TensorUse(
        name, "dropped", None, "no parameter of that name: load_weights passes over it"
    )


def built_params(run: EngineRun) -> dict[str, str | None]:
    """Every parameter ``LlamaForCausalLMEagle3.__init__`` builds (name -> what
    ``set_embed_and_head`` swaps in from the target, None when nothing): the weights of
    :func:`allocated`, ``model.embed_tokens.weight`` (replaced unless ``target_hidden_size`` is
    set and differs from ``hidden_size``), ``lm_head.weight`` (none when tied: ``lm_head`` is the
    embedding module; the target's when the draft is untied and declares no
    ``draft_vocab_size``) and ``hot_token_id`` (None until ``d2t`` fills it)."""
    d, cfg = run.ctx.draft, run.ctx.draft_ck.config
    shares = cfg.get("target_hidden_size") in (None, run.get("H"))
    out: dict[str, str | None] = {
        "model.embed_tokens.weight": "the target's embed_tokens (set_embed_and_head)"
        if shares
        else None
    }
    for name in allocated(run):
        out.setdefault(param_name(name, out | {"lm_head.weight": None}), None)
    if not d.tie_word_embeddings:
        head = shares and not d.draft_vocab_size_declared
        out["lm_head.weight"] = "the target's lm_head (set_embed_and_head)" if head else None
    out["hot_token_id"] = None
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
        "vocab.t2d_invalid",
        "tie.reduced_vocab",
    ),  # fmt: skip
)
def step_tensors(run: EngineRun) -> Iterable[Finding]:
    """``load_weights`` maps ``layers.0.`` to ``midlayer.``, stacks q/k/v and gate/up, turns
    ``d2t`` into absolute ``hot_token_id`` (``d2t + arange``) and drops ``t2d``. Unknown names are
    skipped silently and missing weights are not detected (they keep uninitialised memory); a
    shape mismatch is a bare ``AssertionError`` in the layer's weight loader. ``fc`` is [H, k·H]
    whatever ``target_hidden_size`` says, and ``norm_before_residual`` is never read. With
    ``tie_word_embeddings`` ``lm_head`` is the embedding module and the checkpoint's
    ``lm_head.weight`` is skipped."""
    ctx = run.ctx
    tensors = ctx.draft_ck.tensors
    yield from _config_findings(run)
    yield from _t2d_and_tie(run)
    if not tensors:
        yield from no_tensor_findings(run, DRAFT_LOAD)
        return
    if ctx.draft.attention == "MLA":
        return  # the MLA draft's attention tensors follow DeepseekV3's layout; not modelled tensor by tensor
    yield from _weights(run)
    yield from _vocab_and_head(run)
    yield from _input_norm_dropped(run)


def _input_norm_dropped(run: EngineRun) -> Iterator[Finding]:
    """``tensor.dropped`` for a shipped ``input_norm.`` tensor :func:`tensor_use` drops:
    ``Eagle3LlamaModel.__init__`` builds ``input_norm`` only with a top-level
    ``norm_before_fc`` and ``load_weights`` passes over a name without a parameter. A nested
    ``eagle_config.norm_before_fc`` is ``norm.flag_ignored`` (step a) instead."""
    ec = run.ctx.draft_ck.config.get("eagle_config")
    if isinstance(ec, dict) and "norm_before_fc" in ec:
        return
    params = built_params(run)
    names = [
        n
        for n in run.ctx.draft_ck.tensors
        if "input_norm." in n and tensor_use(n, params).status == "dropped"
    ]
    yield from input_norm_dropped_findings(
        run,
        names,
        engine=NAME,
        title="tokenspeed",
        reads="from the top level only",
        source=(DRAFT_MODEL, DRAFT_LOAD),
    )


def _t2d_and_tie(run: EngineRun) -> Iterator[Finding]:
    """``t2d`` and ``tie_word_embeddings`` as tokenspeed uses them. ``load_weights`` (Llama and
    MLA drafts) skips every name containing ``t2d`` (a stale one changes nothing: info). With
    ``tie_word_embeddings`` ``LlamaForCausalLMEagle3.__init__`` makes ``lm_head`` the embedding
    module, so the shipped ``lm_head.weight`` has no parameter and is skipped, and
    ``set_embed_and_head`` swaps the target's [V, H] embedding in; the logits processor keeps
    all V logits, whose argmax indexes the Vd-entry ``hot_token_id``: with Vd < V the draft
    proposes from weights it was not trained with, and ids >= Vd index out of range (error)."""
    yield from t2d_invalid_findings(
        run, engine=NAME, title="tokenspeed", source=DRAFT_LOAD, severity="info"
    )
    yield from tie_reduced_vocab_findings(
        run,
        engine=NAME,
        effect=": tokenspeed ties lm_head to the embedding (the target's [{V}, H] after "
        "set_embed_and_head) and skips the draft's lm_head.weight; its {V} logits index a "
        "hot_token_id of {Vd} entries: the draft proposes from weights it was not trained "
        "with; {fix}",
        source=(DRAFT_INIT, DRAFT_LOAD, SET_EMBED),
        severity="error",
    )


def _config_findings(run: EngineRun) -> Iterator[Finding]:
    """What the draft's config asks that tokenspeed does not do (``norm_before_residual``,
    ``target_hidden_size``), and an fc trained for another target width."""
    ctx = run.ctx
    d, t = ctx.draft, ctx.target
    cfg = ctx.draft_ck.config
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


def _weights(run: EngineRun) -> Iterator[Finding]:
    """The checkpoint's tensors against what the Llama draft allocates: missing, wrong shape,
    skipped silently (``fc.bias``, Qwen3 QK norms, unknown names)."""
    ctx = run.ctx
    d = ctx.draft
    tensors = ctx.draft_ck.tensors
    H = run.get("H")
    want = allocated(run)
    yield from missing_tensor_findings(
        run, want, engine=NAME, title="tokenspeed", source=DRAFT_LOAD
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


def _vocab_and_head(run: EngineRun) -> Iterator[Finding]:
    """The vocabulary map and the head as tokenspeed uses them."""
    ctx = run.ctx
    d, t = ctx.draft, ctx.target
    tensors = ctx.draft_ck.tensors
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
        yield from heads_findings(
            run, tp, engine=NAME, source=HEADS, how=" (validate_attention_partition raises)"
        )
        row, found = _sharing(run, tp, H, vdraft, bool(replicated_target))
        run.sharing.append(row)
        yield from found


def _sharing(
    run: EngineRun, tp: int, H: int, vdraft: int, replicated_target: bool
) -> tuple[SharingRow, list[Finding]]:
    """The sharing-table row at TP ``tp`` (draft hidden ``H``, draft vocab ``vdraft``; the
    target's embedding replicated or vocab-parallel) and the findings ``set_embed_and_head``
    gives there: ``embed.share_error`` when it raises, ``embed.tied_stale`` when a rebuilt
    embedding leaves a tied head on the old weight."""
    ctx = run.ctx
    d = ctx.draft
    tV, tH = target_vocab_hidden(ctx)
    findings: list[Finding] = []
    target_rows = pad64(tV) if replicated_target else split_rows(tV, tp)
    target_shape = (target_rows, tH) if target_rows else None
    mla = d.attention == "MLA"
    rows_d = None if mla else split_rows(vdraft, tp)
    sharded = (rows_d, H) if rows_d else None
    replicated = (pad64(vdraft), H)
    verdict, head, note = _verdicts(d, H, (target_shape, sharded, replicated))
    if verdict == "error":
        findings.append(_share_error(run, tp, H, target_shape, sharded, replicated))
    if verdict == "share-replicated" and d.tie_word_embeddings:
        findings.append(_tied_stale(d, tp))
    if verdict in ("share", "share-replicated"):
        embed_rows = target_rows or 0
    elif verdict == "own":
        embed_rows = replicated[0] if mla else (rows_d or 0)
    else:
        embed_rows = 0
    width = tH if verdict.startswith("share") else H
    row = sharing_row(ctx, NAME, tp, (target_shape, sharded, replicated), verdict, head, embed_rows,
                      1 if mla else tp, width or 0, note)  # fmt: skip
    return row, findings


def _tied_stale(d: DraftModel, tp: int) -> Finding:
    """``embed.tied_stale`` at TP ``tp``: ``LlamaForCausalLMEagle3.__init__`` makes the tied
    ``lm_head`` the embedding module and ``set_embed_and_head`` replaces
    ``model.embed_tokens`` with a rebuilt replicated module, so the head keeps the old sharded
    module (open review on tokenspeed PR #837). Its weight is the draft's own ``embed_tokens``
    when the checkpoint ships one (the head serves the weights it was trained with: a warning),
    else left at its initial value (the draft proposes from garbage: an error, by the severity
    policy's weight left uninitialised)."""
    kept = (
        "the draft's own embed_tokens, as loaded"
        if d.has_embed
        else "a weight nothing fills (the draft ships no embed_tokens): it proposes from garbage"
    )
    return finding(
        "embed.tied_stale",
        f"tie_word_embeddings with a rebuilt (replicated) embedding at TP {tp}: the tied head keeps "
        f"the old sharded module, holding {kept} (open review on tokenspeed PR #837); set "
        "tie_word_embeddings false",
        severity="warning" if d.has_embed else "error",
        engine=NAME,
        tp=tp,
        source=(DRAFT_INIT, SET_EMBED),
        head_weight="draft embed_tokens" if d.has_embed else "left at init",
    )


def _verdicts(
    d: DraftModel,
    H: int,
    shapes: tuple[tuple[int, int] | None, tuple[int, int] | None, tuple[int, int]],
) -> tuple[str, str, str]:
    """(embedding verdict, head verdict, note) of ``set_embed_and_head`` for the per-rank
    embedding ``shapes`` (the target's, the draft's sharded and replicated ones; draft hidden
    ``H``): nothing is shared when ``target_hidden_size`` differs from ``hidden_size``; the MLA
    draft shares on an exact replicated match; the Llama draft shares a sharded match, rebuilds
    itself replicated for a replicated target, else ``error``."""
    target_shape, sharded, replicated = shapes
    head_shared = not d.tie_word_embeddings and not d.draft_vocab_size_declared
    head = (
        "share"
        if head_shared
        else ("own" if d.has_lm_head else ("tied" if d.tie_word_embeddings else "none"))
    )
    if d.target_hidden_size_declared and d.Ht != H:
        return (
            "own" if d.has_embed else "none",
            "own" if d.has_lm_head else "none",
            "target_hidden_size != hidden_size: set_embed_and_head returns early, shares nothing",
        )
    if d.attention == "MLA":
        verdict = "share" if target_shape == replicated else ("own" if d.has_embed else "error")
        note = "MLA draft keeps its own embed_tokens (shapes differ; tokenspeed PR #958)"
        return verdict, head, note if verdict == "own" else ""
    if target_shape == sharded:
        return "share", head, ""
    if target_shape == replicated:
        return (
            "share-replicated",
            head,
            "draft embedding rebuilt replicated to match the target (tokenspeed PR #837)",
        )
    return "error", head, ""


def _share_error(
    run: EngineRun,
    tp: int,
    H: int,
    target_shape: tuple[int, int] | None,
    sharded: tuple[int, int] | None,
    replicated: tuple[int, int],
) -> Finding:
    """``embed.share_error``: ``set_embed_and_head`` finds the target's embedding shape equal to
    neither draft shape (for the MLA draft: no exact match and no own embedding)."""
    t = run.ctx.target
    mla = run.ctx.draft.attention == "MLA"
    a, s = target_shape or ("?", t.H), sharded or ("?", H)
    text = (
        f"Cannot share target embed of shape ({a[0]}, {a[1]}): draft expects ({s[0]}, {s[1]}) (sharded) "
        f"or ({replicated[0]}, {replicated[1]}) (replicated)."
        if not mla
        else f"EAGLE3 draft cannot share the target embedding (target {tuple(a)} vs draft {replicated}) and "
        "the draft checkpoint provided no embed_tokens weight"
    )
    return finding(
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


# --------------------------------------------------------------------------- g. positions


def _rope(run: EngineRun) -> Iterator[Finding]:
    """``rope.mismatch`` (info) when the draft config's rotary settings differ from the
    target text config's (:func:`recipecli.engines.common.rope_differences`): tokenspeed builds
    the draft's rotary embedding from the draft config alone, so it serves with the draft's
    settings, as the draft's config says it was trained (EAGLE's, SpecForge's and speculators'
    trainers build the draft's rotary embedding from the same config): it serves as trained, so
    by the severity policy (docs/check.md#severity) an info that names the difference."""
    yield from rope_mismatch_findings(
        run, run.ctx.draft_ck.config, engine=NAME, title="tokenspeed", source=ROPE
    )


@steps.add("g", "Positions", sources=(CONTEXT, ROPE), codes=("maxpos.short", "rope.mismatch"))
def step_positions(run: EngineRun) -> Iterable[Finding]:
    """``ModelConfig`` derives the draft's context length from its config (``max_position_embeddings``
    and rope scaling) and refuses a ``--max-model-len`` above it (``User-specified context_length (X)
    is greater than the derived context_length (Y)``) unless
    ``TOKENSPEED_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1``; nothing raises it automatically. Without
    ``--max-model-len`` nothing compares the two and positions past the draft's rotary cache read
    out of range. The draft's rotary embedding is built from the draft config's rope settings
    alone, whatever the target's are."""
    yield from _rope(run)
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
