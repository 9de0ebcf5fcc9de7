"""The accounting of one engine's load of a draft (issue #24 item 1): every config key the engine
reads, defaults or ignores, every checkpoint tensor it loads, skips, drops or refuses, and every
parameter it builds, filled or left at its initial value.

Shared types and the key part; each engine's ``accounting.py`` supplies its own name map (the
one its tensors step uses) and its parameter list. ``check --explain`` shows it (text, and
``engines.<engine>.accounting`` in ``--json``; docs/check.md#accounting).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from recipecli.engines.base import EngineRun

KeyStatus = Literal["read", "defaulted", "ignored"]
TensorStatus = Literal["loaded", "skipped", "dropped", "refused"]
ParamStatus = Literal["filled", "from target", "left at init"]


@dataclass(frozen=True)
class KeyUse:
    """One config key. ``key``: dotted path in the draft's config.json (``hidden_size``,
    ``eagle_config.norm_before_fc``); ``status``: ``read`` (the engine uses the config's value),
    ``defaulted`` (absent or not read there, the engine uses its default) or ``ignored`` (in the
    config, not read by the engine's load path); ``value``: what the engine uses (None when
    ignored); ``where``: ``top level``, ``eagle_config``, ``transformer_layer_config``,
    ``default`` or ``-``; ``origin``: the engine model's words."""

    key: str
    status: KeyStatus
    value: Any
    where: str
    origin: str

    def to_dict(self) -> dict[str, Any]:
        """``{"key", "status", "value", "where", "origin"}``."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class TensorUse:
    """One checkpoint tensor. ``status``: ``loaded`` (into ``param``, the engine's name after its
    ``load_weights`` renames), ``skipped`` (deliberately, as ``load_weights`` does: ``t2d``),
    ``dropped`` (discarded without a word: a trained weight the draft runs without) or
    ``refused`` (the load raises on it); ``note``: why, in the engine's terms."""

    name: str
    status: TensorStatus
    param: str | None
    note: str

    def to_dict(self) -> dict[str, Any]:
        """``{"name", "status", "param", "note"}``."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class ParamUse:
    """One parameter (or buffer) the engine builds for the draft. ``status``: ``filled`` (from
    the checkpoint tensor ``by``), ``from target`` (the engine swaps the target's in: ``by``
    says which) or ``left at init`` (nothing fills it: zeros or uninitialised memory)."""

    param: str
    status: ParamStatus
    by: str | None

    def to_dict(self) -> dict[str, Any]:
        """``{"param", "status", "by"}``."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class Accounting:
    """An engine's accounting of one draft: ``keys``, ``tensors`` (checkpoint order),
    ``params`` (build order) and ``target_keys`` (the target's text-config keys the engine reads
    on the EAGLE3 path, :func:`target_key_uses`; ``where`` is the text config's path)."""

    keys: tuple[KeyUse, ...]
    tensors: tuple[TensorUse, ...]
    params: tuple[ParamUse, ...]
    target_keys: tuple[KeyUse, ...] = ()

    def tensors_by(self, status: str) -> list[str]:
        """Checkpoint tensor names of one status."""
        return [t.name for t in self.tensors if t.status == status]

    def params_by(self, status: str) -> list[str]:
        """Parameter names of one status."""
        return [p.param for p in self.params if p.status == status]

    def to_dict(self) -> dict[str, Any]:
        """``engines.<engine>.accounting`` of ``check --explain --json``: ``keys``, ``tensors``,
        ``params``, ``target_keys`` (lists of the entries' dicts)."""
        return {
            "keys": [k.to_dict() for k in self.keys],
            "tensors": [t.to_dict() for t in self.tensors],
            "params": [p.to_dict() for p in self.params],
            "target_keys": [k.to_dict() for k in self.target_keys],
        }


#: resolved value name -> the config key it stands for (the engine models' names)
VALUE_KEYS: Mapping[str, str] = {
    "H": "hidden_size",
    "nh": "num_attention_heads",
    "nkv": "num_key_value_heads",
    "hd": "head_dim",
    "I": "intermediate_size",
    "layers": "num_hidden_layers",
    "eps": "rms_norm_eps",
    "V": "vocab_size",
    "Vd": "draft_vocab_size",
    "Ht": "target_hidden_size",
    "k": "num_aux_hidden_states",
    "use_aux": "eagle_config.use_aux_hidden_state",
    "norm_before_fc": "norm_before_fc",
    "fc_norm": "fc_norm",
    "norm_output": "norm_output",
    "norm_before_residual": "norm_before_residual",
    "model_type": "model_type",
    "max_position_embeddings": "max_position_embeddings",
}

#: keys of a config.json that describe the file, not the model (never "ignored")
META_KEYS = frozenset({"architectures", "transformers_version", "_name_or_path", "torch_dtype"})


def _where(origin: str, key: str) -> tuple[KeyStatus, str, str]:
    """(status, where, the config key) of a resolved value from its origin text: ``config:
    <key>`` is read at the top level (or under ``transformer_layer_config``), a named
    ``eagle_config.<key>`` under ``eagle_config``; anything else is the engine's default."""
    o = origin.strip()
    if o.startswith("config: "):
        read = o[len("config: ") :].split()[0]
        if read.startswith("transformer_layer_config."):
            return "read", "transformer_layer_config", read
        if read.startswith("eagle_config."):
            return "read", "eagle_config", read
        return "read", "top level", read
    if o.startswith("eagle_config.") or o.startswith("len(eagle_config."):
        read = o.split("(")[-1].rstrip(")") if o.startswith("len(") else o.split()[0]
        return "read", "eagle_config", read
    if o.startswith("transformer_layer_config."):
        return "read", "transformer_layer_config", o.split()[0]
    return "defaulted", "default", key


def key_uses(run: EngineRun, extra_read: Iterable[str] = ()) -> tuple[KeyUse, ...]:
    """The draft config's keys as the engine's resolved values account for them
    (:data:`VALUE_KEYS`), then every other key of the config (top level and ``eagle_config.*``)
    as ``ignored`` unless it is in ``extra_read`` (keys a step reads without a resolved value,
    such as the aux ids) or :data:`META_KEYS`."""
    out: dict[str, KeyUse] = {}
    for name, key in VALUE_KEYS.items():
        if name not in run.resolved:
            continue
        v = run.resolved[name]
        status, where, read = _where(v.origin, key)
        out.setdefault(read, KeyUse(read, status, v.value, where, v.origin))
    used = set(out) | set(extra_read) | META_KEYS
    for key in config_keys(run.ctx.draft_ck.config):
        if key in used or key.split(".", 1)[0] in ("transformer_layer_config",):
            continue
        out[key] = KeyUse(key, "ignored", None, "-", "not read by the draft's load path")
    return tuple(out.values())


def config_keys(cfg: Mapping[str, Any]) -> list[str]:
    """The keys of a draft config: its top-level keys, ``eagle_config`` and
    ``transformer_layer_config`` expanded one level (``eagle_config.norm_before_fc``)."""
    out: list[str] = []
    for key, value in cfg.items():
        if key in ("eagle_config", "transformer_layer_config") and isinstance(value, dict):
            out += [f"{key}.{k}" for k in value]
        else:
            out.append(key)
    return out


#: the target text-config keys of its rotary embedding (compared with the draft's: rope.mismatch)
ROPE_KEYS = ("rope_theta", "rope_scaling", "rope_parameters")


def target_key_uses(
    run: EngineRun, reads: Mapping[str, str], rope_origin: str
) -> tuple[KeyUse, ...]:
    """The target's text-config keys (``ctx.target_ck.text.config``; ``where`` is its path,
    ``text_config`` for a wrapped target, else ``top level``) as one engine uses them on the
    EAGLE3 path: each key of ``reads`` (key -> what the engine reads it for and where, its code)
    ``read`` with the config's value, or ``defaulted`` (value None) when the text config lacks
    it; then the target's rotary keys (:data:`ROPE_KEYS`) present as ``ignored``, with
    ``rope_origin`` (every engine builds the draft's rotary embedding from the draft config)."""
    tc = run.ctx.target_ck.text.config
    where = run.ctx.target.wrapper or "top level"
    out = [
        KeyUse(k, "read", tc[k], where, o)
        if k in tc
        else KeyUse(k, "defaulted", None, "default", o)
        for k, o in reads.items()
    ]
    out += [KeyUse(k, "ignored", None, where, rope_origin) for k in ROPE_KEYS if k in tc]
    return tuple(out)


def account(
    run: EngineRun,
    tensor_use: Callable[[str], TensorUse],
    params: Mapping[str, str | None],
    extra_read: Iterable[str] = (),
    target_keys: tuple[KeyUse, ...] = (),
) -> Accounting:
    """The accounting of ``run``: each checkpoint tensor through the engine's ``tensor_use`` (its
    ``load_weights`` name map), each parameter of ``params`` (name -> what the engine swaps in
    from the target, or None) filled by the tensors loaded into it, else from the target, else
    left at init; the keys by :func:`key_uses`; ``target_keys`` as given
    (:func:`target_key_uses`)."""
    tensors = tuple(tensor_use(n) for n in run.ctx.draft_ck.tensors)
    by_param: dict[str, list[str]] = {}
    for t in tensors:
        if t.status == "loaded" and t.param is not None:
            by_param.setdefault(t.param, []).append(t.name)
    rows: list[ParamUse] = []
    for param, target in params.items():
        if param in by_param:
            rows.append(ParamUse(param, "filled", ", ".join(by_param[param])))
        elif target is not None:
            rows.append(ParamUse(param, "from target", target))
        else:
            rows.append(ParamUse(param, "left at init", None))
    return Accounting(key_uses(run, extra_read), tensors, tuple(rows), target_keys)


#: the stacked projections every engine's ``load_weights`` folds (checkpoint -> parameter)
STACKED: tuple[tuple[str, str], ...] = (
    (".q_proj", ".qkv_proj"),
    (".k_proj", ".qkv_proj"),
    (".v_proj", ".qkv_proj"),
    (".gate_proj", ".gate_up_proj"),
    (".up_proj", ".gate_up_proj"),
)


def stack(name: str) -> str:
    """``name`` with the first stacked projection renamed (``...q_proj.weight`` ->
    ``...qkv_proj.weight``), as vLLM's ``orig_to_new_stacked`` and the SGLang/tokenspeed
    ``stacked_params_mapping`` loops do (each stops at the first match)."""
    for old, new in STACKED:
        if old in name:
            return name.replace(old, new)
    return name
