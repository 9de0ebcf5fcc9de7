"""Arithmetic both engines' load paths share: vocab padding, TP splits, the d2t map, draft bytes.

These are facts of code the engines have in common (``VocabParallelEmbedding`` pads to 64 in vLLM
and tokenspeed alike) or of the checkpoint itself (whether ``d2t`` is a valid offset map); each
engine model decides when and how they apply, so nothing here names an engine.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from recipecli.codes import finding
from recipecli.draft import (
    LAYER_ROLES,
    DraftModel,
    is_known_extra,
    known_roles,
)
from recipecli.draft.trainers import trained_states
from recipecli.engines.base import (
    Citation,
    EngineRun,
    PairContext,
    Source,
    transformers_defaults,
)
from recipecli.engines.base import (
    SharingRow as SharingRow,  # defined in base (EngineRun.sharing); recipecli.check imports it here
)
from recipecli.findings import Finding

VOCAB_PADDING = 64
DTYPE_BYTES: Mapping[str, int] = {
    "F32": 4,
    "BF16": 2,
    "F16": 2,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "U8": 1,
}


def pad64(v: int) -> int:
    """Vocabulary rows after padding to a multiple of 64 (``VocabParallelEmbedding``
    ``pad_vocab_size``, padding size 64, in vLLM and tokenspeed)."""
    return -(-v // VOCAB_PADDING) * VOCAB_PADDING


def split_rows(vocab: int, tp: int) -> int | None:
    """Per-rank rows of a vocab-parallel embedding, None when pad64(vocab) does not divide."""
    return pad64(vocab) // tp if pad64(vocab) % tp == 0 else None


def heads_ok(nh: int | None, nkv: int | None, tp: int) -> bool:
    """Attention heads divisible by TP; KV heads divisible by TP or dividing it (replicated)."""
    if nh is not None and nh % tp:
        return False
    if nkv is not None and nkv % tp and tp % nkv:
        return False
    return True


def heads_findings(
    run: EngineRun,
    tp: int,
    *,
    draft_tp: int | None = None,
    engine: str,
    source: Source,
    how: str = "",
) -> Iterator[Finding]:
    """``tp.heads_indivisible`` for the target (at ``tp``) and the draft (at ``draft_tp``, default
    ``tp``) when :func:`heads_ok` fails; an MLA target's KV heads are not split. ``how`` ends the
    message with how the engine refuses (e.g. ``" (LlamaAttention asserts)"``)."""
    t = run.ctx.target
    for what, nh, nkv, n in (
        ("target", t.nh, None if t.mla else t.nkv, tp),
        ("draft", run.get("nh"), run.get("nkv"), tp if draft_tp is None else draft_tp),
    ):
        if not heads_ok(nh, nkv, n):
            yield finding(
                "tp.heads_indivisible",
                f"{what} attention heads {nh} / KV heads {nkv} do not split over TP {n}{how}",
                engine=engine,
                tp=tp,
                source=source,
                what=what,
                heads=nh,
                kv_heads=nkv,
                tp_size=n,
            )


def missing_tensor_findings(
    run: EngineRun,
    want: Mapping[str, tuple[int, ...]],
    *,
    engine: str,
    title: str,
    source: Citation,
    consequence: str = "load_weights does not notice, so they keep uninitialised memory; "
    "re-export the draft",
) -> Iterator[Finding]:
    """``tensor.missing`` when the draft checkpoint lacks tensors the engine's draft allocates
    (``want``: tensor name -> shape); ``title`` is the engine's display name, ``consequence``
    what the engine's ``load_weights`` does about it."""
    tensors = run.ctx.draft_ck.tensors
    missing = [n for n in want if n not in tensors]
    if missing:
        yield finding(
            "tensor.missing",
            f"draft lacks {len(missing)} weight(s) {title} allocates: {', '.join(missing[:6])}"
            + (" …" if len(missing) > 6 else "")
            + f"; {consequence}",
            engine=engine,
            source=source,
            missing=missing,
        )


def default_aux_layers(L: int) -> list[int]:
    """The default capture when a draft names no ids: (2, L//2, L-3), as hidden-state indices
    (vLLM ``get_eagle3_default_aux_hidden_state_layers``; tokenspeed ``BaseCausalLM``)."""
    return [2, L // 2, L - 3]


# --------------------------------------------------------------------------- config defaults

_DEFAULT_KEYS = {
    "H": "hidden_size",
    "nh": "num_attention_heads",
    "nkv": "num_key_value_heads",
    "hd": "head_dim",
    "I": "intermediate_size",
    "layers": "num_hidden_layers",
    "eps": "rms_norm_eps",
    "V": "vocab_size",
    "max_position_embeddings": "max_position_embeddings",
}


def config_class_defaults(
    model_type: str, transformers: str, overrides: Mapping[str, Any] | None = None
) -> tuple[str, Mapping[str, Any], Mapping[str, str]]:
    """(class name, defaults, derivations) of the config class built for ``model_type``.

    ``overrides`` maps model types the engine builds with its own config class to that class's
    entry (same shape); every other type takes transformers' class at version ``transformers``,
    from ``recipecli/data/transformers/transformers-<version>-defaults.json``
    (``scripts/extract_transformers_fields.py``).

    Raises:
        KeyError: no config class for ``model_type``.
    """
    if overrides and model_type in overrides:
        entry = overrides[model_type]
    else:
        entry = transformers_defaults(transformers)["models"][model_type]
        entry = {**entry, "class": f"transformers {transformers} {entry['class']}"}
    return entry["class"], entry["defaults"], entry.get("derived", {})


def resolve_geometry(
    run: EngineRun,
    model_type: str,
    where: str,
    *,
    transformers: str,
    source: Citation,
    overrides: Mapping[str, Any] | None = None,
) -> list[Finding]:
    """Resolve the draft's layer geometry as transformers' config class for ``model_type`` fills it.

    A value the checkpoint's config gives keeps its key as origin; a missing or null one takes the
    class default (``4096 (transformers LlamaConfig default)``); ``head_dim`` and
    ``num_key_value_heads`` follow the class's ``__post_init__`` derivations. ``where`` names the
    engine step that builds the config (for the origin text).

    Returns:
        ``config.null_value`` / ``config.invalid`` errors: a ``@strict`` class refuses null for a
        non-Optional field (``StrictDataclassFieldValidationError``), and ``LlamaConfig``'s
        ``validate_architecture`` refuses a ``hidden_size`` not divisible by the heads.
    """
    cls, defaults, derived = config_class_defaults(model_type, transformers, overrides)
    entry_not_null = _not_null(model_type, transformers, overrides)
    errors: list[Finding] = []
    for key in entry_not_null:
        if key in run.config and run.config[key] is None:
            errors.append(
                finding(
                    "config.null_value",
                    f"{key} is null: {cls} is a strict dataclass and refuses it when the engine builds "
                    f"the draft config ('Field {key!r} expected {_expected(key)}, got NoneType'); write "
                    "the value or drop the key",
                    engine=run.engine,
                    source=source,
                    key=key,
                )
            )
    _fill_geometry(run, cls, defaults, derived, where)
    H, nh = run.get("H"), run.get("nh")
    if "hidden_size % num_attention_heads" in derived and H and nh and H % nh:
        errors.append(
            finding(
                "config.invalid",
                f"{cls}.validate_architecture refuses hidden_size {H} with {nh} attention heads "
                f"('The hidden size ({H}) is not a multiple of the number of attention heads ({nh}).')",
                engine=run.engine,
                source=source,
                H=H,
                nh=nh,
            )
        )
    return errors


def _fill_geometry(
    run: EngineRun, cls: str, defaults: Mapping[str, Any], derived: Mapping[str, str], where: str
) -> None:
    """Set each geometry value (``H``, ``nh``, ``nkv``, ``hd`` …): the checkpoint's, else the
    class default, else the class's ``__post_init__`` derivation."""
    d = run.ctx.draft
    raw = {name: getattr(d, name) for name in _DEFAULT_KEYS}
    # DraftModel fills nkv and hd itself when absent; the engine's config class decides instead.
    for name in ("nkv", "hd"):
        if str(d.sources.get(name, "")).startswith("default"):
            raw[name] = None
    for name, key in _DEFAULT_KEYS.items():
        if raw[name] is not None:
            run.set(name, raw[name], f"config: {d.sources.get(name, key)}")
            continue
        if key in derived:
            continue  # filled below, after the values it derives from
        if key in defaults and defaults[key] is not None:
            run.set(name, defaults[key], f"{cls} default, via {where}")
        else:
            run.set(name, None, f"absent; {cls} has no default")
    for name, key in _DEFAULT_KEYS.items():
        if name in run.resolved:
            continue
        rule = derived[key]
        if key == "head_dim" and run.get("H") and run.get("nh"):
            run.set(name, run.get("H") // run.get("nh"), f"{cls}.__post_init__: {rule}")
        elif key == "num_key_value_heads":
            run.set(name, run.get("nh"), f"{cls}.__post_init__: {rule}")
        else:
            run.set(name, defaults.get(key), f"{cls} default")


def _expected(key: str) -> str:
    return (
        "float"
        if key == "rms_norm_eps"
        else ("bool" if key.startswith(("tie_", "attention_bias", "mlp_bias")) else "int")
    )


def _not_null(model_type: str, transformers: str, overrides: Mapping[str, Any] | None) -> list[str]:
    if overrides and model_type in overrides:
        return list(overrides[model_type].get("not_null", []))
    entry = transformers_defaults(transformers)["models"].get(model_type, {})
    return list(entry.get("not_null", []))


# --------------------------------------------------------------------------- vocabulary maps


def classify_d2t(d2t: np.ndarray, Vd: int, V: int) -> tuple[str | None, dict[str, Any]]:
    """Classify a ``d2t`` array of offsets (``target_id = draft_id + d2t[draft_id]``).

    Returns:
        ``(None, {})`` when valid; else (code, evidence) with code ``vocab.d2t_absolute``
        (``d2t == arange(Vd)``: absolute ids written as offsets) or ``vocab.d2t_invalid`` (a target
        id outside ``[0, V)``, or target ids not strictly increasing).
    """
    ids = np.arange(Vd, dtype=np.int64)
    if Vd > 1 and np.array_equal(d2t, ids):
        return "vocab.d2t_absolute", {"first": d2t[:4].tolist()}
    target = ids + d2t.astype(np.int64)
    bad = np.nonzero((target < 0) | (target >= V))[0]
    if bad.size:
        i = int(bad[0])
        return "vocab.d2t_invalid", {
            "reason": "target id out of range",
            "draft_id": i,
            "target_id": int(target[i]),
            "V": V,
            "count": int(bad.size),
        }
    steps = np.nonzero(np.diff(target) <= 0)[0]
    if steps.size:
        i = int(steps[0])
        return "vocab.d2t_invalid", {
            "reason": "not strictly increasing",
            "draft_id": i + 1,
            "target_ids": [int(target[i]), int(target[i + 1])],
        }
    return None, {}


def t2d_problem(ctx: PairContext) -> dict[str, Any] | None:
    """What is wrong with the draft's ``t2d`` as a map (a fact of the checkpoint, no verdict:
    every engine's ``load_weights`` skips ``t2d``): None when it is absent, unreadable or valid,
    else its evidence with a ``text`` key. Valid: BOOL [V], exactly Vd ids marked, and each
    ``d2t`` target id among them (V the target's text vocab, Vd the draft's declared one)."""
    d, tensors, V = ctx.draft, ctx.draft_ck.tensors, ctx.target.V
    info = tensors.get("t2d")
    if info is None or V is None or d.Vd > V:
        return None
    if tuple(info.shape) != (V,) or info.dtype != "BOOL":
        text = f"t2d is {info.dtype} {list(info.shape)}, expected BOOL [{V}]"
        return {"text": text, "dtype": info.dtype, "shape": list(info.shape), "expected": [V]}
    t2d = ctx.value("t2d")
    if t2d is None:
        return None
    total = int(np.count_nonzero(t2d))
    if total != d.Vd:
        text = f"t2d marks {total} target ids but draft_vocab_size is {d.Vd}"
        return {"text": text, "true_count": total, "Vd": d.Vd}
    d2t_info = tensors.get("d2t")
    if d2t_info is None or tuple(d2t_info.shape) != (d.Vd,) or d2t_info.dtype != "I64":
        return None
    d2t = ctx.value("d2t")
    if d2t is None:
        return None
    tgt = np.arange(d.Vd, dtype=np.int64) + d2t.astype(np.int64)
    bad = np.nonzero(~((tgt >= 0) & (tgt < V)) | ~t2d[np.clip(tgt, 0, V - 1)])[0]
    if not bad.size:
        return None
    first = int(bad[0])
    text = f"t2d disagrees with d2t at {bad.size} draft id(s) (first {first} -> {int(tgt[first])})"
    return {"text": text, "count": int(bad.size), "draft_id": first}


#: transformers 5's rotary default (``PreTrainedConfig.default_theta``, ``LlamaConfig`` and the
#: other classes the engines build drafts with) and the RoPE type without scaling
ROPE_DEFAULT: Mapping[str, Any] = {"rope_theta": 10000.0, "rope_type": "default"}


def rope_settings(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The rotary settings a config gives, as transformers 5 standardises them into
    ``rope_parameters``: ``rope_parameters`` (else ``rope_scaling``, with ``type`` read as
    ``rope_type``) and a top-level ``rope_theta``, over :data:`ROPE_DEFAULT`."""
    rope = cfg.get("rope_parameters") or cfg.get("rope_scaling") or {}
    out = dict(ROPE_DEFAULT)
    if cfg.get("rope_theta") is not None:
        out["rope_theta"] = cfg["rope_theta"]
    if isinstance(rope, dict):
        out.update({("rope_type" if k == "type" else k): v for k, v in rope.items()})
    out["rope_theta"] = float(out["rope_theta"])
    return out


def rope_differences(draft: Mapping[str, Any], target: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Rotary keys whose value differs between the draft's config and the target's text config
    (:func:`rope_settings` of each): key -> [draft value, target value]; empty when they agree."""
    a, b = rope_settings(draft), rope_settings(target)
    return {k: [a.get(k), b.get(k)] for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)}


# --------------------------------------------------------------------------- tensors

_LAYER_SUFFIXES = tuple(LAYER_ROLES.values())


def unexpected_tensors(ctx: PairContext) -> list[str]:
    """Draft tensor names outside the roles an EAGLE3 draft has (later layers of multi-layer
    drafts, MLA attention tensors and ``mask_hidden`` count as known)."""
    d = ctx.draft
    known = known_roles(d)
    out = []
    for name in ctx.draft_ck.tensors:
        if name in known or is_known_extra(name):
            continue
        bare = (
            name[len(d.tensor_prefix) :]
            if d.tensor_prefix and name.startswith(d.tensor_prefix)
            else name
        )
        parts = bare.split(".")
        if (
            len(parts) > 2
            and parts[0] in ("midlayer", "layers")
            and parts[1].isdigit()
            and ".".join(parts[2:]) in _LAYER_SUFFIXES
        ):
            continue
        if d.attention == "MLA" and bare.startswith(d.layer_prefix + "self_attn."):
            continue
        out.append(name)
    return out


# --------------------------------------------------------------------------- sharing table


COLUMN_PARALLEL = ("q_proj", "k_proj", "v_proj", "gate_proj", "up_proj")
ROW_PARALLEL = ("o_proj", "down_proj")


def draft_bytes_per_rank(ctx: PairContext, tp: int, *, own_embed: bool) -> int:
    """Bytes of the draft's own weights on one rank: q/k/v/gate/up/o/down and lm_head split over
    TP, norms, fc and maps replicated; its embed_tokens counted only when the draft keeps it."""
    d = ctx.draft
    total = 0
    split = {d.tensor(r) for r in COLUMN_PARALLEL + ROW_PARALLEL} | {d.tensor("lm_head")}
    for name, info in ctx.draft_ck.tensors.items():
        if name == d.tensor("embed_tokens"):
            if own_embed:
                total += math.ceil(info.nbytes / tp)
            continue
        total += math.ceil(info.nbytes / tp) if name in split else info.nbytes
    return total


def embed_itemsize(ctx: PairContext) -> int:
    """Bytes per element of the target embedding (2 when its dtype is unknown)."""
    t = ctx.target
    if t.embed_name:
        return DTYPE_BYTES.get(ctx.target_ck.tensors[t.embed_name].dtype, 2)
    return 2


def target_vocab_hidden(ctx: PairContext) -> tuple[int, int]:
    """The target's text ``vocab_size`` and ``hidden_size`` (V, H), for the sharing-table code:
    every engine's sharing step returns before it when either is unknown, so both are ints here.

    Raises:
        AssertionError: V or H is None (a caller that skipped that check).
    """
    V, H = ctx.target.V, ctx.target.H
    assert V is not None and H is not None, "sharing steps return first when V or H is unknown"
    return V, H


def sharing_row(
    ctx: PairContext,
    engine: str,
    tp: int,
    shapes: tuple[tuple[int, int] | None, tuple[int, int] | None, tuple[int, int]],
    verdict: str,
    head: str,
    embed_rows: int,
    draft_tp: int,
    width: int,
    note: str = "",
) -> SharingRow:
    """A sharing-table row; ``width`` is the embedding width used (target's when shared)."""
    return SharingRow(
        engine,
        tp,
        *shapes,
        verdict,
        head,
        embed_rows * width * embed_itemsize(ctx),
        draft_bytes_per_rank(ctx, draft_tp, own_embed=verdict == "own"),
        note,
    )


def trained_layers(d: DraftModel, L: int | None = None) -> list[int] | None:
    """Hidden-state indices (HF ``hidden_states[i]``) the draft was trained on: its own ids in
    its format's convention, else its format's trainer default for a target of ``L`` layers
    (:func:`recipecli.draft.trainers.trained_states`); None when neither is known."""
    return trained_states(d, L)


def optional_shapes(
    d: DraftModel, H: int, V: int | None, Vd: int | None
) -> dict[str, tuple[int, ...]]:
    """Weights both engines allocate but may fill from the target instead: ``lm_head`` [Vd, H]
    and ``embed_tokens`` [V, H] (a shipped one is loaded first, so its shape must match)."""
    out: dict[str, tuple[int, ...]] = {}
    if Vd:
        out[d.tensor("lm_head")] = (Vd, H)
    if V:
        out[d.tensor("embed_tokens")] = (V, H)
    return out


def shape_findings(
    run: EngineRun, want: Mapping[str, tuple[int, ...]], engine: str, title: str, source: Citation
) -> Iterator[Finding]:
    """Findings for checkpoint tensors whose shape differs from what the engine allocates.

    An ``fc.weight`` of shape [H, m*Ht] with m != k is ``aux.count`` (the export fed m aux states,
    the engine's config gives k); any other difference is ``shape.<role>``.
    """
    tensors = run.ctx.draft_ck.tensors
    H, Ht, k = run.get("H"), run.get("Ht"), run.get("k")
    for name, shape in want.items():
        if name not in tensors or tuple(tensors[name].shape) == shape:
            continue
        found = tuple(tensors[name].shape)
        if (
            name.endswith("fc.weight")
            and len(found) == 2
            and found[0] == H
            and Ht
            and found[1] % Ht == 0
        ):
            m = found[1] // Ht
            yield finding(
                "aux.count",
                f"fc takes {m} aux hidden states ({found[1]} = {m} x {Ht}) but {title} sizes it for k={k} "
                f"({run.resolved['k'].origin}): the load fails on the fc shape; make the config give {m} "
                "(the id count the engine reads for k)",
                engine=engine,
                source=source,
                tensor=name,
                expected=list(shape),
                found=list(found),
                k=k,
                fc_k=m,
            )
            continue
        role = name.rsplit(".", 2)[-2] if name.endswith(".weight") else name
        basis = ", ".join(
            f"{key} {run.resolved[key].show()}"
            for key in ("H", "nh", "nkv", "hd", "I", "k", "Ht", "Vd", "V")
            if key in run.resolved
        )
        yield finding(
            f"shape.{role}",
            f"{name} has shape {list(found)} but {title} allocates {list(shape)} ({basis}): the load fails on "
            "the shape; fix the config or the export",
            severity="error",
            engine=engine,
            source=source,
            tensor=name,
            expected=list(shape),
            found=list(found),
        )


def fc_fits_k(run: EngineRun) -> bool:
    """True when the checkpoint has no ``fc.weight`` or its input width is k * Ht (so a count
    problem is the capture's, not the export's)."""
    info = run.ctx.draft_ck.tensors.get(run.ctx.draft.tensor("fc"))
    if info is None or len(info.shape) != 2:
        return True
    fc_in: int = run.get("k") * run.get("Ht")
    return info.shape[1] == fc_in


def no_tensor_findings(run: EngineRun, source: Citation) -> list[Finding]:
    """What an engine says about a draft source without a tensor table: a bare config or a
    snapshot without tensors was not checked (``tensor.unchecked``); a folder without weight
    files has nothing to serve (``tensor.missing``)."""
    ck = run.ctx.draft_ck
    if ck.kind in ("config", "snapshot"):
        return [
            finding(
                "tensor.unchecked",
                f"draft source {ck.kind!r} has no tensor table: tensor, shape and vocab-map checks "
                "were skipped; check the checkpoint directory (or a snapshot of it)",
                engine=run.engine,
                source=source,
                kind=ck.kind,
            )
        ]
    return [
        finding(
            "tensor.missing",
            "draft has no weight files (no model.safetensors, index or pytorch_model.bin next to "
            "config.json): nothing to serve; download the weights",
            engine=run.engine,
            source=source,
            missing=["<all weights>"],
            root=ck.root,
        )
    ]


def registered_configs(reg: Mapping[str, Any], engine: str, transformers: str) -> dict[str, Any]:
    """``overrides`` for :func:`resolve_geometry` from an engine's ``config_registry`` (#31): a type
    registered with a transformers class (or a model_type-only subclass) takes its entry."""
    m = transformers_defaults(transformers)["models"]
    return {
        k: {**m[b], "class": f"{engine} {e['class']} (transformers {transformers} {m[b]['class']})"}
        for k, e in reg.items()
        if (b := e.get("transformers_model_type")) in m
    }


def missing_model_type(run: EngineRun, source: Citation) -> Finding:
    """``config.model_type`` for a draft config without ``model_type``: transformers' AutoConfig
    (which every engine falls back to) cannot build it."""
    return finding(
        "config.model_type",
        "draft config.json has no model_type: transformers' AutoConfig cannot build it "
        '(\'Unrecognized model\'); add "model_type": "llama"',
        engine=run.engine,
        source=source,
        model_type=None,
    )
