"""The canonical EAGLE3 draft model: every draft format normalised into one typed description.

Formats (docs/check.md#draft-formats; :mod:`recipecli.draft.formats`): A original EAGLE release,
B SpecForge/SGLang, C NVIDIA ModelOpt export, D vllm-project/speculators, F vLLM-internal/AngelSlim;
NeMo and nebius drafts are recognised read-only. Every value keeps the config key it came from
(``sources``), so `check --json` can show where each number was read and `convert` can translate
by meaning.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from recipecli.checkpoint.configcheck import checked_value, config_file
from recipecli.checkpoint.model import Checkpoint
from recipecli.draft.fields import DTYPE_NAMES
from recipecli.draft.formats import (
    FORMAT_NAMES,
    DraftFormat,
    FormatSpec,
    NormOutputMeaning,
    StatedConvention,
    detect_format,
    format_spec,
)
from recipecli.draft.tensors import layer_prefix, role_name, role_names
from recipecli.errors import CheckpointFormatError

#: where a draft config keeps its aux layer ids (``speculators``: the top level of a format D one)
AuxIdsWhere = Literal["top-level", "eagle_config", "speculators", "absent"]


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
        stated_convention: the aux-id convention the user states (``check
            --aux-id-convention``), read before the format's; None = not stated (then absent from
            :meth:`to_dict`).
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
    aux_ids_where: AuxIdsWhere
    top_level_aux_ids: tuple[int, ...] | None
    nested_aux_ids: tuple[int, ...] | None
    fc_norm: bool
    norm_before_fc: bool
    norm_before_residual: bool | None
    norm_output: bool | None
    norm_output_meaning: NormOutputMeaning
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
    stated_convention: StatedConvention | None = None

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
            if name == "sources" or (
                name == "stated_convention" and self.stated_convention is None
            ):
                continue
            value = getattr(self, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        out["format_name"] = self.format_name
        out["sources"] = dict(self.sources)
        return out


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


def layer_config(config: Mapping[str, Any], fmt: str | None) -> tuple[dict[str, Any], str]:
    """(mapping holding the layer geometry, its key prefix) of a draft config of format ``fmt``:
    the format's ``layer_config_key`` (speculators ``transformer_layer_config.``) when it holds a
    mapping, else the top level (``""``)."""
    spec = format_spec(fmt)
    key = spec.layer_config_key if spec else None
    if key and isinstance(config.get(key), Mapping):
        return dict(config[key]), key + "."
    return dict(config), ""


class _Reader:
    """Reads values out of a draft config, recording in ``src`` the key each came from."""

    def __init__(self, cfg: dict[str, Any], geo: dict[str, Any], prefix: str, where: str):
        self.cfg, self.geo, self.prefix, self.where = cfg, geo, prefix, where
        eagle_cfg = cfg.get("eagle_config")
        self.eagle_cfg: Mapping[str, Any] = eagle_cfg if isinstance(eagle_cfg, Mapping) else {}
        self.src: dict[str, str] = {}

    def geometry(self, name: str, key: str) -> Any:
        """A checked geometry value of the layer config (None when absent)."""
        if self.geo.get(key) is not None:
            self.src[name] = self.prefix + key
            return checked_value(self.prefix + key, self.geo[key], self.where)
        self.src[name] = "absent"
        return None

    def flag(self, name: str) -> bool | None:
        """A norm flag at the top level, else under ``eagle_config`` (None when absent)."""
        for where_map, prefix in ((self.cfg, ""), (self.eagle_cfg, "eagle_config.")):
            if name in where_map and where_map[name] is not None:
                self.src[name] = prefix + name
                return bool(where_map[name])
        self.src[name] = "absent"
        return None


def _read_geometry(r: _Reader) -> dict[str, Any]:
    """H, nh, nkv, hd, I, layers, eps, V, max_position_embeddings, attention_bias, dtype."""
    out: dict[str, Any] = {"H": r.geometry("H", "hidden_size")}
    out["nh"] = r.geometry("nh", "num_attention_heads")
    out["nkv"] = r.geometry("nkv", "num_key_value_heads")
    if out["nkv"] is None and out["nh"] is not None:
        out["nkv"], r.src["nkv"] = out["nh"], "default (= num_attention_heads)"
    out["hd"] = r.geometry("hd", "head_dim")
    if out["hd"] is None and out["H"] and out["nh"]:
        out["hd"], r.src["hd"] = (
            out["H"] // out["nh"],
            "default (hidden_size / num_attention_heads)",
        )
    out["I"] = r.geometry("I", "intermediate_size")
    out["layers"] = r.geometry("layers", "num_hidden_layers")
    out["eps"] = r.geometry("eps", "rms_norm_eps")
    out["V"] = r.geometry("V", "vocab_size")
    out["max_position_embeddings"] = r.geometry(
        "max_position_embeddings", "max_position_embeddings"
    )
    out["attention_bias"] = bool(r.geo.get("attention_bias") or False)
    dtype, dkey = _dtype(r.cfg)
    if dtype is None and r.prefix:
        dtype, dkey = _dtype(r.geo)
        dkey = r.prefix + dkey if dtype else dkey
    out["dtype"], r.src["dtype"] = dtype, dkey
    return out


def _read_vocab_and_width(
    r: _Reader, spec: FormatSpec | None, V: int | None, H: int | None
) -> dict[str, Any]:
    """Vd (``draft_vocab_size``, else the format's own key, else V) and Ht
    (``target_hidden_size``, else H)."""
    keys = ["draft_vocab_size"]
    if spec and spec.vocab_size_key not in keys:
        keys.append(spec.vocab_size_key)
    Vd_raw = None
    r.src["Vd"] = "default (= vocab_size)"
    for key in keys:
        if r.cfg.get(key) is not None:
            Vd_raw, r.src["Vd"] = r.cfg[key], key
            break
    Vd = checked_value(r.src["Vd"], Vd_raw, r.where) if Vd_raw is not None else int(V or 0)
    Ht_raw = r.cfg.get("target_hidden_size")
    if Ht_raw is not None:
        checked_value("target_hidden_size", Ht_raw, r.where)
    r.src["Ht"] = "target_hidden_size" if Ht_raw is not None else "default (= hidden_size)"
    return {
        "Vd": Vd,
        "Ht": Ht_raw if Ht_raw is not None else H,
        "draft_vocab_size_declared": r.cfg.get("draft_vocab_size") is not None,
        "target_hidden_size_declared": Ht_raw is not None,
    }


def _read_aux(r: _Reader, fmt: str | None) -> dict[str, Any]:
    """The aux ids (top level first, then ``eagle_config``), where they sit, and k."""
    key = "eagle_aux_hidden_state_layer_ids"
    top_ids = _checked_ids(key, r.cfg, r.where)
    nested_ids = _checked_ids(f"eagle_config.{key}", r.eagle_cfg, r.where)
    if top_ids is not None:
        aux_ids, where = top_ids, ("speculators" if fmt == "D" else "top-level")
        r.src["aux_ids"] = key
    elif nested_ids is not None:
        aux_ids, where = nested_ids, "eagle_config"
        r.src["aux_ids"] = f"eagle_config.{key}"
    else:
        aux_ids, where = None, "absent"
        r.src["aux_ids"] = "absent"
    num_aux = r.cfg.get("num_aux_hidden_states")
    if aux_ids is not None:
        k, r.src["k"] = len(aux_ids), r.src["aux_ids"]
    elif isinstance(num_aux, int):
        k, r.src["k"] = num_aux, "num_aux_hidden_states"
    else:
        k, r.src["k"] = 3, "default (3)"
    return {
        "k": k,
        "aux_ids": aux_ids,
        "aux_ids_where": where,
        "top_level_aux_ids": top_ids,
        "nested_aux_ids": nested_ids,
    }


def _read_tensors(names: frozenset[str]) -> dict[str, Any]:
    """The naming of the tensors and which optional roles are present."""
    tprefix, lprefix = layer_prefix(names)

    def has(role: str) -> bool:
        return role_name(role, lprefix, tprefix) in names

    return {
        "has_embed": has("embed_tokens"),
        "has_lm_head": has("lm_head"),
        "has_d2t": "d2t" in names,
        "has_t2d": "t2d" in names,
        "has_fc_bias": has("fc_bias"),
        "layer_prefix": lprefix,
        "tensor_prefix": tprefix,
    }


def _verifier(cfg: Mapping[str, Any]) -> str | None:
    """The speculators ``verifier.name_or_path``, if any."""
    spec_cfg = cfg.get("speculators_config")
    if isinstance(spec_cfg, Mapping) and isinstance(spec_cfg.get("verifier"), Mapping):
        return spec_cfg["verifier"].get("name_or_path") or None
    return None


def canonical_draft(ck: Checkpoint) -> DraftModel:
    """Normalise a draft checkpoint into a :class:`DraftModel`.

    Works from ``config.json`` and tensor names/shapes only (no values). For format D the layer
    geometry is read from ``transformer_layer_config`` (the format's ``layer_config_key``) and the
    EAGLE fields from the top level.

    Returns:
        The canonical draft; ``format`` is None when the checkpoint is not an EAGLE3 draft.

    Raises:
        CheckpointFormatError: a geometry value that is not a positive number, or aux ids that
            are not a list of integers (naming the config file and key).
    """
    cfg = dict(ck.config)
    names = frozenset(ck.tensors)
    fmt = detect_format(cfg, names)
    spec = format_spec(fmt)
    geo, geo_prefix = layer_config(cfg, fmt)
    r = _Reader(cfg, geo, geo_prefix, config_file(ck))
    geometry = _read_geometry(r)
    vocab = _read_vocab_and_width(r, spec, geometry["V"], geometry["H"])
    aux = _read_aux(r, fmt)
    fc_norm, nbf = r.flag("fc_norm"), r.flag("norm_before_fc")
    nbr, nout = r.flag("norm_before_residual"), r.flag("norm_output")
    arch = str((cfg.get("architectures") or [""])[0])
    mla = (
        "Deepseek" in arch
        or "kv_lora_rank" in geo
        or fmt == "C"
        and cfg.get("model_type") == "kimi_k2"
    )
    return DraftModel(
        format=fmt,
        architecture=arch,
        **geometry,
        **vocab,
        **aux,
        fc_norm=bool(fc_norm),
        norm_before_fc=bool(nbf),
        norm_before_residual=nbr,
        norm_output=nout,
        norm_output_meaning=spec.norm_output_meaning if spec else "post-norm-chaining",
        tie_word_embeddings=bool(
            cfg.get("tie_word_embeddings", geo.get("tie_word_embeddings", False))
        ),
        attention="MLA" if mla else "GQA",
        verifier=_verifier(cfg),
        sources=r.src,
        **_read_tensors(names),
    )


def known_roles(d: DraftModel) -> dict[str, str]:
    """Tensor name -> role for every name an engine loads for this draft (single-layer layout)."""
    return role_names(d.layer_prefix, d.tensor_prefix, d.k)
