"""The typed registry entry of an engine: everything recipecli knows about it besides its load path.

Each engine folder ``recipecli/engines/<engine>/`` declares one :class:`EngineSpec` in its
``spec.py`` (module attribute ``SPEC``) and its pinned version once in ``pin.py`` (``PIN``). Every
field is required: an engine that lacks a trait fails when its spec is built, not in a coverage
test. Code outside ``recipecli/engines/`` reads these traits through
:func:`recipecli.engines.engine_spec`; it never compares engine names.

This module stays light (no numpy, no engine model): ``render``, ``lint`` and ``--help`` read specs
without loading the load-path models, which :func:`recipecli.engines.engine_model` imports on use
from :attr:`EngineSpec.model`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

from recipecli.findings import Severity

#: The speculative methods a recipe may name (``speculative.method``; the recipe schema's enum is
#: read from it). Each engine maps them to its own spelling (its ``speculative_flags``).
SpecMethod = Literal["eagle3", "eagle", "mtp", "dflash", "dspark"]

#: How an engine is pinned: a PyPI release (``0.33.0``) or a git commit (40 hex digits).
PinKind = Literal["release", "commit"]


@dataclass(frozen=True)
class Pin:
    """The engine version recipecli models, written once per engine (``engines/<e>/pin.py``).

    Every name that carries the version derives from it: the citation of each engine rule
    (:attr:`ref`), the extracted data and flag catalog files (:attr:`data_file`,
    :attr:`catalog_file`), the conformance environment's requirements file
    (:attr:`requirements_file`). A version bump is one edit of ``pin.py`` plus regenerated data.

    Attributes:
        engine: the engine's registry name (``vllm``).
        kind: ``release`` or ``commit``.
        version: the release (``0.33.0``) or the full commit hash.
        transformers: the transformers release the engine's environment pins (its config-class
            defaults are read from ``transformers-<version>-defaults.json``).
    """

    engine: str
    kind: PinKind
    version: str
    transformers: str

    @property
    def slug(self) -> str:
        """The version in file names: the release, or the commit's first 12 hex digits."""
        return self.version if self.kind == "release" else self.version[:12]

    @property
    def ref(self) -> str:
        """The version as engine-rule citations print it: ``v0.33.0`` or ``f4d8ec6e039c``."""
        return f"v{self.version}" if self.kind == "release" else self.version[:12]

    @property
    def short(self) -> str:
        """The version in prose: ``0.33.0`` or the commit's first 8 hex digits (``f4d8ec6e``)."""
        return self.version if self.kind == "release" else self.version[:8]

    @property
    def data_file(self) -> str:
        """The extracted engine data (registry, model classes) in the engine folder's ``data/``."""
        return f"{self.engine}-{self.slug}.json"

    @property
    def catalog_file(self) -> str:
        """The flag catalog in the engine folder's ``data/``."""
        return f"{self.engine}-{self.slug}-flags.json"

    @property
    def transformers_file(self) -> str:
        """transformers' config-class defaults under ``recipecli/data/transformers/`` (shared:
        engines may pin one release)."""
        return f"transformers-{self.transformers}-defaults.json"

    @property
    def requirements_file(self) -> str:
        """The pinned conformance environment under ``scripts/conformance/`` (where one exists)."""
        return f"requirements-{self.engine}-{self.slug}.txt"


# Where an engine puts the merged text-model keys of the config overrides
# (:attr:`OverridePlacement.text_keys`); recipecli/recipes/overrides.py holds one placer per value.
#: Flat keys are set on the TOP-level config and a dict whose key names an existing sub-config is
#: merged into it recursively, so a wrapped target's text keys are nested under its wrapper path
#: (``text_config``) and its wrapper keys stay flat.
TEXT_KEYS_NESTED: Final = "nested-under-wrapper"
#: Every key is set flat on the config the engine takes as the text config (``text_config.update``
#: on what its ``get_hf_text_config`` returns); a wrapper key cannot be reached.
TEXT_KEYS_ON_TEXT_CONFIG: Final = "flat-on-text-config"
#: One level deep on the TOP-level config: a dict onto an existing sub-config is merged into it,
#: any other key is set as an attribute; nothing reaches the text config of a wrapped target
#: without also setting a sub-config dict on the (flat) draft.
TEXT_KEYS_ONE_LEVEL: Final = "one-level-on-top"
TextKeys = Literal["nested-under-wrapper", "flat-on-text-config", "one-level-on-top"]


@dataclass(frozen=True)
class OverridePlacement:
    """How an engine applies a recipe's config overrides (text_overrides, hf-overrides).

    Attributes:
        flag: the serve flag that carries them, a JSON mapping.
        text_keys: where the merged text-model keys go: :data:`TEXT_KEYS_NESTED`,
            :data:`TEXT_KEYS_ON_TEXT_CONFIG` or :data:`TEXT_KEYS_ONE_LEVEL`.
        reaches_draft: the engine applies the same overrides to the EAGLE3 draft's config too
            (a wrapper key such as ``text_config`` then lands on the draft's flat config).
        draft_shared_keys: text keys whose override changes the EAGLE3 draft as well (warned;
            empty when the overrides do not reach the draft).
        rule: the engine code the placement follows (cited by every override finding).
    """

    flag: str
    text_keys: TextKeys
    reaches_draft: bool
    draft_shared_keys: frozenset[str]
    rule: str

    @property
    def nests_text_keys(self) -> bool:
        """A wrapped target's text keys are rendered nested under its wrapper path."""
        return self.text_keys == TEXT_KEYS_NESTED


@dataclass(frozen=True)
class SpeculativeConfigRules:
    """An engine whose speculative settings are one JSON-mapping flag, and what it refuses in it.

    Attributes:
        flag: the serve flag holding the mapping.
        required: keys the mapping must name.
        refused: key the engine rejects -> the key to use instead.
        advice: the key to use instead -> the values it takes (for messages).
        source: the engine code that rejects them.
    """

    flag: str
    required: tuple[str, ...]
    refused: Mapping[str, str]
    advice: Mapping[str, str]
    source: str


#: A rendered flag and its value (``("--speculative-num-steps", 3)``); the value is a mapping for
#: JSON flags.
FlagValue = tuple[str, Any]
#: ``(method, draft, num_speculative_tokens, extra config keys) -> [(flag, value), ...]``: the
#: engine's speculative flags for a recipe's ``speculative:`` section; raises
#: :class:`recipecli.errors.RecipeError` for a method the engine has no algorithm for.
SpeculativeBuilder = Callable[[str, str, int, Mapping[str, Any]], list[FlagValue]]
#: One hardware profile's merged serve flags as lint sees them: flag -> (value, ``file:line``).
FlagLayer = Mapping[str, tuple[Any, str]]


@dataclass(frozen=True)
class LintHit:
    """One engine lint verdict on a recipe's merged flags (the recipe layer makes it a finding).

    Attributes:
        code: a ``recipe.*`` code of :mod:`recipecli.codes.lint`.
        severity: ``error``, ``warning`` or ``info``.
        message: one line: what is wrong and what to change.
        where: ``file:line`` of the recipe value.
        rule: the engine code the rule follows.
    """

    code: str
    severity: Severity
    message: str
    where: str
    rule: str


@dataclass(frozen=True)
class EngineLint:
    """An engine's own lint rules on a recipe's merged flags.

    Attributes:
        rules: ``(layers) -> hits``; ``layers`` holds one :data:`FlagLayer` per hardware profile
            (the first with no profile), built from the serve fields (this engine's flags), then
            the speculative flags when :attr:`sees_speculative`, then
            ``engines.<engine>.args``, then the profile's ``args.<engine>``.
        sees_speculative: the layers include the speculative flags rendered from the recipe's
            ``speculative:`` section.
        skip_when_unsupported: the rules are not run on a recipe that marks the engine
            unsupported (they would speak about a pair the recipe says the engine does not serve).
        strips_arg_dashes: an arg key's leading dashes are dropped before ``--`` is prepended
            (``--tp`` and ``tp`` name one flag).
    """

    rules: Callable[[Sequence[FlagLayer]], Iterable[LintHit]]
    sees_speculative: bool
    skip_when_unsupported: bool
    strips_arg_dashes: bool


@dataclass(frozen=True)
class EnvVars:
    """The environment variables an engine reads (its catalog's ``env`` lists them).

    Attributes:
        prefix: the prefix they share (``VLLM_``): a recipe env var with it that the catalog
            does not list is a typo or a removed setting.
        source: the engine file that defines them.
    """

    prefix: str
    source: str


@dataclass(frozen=True)
class NodeLaunch:
    """How an engine's serve command starts on several nodes: its multi-node flags, read from
    its argument parser at the pin (``recipecli render --nodes N``, issue #26).

    Attributes:
        nnodes: the flag for the node count (``--nnodes``).
        node_rank: the flag for this node's rank, 0 to nodes - 1.
        addr: the flag for the head (rank 0) node's address.
        port: the flag for the head's rendezvous port, or None when :attr:`addr` takes
            ``HOST:PORT`` (SGLang, tokenspeed ``--dist-init-addr``).
        default_port: the rendezvous port rendered unless ``--head-port`` gives one (the
            engine's own default, or the port its help text and docs show).
        worker_flags: switches only the non-zero ranks get (vLLM ``--headless``: no API server).
        nprocs_per_node: the flag for the worker processes (GPUs) per node, or None.
        world_size: the flag for the total worker processes of all nodes, or None.
        timeout: the flag for torch.distributed's initialisation timeout in seconds, or None.
        health: the HTTP route the rank-0 server answers when ready (readiness probes).
        dp_attention_in_tp: with DP attention the DP ranks split the TP group (SGLang:
            GPUs = TP x PP); otherwise each DP rank is a TP x PP group of its own.
        ray_backend: ``(flag, value)`` that runs the workers on a Ray cluster (vLLM
            ``--distributed-executor-backend ray``), or None.
        source: the engine code the flags and the rules come from.
        ray_host_ip: with :attr:`ray_backend`, the env var that gives each node's processes
            that node's own address (vLLM ``VLLM_HOST_IP``), or None.
    """

    nnodes: str
    node_rank: str
    addr: str
    port: str | None
    default_port: int
    worker_flags: tuple[str, ...]
    nprocs_per_node: str | None
    world_size: str | None
    timeout: str | None
    health: str
    dp_attention_in_tp: bool
    ray_backend: tuple[str, str] | None
    source: str
    ray_host_ip: str | None = None


@dataclass(frozen=True)
class EngineSpec:
    """Everything recipecli knows about one engine except its load-path model (a registry entry).

    Attributes:
        name: the registry name (``--engine`` value, the findings' ``engine``, data file prefix).
        title: the engine's own spelling (``vLLM``, ``SGLang``).
        repo: ``owner/name`` of its source repository.
        pin: the version modelled (:class:`Pin`).
        home: the engine's package (``recipecli.engines.vllm``); its ``data/`` folder holds the
            files :attr:`Pin.data_file` and :attr:`Pin.catalog_file` name.
        model: the module defining ``MODEL`` (:class:`recipecli.engines.base.EngineModel`), the
            engine's EAGLE3 load path; imported only by :func:`recipecli.engines.engine_model`.
        serve_command: the argv that starts its server (``("vllm", "serve")``).
        model_flag: the flag naming the target, or None when the target is a positional after
            :attr:`serve_command`.
        default_port: the TCP port its server listens on when the command sets none.
        env_vars: the env vars it reads (:class:`EnvVars`, checked against its flag catalog's
            ``env``), or None.
        serve_flags: recipe serve field -> this engine's long flag (fields it has no flag for are
            absent: rendering them is refused).
        value_spellings: serve field -> {value as recipes write it: this engine's spelling}.
        overrides: how it applies config overrides (:class:`OverridePlacement`).
        speculative_flags: its speculative flags for a recipe (:data:`SpeculativeBuilder`).
        speculative_config: the checks on its speculative JSON mapping when its speculative
            settings are one such flag, else None.
        serve_config_format: the ``render --format`` of the YAML file its serve command reads
            with ``--config``, or None.
        lint: its own lint rules (:class:`EngineLint`), or None.
        bench_command: the argv of its benchmark client (``("vllm", "bench", "serve")``) with
            the flags of its catalog's ``bench serve`` command, or None when it ships none
            (:data:`recipecli.engines.BENCH_CLIENT` names the one every bench command runs).
        serve_field_reasons: serve field it has no flag for -> why, in the engine's terms (a
            layout field is refused with it instead of being dropped); empty by default.
        nodes: how its serve command starts on several nodes (:class:`NodeLaunch`), or None
            when recipecli renders it for one node only.
    """

    name: str
    title: str
    repo: str
    pin: Pin
    home: str
    model: str
    serve_command: tuple[str, ...]
    model_flag: str | None
    default_port: int
    env_vars: EnvVars | None
    serve_flags: Mapping[str, str]
    value_spellings: Mapping[str, Mapping[Any, Any]]
    overrides: OverridePlacement
    speculative_flags: SpeculativeBuilder
    speculative_config: SpeculativeConfigRules | None
    serve_config_format: str | None
    lint: EngineLint | None
    bench_command: tuple[str, ...] | None
    serve_field_reasons: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    nodes: NodeLaunch | None = None

    def __post_init__(self) -> None:
        if self.pin.engine != self.name:
            raise ValueError(f"engine {self.name!r}: its pin names {self.pin.engine!r}")
        if not self.serve_command:
            raise ValueError(f"engine {self.name!r}: empty serve_command")

    @property
    def layout_rules(self) -> str:
        """The module defining ``RULES`` (:class:`recipecli.engines.layout.LayoutRules`), the
        engine's layout verdicts beyond TP: ``<home>.layout``."""
        return f"{self.home}.layout"

    def version_info(self) -> dict[str, str]:
        """``{"repo": ..., "version": ...}`` as ``check --json`` ``engine_versions`` shows it."""
        return {"repo": self.repo, "version": self.pin.ref}
