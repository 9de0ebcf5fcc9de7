"""Engine models: each supported engine's EAGLE3 load path at a pinned version.

One package per engine (``vllm``, ``tokenspeed``, ``sglang``), laid out alike: ``sources`` (the
pinned version, the cited engine code, the data it reads, the step list), ``config`` (steps a-b),
``target`` (c-d), ``tensors`` (e-g), ``sections`` (what the engine's docs page says beside the
steps); its ``__init__`` builds ``MODEL``, an :class:`~recipecli.engines.base.EngineModel`, and
re-exports the public names. Adding an engine means adding its package (and its data under
``recipecli/data/engines/``) and naming it in :data:`_MODULES` and :data:`TITLES`; nothing
outside this package compares engine names.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from recipecli.errors import UsageError

if TYPE_CHECKING:  # the models pull in numpy and the draft/target descriptions: only on use
    from recipecli.engines.base import EngineModel

#: engine name -> module defining ``MODEL``, in display order.
_MODULES: dict[str, str] = {
    "vllm": "recipecli.engines.vllm",
    "tokenspeed": "recipecli.engines.tokenspeed",
    "sglang": "recipecli.engines.sglang",
}
#: The engines, in display order: the one list every package reads (recipes, docs, check).
ENGINES: tuple[str, ...] = tuple(_MODULES)
#: engine name -> its display title (the engine's own spelling), as each ``MODEL.title`` says;
#: readable without importing the models (``render`` and ``docs`` stay light).
TITLES: dict[str, str] = {"vllm": "vLLM", "tokenspeed": "tokenspeed", "sglang": "SGLang"}


def engine_model(name: str) -> EngineModel:
    """The :class:`EngineModel` of engine ``name``.

    Raises:
        UsageError: ``name`` is not a supported engine.
    """
    if name not in _MODULES:
        raise UsageError(f"unknown engine {name!r} (choose {', '.join(ENGINES)})")
    return import_module(_MODULES[name]).MODEL


def engine_models() -> list[EngineModel]:
    """Every engine model, in :data:`ENGINES` order."""
    return [engine_model(n) for n in ENGINES]


def code_engines() -> dict[str, tuple[str, ...]]:
    """Which engines each finding code applies to, derived from the models: catalog code
    (:func:`recipecli.codes.catalog_code`) -> the names of the engines one of whose steps lists
    it, in :data:`ENGINES` order. A code no step lists is absent (it is a property of the
    checkpoint or recipe itself: engine ``any``)."""
    from recipecli.codes import catalog_code

    out: dict[str, list[str]] = {}
    for model in engine_models():
        for step in model.steps:
            for code in step.codes:
                names = out.setdefault(catalog_code(code.replace("*", "<role>")), [])
                if model.name not in names:
                    names.append(model.name)
    return {code: tuple(names) for code, names in out.items()}
