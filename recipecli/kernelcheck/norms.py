"""The norms of a draft the fused kernels replace: layer 0's ``input_layernorm`` and
``hidden_norm`` and the Eagle 3.1 ``fc_norm.{i}``, named, sized and with eps and dtype as the
canonical draft (:func:`recipecli.draft.canonical_draft`) says; weights a source lacks values for
are marked for synthesis."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from recipecli.draft import DraftModel
from recipecli.errors import CheckpointFormatError

DTYPE_NAMES: dict[str, str] = {
    "bf16": "bfloat16",
    "bfloat16": "bfloat16",
    "BF16": "bfloat16",
    "fp16": "float16",
    "float16": "float16",
    "half": "float16",
    "F16": "float16",
    "fp32": "float32",
    "float32": "float32",
    "float": "float32",
    "F32": "float32",
}
DEFAULT_EPS = 1e-6  # HF LlamaConfig default, used when the config names none


@dataclass(frozen=True)
class NormWeight:
    """One RMSNorm weight to test with.

    Attributes:
        name: tensor name in the checkpoint, or a label for a synthesised weight.
        width: its length.
        values: float32 values (list) read from the checkpoint, or None = synthesise (seeded).
    """

    name: str
    width: int
    values: Any = None

    @property
    def origin(self) -> str:
        return "checkpoint" if self.values is not None else "synthesised"


@dataclass(frozen=True)
class DraftNorms:
    """The norms of an EAGLE3 draft that the fused kernels replace.

    Attributes:
        source: where they came from (checkpoint display name, or ``--widths``).
        dtype: serving dtype as a torch dtype name (``bfloat16``…).
        eps: ``rms_norm_eps`` used by every draft norm (vLLM's and tokenspeed's EAGLE3
            drafts build all their RMSNorms with ``config.rms_norm_eps``).
        eps_origin: the config key it came from, or why the default was used.
        layer0: (input_layernorm, hidden_norm) weights, or None.
        fc_norm: the k ``fc_norm`` weights (empty when the draft has none).
        notes: what was synthesised or assumed.
    """

    source: str
    dtype: str
    eps: float
    eps_origin: str
    layer0: tuple[NormWeight, NormWeight] | None
    fc_norm: tuple[NormWeight, ...] = ()
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "dtype": self.dtype,
            "eps": self.eps,
            "eps_origin": self.eps_origin,
            "layer0": [
                {"name": w.name, "width": w.width, "origin": w.origin} for w in self.layer0 or ()
            ],
            "fc_norm": [
                {"name": w.name, "width": w.width, "origin": w.origin} for w in self.fc_norm
            ],
            "notes": list(self.notes),
        }


def normalise_dtype(name: str | None) -> str | None:
    """``bf16``/``bfloat16``/``BF16``/``torch.bfloat16`` -> ``bfloat16``; None/unknown -> None."""
    if not name:
        return None
    return DTYPE_NAMES.get(str(name).removeprefix("torch."))


def _norm_weight(ck: Any, name: str, notes: list[str], note: str) -> NormWeight:
    """The weight ``name`` of ``ck``: its values when the source has them, else marked for
    synthesis (``note`` says so)."""
    width = int(ck.tensors[name].shape[-1])
    if ck.has_values(name):
        return NormWeight(name, width, ck.read_tensor(name).astype("float32").reshape(-1).tolist())
    notes.append(note.format(name=name, width=width))
    return NormWeight(name, width)


def _layer0_norms(ck: Any, d: DraftModel, notes: list[str]) -> tuple[NormWeight, NormWeight]:
    """``input_layernorm`` and ``hidden_norm`` of layer 0 (named as the draft names them),
    synthesised at width H when absent.

    Raises:
        CheckpointFormatError: one is absent and H is unknown (not an EAGLE3 draft).
    """
    found = []
    for role in ("input_layernorm", "hidden_norm"):
        name = d.tensor(role)
        if name in ck.tensors:
            note = "{name}: values not available, synthesised [{width}]"
            found.append(_norm_weight(ck, name, notes, note))
        elif d.H:
            notes.append(f"{role}: not in the checkpoint, synthesised [{d.H}]")
            found.append(NormWeight(f"{role} (synthesised)", int(d.H)))
        else:
            raise CheckpointFormatError(
                "no input_layernorm/hidden_norm weights and no hidden_size: not an EAGLE3 draft",
                path=ck.display_name,
                hint="give the draft checkpoint (midlayer.* or layers.0.* tensors)",
            )
    return found[0], found[1]


def _fc_norms(ck: Any, d: DraftModel, notes: list[str]) -> list[NormWeight]:
    """The Eagle 3.1 ``fc_norm.{i}`` weights, or k x [Ht] synthesised ones when the config says
    ``fc_norm`` but the checkpoint has none."""
    fc: list[NormWeight] = []
    while (name := d.tensor(f"fc_norm.{len(fc)}")) in ck.tensors:
        fc.append(_norm_weight(ck, name, notes, "{name}: values not available, synthesised"))
    if not fc and d.fc_norm and d.Ht:
        fc = [NormWeight(f"fc_norm.{j}.weight (synthesised)", int(d.Ht)) for j in range(d.k)]
        notes.append(f"config says fc_norm but no fc_norm.* tensors: synthesised {d.k} x [{d.Ht}]")
    return fc


def draft_norms(ck: Any, dtype: str | None = None) -> DraftNorms:
    """Collect a draft's layer-0 and ``fc_norm`` weights and eps from an opened checkpoint.

    Tensor names, eps (``rms_norm_eps``, under ``transformer_layer_config`` for speculators
    drafts), H, Ht, k and the config dtype come from the canonical draft
    (:func:`recipecli.draft.canonical_draft`).

    Args:
        ck: a :class:`recipecli.checkpoint.Checkpoint`.
        dtype: override of the serving dtype (``bf16``, ``fp16``, ``fp32``); default: config
            ``torch_dtype``/``dtype``, else the weight's dtype, else bfloat16.

    Returns:
        :class:`DraftNorms`; weights whose values are unavailable are marked for synthesis.

    Raises:
        CheckpointFormatError: no layer-0 norm weights and no ``hidden_size`` to synthesise them
            (not an EAGLE3 draft), or a malformed config value (:func:`canonical_draft`).
    """
    from recipecli.draft import canonical_draft

    d = canonical_draft(ck)
    notes: list[str] = []
    if d.eps is None:
        eps, eps_origin = DEFAULT_EPS, f"default {DEFAULT_EPS:g} (config names no rms_norm_eps)"
        notes.append(eps_origin)
    else:
        eps, eps_origin = d.eps, d.sources["eps"]
    ln, hn = _layer0_norms(ck, d, notes)
    fc = _fc_norms(ck, d, notes)
    wdtype = normalise_dtype(ck.tensors[ln.name].dtype) if ln.name in ck.tensors else None
    chosen = normalise_dtype(dtype) or normalise_dtype(d.dtype) or wdtype
    if chosen is None:
        chosen = "bfloat16"
        notes.append("dtype not recorded: tested as bfloat16")
    return DraftNorms(
        ck.display_name, chosen, float(eps), eps_origin, (ln, hn), tuple(fc), tuple(notes)
    )


def synthetic_norms(
    d1: int, d2: int, k: int | None, dtype: str, eps: float = DEFAULT_EPS
) -> DraftNorms:
    """Norms of the given widths with synthesised weights (``--widths`` without ``--draft``).

    Args:
        d1, d2: widths of the two layer-0 norms; k: fc_norm chunks of width d2 (None = none).
        dtype: torch dtype name; eps: epsilon.
    """
    fc = tuple(NormWeight(f"fc_norm.{i} (synthesised)", d2) for i in range(k or 0))
    return DraftNorms(
        f"--widths {d1},{d2}",
        dtype,
        eps,
        "default",
        (
            NormWeight("input_layernorm (synthesised)", d1),
            NormWeight("hidden_norm (synthesised)", d2),
        ),
        fc,
        ("all weights synthesised",),
    )


def with_fc_norm_chunks(norms: DraftNorms, chunks: int) -> DraftNorms:
    """``norms`` with ``chunks`` synthesised fc_norm weights of the hidden-norm width, for a draft
    that has none (so the grouped fc_norm kernel is exercised on the draft's width and dtype); the
    notes say so. A draft that has fc_norm weights is returned unchanged.

    Args:
        norms: the draft's norms (``layer0`` = (input_layernorm, hidden_norm)).
        chunks: number of fc_norm chunks k (>= 1), each of width ``layer0[1].width``.

    Raises:
        ValueError: ``norms`` has neither fc_norm weights nor layer-0 norms (no width to give
            the chunks; :func:`draft_norms` and :func:`synthetic_norms` always set both norms).
    """
    if norms.fc_norm:
        return norms
    if norms.layer0 is None:
        raise ValueError(f"{norms.source}: no layer-0 norms, so no width for fc_norm chunks")
    width = norms.layer0[1].width
    fc = tuple(NormWeight(f"fc_norm.{i} (synthesised)", width) for i in range(chunks))
    return replace(
        norms, fc_norm=fc, notes=(*norms.notes, f"--chunks {chunks}: fc_norm synthesised")
    )
