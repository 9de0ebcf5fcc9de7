"""What every engine model is made of: cited sources, resolved values, steps, and the pair context.

An engine model (the package ``recipecli/engines/<engine>/``) is the engine's EAGLE3 load path at
a pinned version, written as an ordered list of :class:`Step` s. Each step reads the pair's description
(:class:`PairContext`: the canonical draft, the target's text config, the tensor table, ``d2t`` /
``t2d`` values), the values the engine resolved in earlier steps (:class:`Resolved`), and yields
:class:`~recipecli.findings.Finding` s whose ``source`` names the engine file and function it models.

Severity convention (docs/engines/README.md): ``error`` when the engine raises at load, or loads but
the draft then runs on the wrong inputs or drops trained weights; ``warning`` when the harm depends
on how the draft was trained; ``info`` otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import numpy as np

from recipecli.checkpoint.model import Checkpoint
from recipecli.draft import DraftModel

# the data readers live in the numpy-free datafiles module; re-exported for the engine models
from recipecli.engines.datafiles import config_class_fields as config_class_fields
from recipecli.engines.datafiles import data_path as data_path
from recipecli.engines.datafiles import engine_data as engine_data
from recipecli.engines.datafiles import load_data as load_data
from recipecli.engines.datafiles import read_json as read_json
from recipecli.engines.datafiles import text_config_fields as text_config_fields
from recipecli.engines.datafiles import transformers_defaults as transformers_defaults
from recipecli.engines.spec import EngineSpec
from recipecli.findings import Finding
from recipecli.target import TargetModel


@dataclass(frozen=True)
class Source:
    """A public reference for an engine behaviour.

    Attributes:
        repo: ``owner/name`` on GitHub, e.g. ``vllm-project/vllm``.
        version: release tag or commit the behaviour was read at.
        file: path inside the repository.
        function: function, method or class (``Eagle3LlamaForCausalLM.load_weights``).
        refs: PRs or issues that introduced or reported it (``vLLM PR #25961``).
    """

    repo: str
    version: str
    file: str
    function: str
    refs: tuple[str, ...] = ()

    def __str__(self) -> str:
        text = f"{self.repo}@{self.version} {self.file} {self.function}"
        return text + (f"; {', '.join(self.refs)}" if self.refs else "")


#: What a finding cites as its ``source``: an engine :class:`Source`, a reference in words
#: (``vLLM PR #43671``), or several of them (``finding`` joins them with `` | ``).
Citation: TypeAlias = Source | str | tuple[Source | str, ...]


@dataclass(frozen=True)
class Value:
    """A value as the engine resolves it, with where it came from.

    Attributes:
        value: the resolved value (int, float, bool, str, tuple) — never None once resolved
            unless the engine itself keeps None (``origin`` then says so).
        origin: ``config: <key>``, ``transformers LlamaConfig default``, ``engine default`` …
    """

    value: Any
    origin: str

    def show(self) -> str:
        """``4096 (transformers LlamaConfig default)``."""
        return f"{self.value} ({self.origin})"


@dataclass(frozen=True)
class PairContext:
    """Everything an engine model reads about one target/draft pair and one deployment.

    Attributes:
        target_ck / draft_ck: the checkpoints (config, tensor table, small tensor values).
        target / draft: their engine-independent descriptions.
        tps: target tensor-parallel sizes to check.
        draft_tp: vLLM ``draft_tensor_parallel_size`` (None = the target TP).
        max_model_len: the serving length (None = the target's ``max_position_embeddings``).
    """

    target_ck: Checkpoint
    draft_ck: Checkpoint
    target: TargetModel
    draft: DraftModel
    tps: tuple[int, ...]
    draft_tp: int | None = None
    max_model_len: int | None = None
    _values: dict[str, np.ndarray | None] = field(default_factory=dict, compare=False, repr=False)

    def draft_tp_for(self, tp: int) -> int:
        """The draft's TP size at target TP ``tp``: ``draft_tp`` when given, else ``tp``."""
        return self.draft_tp if self.draft_tp is not None else tp

    def value(self, name: str) -> np.ndarray | None:
        """Values of a small draft tensor (``d2t``/``t2d``), None when unavailable; cached."""
        if name not in self._values:
            ck = self.draft_ck
            self._values[name] = ck.read_tensor(name) if ck.has_values(name) else None
        return self._values[name]


@dataclass(frozen=True)
class SharingRow:
    """One row of the embedding/head sharing table.

    Attributes:
        engine, tp: the engine and target TP size.
        target_shape: per-rank shape of the target's embedding ([rows, H]); None when the padded
            vocab does not split over TP.
        draft_sharded_shape / draft_replicated_shape: the draft embedding's per-rank shapes.
        verdict: ``share`` / ``share-replicated`` / ``own`` / ``none`` / ``error``.
        head_verdict: ``share`` / ``own`` / ``tied`` / ``none``.
        embed_bytes_per_rank: bytes of the embedding the draft uses, on one rank.
        draft_bytes_per_rank: bytes of the draft's own weights on one rank.
        note: what the engine does, in words.
    """

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
        """The row as ``check --json`` writes it (shapes as lists, None when absent)."""

        def lst(s: tuple[int, ...] | None) -> list[int] | None:
            return list(s) if s else None

        return {
            "engine": self.engine,
            "tp": self.tp,
            "target_shape": lst(self.target_shape),
            "draft_sharded_shape": lst(self.draft_sharded_shape),
            "draft_replicated_shape": lst(self.draft_replicated_shape),
            "verdict": self.verdict,
            "head_verdict": self.head_verdict,
            "embed_bytes_per_rank": self.embed_bytes_per_rank,
            "draft_bytes_per_rank": self.draft_bytes_per_rank,
            "note": self.note,
        }


@dataclass
class EngineRun:
    """The state one engine model builds while running its steps on a pair.

    Attributes:
        resolved: name -> :class:`Value` resolved so far (``H``, ``k``, ``aux_layers`` …).
        findings: findings so far.
        sharing: one :class:`SharingRow` per TP size.
        stop: set by a step when the engine cannot go further (e.g. architecture not registered).
        config: the draft config as the engine's model code sees it (e.g. vLLM's speculators
            translation), set by the config step; later steps read it instead of the raw file.
    """

    ctx: PairContext
    engine: str = "any"
    resolved: dict[str, Value] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    sharing: list[SharingRow] = field(default_factory=list)
    stop: str | None = None

    def set(self, name: str, value: Any, origin: str) -> Any:
        """Record ``name`` as resolved to ``value`` (from ``origin``) and return ``value``."""
        self.resolved[name] = Value(value, origin)
        return value

    def get(self, name: str) -> Any:
        """The value resolved for ``name``.

        Raises:
            KeyError: no step has resolved ``name``.
        """
        return self.resolved[name].value

    def stopped(self) -> bool:
        """True once a step has set :attr:`stop` (a method, so that a check after another step's
        call reads the attribute again rather than a narrowed earlier value)."""
        return bool(self.stop)


#: A load-path step: reads and extends the run, yields its findings.
StepFn: TypeAlias = Callable[[EngineRun], Iterable[Finding]]


@dataclass(frozen=True)
class Step:
    """One step of an engine's load path.

    Attributes:
        key: ``a`` … ``g`` (the checklist of the engine-models design: config, draft architecture,
            target support, aux layers, tensors, sharing and TP, positions).
        title: short name (``Draft config resolution``).
        doc: what the engine does in this step, in recipecli's words (the docs page shows it).
        sources: the engine code this step models.
        codes: finding codes the step may emit.
        fn: ``(EngineRun) -> Iterable[Finding]``.
    """

    key: str
    title: str
    doc: str
    sources: tuple[Source, ...]
    codes: tuple[str, ...]
    fn: StepFn


@dataclass(frozen=True)
class Section:
    """A fact about the engine that is not a load-path step (override placement, CLI quirks),
    documented on the engine's page under a stable anchor.

    Attributes:
        anchor: the page anchor (``hf-overrides``) other files cite as ``docs/engines/<e>.md#anchor``.
        title: heading.
        text: what the engine does, in recipecli's words (markdown).
        sources: the engine code it describes.
    """

    anchor: str
    title: str
    text: str
    sources: tuple[Source, ...]
    aliases: tuple[str, ...] = ()


#: Other anchors that lead to the same step (older or more specific citations).
STEP_ANCHOR_ALIASES: Mapping[str, tuple[str, ...]] = {
    "e": ("draft-tensors",),
    "f": ("tensor-parallel",),
}

#: Stable page anchors of the load-path steps (docs/engines/<engine>.md#<anchor>).
STEP_ANCHORS: Mapping[str, str] = {
    "a": "config",
    "b": "draft-architecture",
    "c": "target-support",
    "d": "aux-layers",
    "e": "tensors",
    "f": "sharing",
    "g": "positions",
}


@dataclass(frozen=True)
class EngineModel:
    """An engine's EAGLE3 load path at its pinned version.

    Attributes:
        spec: the engine's registry entry (name, title, repository, pin).
        steps: in the engine's order.
        notes: facts about how this model is checked (conformance, data extraction).
        sections: other documented facts (override placement, CLI), each under an anchor.
        accounting: ``(run) -> Accounting`` (recipecli/engines/accounting.py): every config key,
            checkpoint tensor and parameter of the run's draft as the engine uses it; None for
            an engine without one (``check --explain`` then shows none).
    """

    spec: EngineSpec
    steps: tuple[Step, ...]
    notes: tuple[str, ...] = ()
    sections: tuple[Section, ...] = ()
    accounting: Callable[[EngineRun], Any] | None = None

    def explain(self, run: EngineRun) -> Any:
        """The engine's accounting of a finished ``run`` (an ``Accounting``), or None when the
        engine has none or the run stopped before its tensors step (the name map needs the
        resolved config)."""
        if self.accounting is None or run.stop:
            return None
        return self.accounting(run)

    @property
    def name(self) -> str:
        """``vllm`` / ``tokenspeed`` / ``sglang`` (the ``--engine`` value, the finding's ``engine``)."""
        return self.spec.name

    @property
    def title(self) -> str:
        """The engine's display name."""
        return self.spec.title

    @property
    def repo(self) -> str:
        """``owner/name``."""
        return self.spec.repo

    @property
    def version(self) -> str:
        """The pinned release or commit as citations print it (``v0.33.0``, ``f4d8ec6e039c``)."""
        return self.spec.pin.ref

    @property
    def data(self) -> tuple[str, ...]:
        """The data files the model reads (by name, :func:`data_path`): the engine's extracted data,
        then transformers' config-class defaults at the release the engine pins."""
        return (self.spec.pin.data_file, self.spec.pin.transformers_file)

    def run(self, ctx: PairContext) -> EngineRun:
        """Run every step on ``ctx``; a step that sets ``run.stop`` ends the run."""
        run = EngineRun(ctx, engine=self.name, config=dict(ctx.draft_ck.config))
        for step in self.steps:
            run.findings.extend(step.fn(run))
            if run.stop:
                break
        return run

    def version_info(self) -> dict[str, str]:
        """``{"repo": ..., "version": ...}`` (``check --json`` ``engine_versions``)."""
        return self.spec.version_info()


class StepList:
    """Collects an engine module's steps in declaration order (``@steps.add(...)``)."""

    def __init__(self) -> None:
        self.items: list[Step] = []

    def add(
        self, key: str, title: str, *, sources: Iterable[Source], codes: Iterable[str] = ()
    ) -> Callable[[StepFn], StepFn]:
        """A decorator that appends the decorated function as the :class:`Step` ``key`` (its
        docstring, whitespace collapsed, becomes :attr:`Step.doc`) and returns it unchanged."""

        def deco(fn: StepFn) -> StepFn:
            doc = " ".join((fn.__doc__ or "").split())
            self.items.append(Step(key, title, doc, tuple(sources), tuple(codes), fn))
            return fn

        return deco
