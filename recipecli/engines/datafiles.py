"""The data files the engine models read (numpy-free: ``render`` and ``lint`` read the
transformers config-class fields through here without loading the numpy-backed models).

Each engine's extracted data (``recipecli/engines/<engine>/data/``), transformers' config-class
fields and defaults (``recipecli/data/transformers/``), read by name and cached.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from recipecli.engines.spec import EngineSpec


def read_json(package: str, *parts: str) -> Mapping[str, Any]:
    """A JSON file shipped in ``package`` (its path below the package: ``parts``), cached.

    Raises:
        FileNotFoundError: no such file.
    """
    key = (package, *parts)
    if key not in _CACHE:
        import json
        from importlib.resources import files

        path = files(package)
        for part in parts:
            path = path / part
        _CACHE[key] = json.loads(path.read_text(encoding="utf-8"))
    return _CACHE[key]


_CACHE: dict[tuple[str, ...], Mapping[str, Any]] = {}


def engine_data(spec: EngineSpec) -> Mapping[str, Any]:
    """The engine's extracted data (``<engine folder>/data/<Pin.data_file>``: its registry and
    model classes at the pin, written by ``scripts/build_engine_data.py``)."""
    return read_json(spec.home, "data", spec.pin.data_file)


def transformers_defaults(version: str) -> Mapping[str, Any]:
    """transformers' config-class fields and defaults at ``version``
    (``recipecli/data/transformers/transformers-<version>-defaults.json``)."""
    return read_json("recipecli.data", "transformers", f"transformers-{version}-defaults.json")


def config_class_fields(version: str, model_type: str) -> frozenset[str] | None:
    """Every key transformers' config class for ``model_type`` takes at ``version``: the fields of
    ``PreTrainedConfig`` (``base.fields``), the class's own ``fields`` (its dataclass fields and
    what ``to_dict()`` writes), its ``attribute_map`` names (``aliases``) and its sub-config
    attributes (``sub_configs``), as ``scripts/extract_transformers_fields.py`` read them from the
    class (``Qwen3VLMoeTextConfig`` under ``qwen3_vl_moe_text``).

    Returns:
        The key names; None when transformers has no class for ``model_type`` at ``version``
        (remote code, or a model type an engine builds with its own config class) or recipecli
        ships no data for ``version``.
    """
    try:
        data = transformers_defaults(version)
    except FileNotFoundError:
        return None
    entry = data["models"].get(model_type)
    if entry is None or "fields" not in entry:
        return None
    names = set(data.get("base", {}).get("fields", ()))
    names.update(entry["fields"], entry.get("aliases", {}), entry.get("sub_configs", {}))
    return frozenset(names)


def text_config_fields(version: str, config: Mapping[str, Any] | None) -> frozenset[str]:
    """:func:`config_class_fields` of a target's text config (``config`` itself, or the wrapper's
    text config: ``checkpoint.textconfig.resolve_text_config``) at ``version``: the real fields a
    config.json omits. Empty for no config, a remote-code target (``auto_map``: its own class
    decides) or a model type transformers has no class for."""
    from recipecli.checkpoint.textconfig import resolve_text_config

    if config is None or "auto_map" in config:
        return frozenset()
    model_type = resolve_text_config(config).config.get("model_type")
    if not isinstance(model_type, str):
        return frozenset()
    return config_class_fields(version, model_type) or frozenset()


def _data_package(name: str) -> tuple[str, str]:
    """(package, folder) holding a data file named ``name``: ``transformers-*`` defaults in
    ``recipecli/data/transformers/``, a built-in engine's ``<engine>-<pin>.json`` in its folder's
    ``data/`` (a plug-in engine's data is read with :func:`engine_data`)."""
    if name.startswith("transformers-"):
        return "recipecli.data", "transformers"
    return f"recipecli.engines.{name.split('-', 1)[0]}", "data"


def data_path(name: str) -> str:
    """The repository path of a data file an engine model reads, by file name (``vllm-0.33.0.json``
    -> ``recipecli/engines/vllm/data/vllm-0.33.0.json``)."""
    package, folder = _data_package(name)
    return f"{package.replace('.', '/')}/{folder}/{name}"


def load_data(name: str) -> Mapping[str, Any]:
    """A data file an engine model reads, by file name (:func:`data_path`), cached.

    Raises:
        FileNotFoundError: no such file.
        ModuleNotFoundError: the name's engine prefix names no engine folder.
    """
    package, folder = _data_package(name)
    return read_json(package, folder, name)
