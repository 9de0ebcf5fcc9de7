"""Full-size tensor spec lists for target and EAGLE3 draft checkpoints, derived from a config.

Pure functions: they only compute names, dtypes and shapes (and the values of small tensors);
:func:`recipecli.testing.builder.write_checkpoint` turns them into sparse files. Large weights are
left without a value (holes of a sparse file); norm weights get real values (ones plus a little
deterministic noise) and the vocabulary maps ``d2t``/``t2d`` get the values passed in.

Naming conventions (documented choices where the real checkpoints differ or were not checked):

* Targets use the usual HF names: ``model.embed_tokens.weight`` [V, H],
  ``model.layers.{i}.self_attn.{q,k,v,o}_proj.weight``, ``model.layers.{i}.input_layernorm.weight``,
  ``model.layers.{i}.post_attention_layernorm.weight``, ``model.norm.weight``, ``lm_head.weight``
  [V, H] (omitted when ``tie_word_embeddings``).
* Wrapped (multimodal) configs: the decoder prefix is the one
  :func:`recipecli.checkpoint.textconfig.resolve_text_config` implies (``language_model.model.``
  for ``text_config``), and the head is the TOP-LEVEL ``lm_head.weight`` (as in the Qwen3-VL
  checkpoint). Vision towers are not generated.
* MoE (Qwen3-MoE, Qwen3-VL-MoE): ``mlp.gate.weight`` [E, H] and one tensor per expert
  ``mlp.experts.{e}.{gate,up,down}_proj.weight`` (Qwen3-VL really stores fused 3-D expert
  tensors; per-expert names are used for both here). ``mlp_only_layers`` and
  ``decoder_sparse_step`` choose the dense layers.
* gpt-oss (``quant_method: mxfp4``): the real layout — attention with biases and ``sinks`` [nh],
  ``mlp.router.{weight,bias}``, experts as ``mlp.experts.gate_up_proj_blocks`` U8
  [E, 2I, H/32, 16] + ``gate_up_proj_scales`` U8 [E, 2I, H/32] + ``gate_up_proj_bias`` [E, 2I],
  ``down_proj_blocks`` U8 [E, H, I/32, 16] + ``down_proj_scales`` U8 [E, H, I/32] +
  ``down_proj_bias`` [E, H] (32 FP4 values per block, two per byte, one E8M0 scale per block).
  Total ~65 GB apparent, as the released checkpoint.
* DeepSeek-V3 (MLA): ``self_attn.q_a_proj`` [q_lora_rank, H], ``q_a_layernorm`` [q_lora_rank],
  ``q_b_proj`` [nh*(qk_nope+qk_rope), q_lora_rank], ``kv_a_proj_with_mqa``
  [kv_lora_rank+qk_rope, H], ``kv_a_layernorm`` [kv_lora_rank], ``kv_b_proj``
  [nh*(qk_nope+v_head), kv_lora_rank], ``o_proj`` [H, nh*v_head]; the first
  ``first_k_dense_replace`` layers dense (``intermediate_size``), the rest MoE with
  ``mlp.gate.weight`` [E, H] BF16, ``mlp.gate.e_score_correction_bias`` [E] F32,
  ``mlp.experts.{e}.*`` and ``mlp.shared_experts.*`` (``n_shared_experts * moe_intermediate_size``).
  ``quant_method: fp8`` with ``weight_block_size`` [128, 128]: every linear except the router,
  embedding and head is F8_E4M3 plus ``weight_scale_inv`` F32 [ceil(out/128), ceil(in/128)].
  The ``num_nextn_predict_layers`` MTP layers are included as ``model.layers.{L+j}`` (a full MoE
  decoder layer plus ``enorm``, ``hnorm``, ``eh_proj`` [H, 2H], ``embed_tokens``,
  ``shared_head.norm`` and ``shared_head.head``), as in the released checkpoint, whose 163 shards
  hold ~688.6 GB.
* MiniMax-M3 (flat ``minimax_m3`` and the ``text_config`` wrapper of MiniMax-M3-NVFP4): names taken
  from the NVFP4 config's ``quantized_layers``: ``self_attn.{q,k,v,o}_proj`` (+ per-head
  ``q_norm``/``k_norm`` [hd]), ``self_attn.index_q_proj`` [index_heads*index_dim, H] and
  ``index_k_proj`` [index_dim, H] on sparse-attention layers (shapes guessed from
  ``sparse_attention_config``), ``mlp.{gate,up,down}_proj`` (``dense_intermediate_size``) where
  ``moe_layer_freq[i] == 0``, else ``block_sparse_moe.gate.weight`` [E, H],
  ``block_sparse_moe.e_score_correction_bias`` [E] F32, ``block_sparse_moe.experts.{e}.w1/w3``
  [I, H] and ``w2`` [H, I], and ``block_sparse_moe.shared_experts.{gate,up,down}_proj``.
  MTP modules are not generated. ``quant_method: modelopt`` applies each module's
  ``quantized_layers`` entry: NVFP4 → ``weight`` U8 [out, in/2] + ``weight_scale`` F8_E4M3
  [out, in/16] + ``weight_scale_2`` F32 [] + ``input_scale`` F32 []; MXFP8 → ``weight`` F8_E4M3
  [out, in] + ``weight_scale`` U8 [out, in/32].

Drafts follow the EAGLE3 draft anatomy of docs/engines/vllm.md exactly (see :func:`draft_specs`).
The small pieces (holes, norms, linear layers under a quantisation scheme) are in
:mod:`recipecli.testing.spec_parts`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np

from recipecli.checkpoint.textconfig import resolve_text_config
from recipecli.testing.builder import TensorSpec
from recipecli.testing.spec_parts import (
    Quant,
    config_dtype,
    hole,
    linear,
    norm,
    require_ints,
)
from recipecli.testing.spec_parts import norm_values as norm_values  # tests import it from here


def _family(text: Mapping[str, Any], config: Mapping[str, Any]) -> str:
    model_type = str(text.get("model_type") or config.get("model_type") or "")
    if "kv_lora_rank" in text:
        return "mla"
    if model_type.startswith("minimax_m3"):
        return "minimax_m3"
    if model_type == "gpt_oss":
        return "gpt_oss"
    if text.get("num_experts") or text.get("n_routed_experts"):
        return "moe"
    return "dense"


# --------------------------------------------------------------------------- target pieces


def _attention_std(p: str, c: Mapping[str, Any], dt: str, q: Quant) -> list[TensorSpec]:
    H, nh, nkv = require_ints(c, "hidden_size", "num_attention_heads", "num_key_value_heads")
    hd = int(c.get("head_dim") or H // nh)
    specs: list[TensorSpec] = []
    for proj, out, inp in (
        ("q_proj", nh * hd, H),
        ("k_proj", nkv * hd, H),
        ("v_proj", nkv * hd, H),
        ("o_proj", H, nh * hd),
    ):
        mod = f"{p}self_attn.{proj}"
        specs += linear(mod, out, inp, scheme=q.scheme(mod), dtype=dt)
        if c.get("attention_bias") and proj != "o_proj":
            specs.append(hole(f"{mod}.bias", dt, (out,)))
    if str(c.get("model_type") or "").startswith("qwen3") or c.get("use_qk_norm"):
        specs += [norm(f"{p}self_attn.q_norm.weight", dt, hd)]
        specs += [norm(f"{p}self_attn.k_norm.weight", dt, hd)]
    return specs


def _mlp(
    p: str,
    inter: int,
    H: int,
    dt: str,
    q: Quant,
    names: tuple[str, str, str] = ("gate_proj", "up_proj", "down_proj"),
) -> list[TensorSpec]:
    gate, up, down = names
    specs: list[TensorSpec] = []
    for proj, out, inp in ((gate, inter, H), (up, inter, H), (down, H, inter)):
        mod = f"{p}{proj}"
        specs += linear(mod, out, inp, scheme=q.scheme(mod), dtype=dt)
    return specs


def _layer_norms(p: str, H: int, dt: str) -> list[TensorSpec]:
    return [
        norm(f"{p}input_layernorm.weight", dt, H),
        norm(f"{p}post_attention_layernorm.weight", dt, H),
    ]


def _embed_head(
    prefix: str, text: Mapping[str, Any], config: Mapping[str, Any], dt: str
) -> tuple[list[TensorSpec], list[TensorSpec]]:
    V, H = require_ints(text, "vocab_size", "hidden_size")
    head = [norm(f"{prefix}norm.weight", dt, H)]
    tied = text.get("tie_word_embeddings", config.get("tie_word_embeddings", False))
    if not tied:
        head.append(hole("lm_head.weight", dt, (V, H)))
    return [hole(f"{prefix}embed_tokens.weight", dt, (V, H))], head


def _layers_dense_or_moe(prefix: str, c: Mapping[str, Any], dt: str, q: Quant) -> list[TensorSpec]:
    H, L, inter = require_ints(c, "hidden_size", "num_hidden_layers", "intermediate_size")
    E = int(c.get("num_experts") or 0)
    step = int(c.get("decoder_sparse_step") or 1)
    mlp_only = set(c.get("mlp_only_layers") or [])
    specs: list[TensorSpec] = []
    for i in range(L):
        p = f"{prefix}layers.{i}."
        specs += _layer_norms(p, H, dt) + _attention_std(p, c, dt, q)
        if E and i not in mlp_only and (i + 1) % step == 0:
            I_moe = int(c["moe_intermediate_size"])
            specs.append(hole(f"{p}mlp.gate.weight", dt, (E, H)))
            for e in range(E):
                specs += _mlp(f"{p}mlp.experts.{e}.", I_moe, H, dt, q)
        else:
            specs += _mlp(f"{p}mlp.", inter, H, dt, q)
    return specs


def _layers_gpt_oss(prefix: str, c: Mapping[str, Any], dt: str, q: Quant) -> list[TensorSpec]:
    H, L, inter, nh = require_ints(
        c, "hidden_size", "num_hidden_layers", "intermediate_size", "num_attention_heads"
    )
    E = int(c["num_local_experts"])
    mxfp4 = (c.get("quantization_config") or {}).get("quant_method") == "mxfp4"
    specs: list[TensorSpec] = []
    for i in range(L):
        p = f"{prefix}layers.{i}."
        specs += _layer_norms(p, H, dt) + _attention_std(p, c, dt, q)
        specs += [hole(f"{p}self_attn.sinks", dt, (nh,))]
        specs += [
            hole(f"{p}mlp.router.weight", dt, (E, H)),
            hole(f"{p}mlp.router.bias", dt, (E,)),
        ]
        x = f"{p}mlp.experts."
        if mxfp4:
            specs += [
                hole(f"{x}gate_up_proj_blocks", "U8", (E, 2 * inter, H // 32, 16)),
                hole(f"{x}gate_up_proj_scales", "U8", (E, 2 * inter, H // 32)),
                hole(f"{x}gate_up_proj_bias", dt, (E, 2 * inter)),
                hole(f"{x}down_proj_blocks", "U8", (E, H, inter // 32, 16)),
                hole(f"{x}down_proj_scales", "U8", (E, H, inter // 32)),
                hole(f"{x}down_proj_bias", dt, (E, H)),
            ]
        else:
            specs += [
                hole(f"{x}gate_up_proj", dt, (E, H, 2 * inter)),
                hole(f"{x}gate_up_proj_bias", dt, (E, 2 * inter)),
                hole(f"{x}down_proj", dt, (E, inter, H)),
                hole(f"{x}down_proj_bias", dt, (E, H)),
            ]
    return specs


def _mla_layer(p: str, c: Mapping[str, Any], dt: str, q: Quant, *, dense: bool) -> list[TensorSpec]:
    H, nh = require_ints(c, "hidden_size", "num_attention_heads")
    qr, kvr, nope, rope, vd = require_ints(
        c, "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"
    )
    a = f"{p}self_attn."
    specs = _layer_norms(p, H, dt)
    specs += linear(f"{a}q_a_proj", qr, H, scheme=q.scheme(f"{a}q_a_proj"), dtype=dt)
    specs += [norm(f"{a}q_a_layernorm.weight", dt, qr)]
    specs += linear(
        f"{a}q_b_proj", nh * (nope + rope), qr, scheme=q.scheme(f"{a}q_b_proj"), dtype=dt
    )
    mod = f"{a}kv_a_proj_with_mqa"
    specs += linear(mod, kvr + rope, H, scheme=q.scheme(mod), dtype=dt)
    specs += [norm(f"{a}kv_a_layernorm.weight", dt, kvr)]
    specs += linear(
        f"{a}kv_b_proj", nh * (nope + vd), kvr, scheme=q.scheme(f"{a}kv_b_proj"), dtype=dt
    )
    specs += linear(f"{a}o_proj", H, nh * vd, scheme=q.scheme(f"{a}o_proj"), dtype=dt)
    if dense:
        return specs + _mlp(f"{p}mlp.", int(c["intermediate_size"]), H, dt, q)
    E, I_moe = require_ints(c, "n_routed_experts", "moe_intermediate_size")
    specs += [
        hole(f"{p}mlp.gate.weight", dt, (E, H)),
        hole(f"{p}mlp.gate.e_score_correction_bias", "F32", (E,)),
    ]
    for e in range(E):
        specs += _mlp(f"{p}mlp.experts.{e}.", I_moe, H, dt, q)
    shared = int(c.get("n_shared_experts") or 0)
    if shared:
        specs += _mlp(f"{p}mlp.shared_experts.", shared * I_moe, H, dt, q)
    return specs


def _layers_mla(prefix: str, c: Mapping[str, Any], dt: str, q: Quant) -> list[TensorSpec]:
    H, L, V = require_ints(c, "hidden_size", "num_hidden_layers", "vocab_size")
    first_dense = int(c.get("first_k_dense_replace") or 0)
    specs: list[TensorSpec] = []
    for i in range(L):
        specs += _mla_layer(f"{prefix}layers.{i}.", c, dt, q, dense=i < first_dense)
    for j in range(int(c.get("num_nextn_predict_layers") or 0)):
        p = f"{prefix}layers.{L + j}."
        specs += _mla_layer(p, c, dt, q, dense=False)
        specs += [
            norm(f"{p}enorm.weight", dt, H),
            norm(f"{p}hnorm.weight", dt, H),
            hole(f"{p}eh_proj.weight", dt, (H, 2 * H)),
            hole(f"{p}embed_tokens.weight", dt, (V, H)),
            norm(f"{p}shared_head.norm.weight", dt, H),
            hole(f"{p}shared_head.head.weight", dt, (V, H)),
        ]
    return specs


def _layers_minimax(prefix: str, c: Mapping[str, Any], dt: str, q: Quant) -> list[TensorSpec]:
    H, L = require_ints(c, "hidden_size", "num_hidden_layers")
    E = int(c["num_local_experts"])
    I_moe = int(c.get("moe_intermediate_size") or c["intermediate_size"])
    I_dense = int(c.get("dense_intermediate_size") or c["intermediate_size"])
    I_shared = int(c.get("shared_intermediate_size") or I_moe) * int(c.get("n_shared_experts") or 0)
    moe_freq = c.get("moe_layer_freq") or [1] * L
    sparse = c.get("sparse_attention_config") or {}
    sparse_freq = sparse.get("sparse_attention_freq") or [0] * L
    idx_heads = int(sparse.get("sparse_num_index_heads") or 0)
    idx_dim = int(sparse.get("sparse_index_dim") or 0)
    specs: list[TensorSpec] = []
    for i in range(L):
        p = f"{prefix}layers.{i}."
        specs += _layer_norms(p, H, dt) + _attention_std(p, c, dt, q)
        if sparse.get("use_sparse_attention") and sparse_freq[i]:
            for proj, out in (("index_q_proj", idx_heads * idx_dim), ("index_k_proj", idx_dim)):
                mod = f"{p}self_attn.{proj}"
                specs += linear(mod, out, H, scheme=q.scheme(mod), dtype=dt)
        if not moe_freq[i]:
            specs += _mlp(f"{p}mlp.", I_dense, H, dt, q)
            continue
        m = f"{p}block_sparse_moe."
        specs += [hole(f"{m}gate.weight", dt, (E, H))]
        if c.get("use_routing_bias"):
            specs += [hole(f"{m}e_score_correction_bias", "F32", (E,))]
        for e in range(E):
            specs += _mlp(f"{m}experts.{e}.", I_moe, H, dt, q, names=("w1", "w3", "w2"))
        if I_shared:
            specs += _mlp(f"{m}shared_experts.", I_shared, H, dt, q)
    return specs


_LAYERS = {
    "dense": _layers_dense_or_moe,
    "moe": _layers_dense_or_moe,
    "gpt_oss": _layers_gpt_oss,
    "mla": _layers_mla,
    "minimax_m3": _layers_minimax,
}


def target_specs(config: Mapping[str, Any]) -> list[TensorSpec]:
    """Full-size tensor specs of a target model checkpoint built from its ``config.json``.

    Supports the fixture targets: Llama-3.1 (dense), Qwen3 (dense, q/k norms), Qwen3-MoE,
    Qwen3-VL-MoE (``text_config`` wrapper), gpt-oss (MXFP4 experts), DeepSeek-V3 (MLA, FP8 block
    quantisation, MTP layer) and MiniMax-M3 (flat BF16, and NVFP4/MXFP8 under ``text_config``).
    See the module docstring for the naming and quantisation conventions.

    Args:
        config: the parsed top-level ``config.json``; the text config and tensor prefix come
            from :func:`~recipecli.checkpoint.textconfig.resolve_text_config`.

    Returns:
        Specs in checkpoint order: embedding, layers, final norm, ``lm_head`` (unless tied).
        Norm weights carry values; everything else is a hole.

    Raises:
        ValueError: the config lacks a needed integer (e.g. a template with nulls).
    """
    text = resolve_text_config(config)
    c: dict[str, Any] = dict(text.config)
    if "quantization_config" not in c and "quantization_config" in config:
        c["quantization_config"] = config["quantization_config"]
    dt = config_dtype(text.config, config)
    q = Quant(config)
    prefix = text.tensor_prefix or "model."
    embed, tail = _embed_head(prefix, c, config, dt)
    layers = _LAYERS[_family(c, config)](prefix, c, dt, q)
    return embed + layers + tail


# --------------------------------------------------------------------------- drafts


def valid_vocab_map(V: int, Vd: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A valid draft→target vocabulary map (offsets: target_id = draft_id + d2t[draft_id]; docs/engines/vllm.md#vocabulary-maps).

    Args:
        V: target vocabulary size.
        Vd: draft vocabulary size (<= V).
        seed: RNG seed.

    Returns:
        ``(d2t, t2d)``: ``d2t`` int64 [Vd] OFFSETS (``target_id = i + d2t[i]``) of a random
        strictly increasing choice of Vd target ids; ``t2d`` bool [V] with exactly those ids True.
    """
    if not 0 < Vd <= V:
        raise ValueError(f"need 0 < Vd <= V, got Vd={Vd}, V={V}")
    rng = np.random.default_rng(seed)
    ids = np.sort(rng.choice(V, size=Vd, replace=False)).astype(np.int64)
    d2t = ids - np.arange(Vd, dtype=np.int64)
    t2d = np.zeros(V, dtype=bool)
    t2d[ids] = True
    return d2t, t2d


def draft_geometry(config: Mapping[str, Any]) -> dict[str, int]:
    """H, nh, nkv, hd, I, V, Vd of a draft config (flat, or speculators' ``transformer_layer_config``).

    ``hd`` is ``head_dim`` when present, else H // nh; ``Vd`` is ``draft_vocab_size`` when set,
    else V (notation of docs/engines/vllm.md).

    Raises:
        ValueError: a needed field is missing or null.
    """
    layer = config.get("transformer_layer_config") or config
    H, nh, nkv, inter = require_ints(
        layer, "hidden_size", "num_attention_heads", "num_key_value_heads", "intermediate_size"
    )
    V = layer.get("vocab_size") or config.get("vocab_size")
    if not isinstance(V, int):
        raise ValueError("config lacks integer vocab_size")
    Vd = config.get("draft_vocab_size") or V
    hd = int(layer.get("head_dim") or H // nh)
    return {"H": H, "nh": nh, "nkv": nkv, "hd": hd, "I": inter, "V": V, "Vd": int(Vd)}


def draft_specs(
    config: Mapping[str, Any],
    *,
    naming: Literal["midlayer", "layers.0"] = "midlayer",
    k: int = 3,
    target_hidden: int | None = None,
    with_embed: bool = False,
    with_lm_head: bool = True,
    d2t: np.ndarray | None = None,
    t2d: np.ndarray | None = None,
    fc_norm: bool = False,
    norm_before_fc: bool = False,
) -> list[TensorSpec]:
    """Full-size tensor specs of a one-layer EAGLE3 draft, as vLLM's Eagle3LlamaForCausalLM allocates them (docs/engines/vllm.md#tensors).

    Shapes (H draft hidden, Ht = ``target_hidden`` or ``target_hidden_size`` or H):
    q [nh*hd, 2H]; k/v [nkv*hd, 2H]; o [H, nh*hd]; gate/up [I, H]; down [H, I];
    input_layernorm / hidden_norm / post_attention_layernorm [H]; fc [H, k*Ht]; norm [H];
    lm_head [Vd, H]; d2t [Vd] I64; t2d [V] BOOL; embed_tokens [V, H]; input_norm [k*Ht];
    fc_norm.{i} [Ht]. Attention biases when ``attention_bias``; ``fc.bias`` [H] when ``bias``
    (original EAGLE).

    Args:
        config: draft ``config.json`` (flat, or speculators with ``transformer_layer_config``).
        naming: ``midlayer`` (flat: ``midlayer.*``) or ``layers.0`` (speculators).
        k: number of auxiliary target hidden states fed to ``fc``.
        target_hidden: Ht; default ``config["target_hidden_size"]`` or H.
        with_embed: include ``embed_tokens.weight`` [V, H].
        with_lm_head: include ``lm_head.weight`` [Vd, H].
        d2t: int64 [Vd] offsets to store (with values), or None to omit.
        t2d: bool [V] to store (with values), or None to omit.
        fc_norm: add ``fc_norm.{i}.weight`` [Ht] for i < k (Eagle 3.1).
        norm_before_fc: add ``input_norm.weight`` [k*Ht].

    Returns:
        Specs; norm weights and ``d2t``/``t2d`` carry values, the rest are holes. dtype from
        ``torch_dtype``/``dtype`` (float16 → F16, bfloat16 → BF16; BF16 when absent).

    Raises:
        ValueError: missing geometry, or ``d2t``/``t2d`` of the wrong length.
    """
    g = draft_geometry(config)
    H, V, Vd = g["H"], g["V"], g["Vd"]
    Ht = int(target_hidden or config.get("target_hidden_size") or H)
    layer_cfg = config.get("transformer_layer_config") or {}
    dt = config_dtype(config, layer_cfg)
    p = "midlayer." if naming == "midlayer" else "layers.0."
    bias = bool(config.get("attention_bias") or layer_cfg.get("attention_bias"))
    specs = _draft_layer_specs(p, dt, g, attention_bias=bias)
    specs.append(hole("fc.weight", dt, (H, k * Ht)))
    if config.get("bias"):
        specs.append(hole("fc.bias", dt, (H,)))
    specs.append(norm("norm.weight", dt, H))
    if with_lm_head:
        specs.append(hole("lm_head.weight", dt, (Vd, H)))
    specs += _vocab_map_specs(d2t, t2d, V=V, Vd=Vd)
    if with_embed:
        specs.append(hole("embed_tokens.weight", dt, (V, H)))
    return specs + _aux_norm_specs(dt, k, Ht, norm_before_fc=norm_before_fc, fc_norm=fc_norm)


def _aux_norm_specs(
    dt: str, k: int, Ht: int, *, norm_before_fc: bool, fc_norm: bool
) -> list[TensorSpec]:
    """The optional norms of the ``k`` aux hidden states (Eagle 3.1): ``input_norm.weight``
    [k*Ht] over their concatenation (``norm_before_fc``), then ``fc_norm.{i}.weight`` [Ht], one
    per aux layer (``fc_norm``)."""
    specs: list[TensorSpec] = []
    if norm_before_fc:
        specs.append(norm("input_norm.weight", dt, k * Ht))
    if fc_norm:
        specs += [norm(f"fc_norm.{i}.weight", dt, Ht) for i in range(k)]
    return specs


def _draft_layer_specs(
    p: str, dt: str, g: Mapping[str, int], *, attention_bias: bool
) -> list[TensorSpec]:
    """The draft's one decoder layer under prefix ``p``: attention (q/k/v take 2H: the embedding
    and the fused hidden state), biases when ``attention_bias``, MLP and its three norms;
    ``g`` is :func:`draft_geometry`."""
    H, nh, nkv, hd, inter = (g[x] for x in ("H", "nh", "nkv", "hd", "I"))
    a = f"{p}self_attn."
    specs = [
        hole(f"{a}q_proj.weight", dt, (nh * hd, 2 * H)),
        hole(f"{a}k_proj.weight", dt, (nkv * hd, 2 * H)),
        hole(f"{a}v_proj.weight", dt, (nkv * hd, 2 * H)),
        hole(f"{a}o_proj.weight", dt, (H, nh * hd)),
    ]
    if attention_bias:
        specs += [
            hole(f"{a}q_proj.bias", dt, (nh * hd,)),
            hole(f"{a}k_proj.bias", dt, (nkv * hd,)),
            hole(f"{a}v_proj.bias", dt, (nkv * hd,)),
        ]
    specs += [
        hole(f"{p}mlp.gate_proj.weight", dt, (inter, H)),
        hole(f"{p}mlp.up_proj.weight", dt, (inter, H)),
        hole(f"{p}mlp.down_proj.weight", dt, (H, inter)),
        norm(f"{p}input_layernorm.weight", dt, H),
        norm(f"{p}hidden_norm.weight", dt, H),
        norm(f"{p}post_attention_layernorm.weight", dt, H),
    ]
    return specs


def _vocab_map_specs(
    d2t: np.ndarray | None, t2d: np.ndarray | None, *, V: int, Vd: int
) -> list[TensorSpec]:
    """``d2t`` I64 [Vd] and ``t2d`` BOOL [V] with their values, each when given.

    Raises:
        ValueError: one of them has the wrong length.
    """
    specs = []
    if d2t is not None:
        d2t = np.asarray(d2t, dtype=np.int64)
        if d2t.shape != (Vd,):
            raise ValueError(f"d2t has shape {d2t.shape}, expected ({Vd},)")
        specs.append(TensorSpec("d2t", "I64", (Vd,), d2t))
    if t2d is not None:
        t2d = np.asarray(t2d, dtype=bool)
        if t2d.shape != (V,):
            raise ValueError(f"t2d has shape {t2d.shape}, expected ({V},)")
        specs.append(TensorSpec("t2d", "BOOL", (V,), t2d))
    return specs


def total_bytes(specs: list[TensorSpec]) -> int:
    """Sum of the apparent sizes of ``specs`` in bytes."""
    return sum(s.nbytes for s in specs)
