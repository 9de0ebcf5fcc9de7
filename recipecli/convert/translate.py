"""Fields translated by meaning (module docstring of :mod:`recipecli.convert`): aux ids between
conventions, ``norm_before_residual``, ``norm_output``, the vocabulary maps, and what the output
format's check engine cannot serve. Each resolver returns the output value and the
:class:`Translation` records; what the output format says comes from its
:class:`~recipecli.convert.formats.OutputFormatSpec`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from recipecli.checkpoint.model import Checkpoint
from recipecli.convert.formats import OutputFormatSpec, output_format
from recipecli.convert.options import ConvertOptions
from recipecli.draft import (
    TRAINED_CONVENTION,
    Convention,
    DraftModel,
    from_hidden_state,
    to_hidden_state,
)
from recipecli.errors import ConvertError, UsageError


@dataclass(frozen=True)
class Translation:
    """A config field whose value or key changed by meaning (JSON ``translated``)."""

    field: str
    source: Any
    output: Any
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "from": self.source, "to": self.output, "why": self.why}


def refuse(msg: str, path: str, hint: str | None = None) -> ConvertError:
    """The :class:`ConvertError` of a refusal: ``msg`` about ``path``, with what to do."""
    return ConvertError(msg, path=path, hint=hint)


def derive_t2d(d2t: np.ndarray, V: int) -> np.ndarray:
    """``t2d`` [V] bool from ``d2t`` [Vd] int64 offsets (target id = i + d2t[i], as vLLM v0.33.0
    ``Eagle3LlamaForCausalLM.compute_logits`` maps draft logits).

    ``target_id = i + d2t[i]``; ``t2d[target_id] = True`` for every draft id i.

    Raises:
        ConvertError: ``d2t`` is not a valid map (a target id outside [0, V), or not strictly
            increasing), so no ``t2d`` can be derived without inventing one.
    """
    d2t = np.asarray(d2t, dtype=np.int64)
    ids = np.arange(d2t.shape[0], dtype=np.int64) + d2t
    if ids.size and (ids.min() < 0 or ids.max() >= V):
        bad = int(np.flatnonzero((ids < 0) | (ids >= V))[0])
        raise ConvertError(
            f"d2t maps draft id {bad} to target id {int(ids[bad])}, outside [0, {V}): "
            "d2t holds offsets (target = i + d2t[i]); fix the map before converting",
            hint="see docs/convert.md, vocab maps",
        )
    if ids.size > 1 and not np.all(np.diff(ids) > 0):
        bad = int(np.flatnonzero(np.diff(ids) <= 0)[0]) + 1
        raise ConvertError(
            f"d2t is not strictly increasing at draft id {bad} (target ids {int(ids[bad - 1])}, "
            f"{int(ids[bad])}): not a valid draft→target map, so no t2d can be derived",
            hint="see docs/convert.md, vocab maps",
        )
    t2d = np.zeros(V, dtype=bool)
    t2d[ids] = True
    return t2d


def _draft_hidden(
    d: DraftModel, opts: ConvertOptions, conv: Convention | None, src: str, notes: list[str]
) -> tuple[int, ...] | None:
    """The draft's own aux ids as hidden-state indices (None when absent, or unknown and
    replaced by ``--aux-ids``)."""
    if d.aux_ids is not None and conv is None and opts.aux_ids is not None:
        notes.append(
            f"the draft's aux ids {list(d.aux_ids)} (convention unknown) replaced by --aux-ids"
        )
    elif d.aux_ids is not None:
        if conv is None:
            raise refuse(
                f"format {d.format} does not say whether its aux ids {list(d.aux_ids)} are hidden-state or "
                "layer-output indices",
                src,
                "pass --aux-id-convention hidden-state|layer-output (docs/convert.md, aux ids)",
            )
        return to_hidden_state(d.aux_ids, conv)
    return None


def _given_hidden(
    d: DraftModel,
    opts: ConvertOptions,
    src_hidden: tuple[int, ...] | None,
    src: str,
    notes: list[str],
) -> tuple[tuple[int, ...], Translation]:
    """``--aux-ids`` as hidden-state indices, and its translation (refused when it contradicts
    the draft's own ids without ``--force``)."""
    assert opts.aux_ids is not None
    if opts.aux_id_convention is None:
        raise UsageError(
            "--aux-ids needs --aux-id-convention hidden-state|layer-output to say which convention "
            "the ids are written in (docs/convert.md, aux ids)"
        )
    given = to_hidden_state(opts.aux_ids, opts.aux_id_convention)
    if src_hidden is not None and given != src_hidden and not opts.force:
        raise refuse(
            f"--aux-ids {list(opts.aux_ids)} ({opts.aux_id_convention}) = hidden states {list(given)} "
            f"but the draft's own ids {list(d.aux_ids or ())} mean hidden states {list(src_hidden)}",
            src,
            "drop --aux-ids, or add --force to override the draft's ids",
        )
    if src_hidden is not None and given != src_hidden:
        notes.append(
            f"--force: aux ids overridden, hidden states {list(src_hidden)} → {list(given)}"
        )
    trans = Translation(
        "aux_hidden_states",
        list(src_hidden) if src_hidden is not None else None,
        list(given),
        f"--aux-ids {','.join(map(str, opts.aux_ids))} in {opts.aux_id_convention} convention",
    )
    return given, trans


def _output_ids(
    hidden: tuple[int, ...], out: OutputFormatSpec, fc_k: int | None, src: str
) -> tuple[int, ...]:
    """The output's aux ids (in its convention) for hidden-state indices ``hidden``; refused when
    they do not match ``fc`` or name the embedding output in layer-output convention."""
    if fc_k is not None and len(hidden) != fc_k:
        raise refuse(
            f"{len(hidden)} aux ids {list(hidden)} but fc takes {fc_k} target hidden states",
            src,
            "give as many aux ids as fc chunks",
        )
    out_ids = from_hidden_state(hidden, out.aux_convention)
    if any(i < 0 for i in out_ids):
        raise refuse(
            f"aux hidden states {list(hidden)} include the embedding output (index 0), which "
            f"{out.key} output cannot express in {out.aux_convention} convention",
            src,
            "see docs/convert.md, aux ids",
        )
    return out_ids


def resolve_aux(
    ck: Checkpoint, d: DraftModel, opts: ConvertOptions, fc_k: int | None
) -> tuple[tuple[int, ...] | None, list[Translation], list[str]]:
    """Aux ids in hidden-state convention for the output (None = absent), translations, notes.

    The source convention comes from the draft's format (:data:`recipecli.draft.TRAINED_CONVENTION`)
    unless ``--aux-id-convention`` says it; ``fc_k`` is the number of target hidden states the
    checkpoint's ``fc`` takes (None when unknown).

    Raises:
        ConvertError: the convention is unknown, the ids contradict ``--aux-ids`` (without
            ``--force``) or ``fc``, or the output cannot express them.
        UsageError: ``--aux-ids`` without ``--aux-id-convention``.
    """
    src = ck.source
    out = output_format(opts.to)
    by_format = TRAINED_CONVENTION.get(d.format or "")
    # --aux-id-convention describes --aux-ids when they are given, else the draft's own ids
    conv = by_format if opts.aux_ids is not None else (opts.aux_id_convention or by_format)
    trans: list[Translation] = []
    notes: list[str] = []
    src_hidden = _draft_hidden(d, opts, conv, src, notes)
    if opts.aux_ids is not None:
        src_hidden, given_trans = _given_hidden(d, opts, src_hidden, src, notes)
        trans.append(given_trans)
    if src_hidden is None:
        if fc_k is not None and fc_k != 3:
            raise refuse(
                f"fc takes {fc_k} target hidden states but the config names no aux layer ids; engines "
                "would build a 3-chunk fc",
                src,
                "pass --aux-ids and --aux-id-convention (docs/convert.md, aux ids)",
            )
        return None, trans, notes
    out_ids = _output_ids(src_hidden, out, fc_k, src)
    if d.aux_ids is not None and opts.aux_ids is None:
        trans.append(
            Translation(
                "eagle_aux_hidden_state_layer_ids",
                {"ids": list(d.aux_ids), "where": d.sources.get("aux_ids"), "convention": conv},
                {
                    "ids": list(out_ids),
                    "where": out.aux_ids_written_at,
                    "convention": out.aux_convention,
                },
                "hidden states entering layers "
                f"{list(src_hidden)}; vLLM/speculators write hidden-state indices, SpecForge/SGLang/"
                "ModelOpt/tokenspeed layer-output indices (= hidden-state - 1)",
            )
        )
    return src_hidden, trans, notes


def resolve_norm_before_residual(
    d: DraftModel, opts: ConvertOptions, src: str
) -> tuple[bool | None, list[Translation]]:
    """``norm_before_residual`` for the output: the draft's, or ``--norm-before-residual``.

    Raises:
        ConvertError: the flag contradicts the draft (without ``--force``), or neither says it
            and the output format must state it
            (:attr:`~recipecli.convert.formats.OutputFormatSpec.norm_before_residual_required`:
            vLLM ``vllm/transformers_utils/configs/speculators/algos.py`` ``update_eagle3``
            assumes true when a speculators config omits it).
    """
    nbr = d.norm_before_residual
    trans: list[Translation] = []
    if opts.norm_before_residual is not None:
        if nbr is not None and nbr != opts.norm_before_residual and not opts.force:
            raise refuse(
                f"--norm-before-residual {str(opts.norm_before_residual).lower()} contradicts the draft's "
                f"{d.sources.get('norm_before_residual')} = {str(nbr).lower()}",
                src,
                "drop the flag, or add --force to override",
            )
        if nbr != opts.norm_before_residual:
            trans.append(
                Translation(
                    "norm_before_residual",
                    nbr,
                    opts.norm_before_residual,
                    "--norm-before-residual (formats A/B/C do not record it)",
                )
            )
        nbr = opts.norm_before_residual
    required = output_format(opts.to).norm_before_residual_required
    if required is not None and nbr is None:
        raise refuse(
            f"format {d.format} does not record norm_before_residual and {opts.to} output must "
            f"state it ({required})",
            src,
            "pass --norm-before-residual true|false as the draft was trained",
        )
    return nbr, trans


def resolve_norm_output(
    d: DraftModel, opts: ConvertOptions, src: str
) -> tuple[bool, list[Translation]]:
    """Whether the draft does Eagle 3.1 post-norm chaining (the meaning the output's
    ``norm_output`` key has), from the format's meaning of its ``norm_output``
    (:attr:`recipecli.draft.FormatSpec.norm_output_meaning`).

    Raises:
        ConvertError: ``norm_output`` false in a norm-before-head format (no norm before the
            head, which no output format can express).
    """
    if d.norm_output_meaning != "norm-before-head":
        return bool(d.norm_output), []
    if d.norm_output is False:
        raise refuse(
            f"norm_output false in format {d.format} means no norm before the lm_head, which "
            "speculators, vLLM and tokenspeed cannot express",
            src,
            "see docs/convert.md, norm_output",
        )
    if d.norm_output is None:
        return False, []
    trans = Translation(
        "norm_output",
        d.norm_output,
        output_format(opts.to).norm_output_when_off,
        f"format {d.format} norm_output means 'norm before lm_head' (SpecForge); the output "
        "key means Eagle 3.1 post-norm chaining, which this draft does not do",
    )
    return False, [trans]


def serving_refusals(
    d: DraftModel, opts: ConvertOptions, n_layers: int, nbr: bool | None, src: str
) -> list[str]:
    """Notes for ``--force`` on output its format's check engine cannot serve
    (:attr:`~recipecli.convert.formats.OutputFormatSpec.serving_limits`: for eagle3 output,
    tokenspeed's one layer, Ht = H and ``norm_before_residual`` false; docs/convert.md,
    tokenspeed).

    Raises:
        ConvertError: any of those without ``--force``.
    """
    out = output_format(opts.to)
    why = out.serving_limits(d, n_layers, nbr)
    engine = out.check_engine
    if why and not opts.force:
        raise refuse(
            f"{engine} cannot serve this draft as {out.key}: " + "; ".join(why),
            src,
            out.serving_limits_hint,
        )
    return [f"--force: {engine} cannot serve this output: {w}" for w in why]


def resolve_vocab_maps(
    ck: Checkpoint, d: DraftModel
) -> tuple[dict[str, bytes], list[Translation], list[str]]:
    """Derived tensors (``t2d`` from ``d2t`` when it is missing and V is known), translations,
    notes (vLLM v0.33.0 ``Eagle3LlamaForCausalLM.compute_logits``: target id = i + d2t[i]).

    Raises:
        ConvertError: Vd < V without ``d2t`` (convert never invents a map), or an invalid ``d2t``
            (:func:`derive_t2d`).
    """
    V, Vd = d.V, d.Vd
    if V is not None and Vd < V and not d.has_d2t:
        raise refuse(
            f"draft_vocab_size {Vd} < vocab_size {V} but there is no d2t: the draft→target map is "
            "unknown (engines would map draft ids onto target ids 0..Vd-1)",
            ck.source,
            "add the d2t the draft was trained with; convert never invents one",
        )
    if not d.has_d2t or d.has_t2d:
        return {}, [], []
    if V is None:
        return {}, [], ["d2t kept; t2d not derived because vocab_size is unknown"]
    t2d = derive_t2d(ck.read_tensor("d2t"), V)
    trans = Translation(
        "t2d",
        None,
        f"derived from d2t: bool [{V}] with {int(t2d.sum())} entries true",
        "t2d[i + d2t[i]] = True for every draft id i",
    )
    return {"t2d": t2d.tobytes()}, [trans], []
