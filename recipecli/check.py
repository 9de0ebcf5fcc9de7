"""`recipecli check TARGET DRAFT`: will this EAGLE3 draft serve with this target?

Every rule is a small function ``(ctx) -> Iterable[Finding]`` registered in :data:`RULES` with the
codes it may emit and the engine-facts section it implements. Rules read only config values,
tensor headers, and the values of ``d2t`` / ``t2d`` (never the weights).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from recipecli.checkpoint.model import Checkpoint
from recipecli.draft import (
    LAYER_ROLES,
    DraftModel,
    canonical_draft,
    detect_format,
    expected_shapes,
    is_known_extra,
    known_roles,
)
from recipecli.errors import UsageError
from recipecli.findings import Finding, has_errors
from recipecli.target import TargetModel, target_model

ENGINES: tuple[str, ...] = ("vllm", "tokenspeed")
VOCAB_PADDING = 64  # vocab_parallel_embedding.py, both engines (engine-facts §4, §5)
DTYPE_BYTES: Mapping[str, int] = {
    "F32": 4,
    "BF16": 2,
    "F16": 2,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "U8": 1,
}
FACTS = "engine-facts"


def pad64(v: int) -> int:
    """Vocabulary rows after padding to a multiple of 64 (``VocabParallelEmbedding``)."""
    return -(-v // VOCAB_PADDING) * VOCAB_PADDING


@dataclass(frozen=True)
class CheckContext:
    """Everything the rules read. ``tps``: target TP sizes; ``draft_tp``: vLLM draft TP (None =
    same as the target TP)."""

    target_ck: Checkpoint
    draft_ck: Checkpoint
    target: TargetModel
    draft: DraftModel
    engines: tuple[str, ...]
    tps: tuple[int, ...]
    draft_tp: int | None = None
    max_model_len: int | None = None
    _values: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def draft_tp_for(self, tp: int) -> int:
        return self.draft_tp if self.draft_tp is not None else tp

    def value(self, name: str) -> np.ndarray | None:
        """Values of a small draft tensor (``d2t``/``t2d``), None when unavailable; cached."""
        if name not in self._values:
            ck = self.draft_ck
            self._values[name] = ck.read_tensor(name) if ck.has_values(name) else None
        return self._values[name]


@dataclass(frozen=True)
class Rule:
    """A rule: the codes it may emit, the engines it concerns, its source, and its function."""

    codes: tuple[str, ...]
    source: str
    fn: Callable[[CheckContext], Iterable[Finding]]
    needs_eagle3: bool = True


RULES: list[Rule] = []


def rule(
    *codes: str, source: str, needs_eagle3: bool = True
) -> Callable[
    [Callable[[CheckContext], Iterable[Finding]]], Callable[[CheckContext], Iterable[Finding]]
]:
    """Register a rule function emitting ``codes``; ``source`` cites the engine fact it implements."""

    def deco(
        fn: Callable[[CheckContext], Iterable[Finding]],
    ) -> Callable[[CheckContext], Iterable[Finding]]:
        RULES.append(Rule(codes, source, fn, needs_eagle3))
        return fn

    return deco


def _f(
    code: str,
    severity: str,
    engine: str,
    message: str,
    source: str,
    tp: int | None = None,
    **evidence: Any,
) -> Finding:
    return Finding(
        code=code,
        severity=severity,
        engine=engine,
        message=message,
        tp=tp,
        evidence=evidence,
        source=source,
    )  # type: ignore[arg-type]


# --------------------------------------------------------------------------- format and layers


@rule(
    "draft.format", "draft.not_eagle3", source=f"{FACTS} §2 (detection order)", needs_eagle3=False
)
def rule_format(ctx: CheckContext) -> Iterable[Finding]:
    d = ctx.draft
    if not d.is_eagle3:
        swapped = detect_format(ctx.target_ck.config, frozenset(ctx.target_ck.tensors)) is not None
        yield _f(
            "draft.not_eagle3",
            "error",
            "any",
            f"draft is not an EAGLE3 draft (architectures {list(ctx.draft_ck.config.get('architectures') or [])}, "
            "no speculators_model_type, no draft_vocab_size): "
            + (
                "the TARGET argument is an EAGLE3 draft — did you swap TARGET and DRAFT?"
                if swapped
                else "use an EAGLE3 checkpoint, or serve it with method 'eagle' if it is an EAGLE-1 head"
            ),
            f"{FACTS} §2, §3.9",
            architecture=d.architecture,
        )
        return
    yield _f(
        "draft.format",
        "info",
        "any",
        f"detected format {d.format}: {d.format_name}",
        f"{FACTS} §2",
        format=d.format,
        architecture=d.architecture,
    )


@rule("draft.layers", "draft.arch_name", source=f"{FACTS} §5 (draft config, Llama path)")
def rule_layers(ctx: CheckContext) -> Iterable[Finding]:
    if "tokenspeed" not in ctx.engines:
        return
    d = ctx.draft
    if d.layers is not None and d.layers != 1:
        yield _f(
            "draft.layers",
            "error",
            "tokenspeed",
            f"tokenspeed serves 1-layer EAGLE3 drafts only ('EAGLE3 currently only supports 1 layer'); "
            f"this draft has num_hidden_layers={d.layers}",
            f"{FACTS} §5",
            num_hidden_layers=d.layers,
        )
    if "eagle" not in d.architecture.lower():
        yield _f(
            "draft.arch_name",
            "warning",
            "tokenspeed",
            f"architectures[0] {d.architecture!r} lacks 'Eagle': tokenspeed then appends 'NextN' and looks up "
            f"'{d.architecture}NextN', which may not be an EAGLE3 class (load can fail); set architectures to "
            "['LlamaForCausalLMEagle3']",
            f"{FACTS} §5",
            architecture=d.architecture,
        )


# --------------------------------------------------------------------------- tensors and shapes

REQUIRED_LAYER_ROLES = (
    "q_proj",
    "k_proj",
    "v_proj",
    "o_proj",
    "gate_proj",
    "up_proj",
    "down_proj",
    "input_layernorm",
    "hidden_norm",
    "post_attention_layernorm",
)
ATTN_ROLES = {"q_proj", "k_proj", "v_proj", "o_proj"}


def required_roles(d: DraftModel) -> list[str]:
    """Roles every engine needs for this draft (engine-facts §1); vocab/head roles are ruled
    separately (``vocab.*``, ``lm_head.missing``)."""
    roles = [r for r in REQUIRED_LAYER_ROLES if not (d.attention == "MLA" and r in ATTN_ROLES)]
    roles += ["fc", "norm"]
    if d.fc_norm:
        roles += [f"fc_norm.{i}" for i in range(d.k)]
    if d.norm_before_fc:
        roles.append("input_norm")
    return roles


@rule("tensor.missing", "tensor.unchecked", source=f"{FACTS} §1")
def rule_missing(ctx: CheckContext) -> Iterable[Finding]:
    d = ctx.draft
    ck = ctx.draft_ck
    if not ck.tensors:
        if ck.kind in ("config", "snapshot"):  # metadata only: say what was not checked
            yield _f(
                "tensor.unchecked",
                "warning",
                "any",
                f"draft source {ck.kind!r} has no tensor table: tensor, shape, vocab-map and head checks "
                "were skipped; check the checkpoint directory (or a snapshot of it) instead",
                f"{FACTS} §1",
                kind=ck.kind,
            )
        else:
            yield _f(
                "tensor.missing",
                "error",
                "any",
                "draft has no weight files (no model.safetensors, index or pytorch_model.bin next to "
                "config.json): nothing to serve; download the weights",
                f"{FACTS} §1",
                missing=["<all weights>"],
                root=ck.root,
            )
        return
    missing = [d.tensor(r) for r in required_roles(d) if d.tensor(r) not in ctx.draft_ck.tensors]
    if missing:
        yield _f(
            "tensor.missing",
            "error",
            "any",
            f"draft lacks {len(missing)} tensor(s) its format requires: {', '.join(missing[:6])}"
            + (" …" if len(missing) > 6 else "")
            + "; re-export the draft with all weights",
            f"{FACTS} §1",
            missing=missing,
        )


_LAYER_SUFFIXES = tuple(LAYER_ROLES.values())


def unexpected_tensors(ctx: CheckContext) -> list[str]:
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
        # later layers of multi-layer drafts: midlayer.N.* / layers.N.*
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


@rule("tensor.unexpected", source=f"{FACTS} §4 (weights loader), §5 (unknown keys ignored)")
def rule_unexpected(ctx: CheckContext) -> Iterable[Finding]:
    extra = unexpected_tensors(ctx)
    if not extra:
        return
    shown = ", ".join(extra[:5]) + (" …" if len(extra) > 5 else "")
    if "vllm" in ctx.engines:
        yield _f(
            "tensor.unexpected",
            "error",
            "vllm",
            f"vLLM's weights loader rejects unknown tensor name(s) {shown}; drop or rename them",
            f"{FACTS} §4",
            unexpected=extra,
        )
    if "tokenspeed" in ctx.engines:
        yield _f(
            "tensor.unexpected",
            "warning",
            "tokenspeed",
            f"tokenspeed silently ignores tensor name(s) {shown}; check they are not weights it needs under another name",
            f"{FACTS} §5",
            unexpected=extra,
        )


@rule("shape.*", "aux.count", source=f"{FACTS} §1 (shapes)")
def rule_shapes(ctx: CheckContext) -> Iterable[Finding]:
    d = ctx.draft
    exp = expected_shapes(d)
    tensors = ctx.draft_ck.tensors
    for role, shape in exp.items():
        name = d.tensor(role)
        if name not in tensors or role in ("d2t", "t2d"):
            continue  # the vocab maps are ruled by rule_vocab (shape.d2t, vocab.t2d_invalid)
        found = tensors[name].shape
        if (
            role == "fc"
            and len(found) == 2
            and found[0] == d.H
            and d.Ht
            and found[1] % d.Ht == 0
            and found[1] != shape[1]
        ):
            yield _f(
                "aux.count",
                "error",
                "any",
                f"fc takes {found[1] // d.Ht} aux hidden states ({found[1]} = {found[1] // d.Ht} x {d.Ht}) but the config "
                f"gives k={d.k} ({d.sources.get('k')}); fix eagle_aux_hidden_state_layer_ids to {found[1] // d.Ht} ids",
                f"{FACTS} §1",
                tensor=name,
                expected=list(shape),
                found=list(found),
                k=d.k,
                fc_k=found[1] // d.Ht,
            )
            continue
        if tuple(found) != tuple(shape):
            yield _f(
                f"shape.{role}",
                "error",
                "any",
                f"{name} has shape {list(found)} but the config implies {list(shape)}; the config or the export is wrong",
                f"{FACTS} §1",
                tensor=name,
                expected=list(shape),
                found=list(found),
            )


# --------------------------------------------------------------------------- hidden and vocab


@rule(
    "hidden.mismatch",
    "hidden.tokenspeed_target_hidden",
    "embed.width_mismatch",
    source=f"{FACTS} §3.10, §5",
)
def rule_hidden(ctx: CheckContext) -> Iterable[Finding]:
    d, t = ctx.draft, ctx.target
    if t.H is not None and d.Ht is not None and d.Ht != t.H:
        yield _f(
            "hidden.mismatch",
            "error",
            "any",
            f"draft fc expects target hidden size {d.Ht} ({d.sources.get('Ht')}) but the target's text hidden_size is {t.H}: "
            "this draft was trained for another target",
            f"{FACTS} §1, §3.7",
            draft_target_hidden=d.Ht,
            target_hidden=t.H,
        )
    if "tokenspeed" in ctx.engines and d.H is not None and d.Ht is not None and d.H != d.Ht:
        yield _f(
            "hidden.tokenspeed_target_hidden",
            "error",
            "tokenspeed",
            f"tokenspeed builds fc as [H, k*H] and ignores target_hidden_size, so a draft with H={d.H} != Ht={d.Ht} "
            "cannot be served there; use vLLM",
            f"{FACTS} §5",
            H=d.H,
            Ht=d.Ht,
        )
    if not d.has_embed and d.H is not None and t.H is not None and d.H != t.H:
        yield _f(
            "embed.width_mismatch",
            "error",
            "any",
            f"draft has no embed_tokens and its hidden size {d.H} differs from the target's {t.H}: the borrowed "
            f"embedding has the wrong width; ship the draft's own embed_tokens [{d.V}, {d.H}]",
            f"{FACTS} §3.10 (vLLM #18906)",
            H=d.H,
            target_hidden=t.H,
        )


def _d2t_checks(d2t: np.ndarray, Vd: int, V: int) -> tuple[str | None, dict[str, Any]]:
    """Classify a d2t array: None when valid, else the code and evidence (engine-facts §3.4)."""
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


@rule(
    "vocab.mismatch",
    "vocab.draft_larger",
    "vocab.d2t_missing",
    "vocab.d2t_invalid",
    "vocab.d2t_absolute",
    "vocab.d2t_identity",
    "vocab.t2d_invalid",
    "shape.d2t",
    source=f"{FACTS} §3.4",
)
def rule_vocab(ctx: CheckContext) -> Iterable[Finding]:
    d, t = ctx.draft, ctx.target
    V = t.V
    if V is None:
        return
    if d.V is not None and d.V != V:
        yield _f(
            "vocab.mismatch",
            "error",
            "any",
            f"draft vocab_size {d.V} != target text vocab_size {V}: the draft was trained with another tokenizer",
            f"{FACTS} §1",
            draft_vocab=d.V,
            target_vocab=V,
        )
    Vd = d.Vd
    if Vd > V:
        yield _f(
            "vocab.draft_larger",
            "error",
            "any",
            f"draft_vocab_size {Vd} is larger than the target vocab {V}",
            f"{FACTS} §1",
            Vd=Vd,
            V=V,
        )
        return
    tensors = ctx.draft_ck.tensors
    if not tensors:
        return
    if Vd < V and not d.has_d2t:
        yield _f(
            "vocab.d2t_missing",
            "error",
            "any",
            f"draft_vocab_size {Vd} < vocab {V} but the draft ships no d2t: vLLM maps draft ids onto target ids "
            f"0..{Vd - 1}, serves fine and accepts almost nothing; re-export with the d2t map",
            f"{FACTS} §3.4 (NeMo Automodel PR #2447)",
            Vd=Vd,
            V=V,
        )
    if d.has_d2t:
        info = tensors["d2t"]
        if tuple(info.shape) != (Vd,):
            yield _f(
                "shape.d2t",
                "error",
                "any",
                f"d2t has shape {list(info.shape)}, expected [{Vd}] (draft_vocab_size)",
                f"{FACTS} §1",
                expected=[Vd],
                found=list(info.shape),
            )
        elif info.dtype != "I64":
            yield _f(
                "vocab.d2t_invalid",
                "error",
                "any",
                f"d2t is {info.dtype}, engines expect int64 offsets",
                f"{FACTS} §1",
                reason="dtype",
                dtype=info.dtype,
            )
        else:
            d2t = ctx.value("d2t")
            if d2t is None:
                yield _f(
                    "vocab.values_unavailable",
                    "info",
                    "any",
                    "d2t values not available from this source; map not validated",
                    f"{FACTS} §3.4",
                )
            else:
                code, ev = _d2t_checks(d2t, Vd, V)
                if code == "vocab.d2t_absolute":
                    yield _f(
                        code,
                        "error",
                        "any",
                        "d2t equals arange(Vd): absolute target ids were written where offsets are expected "
                        "(maps i -> 2i); store d2t = target_ids - arange(Vd)",
                        f"{FACTS} §3.4 (verl-SpeCo PR #67)",
                        **ev,
                    )
                elif code:
                    yield _f(
                        code,
                        "error",
                        "any",
                        f"d2t is not a valid offset map ({ev['reason']}"
                        + (
                            f": draft id {ev['draft_id']} -> target id {ev['target_id']}, vocab {V}"
                            if "target_id" in ev
                            else f" at draft id {ev['draft_id']}: target ids {ev['target_ids']}"
                        )
                        + "); regenerate it from the sorted list of kept target ids",
                        f"{FACTS} §3.4",
                        **ev,
                    )
                elif Vd < V and not np.any(d2t):
                    yield _f(
                        "vocab.d2t_identity",
                        "error",
                        "any",
                        f"d2t is all zeros (identity) but Vd {Vd} < V {V}: draft ids map onto target ids 0..{Vd - 1}",
                        f"{FACTS} §3.4",
                        Vd=Vd,
                        V=V,
                    )
    if d.has_t2d:
        info = tensors["t2d"]
        if tuple(info.shape) != (V,) or info.dtype != "BOOL":
            yield _f(
                "vocab.t2d_invalid",
                "error",
                "any",
                f"t2d is {info.dtype} {list(info.shape)}, expected BOOL [{V}]",
                f"{FACTS} §1",
                dtype=info.dtype,
                shape=list(info.shape),
                expected=[V],
            )
        else:
            t2d = ctx.value("t2d")
            if t2d is not None:
                total = int(np.count_nonzero(t2d))
                if total != Vd:
                    yield _f(
                        "vocab.t2d_invalid",
                        "error",
                        "any",
                        f"t2d marks {total} target ids but draft_vocab_size is {Vd}",
                        f"{FACTS} §3.4",
                        true_count=total,
                        Vd=Vd,
                    )
                elif (
                    d.has_d2t
                    and tuple(tensors["d2t"].shape) == (Vd,)
                    and tensors["d2t"].dtype == "I64"
                ):
                    d2t = ctx.value("d2t")
                    if d2t is not None:
                        tgt = np.arange(Vd, dtype=np.int64) + d2t.astype(np.int64)
                        ok = (tgt >= 0) & (tgt < V)
                        bad = np.nonzero(~ok | ~t2d[np.clip(tgt, 0, V - 1)])[0]
                        if bad.size:
                            yield _f(
                                "vocab.t2d_invalid",
                                "error",
                                "any",
                                f"t2d disagrees with d2t at {bad.size} draft id(s) (first {int(bad[0])} -> {int(tgt[bad[0]])})",
                                f"{FACTS} §3.4",
                                count=int(bad.size),
                                draft_id=int(bad[0]),
                            )


@rule("lm_head.missing", "tie.reduced_vocab", source=f"{FACTS} §3.5, §3.6, §4, §5")
def rule_head(ctx: CheckContext) -> Iterable[Finding]:
    d, t = ctx.draft, ctx.target
    V = t.V or d.V
    if d.tie_word_embeddings and V is not None and d.Vd < V:
        yield _f(
            "tie.reduced_vocab",
            "error",
            "any",
            f"tie_word_embeddings is true with draft_vocab_size {d.Vd} < {V}: the reduced head gets tied to the full "
            "embedding (shape mismatch at load); set tie_word_embeddings to false",
            f"{FACTS} §3.5 (SpecForge #139, speculators PR #74)",
            Vd=d.Vd,
            V=V,
        )
    if d.has_lm_head or not ctx.draft_ck.tensors:
        return
    if "vllm" in ctx.engines and V is not None and d.Vd < V:
        yield _f(
            "lm_head.missing",
            "error",
            "vllm",
            f"no lm_head and draft_vocab_size {d.Vd} < {V}: vLLM can only borrow the target head when Vd == V; "
            "ship the draft's lm_head",
            f"{FACTS} §3.6, §4",
            Vd=d.Vd,
            V=V,
        )
    if "tokenspeed" in ctx.engines and d.draft_vocab_size_declared:
        yield _f(
            "lm_head.missing",
            "error",
            "tokenspeed",
            "no lm_head while draft_vocab_size is set: tokenspeed borrows the target head only when draft_vocab_size "
            "is absent, so the head stays random (accept length 1.0); ship lm_head or drop draft_vocab_size when Vd == V",
            f"{FACTS} §5 step 4, §3.6 (SGLang PR #27908)",
            Vd=d.Vd,
        )


# --------------------------------------------------------------------------- aux hidden states


def default_aux_layers(L: int) -> list[int]:
    """Both engines' default capture when no ids are given: (2, L//2, L-3) (engine-facts §3.1)."""
    return [2, L // 2, L - 3]


def captured_layers(d: DraftModel, L: int, engine: str) -> tuple[list[int], str]:
    """Target hidden-state indices (HF ``hidden_states[i]``) the engine captures, and from where.

    vLLM reads the top-level ``eagle_aux_hidden_state_layer_ids`` as hidden-state indices (vLLM PR
    #25961), else falls back to (2, L//2, L-3) (vLLM PR #50170). tokenspeed/SGLang add 1 to
    explicit ids (top level, else ``eagle_config``) but not to the default (engine-facts §3.1, §5).
    """
    if engine == "vllm":
        if d.top_level_aux_ids is not None:
            return list(d.top_level_aux_ids), "eagle_aux_hidden_state_layer_ids"
        return default_aux_layers(L), "default"
    ids = d.top_level_aux_ids if d.top_level_aux_ids is not None else d.nested_aux_ids
    if ids is not None:
        return [i + 1 for i in ids], "explicit ids + 1"
    return default_aux_layers(L), "default"


#: Convention the ids of each format were written in: hidden-state index (vLLM/speculators) or
#: layer-output index (SpecForge/SGLang/ModelOpt: hidden_states[id + 1]).
TRAINED_CONVENTION: Mapping[str, str] = {
    "D": "hidden-state",
    "F": "hidden-state",
    "B": "layer-output",
    "C": "layer-output",
    "A": "layer-output",
}


@rule("aux.out_of_range", "aux.default", "aux.convention", "aux.count", source=f"{FACTS} §3.1, §5")
def rule_aux(ctx: CheckContext) -> Iterable[Finding]:
    d, L = ctx.draft, ctx.target.L
    if L is None:
        return
    if d.aux_ids is None:
        defaults = default_aux_layers(L)
        for engine in ctx.engines:
            yield _f(
                "aux.default",
                "warning",
                engine,
                f"draft names no aux layer ids: {engine} captures its default target layers {defaults}; if the draft "
                "was trained on others acceptance collapses silently — add eagle_aux_hidden_state_layer_ids",
                f"{FACTS} §3.1 (vLLM PR #50170)",
                layers=defaults,
                L=L,
            )
        return
    for engine in ctx.engines:
        layers, how = captured_layers(d, L, engine)
        if engine == "vllm" and d.top_level_aux_ids is None:
            yield _f(
                "aux.default",
                "warning",
                "vllm",
                f"aux ids sit only under eagle_config, which vLLM does not read: it captures its default layers {layers}; "
                "copy them to a top-level eagle_aux_hidden_state_layer_ids (converted to hidden-state indices)",
                f"{FACTS} §3.1; vLLM PR #25961 (top-level key)",
                layers=layers,
                nested_ids=list(d.nested_aux_ids or ()),
            )
        bad = [x for x in layers if x < 1 or x > L]  # valid [1, L] after normalising (§3.1)
        if bad:
            yield _f(
                "aux.out_of_range",
                "error",
                engine,
                f"{engine} would capture target hidden states {layers} but the target has {L} layers (valid 1..{L}); "
                "fix the aux ids",
                f"{FACTS} §3.1",
                captured=layers,
                L=L,
                ids=list(d.aux_ids),
            )
    if (
        "tokenspeed" in ctx.engines
        and d.top_level_aux_ids is None
        and d.nested_aux_ids is not None
        and len(d.nested_aux_ids) != 3
    ):
        yield _f(
            "aux.count",
            "error",
            "tokenspeed",
            f"tokenspeed sizes fc from the top-level id list (default 3 chunks) but the {len(d.nested_aux_ids)} ids sit "
            "under eagle_config: copy them to a top-level eagle_aux_hidden_state_layer_ids",
            f"{FACTS} §5",
            nested_ids=list(d.nested_aux_ids),
            fc_chunks=3,
        )
    trained = TRAINED_CONVENTION.get(d.format or "", "unknown")
    intended = [i + 1 for i in d.aux_ids] if trained == "layer-output" else list(d.aux_ids)
    per_engine = {e: captured_layers(d, L, e)[0] for e in ctx.engines}
    differs = [e for e, lay in per_engine.items() if trained != "unknown" and lay != intended]
    detail = "; ".join(f"{e} captures hidden_states{lay}" for e, lay in per_engine.items())
    msg = f"explicit aux ids {list(d.aux_ids)} ({d.aux_ids_where}): {detail}"
    if trained != "unknown":
        msg += f"; format {d.format} writes {trained} ids, i.e. trained on hidden_states{intended}"
    if differs:
        msg += f" — {', '.join(differs)} differ(s) from training: rewrite the ids in that engine's convention"
    yield _f(
        "aux.convention",
        "warning",
        "any",
        msg,
        f"{FACTS} §3.1 (vLLM PR #43671, SGLang PR #32334)",
        ids=list(d.aux_ids),
        captured=per_engine,
        trained_on=intended,
        convention=trained,
        differs=differs,
    )


# --------------------------------------------------------------------------- norms, max position


@rule(
    "norm.residual_unsupported",
    "norm.residual_default",
    "norm.output_meaning",
    source=f"{FACTS} §3.2, §3.3",
)
def rule_norms(ctx: CheckContext) -> Iterable[Finding]:
    d = ctx.draft
    if "tokenspeed" in ctx.engines and d.norm_before_residual is True:
        yield _f(
            "norm.residual_unsupported",
            "error",
            "tokenspeed",
            "norm_before_residual is true but tokenspeed ignores the flag (residual = raw hidden): drafts are silently "
            "wrong there; serve on vLLM or retrain with norm_before_residual false",
            f"{FACTS} §3.2",
            source_key=d.sources.get("norm_before_residual"),
        )
    if "vllm" in ctx.engines and d.format == "D" and d.norm_before_residual is None:
        yield _f(
            "norm.residual_default",
            "warning",
            "vllm",
            "speculators config without norm_before_residual: vLLM assumes true (speculators' own default is false); "
            "write the value the draft was trained with",
            f"{FACTS} §3.2 (vLLM update_eagle3)",
        )
    if d.norm_output is not None:
        yield _f(
            "norm.output_meaning",
            "info",
            "any",
            f"norm_output={d.norm_output} read as '{d.norm_output_meaning}' for format {d.format}; vLLM and tokenspeed "
            "read it as Eagle 3.1 post-norm chaining",
            f"{FACTS} §3.3",
            norm_output=d.norm_output,
            meaning=d.norm_output_meaning,
        )


@rule("maxpos.short", source=f"{FACTS} §3.8")
def rule_maxpos(ctx: CheckContext) -> Iterable[Finding]:
    d = ctx.draft
    want = ctx.max_model_len or ctx.target.max_position_embeddings
    if d.max_position_embeddings is None or want is None or d.max_position_embeddings >= want:
        return
    for engine in ctx.engines:
        sev = "info" if engine == "vllm" else "warning"
        note = (
            "vLLM raises it automatically (vLLM #48894)"
            if engine == "vllm"
            else "rotary cache may be indexed out of range"
        )
        yield _f(
            "maxpos.short",
            sev,
            engine,
            f"draft max_position_embeddings {d.max_position_embeddings} < serving length {want}: {note}; "
            f"set the draft's max_position_embeddings to {want}",
            f"{FACTS} §3.8",
            draft=d.max_position_embeddings,
            serving=want,
        )


# --------------------------------------------------------------------------- tensor parallel


def heads_ok(nh: int | None, nkv: int | None, tp: int) -> bool:
    """Attention heads divisible by TP; KV heads divisible by TP or dividing it (replicated)."""
    if nh is not None and nh % tp:
        return False
    if nkv is not None and nkv % tp and tp % nkv:
        return False
    return True


@rule(
    "tp.vocab_indivisible",
    "tp.heads_indivisible",
    "draft_tp.invalid",
    source=f"{FACTS} §4 (vocab parallelism), §5",
)
def rule_tp(ctx: CheckContext) -> Iterable[Finding]:
    d, t = ctx.draft, ctx.target
    for engine in ctx.engines:
        for tp in ctx.tps:
            dtp = ctx.draft_tp_for(tp) if engine == "vllm" else tp
            if engine == "vllm" and dtp not in (1, tp):
                yield _f(
                    "draft_tp.invalid",
                    "error",
                    "vllm",
                    f"draft_tensor_parallel_size {dtp} must be 1 or the target TP {tp}",
                    f"{FACTS} §4",
                    tp,
                    draft_tp=dtp,
                )
                continue
            items = []
            if t.V and not (engine == "tokenspeed" and t.tokenspeed_embed_replicated):
                items.append(("target embedding", t.V, tp))
            # tokenspeed builds the Llama draft's embedding sharded; MLA drafts are replicated (§5)
            ts_sharded = engine == "tokenspeed" and d.attention != "MLA"
            if d.V and (d.has_embed and engine == "vllm" or ts_sharded):
                items.append(("draft embedding", d.V, dtp))
            if d.Vd:
                items.append(("draft lm_head", d.Vd, dtp))
            for what, v, n in items:
                if pad64(v) % n:
                    yield _f(
                        "tp.vocab_indivisible",
                        "error",
                        engine,
                        f"{what}: padded vocab {pad64(v)} (vocab {v} padded to 64) is not divisible by TP {n}; pick another TP",
                        f"{FACTS} §4, §5",
                        tp,
                        what=what,
                        vocab=v,
                        padded=pad64(v),
                        tp_size=n,
                    )
            for what, nh, nkv, n in (("target", t.nh, t.nkv, tp), ("draft", d.nh, d.nkv, dtp)):
                if what == "target" and t.mla:
                    nkv = None
                if not heads_ok(nh, nkv, n):
                    yield _f(
                        "tp.heads_indivisible",
                        "error",
                        engine,
                        f"{what} attention heads {nh} / KV heads {nkv} do not split over TP {n}",
                        f"{FACTS} §4",
                        tp,
                        what=what,
                        heads=nh,
                        kv_heads=nkv,
                        tp_size=n,
                    )


# --------------------------------------------------------------------------- embedding and head sharing


@dataclass(frozen=True)
class SharingRow:
    """One row of the embedding/head sharing table (engine-facts §4, §5)."""

    engine: str
    tp: int
    target_shape: tuple[int, int] | None
    draft_sharded_shape: tuple[int, int] | None
    draft_replicated_shape: tuple[int, int] | None
    verdict: str
    head_verdict: str
    embed_bytes_per_rank: int | None
    draft_bytes_per_rank: int | None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "tp": self.tp,
            "target_shape": list(self.target_shape) if self.target_shape else None,
            "draft_sharded_shape": list(self.draft_sharded_shape)
            if self.draft_sharded_shape
            else None,
            "draft_replicated_shape": list(self.draft_replicated_shape)
            if self.draft_replicated_shape
            else None,
            "verdict": self.verdict,
            "head_verdict": self.head_verdict,
            "embed_bytes_per_rank": self.embed_bytes_per_rank,
            "draft_bytes_per_rank": self.draft_bytes_per_rank,
            "note": self.note,
        }


COLUMN_PARALLEL = ("q_proj", "k_proj", "v_proj", "gate_proj", "up_proj")
ROW_PARALLEL = ("o_proj", "down_proj")


def draft_bytes_per_rank(ctx: CheckContext, tp: int, *, own_embed: bool) -> int:
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


def _embed_itemsize(ctx: CheckContext) -> int:
    t = ctx.target
    if t.embed_name:
        return DTYPE_BYTES.get(ctx.target_ck.tensors[t.embed_name].dtype, 2)
    return 2


def _row(
    ctx: CheckContext,
    engine: str,
    tp: int,
    shapes: tuple[tuple[int, int] | None, tuple[int, int] | None, tuple[int, int]],
    verdict: str,
    head: str,
    embed_rows: int,
    draft_tp: int,
    note: str = "",
) -> SharingRow:
    """A sharing-table row; the embedding's bytes per rank use the target width when shared
    and the draft width when the draft keeps its own."""
    width = ctx.target.H if verdict.startswith("share") else ctx.draft.H
    return SharingRow(
        engine,
        tp,
        *shapes,
        verdict,
        head,
        embed_rows * (width or 0) * _embed_itemsize(ctx),
        draft_bytes_per_rank(ctx, draft_tp, own_embed=verdict == "own"),
        note,
    )


def _split_rows(vocab: int, tp: int) -> int | None:
    """Per-rank rows of a vocab-parallel embedding, None when pad64(vocab) does not divide."""
    return pad64(vocab) // tp if pad64(vocab) % tp == 0 else None


def vllm_sharing(ctx: CheckContext, tp: int) -> SharingRow:
    """vLLM (engine-facts §4, SpecDecodeBaseProposer): a draft without ``embed_tokens`` shares the
    target's (widths must match); one with it keeps it unless ``torch.equal`` per rank. Same for
    ``lm_head``, which can only be borrowed when Vd == V."""
    d, t = ctx.draft, ctx.target
    dtp = ctx.draft_tp_for(tp)
    rows_t, rows_d = _split_rows(t.V, tp), _split_rows(d.V or t.V, dtp)
    shapes = (
        (rows_t, t.H) if rows_t else None,
        (rows_d, d.H) if rows_d else None,
        (pad64(d.V or t.V), d.H),
    )
    note = ""
    if d.has_embed:
        verdict = "own"
        note = (
            "draft ships embed_tokens: vLLM shares only if torch.equal per rank (ranks may disagree, "
            "vLLM #50158); drop it if byte-identical to the target's"
        )
    else:
        verdict = "error" if d.H != t.H else "share"
    if d.has_lm_head:
        head = "own"
    else:
        head = "share" if d.Vd == t.V and d.H == t.H else "none"
    embed_rows = {"share": rows_t or 0, "own": rows_d or 0}.get(verdict, 0)
    return _row(ctx, "vllm", tp, shapes, verdict, head, embed_rows, dtp, note)


def tokenspeed_sharing(ctx: CheckContext, tp: int) -> tuple[SharingRow, list[Finding]]:
    """tokenspeed ``set_embed_and_head`` (engine-facts §5, seed 004 = tokenspeed #837, #958).

    Target embedding: replicated for MiniMax-M3, else sharded over attention TP. Llama draft:
    share when the target's per-rank shape equals the draft's sharded one, rebuild replicated when
    it equals the replicated one, else raise. MLA drafts: share only on an exact match with their
    (replicated) embedding, else keep their own, else raise. ``target_hidden_size != hidden_size``
    returns early. The head is shared only when untied and ``draft_vocab_size`` is absent.
    """
    d, t = ctx.draft, ctx.target
    findings: list[Finding] = []
    vdraft = d.V or t.V
    target_rows = pad64(t.V) if t.tokenspeed_embed_replicated else _split_rows(t.V, tp)
    target_shape = (target_rows, t.H) if target_rows else None
    mla = d.attention == "MLA"
    rows_d = None if mla else _split_rows(vdraft, tp)
    sharded = (rows_d, d.H) if rows_d else None
    replicated = (pad64(vdraft), d.H)
    head_shared = not d.tie_word_embeddings and not d.draft_vocab_size_declared
    head = (
        "share"
        if head_shared
        else ("own" if d.has_lm_head else ("tied" if d.tie_word_embeddings else "none"))
    )
    note = ""
    if d.target_hidden_size_declared and d.Ht != d.H:
        verdict = "own" if d.has_embed else "none"
        head = "own" if d.has_lm_head else "none"
        note = "target_hidden_size != hidden_size: set_embed_and_head returns early, shares nothing"
    elif mla:
        verdict = "share" if target_shape == replicated else ("own" if d.has_embed else "error")
        if verdict == "own":
            note = "MLA draft keeps its own embed_tokens (shapes differ; tokenspeed #958)"
    elif target_shape == sharded:
        verdict = "share"
    elif target_shape == replicated:
        verdict = "share-replicated"
        note = "draft embedding rebuilt replicated to match the target (tokenspeed #837)"
    else:
        verdict = "error"
    if verdict == "error":
        a, s = target_shape or ("?", t.H), sharded or ("?", d.H)
        findings.append(
            _f(
                "embed.share_error",
                "error",
                "tokenspeed",
                f"tokenspeed set_embed_and_head raises at TP {tp}: Cannot share target embed of shape ({a[0]}, {a[1]}): "
                f"draft expects ({s[0]}, {s[1]}) (sharded) or ({replicated[0]}, {replicated[1]}) (replicated). "
                "Make the draft's vocab_size/hidden_size match the target",
                f"{FACTS} §5 (set_embed_and_head, tokenspeed #837, #958)",
                tp,
                target_shape=list(a),
                draft_sharded_shape=list(s),
                draft_replicated_shape=list(replicated),
            )
        )
    if verdict == "share-replicated" and d.tie_word_embeddings:
        findings.append(
            _f(
                "embed.tied_stale",
                "warning",
                "tokenspeed",
                f"tie_word_embeddings with a rebuilt (replicated) embedding at TP {tp}: the tied head keeps pointing at "
                "the stale sharded weight (open review on tokenspeed #837); set tie_word_embeddings false",
                f"{FACTS} §5 step 4",
                tp,
            )
        )
    if verdict in ("share", "share-replicated"):
        embed_rows = target_rows or 0
    elif verdict == "own":
        embed_rows = replicated[0] if mla else (rows_d or 0)
    else:
        embed_rows = 0
    row = _row(ctx, "tokenspeed", tp, (target_shape, sharded, replicated), verdict, head, embed_rows,
               1 if mla else tp, note)  # fmt: skip
    return row, findings


def sharing_rows(ctx: CheckContext) -> tuple[list[SharingRow], list[Finding]]:
    """Per engine and TP: target embedding per-rank shape, the draft's sharded/replicated shapes,
    and what happens to the embedding and the head (engine-facts §4 vLLM, §5 tokenspeed)."""
    d, t = ctx.draft, ctx.target
    rows: list[SharingRow] = []
    findings: list[Finding] = []
    if t.V is None or t.H is None or d.H is None:
        return rows, findings
    for engine in ctx.engines:
        for tp in ctx.tps:
            if engine == "vllm":
                rows.append(vllm_sharing(ctx, tp))
            else:
                row, found = tokenspeed_sharing(ctx, tp)
                rows.append(row)
                findings.extend(found)
    return rows, findings


# --------------------------------------------------------------------------- driver


@dataclass(frozen=True)
class CheckResult:
    """What `check` returns: models, findings, the sharing table and per-engine readiness."""

    target_source: str
    draft_source: str
    target: TargetModel
    draft: DraftModel
    findings: tuple[Finding, ...]
    embed_sharing: tuple[SharingRow, ...]
    engines: tuple[str, ...]
    tps: tuple[int, ...]

    def ok(self, strict: bool = False) -> bool:
        return not has_errors(self.findings, strict=strict)

    def ready_tps(self, engine: str) -> list[int]:
        """TP sizes at which ``engine`` has no error finding (general or for that TP)."""
        errs = [f for f in self.findings if f.severity == "error" and f.engine in (engine, "any")]
        if any(f.tp is None for f in errs):
            return []
        bad = {f.tp for f in errs}
        return [tp for tp in self.tps if tp not in bad]

    def to_dict(self, strict: bool = False) -> dict[str, Any]:
        return {
            "target": {"source": self.target_source, **self.target.to_dict()},
            "draft": {"source": self.draft_source, **self.draft.to_dict()},
            "engines": {
                e: {"ready": bool(self.ready_tps(e)), "ready_tp": self.ready_tps(e)}
                for e in self.engines
            },
            "findings": [f.to_dict() for f in self.findings],
            "embed_sharing": [r.to_dict() for r in self.embed_sharing],
            "ok": self.ok(strict),
        }


def parse_tps(text: str) -> tuple[int, ...]:
    """Parse ``--tp 1,2,4,8``.

    Raises:
        UsageError: empty, non-integer or non-positive entries.
    """
    try:
        tps = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise UsageError(
            f"--tp {text!r}: expected comma-separated positive integers, e.g. 1,2,4,8"
        ) from None
    if not tps or any(t < 1 for t in tps):
        raise UsageError(f"--tp {text!r}: expected comma-separated positive integers, e.g. 1,2,4,8")
    return tuple(dict.fromkeys(tps))


def run_check(
    target_ck: Checkpoint,
    draft_ck: Checkpoint,
    *,
    engines: Sequence[str] = ENGINES,
    tps: Sequence[int] = (1, 2, 4, 8),
    draft_tp: int | None = None,
    max_model_len: int | None = None,
    kernel: str = "skip",
) -> CheckResult:
    """Run every rule on a target/draft pair.

    Args:
        target_ck, draft_ck: checkpoints from :func:`recipecli.checkpoint.open_checkpoint`.
        engines: subset of ``("vllm", "tokenspeed")``.
        tps: target tensor-parallel sizes to check.
        draft_tp: vLLM ``draft_tensor_parallel_size`` (None = the target TP).
        max_model_len: serving length for ``maxpos.short`` (default: target max_position_embeddings).
        kernel: ``auto|cpu|cuda|skip``; anything but ``skip`` runs the fused-norm kernel check.

    Returns:
        :class:`CheckResult`.
    """
    ctx = CheckContext(
        target_ck,
        draft_ck,
        target_model(target_ck),
        canonical_draft(draft_ck),
        tuple(engines),
        tuple(tps),
        draft_tp,
        max_model_len,
    )
    findings: list[Finding] = []
    for r in RULES:
        if r.needs_eagle3 and not ctx.draft.is_eagle3:
            continue
        findings.extend(r.fn(ctx))
    rows: list[SharingRow] = []
    if ctx.draft.is_eagle3:
        rows, share_findings = sharing_rows(ctx)
        findings.extend(share_findings)
        findings.extend(kernel_findings(draft_ck, kernel, ctx.engines))
    order = {"error": 0, "warning": 1, "info": 2}
    findings.sort(key=lambda f: (order[f.severity], f.code, f.engine, f.tp or 0))
    return CheckResult(
        target_ck.display_name,
        draft_ck.display_name,
        ctx.target,
        ctx.draft,
        tuple(findings),
        tuple(rows),
        ctx.engines,
        ctx.tps,
    )


def kernel_findings(draft_ck: Checkpoint, mode: str, engines: Sequence[str]) -> list[Finding]:
    """Fused-norm kernel findings (``kernel.*``) from :mod:`recipecli.kernelcheck`; nothing for
    ``skip`` (torch is not imported then)."""
    if mode == "skip":
        return []
    try:
        from recipecli import kernelcheck
    except ImportError:
        return [
            _f("kernel.skipped", "info", "any", "kernel check unavailable in this build", "issue 4")
        ]
    return [f for f in kernelcheck.kernel_findings(draft_ck, mode) if f.engine in (*engines, "any")]


# --------------------------------------------------------------------------- human output


def _shape(s: tuple[int, ...] | None) -> str:
    return f"[{', '.join(str(x) for x in s)}]" if s else "-"


def _bytes(n: int | None) -> str:
    if not n:
        return "-"
    return f"{n / 1e9:.2f} GB" if n >= 1e8 else f"{n / 1e6:.1f} MB"


def format_result(res: CheckResult, *, strict: bool = False) -> str:
    """Human report: header, READY/NOT READY per engine, findings by severity, sharing table."""
    t, d = res.target, res.draft
    lines = [
        f"target  {res.target_source}: {t.architecture}"
        + (f" (text config under {t.wrapper})" if t.wrapper else "")
        + f", H {t.H}, layers {t.L}, vocab {t.V}",
        f"draft   {res.draft_source}: "
        + (
            f"format {d.format} ({d.format_name}), H {d.H}, Vd {d.Vd}, k {d.k}, aux ids "
            + (str(list(d.aux_ids)) if d.aux_ids is not None else "absent")
            if d.is_eagle3
            else "not an EAGLE3 draft"
        ),
        "",
    ]
    for engine in res.engines:
        ready = res.ready_tps(engine)
        warn = [f for f in res.findings if f.severity == "warning" and f.engine in (engine, "any")]
        if ready and not (strict and warn):
            lines.append(f"{engine:<11} READY      at TP {', '.join(map(str, ready))}")
        else:
            general = any(
                f.severity == "error" and f.tp is None and f.engine in (engine, "any")
                for f in res.findings
            )
            why = (
                "see errors"
                if general
                else ("no TP size works" if not ready else "warnings under --strict")
            )
            lines.append(f"{engine:<11} NOT READY  ({why})")
    for sev in ("error", "warning", "info"):
        group = [f for f in res.findings if f.severity == sev]
        if not group:
            continue
        lines += ["", f"{sev}s ({len(group)}):"]
        for f in group:
            where = f.engine + (f" tp{f.tp}" if f.tp is not None else "")
            lines.append(f"  [{where}] {f.code}: {f.message}")
    if res.embed_sharing:
        lines += ["", "embedding / head sharing (per rank):"]
        hdr = (
            "engine",
            "tp",
            "target embed",
            "draft sharded",
            "draft replicated",
            "embed",
            "head",
            "embed bytes",
            "draft bytes",
        )
        table = [hdr] + [
            (
                r.engine,
                str(r.tp),
                _shape(r.target_shape),
                _shape(r.draft_sharded_shape),
                _shape(r.draft_replicated_shape),
                r.verdict,
                r.head_verdict,
                _bytes(r.embed_bytes_per_rank),
                _bytes(r.draft_bytes_per_rank),
            )
            for r in res.embed_sharing
        ]
        widths = [max(len(row[i]) for row in table) for i in range(len(hdr))]
        for row in table:
            lines.append(
                "  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
            )
    return "\n".join(lines)
