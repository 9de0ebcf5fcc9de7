"""The registered EAGLE3 draft formats: one :class:`FormatSpec` per format.

Each spec says how the format is recognised (its detection family and predicate), what its
fields mean where formats disagree (the aux-id convention its ids are written in, what its
``norm_output`` means), and where its config keeps things (the layer geometry of speculators
drafts under ``transformer_layer_config``, nebius' ``truncated_vocab_size``). ``check``,
``convert``, the engine models and the kernel check read these facts from here only.

Detection (docs/check.md#draft-formats) first picks a family from the config —
``speculators_model_type`` set → ``speculators``; an architecture containing ``Eagle3`` →
``eagle3-architecture``; an architecture ending in ``ForCausalLM`` → ``causal-lm``; otherwise not
an EAGLE3 draft — then tries the family's specs in registration order; the first whose
``matches`` is true wins.

To add a format: one :func:`register` call below, placed where its detection precedence puts
it, and a row in the format table of docs/check.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

DraftFormat = Literal["A", "B", "C", "D", "F", "nemo", "nebius"]
#: How aux layer ids are written: ``hidden-state`` = index of the hidden state entering layer i
#: (vLLM/speculators), ``layer-output`` = index of layer i's output (= hidden-state - 1).
Convention = Literal["hidden-state", "layer-output"]
#: What ``norm_output`` means: apply ``norm`` before the head (SpecForge), or Eagle 3.1 post-norm
#: chaining (speculators PR #610; vLLM, tokenspeed).
NormOutputMeaning = Literal["norm-before-head", "post-norm-chaining"]
Family = Literal["speculators", "eagle3-architecture", "causal-lm"]

#: (config, first architecture, tensor names) -> does the format match
Matcher = Callable[[Mapping[str, Any], str, frozenset[str]], bool]


@dataclass(frozen=True)
class FormatSpec:
    """Everything recipecli knows about one draft format.

    Attributes:
        key: the format's letter or name (``A``, ``D``, ``nebius`` …), as ``check --json`` writes it.
        name: one-line description (``draft.format_name``).
        family: the detection family (module docstring).
        matches: the predicate tried within the family (registration order decides ties).
        aux_convention: convention the format's aux ids are written in; None = unknown (``convert``
            then needs ``--aux-id-convention``; ``check`` says ``unknown``).
        norm_output_meaning: what the format's ``norm_output`` flag means.
        layer_config_key: config key holding the layer geometry (speculators
            ``transformer_layer_config``); None = the top level.
        vocab_size_key: config key of the draft vocabulary size (Vd).
        verifier_config_key: config key naming the verifier (target) and proposal methods.
        closed_schema: top-level keys other than the EAGLE keys lie outside the format's schema.

    What ``convert`` writes is not a draft format's business: its output formats are registered
    in :mod:`recipecli.convert.formats`.
    """

    key: DraftFormat
    name: str
    family: Family
    matches: Matcher
    aux_convention: Convention | None
    norm_output_meaning: NormOutputMeaning
    layer_config_key: str | None = None
    vocab_size_key: str = "draft_vocab_size"
    verifier_config_key: str | None = None
    closed_schema: bool = False


#: Registered specs in detection order (:func:`register`).
_SPECS: list[FormatSpec] = []


def register(spec: FormatSpec) -> FormatSpec:
    """Add ``spec`` to the registry, after every spec registered before it (its detection
    precedence within its family).

    Raises:
        ValueError: a spec with the same key is already registered.
    """
    if any(s.key == spec.key for s in _SPECS):
        raise ValueError(f"draft format {spec.key!r} registered twice")
    _SPECS.append(spec)
    return spec


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


def _one_layer(config: Mapping[str, Any], names: frozenset[str]) -> bool:
    """One decoder layer by config, or a ``midlayer.*`` tensor (one 13B release says 40 layers)."""
    return config.get("num_hidden_layers") == 1 or any(n.startswith("midlayer.") for n in names)


def _modelopt(config: Mapping[str, Any], arch: str, names: frozenset[str]) -> bool:
    eagle_cfg = config.get("eagle_config")
    return "Deepseek" in arch or (
        isinstance(eagle_cfg, Mapping) and bool(MODELOPT_EAGLE_KEYS & set(eagle_cfg))
    )


# --------------------------------------------------------------------------- the formats
# (order = detection precedence within a family)

register(
    FormatSpec(
        "D",
        "vllm-project/speculators (Eagle3Speculator)",
        "speculators",
        lambda cfg, arch, names: str(cfg["speculators_model_type"]).lower() == "eagle3",
        aux_convention="hidden-state",
        norm_output_meaning="post-norm-chaining",
        layer_config_key="transformer_layer_config",
        verifier_config_key="speculators_config",
        closed_schema=True,
    )
)
register(
    FormatSpec(
        "F",
        "vLLM-internal / AngelSlim (Eagle3LlamaForCausalLM)",
        "eagle3-architecture",
        lambda cfg, arch, names: arch == "Eagle3LlamaForCausalLM",
        aux_convention="hidden-state",
        norm_output_meaning="post-norm-chaining",
    )
)
register(
    FormatSpec(
        "nemo",
        "NeMo LlamaEagle3DraftModel (read-only)",
        "eagle3-architecture",
        lambda cfg, arch, names: arch == "LlamaEagle3DraftModel",
        aux_convention=None,
        norm_output_meaning="post-norm-chaining",
    )
)
register(
    FormatSpec(
        "C",
        "NVIDIA ModelOpt export",
        "eagle3-architecture",
        _modelopt,
        aux_convention="layer-output",
        norm_output_meaning="post-norm-chaining",
    )
)
register(
    FormatSpec(
        "B",
        "SpecForge / SGLang (LlamaForCausalLMEagle3)",
        "eagle3-architecture",
        lambda cfg, arch, names: True,  # any other Eagle3 architecture
        aux_convention="layer-output",
        norm_output_meaning="norm-before-head",
    )
)
register(
    FormatSpec(
        "A",
        "original EAGLE release layout (<Model>ForCausalLM + draft_vocab_size)",
        "causal-lm",
        # the original release's layout under any text architecture (AngelSlim's Qwen3 drafts say
        # Qwen3ForCausalLM): vLLM's EAGLEConfig serves it as "Eagle3" + the name
        lambda cfg, arch, names: _one_layer(cfg, names) and cfg.get("draft_vocab_size") is not None,
        aux_convention="layer-output",
        norm_output_meaning="norm-before-head",
    )
)
register(
    FormatSpec(
        "nebius",
        "nebius one-layer LlamaForCausalLM with truncated_vocab_size (read-only)",
        "causal-lm",
        lambda cfg, arch, names: (
            arch == "LlamaForCausalLM"
            and _one_layer(cfg, names)
            and cfg.get("truncated_vocab_size") is not None
        ),
        aux_convention=None,
        norm_output_meaning="norm-before-head",
        vocab_size_key="truncated_vocab_size",
    )
)

#: Display order of the formats (docs/check.md's table).
DISPLAY_ORDER: tuple[DraftFormat, ...] = get_args(DraftFormat)
#: format key -> spec, in display order
FORMATS: Mapping[str, FormatSpec] = {
    k: next(s for s in _SPECS if s.key == k) for k in DISPLAY_ORDER
}
#: format key -> its one-line description (``draft.format_name``)
FORMAT_NAMES: Mapping[str, str] = {k: s.name for k, s in FORMATS.items()}
#: Convention the aux ids of each format are written in (docs/convert.md, aux ids). Formats
#: not listed (NeMo, nebius) do not say.
TRAINED_CONVENTION: Mapping[str, Convention] = {
    k: s.aux_convention for k, s in FORMATS.items() if s.aux_convention is not None
}


def format_spec(fmt: str | None) -> FormatSpec | None:
    """The spec of format ``fmt`` (None for None or an unknown key)."""
    return FORMATS.get(fmt or "")


def family_of(config: Mapping[str, Any], arch: str) -> Family | None:
    """The detection family of a config whose first architecture is ``arch`` (module docstring)."""
    if config.get("speculators_model_type"):
        return "speculators"
    if "eagle3" in arch.lower():
        return "eagle3-architecture"
    if arch.endswith("ForCausalLM"):
        return "causal-lm"
    return None


def detect_format(
    config: Mapping[str, Any], tensor_names: frozenset[str] | set[str] = frozenset()
) -> DraftFormat | None:
    """Detect the draft format of ``config`` (docs/check.md#draft-formats).

    ``speculators_model_type`` → D; an architecture containing ``Eagle3``/``EAGLE3`` → B, C, F or
    NeMo by name and ``eagle_config`` keys; a one-layer Llama with ``draft_vocab_size`` → A (a
    ``midlayer.*`` tensor also counts, since one 13B release says 40 layers); a one-layer Llama with
    ``truncated_vocab_size`` → nebius; otherwise None (not an EAGLE3 draft).
    """
    archs = [str(a) for a in (config.get("architectures") or [])]
    arch = archs[0] if archs else ""
    family = family_of(config, arch)
    if family is None:
        return None
    names = frozenset(tensor_names)
    for spec in _SPECS:
        if spec.family == family and spec.matches(config, arch, names):
            return spec.key
    return None


def to_hidden_state(ids: tuple[int, ...] | list[int], convention: Convention) -> tuple[int, ...]:
    """Aux ids as HF ``hidden_states`` indices (vLLM convention: ``vllm/model_executor/models/
    llama.py`` ``LlamaModel.forward`` captures the state entering layer i)."""
    return tuple(i + 1 for i in ids) if convention == "layer-output" else tuple(ids)


def from_hidden_state(ids: tuple[int, ...] | list[int], convention: Convention) -> tuple[int, ...]:
    """Inverse of :func:`to_hidden_state`."""
    return tuple(i - 1 for i in ids) if convention == "layer-output" else tuple(ids)


#: Why the ids of a draft are read in the convention :func:`ids_convention` returns: the
#: format's own, the boundary reading of a layer-output list reaching ``L``, or the user's statement
#: (``check --aux-id-convention``).
ConventionReason = Literal["format", "boundary", "stated"]
#: A convention a user states for a draft's aux ids (``check --aux-id-convention``): the two id
#: conventions, or ``boundary`` (ids count the boundaries between layers, 0..L: hidden-state indices).
StatedConvention = Literal["layer-output", "hidden-state", "boundary"]
STATED_CONVENTIONS: tuple[StatedConvention, ...] = get_args(StatedConvention)


def ids_convention(
    fmt: str | None,
    ids: tuple[int, ...] | list[int] | None,
    L: int | None,
    stated: StatedConvention | None = None,
) -> tuple[Convention | None, ConventionReason]:
    """The convention the aux ids ``ids`` of a format-``fmt`` draft are written in, for a target
    of ``L`` decoder layers: the one the user ``stated`` (``check --aux-id-convention``; a stated
    ``boundary`` reads the ids as hidden-state indices), else the format's own
    (:attr:`FormatSpec.aux_convention`), except that ids of a layer-output format whose largest
    id equals ``L`` are hidden-state boundary ids.

    A layer-output id names a decoder layer, 0..L-1, so an id equal to L names none: such a list
    counts the boundaries between layers, 0 = the embedding output and L = the last layer's
    output, which is the hidden-state index (NVIDIA's ModelOpt gpt-oss heads,
    ``nvidia/gpt-oss-120b-Eagle3-v3``: [24, 30, 36] on a 36-layer target; SGLang
    ``models/gpt_oss.py`` ``GptOssForCausalLM.set_eagle3_layers_to_capture`` keeps such ids as
    written, SGLang PR #32334). Returns (convention or None when neither the user nor the format
    says, and ``stated``, ``format`` or ``boundary``: where the convention comes from).
    """
    if stated is not None:
        return ("hidden-state" if stated == "boundary" else stated), "stated"
    spec = format_spec(fmt)
    conv = spec.aux_convention if spec else None
    if conv == "layer-output" and ids and L is not None and max(ids) == L:
        return "hidden-state", "boundary"
    return conv, "format"
