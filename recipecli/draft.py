"""The canonical EAGLE3 draft model: every draft format normalised into one typed description.

Formats (docs/check.md#draft-formats): A original EAGLE release, B SpecForge/SGLang, C NVIDIA ModelOpt export,
D vllm-project/speculators, F vLLM-internal/AngelSlim; NeMo and nebius drafts are recognised
read-only. Every value keeps the config key it came from (``sources``), so `check --json` can show
where each number was read and `convert` can translate by meaning.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from recipecli.checkpoint.model import Checkpoint
from recipecli.configcheck import checked_value, config_file
from recipecli.errors import CheckpointFormatError

DraftFormat = Literal["A", "B", "C", "D", "F", "nemo", "nebius"]

FORMAT_NAMES: Mapping[str, str] = {
    "A": "original EAGLE release layout (<Model>ForCausalLM + draft_vocab_size)",
    "B": "SpecForge / SGLang (LlamaForCausalLMEagle3)",
    "C": "NVIDIA ModelOpt export",
    "D": "vllm-project/speculators (Eagle3Speculator)",
    "F": "vLLM-internal / AngelSlim (Eagle3LlamaForCausalLM)",
    "nemo": "NeMo LlamaEagle3DraftModel (read-only)",
    "nebius": "nebius one-layer LlamaForCausalLM with truncated_vocab_size (read-only)",
}

#: ``eagle_config`` keys only ModelOpt's exporter writes (NVIDIA Model-Optimizer modelopt/torch/export/plugins/hf_spec_export.py)
MODELOPT_EAGLE_KEYS = frozenset(
    {
        "use_input_layernorm_in_first_layer",
        "use_last_layernorm",
        "use_mtp_layernorm",
        "next_layer_regular",
        "parallel_draft_step",
        "parallel_draft_heads_num_layers",
    }
)

#: ``norm_output`` meaning by format (speculators PR #610: Eagle 3.1 chaining; SpecForge: norm before the head)
NORM_OUTPUT_MEANING: Mapping[str, str] = {
    "A": "norm-before-head",
    "B": "norm-before-head",
    "C": "post-norm-chaining",
    "D": "post-norm-chaining",
    "F": "post-norm-chaining",
    "nemo": "post-norm-chaining",
    "nebius": "norm-before-head",
}

DTYPE_NAMES: Mapping[str, str] = {
    "float16": "F16",
    "bfloat16": "BF16",
    "float32": "F32",
    "half": "F16",
    "float": "F32",
}


def detect_format(
    config: Mapping[str, Any], tensor_names: frozenset[str] | set[str] = frozenset()
) -> DraftFormat | None:
    """Detect the draft format of ``config`` (docs/check.md#draft-formats).

    ``speculators_model_type`` → D; an architecture containing ``Eagle3``/``EAGLE3`` → B, C, F or
    NeMo by name and ``eagle_config`` keys; a one-layer Llama with ``draft_vocab_size`` → A (a
    ``midlayer.*`` tensor also counts, since one 13B release says 40 layers); a one-layer Llama with
    ``truncated_vocab_size`` → nebius; otherwise None (not an EAGLE3 draft).
    """
    if config.get("speculators_model_type"):
        return "D" if str(config["speculators_model_type"]).lower() == "eagle3" else None
    archs = [str(a) for a in (config.get("architectures") or [])]
    arch = archs[0] if archs else ""
    if "eagle3" in arch.lower():
        if arch == "Eagle3LlamaForCausalLM":
            return "F"
        if arch == "LlamaEagle3DraftModel":
            return "nemo"
        if "Deepseek" in arch:
            return "C"
        eagle_cfg = config.get("eagle_config")
        if isinstance(eagle_cfg, Mapping) and MODELOPT_EAGLE_KEYS & set(eagle_cfg):
            return "C"
        return "B"
    if arch.endswith("ForCausalLM"):
        one_layer = config.get("num_hidden_layers") == 1 or any(
            n.startswith("midlayer.") for n in tensor_names
        )
        # the original release's layout under any text architecture (AngelSlim's Qwen3 drafts say
        # Qwen3ForCausalLM): vLLM's EAGLEConfig serves it as "Eagle3" + the name
        if one_layer and config.get("draft_vocab_size") is not None:
            return "A"
        if (
            arch == "LlamaForCausalLM"
            and one_layer
            and config.get("truncated_vocab_size") is not None
        ):
            return "nebius"
    return None


@dataclass(frozen=True)
class DraftModel:
    """A draft checkpoint in canonical form.

    Shapes use the notation of docs/engines/vllm.md: H draft hidden, nh/nkv heads, hd head_dim (explicit, never
    assumed H/nh when the config gives it), I intermediate, V draft ``vocab_size`` (should equal the
    target's), Vd ``draft_vocab_size`` (None in config means V), Ht target hidden the ``fc`` expects
    (``target_hidden_size``, else H), k aux hidden states (len of the aux ids, else 3).

    Attributes:
        sources: field name -> config key it came from (``transformer_layer_config.hidden_size``,
            ``eagle_config.eagle_aux_hidden_state_layer_ids``, ``default``, ``tensor:fc.weight`` …).
        aux_ids: explicit aux layer ids as written in the config (None when absent).
        aux_ids_where: ``top-level``, ``eagle_config``, ``speculators`` or ``absent``.
        top_level_aux_ids / nested_aux_ids: both lists as found (tokenspeed reads them differently).
        norm_before_residual: True/False, or None when the config does not record it.
        norm_output_meaning: ``norm-before-head`` (SpecForge) or ``post-norm-chaining``
            (speculators/vLLM/tokenspeed Eagle 3.1).
        layer_prefix: tensor-name prefix of decoder layer 0 (``midlayer.`` or ``layers.0.``).
        attention: ``GQA`` or ``MLA``.
    """

    format: DraftFormat | None
    architecture: str
    H: int | None
    nh: int | None
    nkv: int | None
    hd: int | None
    I: int | None  # noqa: E741 - the field's notation
    layers: int | None
    eps: float | None
    dtype: str | None
    V: int | None
    Vd: int
    Ht: int | None
    k: int
    aux_ids: tuple[int, ...] | None
    aux_ids_where: str
    top_level_aux_ids: tuple[int, ...] | None
    nested_aux_ids: tuple[int, ...] | None
    fc_norm: bool
    norm_before_fc: bool
    norm_before_residual: bool | None
    norm_output: bool | None
    norm_output_meaning: str
    has_embed: bool
    has_lm_head: bool
    has_d2t: bool
    has_t2d: bool
    has_fc_bias: bool
    tie_word_embeddings: bool
    draft_vocab_size_declared: bool
    target_hidden_size_declared: bool
    attention: Literal["GQA", "MLA"]
    layer_prefix: str
    tensor_prefix: str
    max_position_embeddings: int | None
    verifier: str | None
    attention_bias: bool
    sources: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_eagle3(self) -> bool:
        return self.format is not None

    @property
    def format_name(self) -> str:
        return FORMAT_NAMES.get(self.format or "", "not an EAGLE3 draft")

    def tensor(self, role: str) -> str:
        """Full tensor name of a role: ``q_proj``, ``fc``, ``lm_head``, ``d2t``, ``fc_norm.0`` …"""
        return role_name(role, self.layer_prefix, self.tensor_prefix)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            if name == "sources":
                continue
            value = getattr(self, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        out["format_name"] = self.format_name
        out["sources"] = dict(self.sources)
        return out


LAYER_ROLES: Mapping[str, str] = {
    "q_proj": "self_attn.q_proj.weight",
    "k_proj": "self_attn.k_proj.weight",
    "v_proj": "self_attn.v_proj.weight",
    "o_proj": "self_attn.o_proj.weight",
    "q_proj_bias": "self_attn.q_proj.bias",
    "k_proj_bias": "self_attn.k_proj.bias",
    "v_proj_bias": "self_attn.v_proj.bias",
    "gate_proj": "mlp.gate_proj.weight",
    "up_proj": "mlp.up_proj.weight",
    "down_proj": "mlp.down_proj.weight",
    "input_layernorm": "input_layernorm.weight",
    "hidden_norm": "hidden_norm.weight",
    "post_attention_layernorm": "post_attention_layernorm.weight",
}
TOP_ROLES: Mapping[str, str] = {
    "fc": "fc.weight",
    "fc_bias": "fc.bias",
    "norm": "norm.weight",
    "lm_head": "lm_head.weight",
    "d2t": "d2t",
    "t2d": "t2d",
    "embed_tokens": "embed_tokens.weight",
    "input_norm": "input_norm.weight",
}


def role_name(role: str, layer_prefix: str, tensor_prefix: str = "") -> str:
    """Tensor name of ``role`` under the given naming (flat ``midlayer.*`` or speculators ``layers.0.*`` naming)."""
    if role in LAYER_ROLES:
        return f"{tensor_prefix}{layer_prefix}{LAYER_ROLES[role]}"
    if role.startswith("fc_norm."):
        return f"{tensor_prefix}{role}.weight"
    if role in ("d2t", "t2d"):
        return TOP_ROLES[role]
    return f"{tensor_prefix}{TOP_ROLES[role]}"


def _layer_prefix(names: frozenset[str]) -> tuple[str, str]:
    """(tensor_prefix, layer_prefix): ``midlayer.``, ``midlayer.0.`` or ``layers.0.`` (+ ``model.``)."""
    candidates = [
        (t, lp) for t in ("", "model.") for lp in ("midlayer.", "midlayer.0.", "layers.0.")
    ]
    for tprefix, lp in candidates:  # exact probes first: O(1) each
        if f"{tprefix}{lp}input_layernorm.weight" in names:
            return tprefix, lp
    for tprefix, lp in candidates:
        if any(n.startswith(f"{tprefix}{lp}self_attn.") for n in names):
            return tprefix, lp
    return "", "midlayer."


def _ids(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, (list, tuple)) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        return tuple(value)
    return None


def _checked_ids(key: str, cfg: Mapping[str, Any], where: str) -> tuple[int, ...] | None:
    value = cfg.get(key.rsplit(".", 1)[-1])
    if value is None:
        return None
    ids = _ids(value)
    if ids is None:
        raise CheckpointFormatError(f"{key} must be a list of integers, got {value!r}", path=where)
    return ids


def _dtype(cfg: Mapping[str, Any]) -> tuple[str | None, str]:
    for key in ("torch_dtype", "dtype"):
        val = cfg.get(key)
        if isinstance(val, str) and val.replace("torch.", "") in DTYPE_NAMES:
            return DTYPE_NAMES[val.replace("torch.", "")], key
    return None, "absent"


def canonical_draft(ck: Checkpoint) -> DraftModel:
    """Normalise a draft checkpoint into a :class:`DraftModel`.

    Works from ``config.json`` and tensor names/shapes only (no values). For format D the layer
    geometry is read from ``transformer_layer_config`` and the EAGLE fields from the top level.

    Returns:
        The canonical draft; ``format`` is None when the checkpoint is not an EAGLE3 draft.
    """
    cfg = dict(ck.config)
    names = frozenset(ck.tensors)
    fmt = detect_format(cfg, names)
    src: dict[str, str] = {}
    geo = cfg
    geo_prefix = ""
    if fmt == "D" and isinstance(cfg.get("transformer_layer_config"), Mapping):
        geo = dict(cfg["transformer_layer_config"])
        geo_prefix = "transformer_layer_config."

    where_file = config_file(ck)

    def g(name: str, *keys: str, where: Mapping[str, Any] = geo, prefix: str = geo_prefix) -> Any:
        for key in keys:
            if where.get(key) is not None:
                src[name] = prefix + key
                return checked_value(prefix + key, where[key], where_file)
        src[name] = "absent"
        return None

    H = g("H", "hidden_size")
    nh = g("nh", "num_attention_heads")
    nkv = g("nkv", "num_key_value_heads")
    if nkv is None and nh is not None:
        nkv, src["nkv"] = nh, "default (= num_attention_heads)"
    hd = g("hd", "head_dim")
    if hd is None and H and nh:
        hd, src["hd"] = H // nh, "default (hidden_size / num_attention_heads)"
    inter = g("I", "intermediate_size")
    layers = g("layers", "num_hidden_layers")
    eps = g("eps", "rms_norm_eps")
    V = g("V", "vocab_size")
    maxpos = g("max_position_embeddings", "max_position_embeddings")
    attn_bias = bool(geo.get("attention_bias") or False)
    dtype, dkey = _dtype(cfg)
    if dtype is None and geo is not cfg:
        dtype, dkey = _dtype(geo)
        dkey = geo_prefix + dkey if dtype else dkey
    src["dtype"] = dkey

    Vd_raw = cfg.get("draft_vocab_size")
    if Vd_raw is None and fmt == "nebius":
        Vd_raw = cfg.get("truncated_vocab_size")
        src["Vd"] = "truncated_vocab_size"
    elif Vd_raw is not None:
        src["Vd"] = "draft_vocab_size"
    if Vd_raw is None:
        src["Vd"] = "default (= vocab_size)"
    Vd = checked_value(src["Vd"], Vd_raw, where_file) if Vd_raw is not None else int(V or 0)

    Ht_raw = cfg.get("target_hidden_size")
    if Ht_raw is not None:
        checked_value("target_hidden_size", Ht_raw, where_file)
    Ht = Ht_raw if Ht_raw is not None else H
    src["Ht"] = "target_hidden_size" if Ht_raw is not None else "default (= hidden_size)"

    top_ids = _checked_ids("eagle_aux_hidden_state_layer_ids", cfg, where_file)
    eagle_cfg = cfg.get("eagle_config") if isinstance(cfg.get("eagle_config"), Mapping) else {}
    nested_ids = _checked_ids(
        "eagle_config.eagle_aux_hidden_state_layer_ids", eagle_cfg, where_file
    )
    if top_ids is not None:
        aux_ids, where = top_ids, ("speculators" if fmt == "D" else "top-level")
        src["aux_ids"] = "eagle_aux_hidden_state_layer_ids"
    elif nested_ids is not None:
        aux_ids, where = nested_ids, "eagle_config"
        src["aux_ids"] = "eagle_config.eagle_aux_hidden_state_layer_ids"
    else:
        aux_ids, where = None, "absent"
        src["aux_ids"] = "absent"
    num_aux = cfg.get("num_aux_hidden_states")
    if aux_ids is not None:
        k, src["k"] = len(aux_ids), src["aux_ids"]
    elif isinstance(num_aux, int):
        k, src["k"] = num_aux, "num_aux_hidden_states"
    else:
        k, src["k"] = 3, "default (3)"

    def flag(name: str, *places: tuple[Mapping[str, Any], str]) -> bool | None:
        for where_map, prefix in places:
            if name in where_map and where_map[name] is not None:
                src[name] = prefix + name
                return bool(where_map[name])
        src[name] = "absent"
        return None

    fc_norm = flag("fc_norm", (cfg, ""), (eagle_cfg, "eagle_config."))
    nbf = flag("norm_before_fc", (cfg, ""), (eagle_cfg, "eagle_config."))
    nbr = flag("norm_before_residual", (cfg, ""), (eagle_cfg, "eagle_config."))
    nout = flag("norm_output", (cfg, ""), (eagle_cfg, "eagle_config."))

    tprefix, lprefix = _layer_prefix(names)
    arch = str((cfg.get("architectures") or [""])[0])
    mla = (
        "Deepseek" in arch
        or "kv_lora_rank" in geo
        or fmt == "C"
        and cfg.get("model_type") == "kimi_k2"
    )
    has = lambda role: role_name(role, lprefix, tprefix) in names  # noqa: E731
    verifier = None
    spec_cfg = cfg.get("speculators_config")
    if isinstance(spec_cfg, Mapping) and isinstance(spec_cfg.get("verifier"), Mapping):
        verifier = spec_cfg["verifier"].get("name_or_path") or None

    return DraftModel(
        format=fmt,
        architecture=arch,
        H=H,
        nh=nh,
        nkv=nkv,
        hd=hd,
        I=inter,
        layers=layers,
        eps=eps,
        dtype=dtype,
        V=V,
        Vd=Vd,
        Ht=Ht,
        k=k,
        aux_ids=aux_ids,
        aux_ids_where=where,
        top_level_aux_ids=top_ids,
        nested_aux_ids=nested_ids,
        fc_norm=bool(fc_norm),
        norm_before_fc=bool(nbf),
        norm_before_residual=nbr,
        norm_output=nout,
        norm_output_meaning=NORM_OUTPUT_MEANING.get(fmt or "", "post-norm-chaining"),
        has_embed=has("embed_tokens"),
        has_lm_head=has("lm_head"),
        has_d2t="d2t" in names,
        has_t2d="t2d" in names,
        has_fc_bias=has("fc_bias"),
        tie_word_embeddings=bool(
            cfg.get("tie_word_embeddings", geo.get("tie_word_embeddings", False))
        ),
        draft_vocab_size_declared=cfg.get("draft_vocab_size") is not None,
        target_hidden_size_declared=Ht_raw is not None,
        attention="MLA" if mla else "GQA",
        layer_prefix=lprefix,
        tensor_prefix=tprefix,
        max_position_embeddings=maxpos,
        verifier=verifier,
        attention_bias=attn_bias,
        sources=src,
    )


def expected_shapes(d: DraftModel) -> dict[str, tuple[int, ...]]:
    """Expected shape of every tensor role of ``d`` (docs/engines/vllm.md#tensors), for roles whose sizes are known.

    Only the GQA layer-0 layout is described (q/k/v take 2H inputs). Optional roles (lm_head,
    embed_tokens, d2t, t2d, input_norm, fc_norm.i) are included; callers decide presence rules.
    """
    out: dict[str, tuple[int, ...]] = {}
    H, Ht, k = d.H, d.Ht, d.k
    if d.attention == "GQA" and H and d.nh and d.nkv and d.hd:
        out["q_proj"] = (d.nh * d.hd, 2 * H)
        out["k_proj"] = (d.nkv * d.hd, 2 * H)
        out["v_proj"] = (d.nkv * d.hd, 2 * H)
        out["o_proj"] = (H, d.nh * d.hd)
    if H and d.I:
        out["gate_proj"] = (d.I, H)
        out["up_proj"] = (d.I, H)
        out["down_proj"] = (H, d.I)
    if H:
        for role in ("input_layernorm", "hidden_norm", "post_attention_layernorm", "norm"):
            out[role] = (H,)
        if Ht:
            out["fc"] = (H, k * Ht)
        if d.Vd:
            out["lm_head"] = (d.Vd, H)
        if d.V:
            out["embed_tokens"] = (d.V, H)
    if d.Vd:
        out["d2t"] = (d.Vd,)
    if d.V:
        out["t2d"] = (d.V,)
    if Ht:
        out["input_norm"] = (k * Ht,)
        for i in range(k):
            out[f"fc_norm.{i}"] = (Ht,)
    return out


_KNOWN_EXTRA = re.compile(r"^(mask_hidden|.*rotary_emb\.inv_freq)$")


def known_roles(d: DraftModel) -> dict[str, str]:
    """Tensor name -> role for every name an engine loads for this draft (single-layer layout)."""
    roles = list(LAYER_ROLES) + list(TOP_ROLES) + [f"fc_norm.{i}" for i in range(d.k)]
    return {d.tensor(r): r for r in roles}


def is_known_extra(name: str) -> bool:
    """Names engines accept beyond the role table (``mask_hidden`` for parallel drafting)."""
    return bool(_KNOWN_EXTRA.match(name))
