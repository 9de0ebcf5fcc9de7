"""The engine registry: one folder per engine, one line per engine here.

Each engine lives in ``recipecli/engines/<engine>/``: ``pin.py`` (the pinned version, written
once), ``spec.py`` (its :class:`~recipecli.engines.spec.EngineSpec`: serve command, flags, override
placement, speculative flags, lint rules, ...), ``recipe.py`` and ``lint.py`` (the functions the spec
names), and its EAGLE3 load-path model: ``sources`` (the cited engine code, the data it reads, the
step list), ``config`` (steps a-b), ``target`` (c-d), ``tensors`` (e-g), ``sections`` (what its docs
page says beside the steps) and ``model.py`` (``MODEL``). The spec is light; the model is imported
only on use (:func:`engine_model`).

:data:`EngineName` is the registry: adding an engine is its folder plus its name there
(docs/architecture.md). :func:`register` adds an engine at run time (a plug-in, or a test's
throw-away engine) before the modules that read :data:`ENGINES` are imported. Nothing outside this
package compares engine names: it reads traits from :func:`engine_spec`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib import import_module
from typing import TYPE_CHECKING, Literal, get_args

from recipecli.errors import UsageError

if TYPE_CHECKING:  # the models pull in numpy and the draft/target descriptions: only on use
    from recipecli.engines.base import EngineModel
    from recipecli.engines.spec import EngineSpec

#: The built-in engines, in display order (the registry line: one name per engine folder).
EngineName = Literal["vllm", "tokenspeed", "sglang"]

#: The engine whose benchmark client (``EngineSpec.bench_command``) the rendered bench command runs
#: for every engine: ``vllm bench serve`` drives any OpenAI-compatible server.
BENCH_CLIENT: EngineName = "vllm"

_SPECS: dict[str, EngineSpec] = {}


def _builtin() -> None:
    if not _SPECS:
        for name in get_args(EngineName):
            spec: EngineSpec = import_module(f"recipecli.engines.{name}.spec").SPEC
            _SPECS[name] = spec


def register(spec: EngineSpec) -> None:
    """Add an engine to the registry (after the built-in ones, in call order).

    Modules read :data:`ENGINES` when they are imported (option choices, the recipe schema):
    register before importing them.

    Raises:
        ValueError: an engine of that name is registered already.
    """
    _builtin()
    if spec.name in _SPECS:
        raise ValueError(f"engine {spec.name!r} is registered already")
    _SPECS[spec.name] = spec


@contextmanager
def registered(spec: EngineSpec) -> Iterator[EngineSpec]:
    """:func:`register` ``spec`` for the duration of a ``with`` block (a test's throw-away
    engine); it is removed on exit. Modules that read :data:`ENGINES` at import do not see it.

    Raises:
        ValueError: an engine of that name is registered already.
    """
    register(spec)
    try:
        yield spec
    finally:
        del _SPECS[spec.name]


def engine_names() -> tuple[str, ...]:
    """The registered engines, in display order."""
    _builtin()
    return tuple(_SPECS)


def engine_spec(name: str) -> EngineSpec:
    """The :class:`~recipecli.engines.spec.EngineSpec` of engine ``name``.

    Raises:
        UsageError: ``name`` is not a registered engine.
    """
    _builtin()
    spec = _SPECS.get(name)
    if spec is None:
        raise UsageError(f"unknown engine {name!r} (choose {', '.join(_SPECS)})")
    return spec


def engine_specs() -> list[EngineSpec]:
    """Every registered spec, in display order."""
    _builtin()
    return list(_SPECS.values())


def engine_model(name: str) -> EngineModel:
    """The :class:`EngineModel` (EAGLE3 load path) of engine ``name``, imported on first use.

    Raises:
        UsageError: ``name`` is not a registered engine.
    """
    model: EngineModel = import_module(engine_spec(name).model).MODEL
    return model


def engine_models() -> list[EngineModel]:
    """Every engine model, in :data:`ENGINES` order."""
    return [engine_model(n) for n in engine_names()]


def code_engines() -> dict[str, tuple[str, ...]]:
    """Which engines each finding code applies to, derived from the models: catalog code
    (:func:`recipecli.codes.catalog_code`) -> the names of the engines one of whose steps lists
    it, in :data:`ENGINES` order, then the engines whose method rules may report it
    (each engine's ``methods.CODES``). A code neither lists is absent (it is a
    property of the checkpoint or recipe itself: engine ``any``)."""
    from recipecli.codes import catalog_code

    out: dict[str, list[str]] = {}
    for model in engine_models():
        for step in model.steps:
            for code in step.codes:
                names = out.setdefault(catalog_code(code.replace("*", "<role>")), [])
                if model.name not in names:
                    names.append(model.name)
    for spec in engine_specs():  # the method rules (issue #27): <home>.methods.CODES
        try:
            mod = import_module(f"{spec.home}.methods")
        except ModuleNotFoundError:
            continue
        for code in getattr(mod, "CODES", ()):
            names = out.setdefault(code, [])
            if spec.name not in names:
                names.append(spec.name)
    return {code: tuple(names) for code, names in out.items()}


def __getattr__(name: str) -> object:
    # ENGINES (the names, in display order) and TITLES (name -> display title) are read from the
    # registry when a module imports them, so an engine registered first is included.
    if name == "ENGINES":
        return engine_names()
    if name == "TITLES":
        return {spec.name: spec.title for spec in engine_specs()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if TYPE_CHECKING:
    ENGINES: tuple[str, ...]
    TITLES: dict[str, str]
