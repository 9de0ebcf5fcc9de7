"""SGLang steps e (tensors), f (embedding / head sharing and TP) and g (positions)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from recipecli.codes import finding
from recipecli.draft import DraftModel
from recipecli.engines.accounting import TensorUse, stack
from recipecli.engines.base import (
    EngineRun,
)
from recipecli.engines.common import (
    heads_findings,
    missing_tensor_findings,
    no_tensor_findings,
    optional_shapes,
    shape_findings,
    sharing_row,
    target_vocab_hidden,
    unexpected_tensors,
)
from recipecli.engines.positions import (
    input_norm_dropped_findings,
    rope_mismatch_findings,
    t2d_invalid_findings,
    tie_reduced_vocab_findings,
)
from recipecli.engines.sglang.sources import (
    AUX_IDS,
    CONTEXT,
    CONTEXT_LEN,
    DRAFT_INIT,
    DRAFT_LAYER,
    DRAFT_LOAD,
    DRAFT_MODEL,
    DRAFT_WORKER,
    HEADS,
    INIT_LM_HEAD,
    NAME,
    ROPE,
    SET_EMBED,
    VOCAB,
    pad_vocab,
    steps,
)
from recipecli.findings import Finding

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


#: ``load_weights``' legacy names (substring -> module name), in its order
LEGACY_NAMES: tuple[tuple[str, str], ...] = (
    ("midlayer", "layers.0"),
    ("aux_norm_low", "fc_norm.0"),
    ("aux_norm_mid", "fc_norm.1"),
    ("aux_norm_high", "fc_norm.2"),
)


def param_name(name: str, params: Mapping[str, Any]) -> str:
    """The SGLang parameter a checkpoint name loads into: the legacy renames (``midlayer`` ->
    ``layers.0``, ``aux_norm_low/mid/high`` -> ``fc_norm.0/1/2``), q/k/v and gate/up folded into
    ``qkv_proj`` / ``gate_up_proj``, then the name itself when ``params`` has it, else
    ``model.`` + name (``LlamaForCausalLMEagle3.load_weights``); ``d2t`` is ``hot_token_id``."""
    for old, new in LEGACY_NAMES:
        if old in name:
            name = name.replace(old, new)
    if "d2t" in name:
        return "hot_token_id"
    name = stack(name)
    return name if name in params else f"model.{name}"


def tensor_use(name: str, params: Mapping[str, Any]) -> TensorUse:
    """What SGLang's ``load_weights`` does with checkpoint tensor ``name``: ``d2t`` becomes
    ``hot_token_id`` (``d2t + arange``), ``t2d`` is skipped, a name with a parameter loads, and
    any other name is passed over without a word (dropped: no error, no log)."""
    if "t2d" in name and "d2t" not in name:
        return TensorUse(name, "skipped", None, "load_weights skips names containing t2d")
    param = param_name(name, params)
    if param in params:
        return TensorUse(name, "loaded", param, "")
    return TensorUse(
        name, "dropped", None, "no parameter of that name: load_weights passes over it"
    )


def built_params(run: EngineRun) -> dict[str, str | None]:
    """Every parameter ``LlamaForCausalLMEagle3.__init__`` builds (name -> what ``init_lm_head``
    swaps in from the target, None when nothing): the weights of :func:`allocated`,
    ``model.embed_tokens.weight`` (``set_embed`` replaces it unless ``target_hidden_size`` is set
    and differs from ``hidden_size``), ``lm_head.weight`` (none when tied: ``lm_head`` is the
    embedding module; the target's with ``draft_vocab_size`` null) and ``hot_token_id`` (a
    buffer, None until ``d2t`` fills it: the draft then proposes its own ids)."""
    d, cfg = run.ctx.draft, run.ctx.draft_ck.config
    shares = cfg.get("target_hidden_size") in (None, run.get("H"))
    out: dict[str, str | None] = {
        "model.embed_tokens.weight": "the target's embed_tokens (set_embed)" if shares else None
    }
    for name in allocated(run):
        out.setdefault(param_name(name, out | {"lm_head.weight": None}), None)
    if not d.tie_word_embeddings:
        out["lm_head.weight"] = (
            "the target's lm_head (set_embed_and_head)" if run.get("head_from_target") else None
        )
    out["hot_token_id"] = None
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
        "vocab.t2d_invalid",
        "tie.reduced_vocab",
        "aux.fc_unused",
        "tensor.dropped",
    ),  # fmt: skip
)
def step_tensors(run: EngineRun) -> Iterable[Finding]:
    """``load_weights`` renames ``midlayer`` to ``layers.0`` (and ``aux_norm_low/mid/high`` to
    ``fc_norm.0/1/2``), stacks q/k/v and gate/up, turns ``d2t`` into absolute ``hot_token_id``
    (``d2t + arange``) and drops ``t2d``. Unknown names are skipped silently and missing weights
    are not detected (they keep uninitialised memory); a shape mismatch fails the weight
    loader's assertion. The draft's q/k/v are built without bias, so q/k/v biases are skipped.
    A draft without ``d2t`` whose head is smaller than the vocabulary proposes draft ids as target
    ids. ``fc`` (and ``input_norm``/``fc_norm``) run only when the incoming hidden states are
    wider than the embedding: with ``eagle_config.use_aux_hidden_state`` false no aux states are
    captured and a target as wide as the draft never uses them. With ``tie_word_embeddings``
    ``lm_head`` is the embedding module and the checkpoint's ``lm_head.weight`` is skipped."""
    ctx = run.ctx
    d, t = ctx.draft, ctx.target
    cfg = ctx.draft_ck.config
    tensors = ctx.draft_ck.tensors
    Ht = run.get("Ht")
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
    yield from _t2d_and_tie(run)
    if not tensors:
        yield from no_tensor_findings(run, DRAFT_LOAD)
        return
    if d.attention != "MLA":
        yield from _weights(run)
        yield from _input_norm_dropped(run)
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


def _weights(run: EngineRun) -> Iterator[Finding]:
    """The Llama draft's checkpoint tensors against what it allocates: missing, wrong shape, or
    skipped silently (names it has no parameter for, q/k/v biases, an fc bias without ``bias``)."""
    ctx = run.ctx
    d = ctx.draft
    cfg = ctx.draft_ck.config
    tensors = ctx.draft_ck.tensors
    H = run.get("H")
    want = allocated(run)
    required = _required(run, want)
    yield from missing_tensor_findings(
        run, required, engine=NAME, title="SGLang", source=DRAFT_LOAD
    )
    fc = d.tensor("fc")
    if fc not in required and fc in tensors:
        yield finding(
            "aux.fc_unused",
            f"eagle_config.use_aux_hidden_state is false but the draft ships {fc}: SGLang loads it, "
            "captures no aux states and LlamaModel.forward skips fc (the target's hidden state is "
            "as wide as the draft's), so the draft runs without it; if it was trained with aux "
            "states, remove use_aux_hidden_state (default true), else drop fc.weight",
            engine=NAME,
            source=(AUX_IDS, DRAFT_MODEL),
            dropped=[fc],
        )
    shapes = {**want, **optional_shapes(d, H, run.get("V"), run.get("Vd"))}
    if run.get("head_from_target") or d.tie_word_embeddings:
        shapes.pop(d.tensor("lm_head"), None)
    yield from shape_findings(run, shapes, NAME, "SGLang", (DRAFT_MODEL, DRAFT_LAYER, DRAFT_LOAD))
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


def _input_norm_dropped(run: EngineRun) -> Iterator[Finding]:
    """``tensor.dropped`` for a shipped ``input_norm.`` tensor :func:`tensor_use` drops:
    ``LlamaModel.__init__`` builds ``input_norm`` only with ``norm_before_fc``
    (``eagle_config`` first, then the top level) and ``load_weights`` passes over a name without
    a parameter."""
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
        title="SGLang",
        reads="from eagle_config first, then the top level",
        source=(DRAFT_MODEL, DRAFT_LOAD),
    )


def _required(run: EngineRun, want: dict[str, tuple[int, ...]]) -> dict[str, tuple[int, ...]]:
    """The allocated weights the draft's forward uses. ``LlamaModel.forward`` runs
    ``input_norm``/``fc_norm``/``fc`` only when the hidden states' width differs from the
    embedding's; with ``eagle_config.use_aux_hidden_state`` false ``_resolve_eagle_aux_hidden_state``
    turns aux capture off, so the target's own hidden state (its hidden size wide) comes in and,
    when that equals the draft's ``hidden_size``, the ``fc`` group is never used: not required."""
    H, tH = run.get("H"), run.ctx.target.H
    if run.get("use_aux") or tH is None or tH != H:
        return want
    p = run.ctx.draft.tensor_prefix
    fc_group = (p + "fc.", p + "input_norm.", p + "fc_norm.")
    return {n: s for n, s in want.items() if not n.startswith(fc_group)}


def _t2d_and_tie(run: EngineRun) -> Iterator[Finding]:
    """``t2d`` and ``tie_word_embeddings`` as SGLang uses them. ``load_weights`` skips every name
    containing ``t2d`` (a stale one changes nothing: info). With ``tie_word_embeddings``
    ``LlamaForCausalLMEagle3.__init__`` makes ``lm_head`` the embedding module, so the shipped
    ``lm_head.weight`` has no parameter and is skipped, ``set_embed`` swaps the target's [V, H]
    embedding in, and the logits processor (vocab ``draft_vocab_size``) keeps its first Vd rows:
    with Vd < V the draft proposes from weights it was not trained with (error)."""
    yield from t2d_invalid_findings(
        run, engine=NAME, title="SGLang", source=DRAFT_LOAD, severity="info"
    )
    yield from tie_reduced_vocab_findings(
        run,
        engine=NAME,
        effect=": SGLang ties lm_head to the embedding (the target's [{V}, H] after set_embed), "
        "skips the draft's lm_head.weight and keeps the first {Vd} rows' logits: the draft "
        "proposes from weights it was not trained with; {fix}",
        source=(DRAFT_INIT, DRAFT_LOAD, SET_EMBED),
        severity="error",
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
    borrow_head = bool(run.get("head_from_target"))
    keeps_own = not borrow_head and d.target_hidden_size_declared and d.Ht is not None and d.Ht != H
    yield from _width_findings(run, keeps_own, borrow_head)
    for tp in ctx.tps:
        yield from _heads(run, tp)
        yield from _sharing(run, tp, keeps_own, borrow_head)


def _width_findings(run: EngineRun, keeps_own: bool, borrow_head: bool) -> Iterator[Finding]:
    """A draft embedding of the wrong width: kept uninitialised, or swapped in from the target."""
    ctx = run.ctx
    d, t = ctx.draft, ctx.target
    H = run.get("H")
    vdraft = run.get("V") or t.V
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


def _heads(run: EngineRun, tp: int) -> Iterator[Finding]:
    """Attention heads must divide by TP, KV heads divide or be divided by it."""
    yield from heads_findings(run, tp, engine=NAME, source=HEADS, how=" (LlamaAttention asserts)")


def _sharing(run: EngineRun, tp: int, keeps_own: bool, borrow_head: bool) -> Iterator[Finding]:
    """The sharing row at TP ``tp`` (appended to ``run.sharing``), and ``embed.layout_mismatch``
    when the target's embedding is swapped into a draft embedding of another layout."""
    ctx = run.ctx
    tV, tH = target_vocab_hidden(ctx)
    H = run.get("H")
    vdraft = run.get("V") or tV
    rows_t = pad_vocab(tV, tp) // tp
    rows_d = pad_vocab(vdraft, tp) // tp
    target_shape = (rows_t, tH)
    sharded = (rows_d, H)
    replicated = (pad_vocab(vdraft, 1), H)
    verdict, note, mismatch = _embed_verdict(run, tp, keeps_own, rows_t, rows_d)
    if mismatch is not None:
        yield mismatch
    head = _head_verdict(ctx.draft, borrow_head)
    if verdict == "share":
        embed_rows, width = rows_t, tH
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


def _embed_verdict(
    run: EngineRun, tp: int, keeps_own: bool, rows_t: int, rows_d: int
) -> tuple[str, str, Finding | None]:
    """What ``set_embed`` does with the draft's embedding at TP ``tp`` (``rows_t`` / ``rows_d``:
    per-rank rows of the target's and of the draft's vocab-parallel layout): the verdict, a note,
    and ``embed.layout_mismatch`` when the target's embedding is swapped into a draft embedding
    of another layout (else None)."""
    d = run.ctx.draft
    tV, tH = target_vocab_hidden(run.ctx)
    H = run.get("H")
    vdraft = run.get("V") or tV
    if keeps_own:
        note = "target_hidden_size != hidden_size: set_embed returns early, the draft keeps its own"
        return ("own" if d.has_embed else "none"), note, None
    if vdraft == tV and H == tH:
        return (
            "share",
            ("the draft's own embed_tokens is replaced by the target's" if d.has_embed else ""),
            None,
        )
    if H == tH and (tp > 1 or vdraft < tV):
        mismatch = finding(
            "embed.layout_mismatch",
            f"SGLang swaps the target's embedding ({tV} rows, {rows_t} per rank at TP {tp}) into "
            f"a draft embedding built for vocab_size {vdraft} ({rows_d} per rank) with no shape check: "
            "the draft's vocab-parallel lookup reads the wrong rows for some tokens, silently; set the "
            f"draft's vocab_size to {tV}",
            engine=NAME,
            tp=tp,
            source=(INIT_LM_HEAD, SET_EMBED, VOCAB),
            target_rows=rows_t,
            draft_rows=rows_d,
            draft_vocab_size=vdraft,
            target_vocab_size=tV,
        )
        return "error", "", mismatch
    if H == tH:
        return (
            "share",
            f"draft vocab_size {vdraft} > target {tV}: lookups stay in range at TP 1",
            None,
        )
    return "error", "", None


def _head_verdict(d: DraftModel, borrow_head: bool) -> str:
    """The draft's head: the target's (``share``, when it borrows it), tied to its embedding,
    its own, or none."""
    if borrow_head:
        return "share"
    if d.tie_word_embeddings:
        return "tied"
    return "own" if d.has_lm_head else "none"


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


def _rope(run: EngineRun) -> Iterator[Finding]:
    """``rope.mismatch`` (info) when the draft config's rotary settings differ from the
    target text config's (:func:`recipecli.engines.common.rope_differences`): SGLang builds
    the draft's rotary embedding from the draft config alone, so it serves with the draft's
    settings, as the draft's config says it was trained (EAGLE's, SpecForge's and speculators'
    trainers build the draft's rotary embedding from the same config): it serves as trained, so
    by the severity policy (docs/check.md#severity) an info that names the difference."""
    yield from rope_mismatch_findings(
        run, run.ctx.draft_ck.config, engine=NAME, title="SGLang", source=ROPE
    )


@steps.add(
    "g",
    "Positions",
    sources=(DRAFT_WORKER, CONTEXT, CONTEXT_LEN, ROPE),
    codes=("maxpos.short", "rope.mismatch"),
)
def step_positions(run: EngineRun) -> Iterable[Finding]:
    """The draft worker is built with the target's context length, and ``ModelConfig`` refuses a
    context length above the draft's derived one (``max_position_embeddings`` times the rope
    factor): start-up fails with ``Target model's context_length (X) is greater than the derived
    context_length (Y)`` unless ``SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1``, which raises the
    draft's ``max_position_embeddings`` to X. This holds without ``--context-length`` too: the
    target's own length is what the draft gets. The draft's rotary embedding is built from the
    draft config's rope settings alone, whatever the target's are."""
    yield from _rope(run)
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
