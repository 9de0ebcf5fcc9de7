"""The output formats of ``recipecli convert``: one :class:`OutputFormatSpec` per ``--to`` value.

Each entry holds every write-side fact convert reads about the format it writes: the names it
gives decoder-layer tensors, the aux-id convention of its ids and where it writes them, the
function that writes its ``config.json``, the engine its output is checked for after writing
(an engine name of :data:`recipecli.engines.ENGINES`, as data), what that engine cannot serve,
and the EAGLE fields the format must state. Nothing in :mod:`recipecli.convert` branches on the
format's name; ``--to``'s choices and help come from :func:`output_formats`.

Source formats (what convert reads) are the draft formats of :mod:`recipecli.draft.formats`.

This module imports nothing heavy (no numpy, no checkpoint reader): the CLI reads it for
``convert --help``. To add an output format: one :func:`register` call below (or, for a plug-in
or a test's throw-away format, before the CLI's convert command is imported), and a row in the
output-format table of docs/convert.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from recipecli.errors import UsageError

if TYPE_CHECKING:  # the draft package pulls in numpy through the checkpoint reader
    from recipecli.draft import Convention, DraftModel


@dataclass(frozen=True)
class TensorNaming:
    """How an output format names decoder-layer tensors: ``str.format`` templates over ``{i}``
    (the layer index) and ``{name}`` (the name below the layer prefix, e.g.
    ``self_attn.q_proj.weight``). Top-level tensors (``fc.weight``, ``d2t`` …) keep their names
    in every format (:func:`recipecli.draft.tensors.is_top_name`).

    Attributes:
        one_layer: the name in a one-layer draft (speculators ``layers.{i}.{name}``, flat
            ``midlayer.{name}``).
        numbered: the name of layer i of a draft with several layers (``midlayer.{i}.{name}``).
    """

    one_layer: str
    numbered: str

    def layer_name(self, i: int, name: str, n_layers: int) -> str:
        """Output name of layer ``i``'s tensor ``name`` in a draft of ``n_layers`` layers."""
        return (self.one_layer if n_layers == 1 else self.numbered).format(i=i, name=name)


@dataclass(frozen=True)
class EagleValues:
    """The EAGLE values an output config states (None = the key is left out, where the format
    allows it).

    Attributes:
        vd: ``draft_vocab_size`` (Vd), when the source declares it.
        ht: ``target_hidden_size`` (Ht), when the source declares it.
        aux_ids: the aux layer ids in the output format's convention.
        nbr: ``norm_before_residual``.
        chaining: Eagle 3.1 post-norm chaining (the output's ``norm_output``).
    """

    vd: int | None
    ht: int | None
    aux_ids: list[int] | None
    nbr: bool | None
    chaining: bool


@dataclass(frozen=True)
class ConfigInputs:
    """What a config writer (:attr:`OutputFormatSpec.write_config`) builds the output config from.

    Attributes:
        draft: the source in canonical form.
        top: the source's top-level config.
        layer: the carried layer config (geometry, rope, token ids …, without dtype and
            architectures; ``tie_word_embeddings`` and ``num_hidden_layers`` already set).
        eagle: the EAGLE values to state.
        verifier_config: the source format's verifier config (speculators ``speculators_config``),
            ``{}`` when it has none or the output names no verifier.
        verifier: the resolved ``verifier`` mapping (``name_or_path``, ``architectures``) when the
            output names one (:attr:`OutputFormatSpec.names_verifier`), else None.
    """

    draft: DraftModel
    top: Mapping[str, Any]
    layer: dict[str, Any]
    eagle: EagleValues
    verifier_config: Mapping[str, Any]
    verifier: dict[str, Any] | None


#: (inputs) -> the output ``config.json`` without its dtype key (convert adds it last)
ConfigWriter = Callable[[ConfigInputs], dict[str, Any]]
#: (draft, decoder layers the checkpoint holds, output norm_before_residual) -> why the check
#: engine cannot serve the draft in this format (empty: it can)
ServingLimits = Callable[["DraftModel", int, "bool | None"], list[str]]

#: the values of :data:`recipecli.draft.Convention` (not imported: see the module docstring)
_CONVENTIONS: tuple[str, ...] = ("hidden-state", "layer-output")


@dataclass(frozen=True)
class OutputFormatSpec:
    """Everything ``recipecli convert`` knows about writing one output format. Every field is
    required: a format with a fact left out does not construct.

    Attributes:
        key: the ``--to`` value, as ``convert --json`` writes it under ``to``.
        summary: its part of ``--to``'s help (``KEY: SUMMARY``).
        layout: the name of its layout in messages (``speculators``, ``LlamaForCausalLMEagle3``).
        naming: the decoder-layer tensor names it writes.
        aux_convention: the convention its aux ids are written in (``hidden-state`` or
            ``layer-output``; :func:`recipecli.draft.from_hidden_state`).
        aux_ids_written_at: where its config holds the aux ids (the ``where`` of the
            ``eagle_aux_hidden_state_layer_ids`` translation).
        write_config: builds its ``config.json`` (:data:`ConfigWriter`).
        check_engine: the engine its output is checked for against ``--target`` after writing,
            at TP 1 (an engine name of :data:`recipecli.engines.ENGINES`).
        names_verifier: its config names the verifier (target), so it needs ``--target`` or
            ``--verifier`` (speculators ``speculators_config.verifier``); ``--verifier`` is
            refused for a format that names none.
        carried_keys: the source loader keys (:data:`recipecli.draft.fields.LOADER_KEYS`) its
            writer carries over; the others are listed as dropped.
        norm_before_residual_required: why its config must state ``norm_before_residual`` (a
            draft that does not record it and no ``--norm-before-residual`` is refused), or None
            when it may leave the key out.
        norm_output_when_off: the ``norm_output`` its config states for a draft that does not
            chain (False: written false; None: the key is left out).
        serving_limits: what ``check_engine`` cannot serve in this format (:data:`ServingLimits`);
            refused unless ``--force``.
        serving_limits_hint: what to do about a ``serving_limits`` refusal.
    """

    key: str
    summary: str
    layout: str
    naming: TensorNaming
    aux_convention: Convention
    aux_ids_written_at: str
    write_config: ConfigWriter
    check_engine: str
    names_verifier: bool
    carried_keys: frozenset[str]
    norm_before_residual_required: str | None
    norm_output_when_off: bool | None
    serving_limits: ServingLimits
    serving_limits_hint: str

    def __post_init__(self) -> None:
        if not self.key or not self.check_engine:
            raise ValueError("an output format needs a key and a check engine")
        if self.aux_convention not in _CONVENTIONS:
            raise ValueError(
                f"output format {self.key!r}: aux_convention {self.aux_convention!r} is not one "
                f"of {', '.join(_CONVENTIONS)}"
            )


#: Registered output formats, in ``--to`` order (:func:`register`).
_FORMATS: dict[str, OutputFormatSpec] = {}


def register(spec: OutputFormatSpec) -> OutputFormatSpec:
    """Add ``spec`` to the registry, after every format registered before it.

    The CLI reads the registry when its convert command is imported: register before that.

    Raises:
        ValueError: a format with the same key is already registered.
    """
    if spec.key in _FORMATS:
        raise ValueError(f"output format {spec.key!r} registered twice")
    _FORMATS[spec.key] = spec
    return spec


def unregister(key: str) -> OutputFormatSpec:
    """Remove the format ``key`` from the registry (a plug-in's or a test's throw-away format).

    Raises:
        KeyError: no format ``key`` is registered.
    """
    return _FORMATS.pop(key)


def output_formats() -> tuple[OutputFormatSpec, ...]:
    """The registered output formats, in ``--to`` order."""
    return tuple(_FORMATS.values())


def output_format(key: str) -> OutputFormatSpec:
    """The registered output format ``key``.

    Raises:
        UsageError: no format ``key`` is registered (the message lists the registered ones).
    """
    spec = _FORMATS.get(key)
    if spec is None:
        *rest, last = list(_FORMATS)
        names = f"{', '.join(rest)} or {last}" if rest else last
        raise UsageError(f"--to {key!r}: expected {names}")
    return spec


def to_help() -> str:
    """``--to``'s help text: ``KEY: SUMMARY`` of every registered format."""
    return "; ".join(f"{s.key}: {s.summary}" for s in _FORMATS.values()) + "."


# --------------------------------------------------------------------------- the formats

#: speculators ``proposal_methods`` written when the source has none (greedy, 3 tokens)
DEFAULT_PROPOSAL_METHODS: list[dict[str, Any]] = [
    {
        "accept_tolerance": 0.0,
        "proposal_type": "greedy",
        "speculative_tokens": 3,
        "verifier_accept_k": 1,
    }
]
#: source loader keys the speculators writer carries over
_SPECULATORS_CARRIED = ("speculators_version",)


def speculators_config(inputs: ConfigInputs) -> dict[str, Any]:
    """The format D (``Eagle3Speculator``) config that ``vllm serve OUT`` loads alone: the
    geometry under ``transformer_layer_config``, the EAGLE fields at the top level (the norm
    flags always stated) and ``speculators_config`` naming the verifier."""
    d, top, eagle = inputs.draft, inputs.top, inputs.eagle
    config: dict[str, Any] = {
        "architectures": ["Eagle3Speculator"],
        "speculators_model_type": "eagle3",
    }
    config |= {k: top[k] for k in _SPECULATORS_CARRIED if k in top}
    layer = inputs.layer
    if eagle.aux_ids is not None:
        # vLLM sizes fc from num_aux_hidden_states (llama_eagle3.py LlamaModel.__init__),
        # which reaches the draft config only from transformer_layer_config
        # (speculators/base.py extract_transformers_pre_trained_config): without it a draft
        # with other than 3 ids gets a 3-wide fc and fails to load.
        layer = {**layer, "num_aux_hidden_states": len(eagle.aux_ids)}
    config |= {
        "transformer_layer_config": layer,
        "draft_vocab_size": eagle.vd if eagle.vd is not None else d.Vd,
        "target_hidden_size": eagle.ht,
        "norm_before_residual": eagle.nbr,
        "norm_before_fc": d.norm_before_fc,
        "fc_norm": d.fc_norm,
        "norm_output": eagle.chaining,
    }
    if eagle.aux_ids is not None:
        config["eagle_aux_hidden_state_layer_ids"] = eagle.aux_ids
    spec_cfg = inputs.verifier_config
    config["speculators_config"] = {
        "algorithm": "eagle3",
        "proposal_methods": spec_cfg.get("proposal_methods") or DEFAULT_PROPOSAL_METHODS,
        "default_proposal_method": spec_cfg.get("default_proposal_method") or "greedy",
        "verifier": inputs.verifier,
    }
    return config


def eagle3_config(inputs: ConfigInputs) -> dict[str, Any]:
    """The flat ``LlamaForCausalLMEagle3`` config: the layer config at the top level, the aux
    ids both there (tokenspeed sizes ``fc`` from them) and under ``eagle_config`` (SGLang,
    SpecForge), the norm flags only when set."""
    d, eagle = inputs.draft, inputs.eagle
    config = {"architectures": ["LlamaForCausalLMEagle3"], **inputs.layer}
    if eagle.vd is not None:
        config["draft_vocab_size"] = eagle.vd
    if eagle.ht is not None:
        config["target_hidden_size"] = eagle.ht
    if eagle.aux_ids is not None:
        config["eagle_aux_hidden_state_layer_ids"] = eagle.aux_ids
        config["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": eagle.aux_ids}
    if eagle.nbr is not None:
        config["norm_before_residual"] = eagle.nbr
    if d.norm_before_fc:
        config["norm_before_fc"] = True
    if d.fc_norm:
        config["fc_norm"] = True
    if eagle.chaining:
        config["norm_output"] = True
    return config


def no_serving_limits(d: DraftModel, n_layers: int, nbr: bool | None) -> list[str]:
    """No limits: the check engine serves every draft convert writes in the format."""
    return []


def tokenspeed_limits(d: DraftModel, n_layers: int, nbr: bool | None) -> list[str]:
    """What tokenspeed@f4d8ec6e (``python/tokenspeed/runtime/models/llama_eagle3.py``
    ``LlamaForCausalLMEagle3.__init__`` / ``load_weights``) cannot serve: more than one decoder
    layer, a ``target_hidden_size`` other than H, ``norm_before_residual`` true
    (docs/convert.md, tokenspeed)."""
    why = []
    if n_layers > 1:
        why.append(
            f"{n_layers} decoder layers (tokenspeed: 'EAGLE3 currently only supports 1 layer')"
        )
    if d.target_hidden_size_declared and d.Ht != d.H:
        why.append(
            f"target_hidden_size {d.Ht} != hidden_size {d.H} (tokenspeed's Llama path ignores "
            "target_hidden_size)"
        )
    if nbr is True:
        why.append("norm_before_residual true (tokenspeed always adds the raw hidden as residual)")
    return why


register(
    OutputFormatSpec(
        key="speculators",
        summary="layers.0.* + speculators_config (vLLM)",
        layout="speculators",
        naming=TensorNaming(one_layer="layers.{i}.{name}", numbered="layers.{i}.{name}"),
        aux_convention="hidden-state",
        aux_ids_written_at="eagle_aux_hidden_state_layer_ids",
        write_config=speculators_config,
        check_engine="vllm",
        names_verifier=True,
        carried_keys=frozenset(_SPECULATORS_CARRIED),
        # vllm/transformers_utils/configs/speculators/algos.py update_eagle3
        norm_before_residual_required="vLLM assumes true when a speculators config omits it, "
        "speculators' default is false",
        norm_output_when_off=False,
        serving_limits=no_serving_limits,
        serving_limits_hint="",
    )
)
register(
    OutputFormatSpec(
        key="eagle3",
        summary="flat midlayer.* (tokenspeed, SGLang)",
        layout="LlamaForCausalLMEagle3",
        naming=TensorNaming(one_layer="midlayer.{name}", numbered="midlayer.{i}.{name}"),
        aux_convention="layer-output",
        aux_ids_written_at="eagle_aux_hidden_state_layer_ids + "
        "eagle_config.eagle_aux_hidden_state_layer_ids",
        write_config=eagle3_config,
        check_engine="tokenspeed",
        names_verifier=False,
        carried_keys=frozenset(),
        norm_before_residual_required=None,
        norm_output_when_off=None,
        serving_limits=tokenspeed_limits,
        serving_limits_hint="convert --to speculators for vLLM, or add --force "
        "(docs/convert.md, tokenspeed)",
    )
)
