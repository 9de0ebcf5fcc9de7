"""Write ``recipecli/data/transformers/transformers-<version>-defaults.json`` from the config
classes of the transformers release installed in the running interpreter.

Run it in a throw-away environment that holds only that release (no torch: config classes
import without it), once per release an engine pins (``Pin.transformers`` in
``recipecli/engines/<engine>/pin.py``)::

    python -m venv /tmp/tfenv-5.20.2
    /tmp/tfenv-5.20.2/bin/pip install transformers==5.20.2
    /tmp/tfenv-5.20.2/bin/python scripts/extract_transformers_fields.py

Every model type of ``CONFIG_MAPPING_NAMES`` (``transformers/models/auto/configuration_auto.py``)
is read from its class, and so is every class a config names in ``sub_configs`` (the text config
of a multimodal wrapper, e.g. ``Qwen3VLMoeTextConfig``, keyed by its own ``model_type``):

* ``fields``: the class's own fields, i.e. its dataclass fields (transformers 5 declares configs as
  dataclasses) or its ``__init__`` parameters, plus the public keys ``to_dict()`` of a default
  instance writes (attributes ``__post_init__`` sets), minus ``base.fields`` (``PreTrainedConfig``'s,
  listed once at the top);
* ``defaults``: field -> the value a default instance holds (after ``__post_init__``), or the
  declared default (the dataclass default or ``default_factory()``, else the ``__init__`` default)
  where ``derived`` fills the field or the class refuses its own defaults; only values that are
  JSON scalars or short JSON lists/mappings (others, and keys only ``to_dict()`` writes, are in
  ``fields`` alone); a base field only where the class changes its default;
* ``aliases``: ``attribute_map`` (``config.update`` and ``setattr`` resolve these names too);
* ``sub_configs``: attribute -> model type of the sub-config class;
* ``derived``: ``head_dim`` / ``num_key_value_heads`` filled by ``__post_init__`` when None, and
  ``hidden_size % num_attention_heads`` when the class refuses a remainder; both found by building
  the class with chosen sizes, not by reading its source;
* ``derived_if_null``: the same derivations where the default is a number but ``__post_init__``
  fills a null (``Qwen3Config.num_key_value_heads: int | None = 32``);
* ``not_null``: the geometry fields a ``@strict`` class refuses None for (building it with the
  field None raises ``StrictDataclassFieldValidationError``).

``registered`` maps each architecture the engines register (their ``data/*.json``) to the model
type transformers' auto-model mappings give it (architectures transformers does not know are
remote code and absent). A class that cannot be imported, built with its defaults or listed exits
non-zero, naming the class.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / "recipecli" / "data" / "transformers"

#: Geometry fields whose None refusal (``not_null``) the engine models report.
GEOMETRY = (
    "vocab_size",
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "max_position_embeddings",
    "rms_norm_eps",
    "tie_word_embeddings",
    "attention_bias",
    "mlp_bias",
    "hidden_act",
)

_MISSING = object()


class ClassError(Exception):
    """A config class that cannot be read (the message names it)."""


# --------------------------------------------------------------------------- one class


def declared_defaults(cls: type) -> dict[str, Any]:
    """Field -> declared default (``_MISSING`` when none): dataclass fields, else ``__init__``."""
    out: dict[str, Any] = {}
    if dataclasses.is_dataclass(cls):
        for f in dataclasses.fields(cls):
            if f.default is not dataclasses.MISSING:
                out[f.name] = f.default
            elif f.default_factory is not dataclasses.MISSING:
                out[f.name] = f.default_factory()
            else:
                out[f.name] = _MISSING
        return out
    for name, p in inspect.signature(cls.__init__).parameters.items():
        if name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        out[name] = _MISSING if p.default is p.empty else p.default
    return out


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _small_json(value: Any) -> bool:
    """A JSON scalar, or a list / mapping of JSON values at most 200 characters long."""
    if _scalar(value):
        return True
    if not isinstance(value, (list, tuple, dict)):
        return False
    try:
        return len(json.dumps(value)) <= 200
    except (TypeError, ValueError):
        return False


def _build(cls: type, **kwargs: Any) -> Any | None:
    try:
        return cls(**kwargs)
    except Exception:  # a size the class refuses for a reason of its own: no evidence either way
        return None


def derivations(cls: type, declared: dict[str, Any]) -> dict[str, str]:
    """What ``__post_init__`` / the class validators derive, found by building the class with
    two sizes: ``head_dim`` / ``num_key_value_heads`` when their default is None (or they are not
    declared) and the built value follows ``hidden_size // num_attention_heads`` /
    ``num_attention_heads``; the remainder rule when (768, 12) builds and (770, 12) is refused
    with a message about the attention heads."""
    derived: dict[str, str] = {}
    if "hidden_size" not in declared or "num_attention_heads" not in declared:
        return derived
    a = _build(cls, hidden_size=768, num_attention_heads=12)
    b = _build(cls, hidden_size=1024, num_attention_heads=8)
    if a is None or b is None:
        return derived
    if declared.get("head_dim") is None and (
        getattr(a, "head_dim", None),
        getattr(b, "head_dim", None),
    ) == (64, 128):
        derived["head_dim"] = "hidden_size // num_attention_heads"
    if declared.get("num_key_value_heads") is None and (
        getattr(a, "num_key_value_heads", None),
        getattr(b, "num_key_value_heads", None),
    ) == (12, 8):
        derived["num_key_value_heads"] = "num_attention_heads"
    try:
        cls(hidden_size=770, num_attention_heads=12)
    except Exception as exc:  # noqa: BLE001  (the validator's own exception, read by its text)
        if "attention heads" in str(exc):
            derived["hidden_size % num_attention_heads"] = "must be 0 (ValueError)"
    return derived


def null_derivations(cls: type, declared: dict[str, Any]) -> dict[str, str]:
    """``head_dim`` / ``num_key_value_heads`` whose default is not None but that ``__post_init__``
    derives when a config gives them as null (``num_key_value_heads: int | None = 32`` in
    ``Qwen3Config``): built with the field None and two sizes."""
    out: dict[str, str] = {}
    rules = {
        "head_dim": ("hidden_size // num_attention_heads", (64, 128)),
        "num_key_value_heads": ("num_attention_heads", (12, 8)),
    }
    for key, (rule, want) in rules.items():
        if declared.get(key) is None:
            continue  # absent or None: derivations() records it
        a = _build(cls, hidden_size=768, num_attention_heads=12, **{key: None})
        b = _build(cls, hidden_size=1024, num_attention_heads=8, **{key: None})
        if (getattr(a, key, None), getattr(b, key, None)) == want:
            out[key] = rule
    return out


def refuses_null(cls: type, declared: dict[str, Any]) -> list[str]:
    """Geometry fields for which ``cls(field=None)`` raises the strict dataclass validation."""
    out = []
    for key in GEOMETRY:
        if key not in declared:
            continue
        try:
            cls(**{key: None})
        except Exception as exc:  # noqa: BLE001  (only huggingface_hub's strict error counts)
            if type(exc).__name__ == "StrictDataclassFieldValidationError":
                out.append(key)
    return sorted(out)


def read_class(cls: type, base: dict[str, Any]) -> dict[str, Any]:
    """The entry of one config class (module docstring).

    Raises:
        ClassError: the class cannot be built with its defaults or listed.
    """
    name = f"{cls.__module__}.{cls.__qualname__}"
    try:
        declared = declared_defaults(cls)
    except Exception as exc:
        raise ClassError(f"cannot list the fields of {name}: {type(exc).__name__}: {exc}") from exc
    refused = None
    try:
        values = {k: v for k, v in cls().to_dict().items() if not k.startswith("_")}
    except Exception as exc:  # noqa: BLE001  (its own defaults fail its validators: recorded)
        if not declared:
            raise ClassError(f"cannot read config class {name}: {exc}") from exc
        values, refused = (
            {},
            f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1].strip()}"[:160],
        )
    subs = {
        attr: sub.model_type
        for attr, sub in sorted((getattr(cls, "sub_configs", None) or {}).items())
        if isinstance(getattr(sub, "model_type", None), str) and sub.model_type
    }
    every = dict(declared)
    for key, value in values.items():
        every.setdefault(key, value)
    every.pop("model_type", None)
    fields = sorted(k for k in every if k not in base and k not in subs)
    derived = derivations(cls, declared)
    # the default instance's value (what __post_init__ leaves, e.g. Qwen3Config's sliding_window
    # None without use_sliding_window), the declared one where a derivation fills it
    effective = {
        k: (values[k] if k in values and k not in derived and k not in base else v)
        for k, v in declared.items()
    }
    defaults = {
        k: v
        for k, v in effective.items()
        if _small_json(v)
        and k not in subs
        and (k not in base or base[k] is _MISSING or v != base[k] or type(v) is not type(base[k]))
    }
    entry: dict[str, Any] = {
        "class": cls.__name__,
        "defaults": dict(sorted(defaults.items())),
        "derived": derived,
        "fields": fields,
    }
    if_null = null_derivations(cls, declared)
    if if_null:
        entry["derived_if_null"] = if_null
    if getattr(cls, "attribute_map", None):
        entry["aliases"] = dict(sorted(cls.attribute_map.items()))
    if subs:
        entry["sub_configs"] = subs
    if refused:  # no default instance here: fields and defaults are the declared ones
        entry["instance_error"] = refused
    not_null = refuses_null(cls, declared)
    if not_null:
        entry["not_null"] = not_null
    return entry


# --------------------------------------------------------------------------- every class


def base_entry() -> tuple[dict[str, Any], dict[str, Any]]:
    """(``PreTrainedConfig``'s field -> default, its JSON entry)."""
    from transformers import PreTrainedConfig

    declared = declared_defaults(PreTrainedConfig)
    values = {k: v for k, v in PreTrainedConfig().to_dict().items() if not k.startswith("_")}
    every = dict(declared)
    for key, value in values.items():
        every.setdefault(key, value)
    every.pop("model_type", None)
    entry = {
        "class": "PreTrainedConfig",
        "fields": sorted(every),
        "defaults": {k: v for k, v in sorted(every.items()) if _scalar(v)},
    }
    return every, entry


def config_classes() -> Iterator[tuple[str, type]]:
    """(model type, class) for every ``CONFIG_MAPPING_NAMES`` entry, then the sub-config classes
    they name (breadth first; a model type is yielded once).

    Raises:
        ClassError: a class that does not import.
    """
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING, CONFIG_MAPPING_NAMES

    seen: set[str] = set()
    queue: list[tuple[str, type]] = []
    for model_type, cls_name in sorted(CONFIG_MAPPING_NAMES.items()):
        try:
            queue.append((model_type, CONFIG_MAPPING[model_type]))
        except Exception as exc:
            raise ClassError(
                f"cannot import config class {cls_name} (model_type {model_type!r}): "
                f"{type(exc).__name__}: {exc}"
            ) from exc
    while queue:
        model_type, cls = queue.pop(0)
        if model_type in seen:
            continue
        seen.add(model_type)
        yield model_type, cls
        for sub in (getattr(cls, "sub_configs", None) or {}).values():
            sub_type = getattr(sub, "model_type", None)
            if isinstance(sub_type, str) and sub_type and sub_type not in seen:
                queue.append((sub_type, sub))


def architecture_model_types() -> dict[str, str]:
    """Architecture class name -> model type, from every ``MODEL_*_MAPPING_NAMES`` of
    ``transformers/models/auto/modeling_auto.py`` (the first mapping that names it wins)."""
    from transformers.models.auto import modeling_auto

    out: dict[str, str] = {}
    for name, mapping in sorted(vars(modeling_auto).items()):
        if not (name.startswith("MODEL_") and name.endswith("_MAPPING_NAMES")):
            continue
        for model_type, archs in mapping.items():
            for arch in (archs,) if isinstance(archs, str) else archs:
                out.setdefault(arch, model_type)
    return out


def engine_architectures(root: Path) -> set[str]:
    """Every architecture an engine's registry data lists (``architectures``, ``targets``,
    ``eagle3_drafts`` of ``recipecli/engines/*/data/<engine>-<pin>.json``)."""
    found: set[str] = set()
    for path in sorted(root.glob("recipecli/engines/*/data/*.json")):
        data = json.loads(path.read_text())
        for key in ("architectures", "targets", "eagle3_drafts"):
            if isinstance(data.get(key), dict):
                found.update(data[key])
    return found


def pinned_releases(root: Path) -> set[str]:
    """The ``transformers=`` of every ``Pin(...)`` in ``recipecli/engines/*/pin.py`` (ast)."""
    out: set[str] = set()
    for path in root.glob("recipecli/engines/*/pin.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.keyword) and node.arg == "transformers":
                if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                    out.add(node.value.value)
    return out


def extract(root: Path) -> dict[str, Any]:
    """The whole data file for the installed transformers.

    Raises:
        ClassError: a config class that cannot be read, or a registered architecture whose model
            type has no entry.
    """
    import transformers

    base, base_json = base_entry()
    models = {mt: read_class(cls, base) for mt, cls in config_classes()}
    arch_types = architecture_model_types()
    registered = {a: arch_types[a] for a in sorted(engine_architectures(root)) if a in arch_types}
    for arch, model_type in registered.items():
        if model_type not in models:
            raise ClassError(f"{arch}: model type {model_type!r} has no config class entry")
    return {
        "package": "transformers",
        "version": transformers.__version__,
        # the engine pages print the source, then the version
        "source": (
            "transformers' config classes (CONFIG_MAPPING_NAMES and their sub_configs, read from "
            "the classes by scripts/extract_transformers_fields.py), release"
        ),
        "base": base_json,
        "registered": registered,
        "models": dict(sorted(models.items())),
    }


def write(path: Path, data: dict[str, Any]) -> None:
    """One line per model (a diff shows which model changed), keys sorted; written whole, then
    renamed."""
    head = {k: v for k, v in data.items() if k != "models"}
    # keys sorted: some defaults are mappings transformers builds from a set (NeoMMEConfig's
    # rope_parameters), whose order differs between runs
    body = ",\n".join(
        f"{json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in data["models"].items()
    )
    text = json.dumps(head)[:-1] + ', "models": {\n' + body + "\n}}\n"
    assert json.loads(text) == json.loads(json.dumps(data))
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT_DIR, help="folder to write into")
    args = ap.parse_args(argv)
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ["HF_HUB_OFFLINE"] = (
        "1"  # a default instance that would fetch a backbone config fails
    )
    import transformers

    version = transformers.__version__
    if version not in pinned_releases(ROOT):
        print(
            f"transformers {version} is installed, but no engine pins it "
            f"(pinned: {', '.join(sorted(pinned_releases(ROOT)))}): use a venv with a pinned release",
            file=sys.stderr,
        )
        return 2
    try:
        data = extract(ROOT)
    except ClassError as exc:
        print(f"extract_transformers_fields: {exc}", file=sys.stderr)
        return 1
    path = args.out / f"transformers-{version}-defaults.json"
    write(path, data)
    print(f"wrote {path} ({len(data['models'])} model types)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
