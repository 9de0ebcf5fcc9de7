"""The plan: everything a conversion will write, decided before a byte is written."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from recipecli.checkpoint.model import Checkpoint
from recipecli.convert.config import build_config
from recipecli.convert.formats import output_format, output_formats
from recipecli.convert.options import DTYPE_OPTION, ConvertOptions
from recipecli.convert.semantics import draft_semantics
from recipecli.convert.tensors import TensorMove, plan_moves
from recipecli.convert.translate import (
    Translation,
    refuse,
    resolve_aux,
    resolve_norm_before_residual,
    resolve_norm_output,
    resolve_vocab_maps,
    serving_refusals,
)
from recipecli.draft import DraftModel, canonical_draft, layer_indices
from recipecli.errors import UsageError


@dataclass(frozen=True)
class ConvertPlan:
    """Everything :func:`convert` will write, decided before a byte is written.

    Attributes:
        draft: the source in canonical form.
        options: the request.
        config: the output ``config.json``.
        moves: output tensors in file order, with shards assigned.
        dropped: (source tensor, why) for tensors deliberately not written (``--embed drop``).
        translations: every field translated by meaning.
        config_keys_dropped: (source key, why) for format-specific keys with no output meaning.
        derived: output name -> bytes for computed tensors.
        expected: the semantic view (:func:`draft_semantics`) the output must have.
        notes: warnings worth showing (``--force`` overrides, check findings).
    """

    draft: DraftModel
    options: ConvertOptions
    config: dict[str, Any]
    moves: tuple[TensorMove, ...]
    dropped: tuple[tuple[str, str], ...]
    translations: tuple[Translation, ...]
    config_keys_dropped: tuple[tuple[str, str], ...]
    derived: Mapping[str, bytes]
    expected: Mapping[str, Any]
    notes: tuple[str, ...] = ()

    @property
    def total_bytes(self) -> int:
        return sum(m.nbytes for m in self.moves)

    @property
    def largest_tensor_bytes(self) -> int:
        return max((m.nbytes for m in self.moves), default=0)


def _source_draft(ck: Checkpoint, opts: ConvertOptions) -> DraftModel:
    """The canonical source draft, refused when convert has no output layout for it.

    Raises:
        UsageError: an unregistered ``--to``; ``--verifier`` for an output format that names no
            verifier (:attr:`~recipecli.convert.formats.OutputFormatSpec.names_verifier`).
        ConvertError: not an EAGLE3 draft, or an MLA draft.
    """
    out = output_format(opts.to)  # an unregistered --to is refused before the draft is read
    if opts.verifier is not None and not out.names_verifier:
        naming = ", ".join(f.key for f in output_formats() if f.names_verifier)
        raise UsageError(
            f"--verifier applies to --to {naming} only ({out.key} output names no verifier)"
        )
    d = canonical_draft(ck)
    if d.format is None:
        raise refuse(
            "not an EAGLE3 draft (no speculators_model_type, Eagle3 architecture or one-layer Llama "
            "with draft_vocab_size)",
            ck.source,
            "see docs/check.md for the draft formats convert reads",
        )
    if d.attention == "MLA":
        layouts = " or ".join(f.layout for f in output_formats())
        raise refuse(
            f"MLA draft ({d.architecture}) has no {layouts} layout",
            ck.source,
            "serve it in its own format",
        )
    return d


def _fc_chunks(ck: Checkpoint, d: DraftModel) -> int | None:
    """How many target hidden states the checkpoint's ``fc`` takes (its width / Ht), or None."""
    fc_name = d.tensor("fc")
    if fc_name in ck.tensors and d.Ht:
        width = ck.tensors[fc_name].shape[-1]
        return width // d.Ht if width % d.Ht == 0 else None
    return None


def _expected(
    d: DraftModel,
    opts: ConvertOptions,
    hidden_ids: tuple[int, ...] | None,
    nbr: bool | None,
    chaining: bool,
    derived: Mapping[str, bytes],
    n_layers: int,
) -> dict[str, Any]:
    """The meaning (:func:`draft_semantics`) the output must read back to: the source's, with
    the planned translations applied."""
    expected = draft_semantics(d)
    expected["aux_hidden_states"] = list(hidden_ids) if hidden_ids is not None else None
    expected["norm_before_residual"] = nbr
    expected["post_norm_chaining"] = chaining
    expected["norm_before_head"] = True
    expected["has_t2d"] = d.has_t2d or "t2d" in derived
    expected["has_embed"] = d.has_embed and opts.embed != "drop"
    if d.V is not None and d.Vd < d.V:
        expected["tie_word_embeddings"] = False
    cast_to = DTYPE_OPTION.get(opts.dtype)
    if cast_to:
        expected["dtype"] = cast_to
    expected["layers"] = n_layers
    if hidden_ids is not None:
        expected["k"] = len(hidden_ids)
    return expected


def plan_conversion(
    ck: Checkpoint, opts: ConvertOptions, target_ck: Checkpoint | None = None
) -> ConvertPlan:
    """Decide the whole conversion (config, tensor moves, translations) without writing anything.

    Reads only the config, tensor headers and, when present, ``d2t`` values (to derive ``t2d``).
    The steps, in the order their refusals are checked: the source draft, aux ids,
    ``norm_before_residual``, ``norm_output``, what the output format's check engine cannot
    serve (:func:`~recipecli.convert.translate.serving_refusals`), the
    vocabulary maps (:mod:`recipecli.convert.translate`), the tensors
    (:func:`~recipecli.convert.tensors.plan_moves`), the config
    (:func:`~recipecli.convert.config.build_config`).

    Args:
        ck: the source draft (local safetensors or ``.bin`` directory).
        opts: the request.
        target_ck: ``--target`` (sets the speculators verifier; needed for ``--embed drop``).

    Returns:
        A :class:`ConvertPlan` with shards laid out.

    Raises:
        ConvertError: the conversion would lose or invent information (each case names the field
            and the flag that resolves it).
        UsageError: inconsistent flags, or an unregistered output format.
    """
    src = ck.source
    d = _source_draft(ck, opts)
    n_layers = max(len(layer_indices(ck.tensors, d.tensor_prefix)), 1)
    hidden_ids, trans, notes = resolve_aux(ck, d, opts, _fc_chunks(ck, d))
    nbr, nbr_trans = resolve_norm_before_residual(d, opts, src)
    chaining, nout_trans = resolve_norm_output(d, opts, src)
    notes += serving_refusals(d, opts, n_layers, nbr, src)
    derived, vocab_trans, vocab_notes = resolve_vocab_maps(ck, d)
    trans += nbr_trans + nout_trans + vocab_trans
    notes += vocab_notes
    moves, dropped = plan_moves(ck, d, opts, target_ck, n_layers, derived)
    config, cfg_trans, cfg_dropped = build_config(
        ck,
        d,
        opts,
        hidden_ids=hidden_ids,
        nbr=nbr,
        chaining=chaining,
        target_ck=target_ck,
        n_layers=n_layers,
    )
    return ConvertPlan(
        d,
        opts,
        config,
        tuple(moves),
        tuple(dropped),
        tuple(trans + cfg_trans),
        tuple(cfg_dropped),
        derived,
        _expected(d, opts, hidden_ids, nbr, chaining, derived, n_layers),
        tuple(notes),
    )
