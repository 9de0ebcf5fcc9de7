"""The recipe JSON Schema (the one source of truth; ``docs/recipe.schema.json`` is a dump of it)
and a validator for the subset of JSON Schema it uses.

The subset: ``type`` (name or list), ``properties``, ``required``, ``additionalProperties``
(bool or schema), ``propertyNames``, ``items``, ``enum``, ``pattern``, ``minimum``, ``exclusiveMinimum``, ``maximum``, ``minLength``
and local ``$ref`` (``#/$defs/NAME``). recipecli ships no ``jsonschema`` dependency; any
standard validator accepts the same schema.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from typing import Any, get_args

from recipecli.engines.spec import SpecMethod
from recipecli.recipes.engines import ENGINES, SERVE_FIELD_TYPES, VENDORS, serve_field_schema

SCALAR = ["string", "integer", "number", "boolean"]
ARG_VALUE = ["string", "integer", "number", "boolean", "object", "array", "null"]
FLAG_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


def _results_entry() -> dict[str, Any]:
    """Schema of one ``results`` entry (linked A/B benchmark files, docs/recipes-format.md)."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["title", "baseline", "candidate"],
        "properties": {
            "title": {"type": "string"},
            "engine": {"type": "string", "enum": list(ENGINES)},
            "hardware": {"type": "string"},
            "baseline": {"type": ["string", "array"]},
            "candidate": {"type": ["string", "array"]},
            "gpus": {"type": "integer", "minimum": 1},
            "labels": {"type": "array", "items": {"type": "string"}},
            "eval_baseline": {"type": ["string", "array"]},
            "eval_candidate": {"type": ["string", "array"]},
        },
    }


def _client_sections() -> dict[str, Any]:
    """Schemas of the ``bench`` and ``eval`` sections (the commands run against the server)."""
    return {
        "bench": {
            "type": "object",
            "propertyNames": {"pattern": FLAG_NAME},
            "properties": {"base_url": {"type": "string"}},
            "additionalProperties": {"type": SCALAR},
        },
        "eval": {
            "type": "object",
            "propertyNames": {"pattern": FLAG_NAME},
            "properties": {
                "launcher": {"type": "array", "items": {"type": "string"}},
                "endpoint": {
                    "type": "string",
                    "enum": ["/v1/chat/completions", "/v1/completions"],
                },
                "tokenizer": {"type": "string"},
                "base_url": {"type": "string"},
                "model_args": {"type": "object", "additionalProperties": {"type": SCALAR}},
                "gen_kwargs": {"type": "object", "additionalProperties": {"type": SCALAR}},
            },
            "additionalProperties": {"type": SCALAR},
        },
    }


def _defs(per_engine: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """The ``$defs``: engine args and env, the per-engine section, a hardware profile."""
    return {
        "args": {
            "type": "object",
            "propertyNames": {"pattern": FLAG_NAME},
            "additionalProperties": {"type": ARG_VALUE},
        },
        "env": {
            "type": "object",
            "propertyNames": {"pattern": ENV_NAME},
            "additionalProperties": {"type": ["string", "integer", "number"]},
        },
        "engine": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "args": {"$ref": "#/$defs/args"},
                "env": {"$ref": "#/$defs/env"},
                "order": {"type": "array", "items": {"type": "string"}},
                "speculative_config": {"type": "object"},
            },
        },
        "hardware": {
            "type": "object",
            "additionalProperties": False,
            "required": ["vendor"],
            "properties": {
                "vendor": {"type": "string", "enum": list(VENDORS)},
                "description": {"type": "string"},
                "target": {"type": "string", "minLength": 1},
                "draft": {"type": "string", "minLength": 1},
                "target_config": {"type": "string", "minLength": 1},
                "env": {"$ref": "#/$defs/env"},
                "engine_env": per_engine("#/$defs/env"),
                "args": per_engine("#/$defs/args"),
            },
        },
    }


def _per_engine(ref: str) -> dict[str, Any]:
    """An object with one optional property per registered engine, each a ``$ref``."""
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": {e: {"$ref": ref} for e in ENGINES},
    }


def _pair_sections() -> dict[str, Any]:
    """The pair and its speculative settings: target, draft, unsupported engines, speculative."""
    return {
        "target": {"type": "string", "minLength": 1},
        "draft": {"type": "string", "minLength": 1},
        "unsupported": {
            "type": "object",
            "description": "Engines that cannot serve this pair, each with the reason "
            "(check's verdict and the engine step, docs/engines/). render refuses them.",
            "additionalProperties": False,
            "properties": {e: {"type": "string", "minLength": 1} for e in ENGINES},
        },
        "target_config": {"type": "string", "minLength": 1},
        "speculative": {
            "type": "object",
            "additionalProperties": False,
            "required": ["method", "num_speculative_tokens"],
            "properties": {
                "method": {"type": "string", "enum": list(get_args(SpecMethod))},
                "num_speculative_tokens": {"type": "integer", "minimum": 1},
                "draft_tensor_parallel_size": {"type": "integer", "minimum": 1},
            },
        },
    }


def build_schema() -> dict[str, Any]:
    """Return the recipe JSON Schema (draft 2020-12) as a plain dict.

    Returns:
        the schema; ``serve`` properties come from :data:`recipecli.recipes.engines.SERVE_FIELD_TYPES`.
    """
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/recipecli/recipecli/docs/recipe.schema.json",
        "title": "recipecli recipe",
        "description": "One engine-neutral EAGLE3 deployment recipe (docs/recipes-format.md).",
        "type": "object",
        "additionalProperties": False,
        "required": ["name", "target", "draft", "speculative"],
        "properties": {
            "name": {"type": "string", "pattern": r"^[a-z0-9][a-z0-9.-]*$"},
            "title": {"type": "string"},
            "family": {"type": "string"},
            "description": {"type": "string"},
            "notes": {"type": "array", "items": {"type": "string"}},
            "results": {"type": "array", "items": _results_entry()},
            **_pair_sections(),
            "text_overrides": {"type": "object"},
            "text_overrides_known_keys": {
                "description": "text_overrides keys the model code reads although the public "
                "config.json lacks them (no recipe.override_absent warning for these).",
                "type": "array",
                "items": {"type": "string", "minLength": 1},
            },
            "serve": {
                "type": "object",
                "additionalProperties": False,
                "properties": {k: serve_field_schema(k) for k in SERVE_FIELD_TYPES},
            },
            "engines": _per_engine("#/$defs/engine"),
            "hardware": {
                "type": "object",
                "propertyNames": {"pattern": r"^[a-z0-9][a-z0-9_.-]*$"},
                "additionalProperties": {"$ref": "#/$defs/hardware"},
            },
            "default_hardware": {"type": "string"},
            "nodes": {
                "description": "Nodes the serve command runs on (recipecli render renders one "
                "command per node when above 1; --nodes overrides it).",
                "type": "integer",
                "minimum": 1,
            },
            **_client_sections(),
        },
        "$defs": _defs(_per_engine),
    }


SCHEMA: dict[str, Any] = build_schema()

_TYPES: dict[str, Any] = {
    "string": str,
    "object": Mapping,
    "array": list,
    "null": type(None),
}


def _is_type(value: Any, name: str) -> bool:
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES[name])


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    name = ref.rsplit("/", 1)[-1]
    resolved: Mapping[str, Any] = root["$defs"][name]
    return resolved


def validate(
    value: Any, schema: Mapping[str, Any] | None = None, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], str]]:
    """Validate ``value`` against ``schema`` (default: the recipe schema).

    Args:
        value: the parsed YAML/JSON document.
        schema: a (sub)schema of :data:`SCHEMA`; None for the whole recipe schema.
        path: key path of ``value`` inside the document (for messages).

    Returns:
        a list of (key path, message) pairs; empty when valid.
    """
    root = SCHEMA
    schema = _resolve(schema or SCHEMA, root)
    errors: list[tuple[tuple[str, ...], str]] = []
    where = ".".join(path) or "(top level)"
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        if not any(_is_type(value, t) for t in names):
            got = type(value).__name__ if value is not None else "null"
            errors.append((path, f"{where}: expected {' or '.join(names)}, got {got}"))
            return errors
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"])
        errors.append((path, f"{where}: {value!r} is not one of {allowed}"))
    if isinstance(value, str):
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append((path, f"{where}: {value!r} does not match {schema['pattern']}"))
        if len(value) < schema.get("minLength", 0):
            errors.append((path, f"{where}: must not be empty"))
    if _is_type(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append((path, f"{where}: {value} is below the minimum {schema['minimum']}"))
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            errors.append((path, f"{where}: {value} must be above {schema['exclusiveMinimum']}"))
        if "maximum" in schema and value > schema["maximum"]:
            errors.append((path, f"{where}: {value} is above the maximum {schema['maximum']}"))
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            errors.extend(validate(item, schema["items"], (*path, str(i))))
    if isinstance(value, Mapping):
        props = schema.get("properties", {})
        for key in schema.get("required", ()):
            if key not in value:
                errors.append((path, f"{where}: missing required field {key!r}"))
        names_schema = schema.get("propertyNames")
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            sub = (*path, str(key))
            if names_schema is not None and isinstance(key, str):
                errors.extend(
                    (p, m.replace(".".join(sub), ".".join(sub) + " (name)", 1))
                    for p, m in validate(key, names_schema, sub)
                )
            if not isinstance(key, str):
                errors.append((sub, f"{'.'.join(sub)}: keys must be strings"))
            elif key in props:
                errors.extend(validate(item, props[key], sub))
            elif extra is False:
                known = ", ".join(props) or "none"
                close = difflib.get_close_matches(key, list(props), n=1, cutoff=0.6)
                hint = f"did you mean {close[0]!r}? " if close else ""
                errors.append((sub, f"{'.'.join(sub)}: unknown field ({hint}known: {known})"))
            elif isinstance(extra, Mapping):
                errors.extend(validate(item, extra, sub))
    return errors
