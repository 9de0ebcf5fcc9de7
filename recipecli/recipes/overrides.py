"""One placement rule for model-config overrides, wherever they come from.

Sources, lowest first (each later one wins per key): the recipe's ``text_overrides``, the
``hf-overrides`` engine arg of ``engines.<engine>.args``, that of the hardware profile
(``hardware.<name>.args.<engine>``), then ``--set hf-overrides=JSON`` / ``--set
text_overrides.KEY=VALUE`` in command-line order. Every source is read the same way:

* ``text_overrides`` keys are text-model keys;
* an ``hf-overrides`` mapping may give text keys flat (``{"index_topk_freq": 8}``) or nested
  under the target's wrapper key (``{"text_config": {"index_topk_freq": 8}}``); on a wrapped
  target a flat key that belongs to the wrapper config itself (``architectures``, ``model_type``,
  ``auto_map``, or a key the wrapper has and its text config lacks, such as ``vision_config``)
  stays a wrapper key.

The merged text keys are then placed where the engine reads them:

* vLLM (v0.33.0 ``vllm/config/model.py`` ``ModelConfig.__post_init__``): flat keys go to
  ``vllm/transformers_utils/config.py`` ``get_config`` (``config.update``, the TOP-level config);
  a dict whose key names an existing sub-config is merged into it recursively
  (``ModelConfig._apply_dict_overrides`` / ``_update_nested``). So text keys of a wrapped target
  are nested under the wrapper path (``text_config``), wrapper keys stay flat — never both
  (docs/engines/vllm.md#hf-overrides).
* tokenspeed (lightseekorg/tokenspeed f4d8ec6e ``python/tokenspeed/runtime/utils/
  hf_transformers_utils.py`` ``get_config``): ``text_config.update(model_override_args)`` on the
  config ``get_hf_text_config`` returns (``text_config``, ``language_config`` or
  ``thinker_config[.text_config]``), for the target and for the draft alike
  (``runtime/engine/event_loop.py`` ``_load_model_config``). So text keys go flat; a wrapper key
  cannot be reached (docs/engines/tokenspeed.md#hf-overrides).
* SGLang (0.5.23, the PyPI wheel, ``python/sglang/srt/utils/hf_transformers/config.py``
  ``get_config``): ``--json-model-override-args`` is applied to the target's config AND to the
  EAGLE3 draft's (``configs/model_config.py`` ``ModelConfig.from_server_args`` passes the same
  JSON for both), one level deep: a dict value onto an existing sub-config is merged into it
  (``current.update``), any other key is ``setattr`` on the TOP-level config. So on a plain target
  text keys go flat (and reach the draft too); on a wrapped target only the nested form can reach
  the text model (merged where the wrapper's ``text_config`` is a config object, as Qwen3-VL's;
  MiniMax-M3's SGLang config keeps it a dict, which the override replaces), and it sets a
  ``text_config`` dict on the flat draft config, which ``utils/hf_transformers/common.py``
  ``get_hf_text_config`` then rejects at start-up
  (``assert hasattr(text_config, "num_attention_heads")``). No placement works for a wrapped
  target with a flat EAGLE3 draft: ``recipe.override_breaks_draft`` (error;
  docs/engines/sglang.md#json-model-override-args).

Findings (codes are a public interface): ``recipe.override_is_engine_flag`` (error: an engine flag
such as ``max_model_len`` inside the overrides, which no engine reads there),
``recipe.override_dropped`` (error: a key the engine would set where nothing reads it),
``recipe.override_breaks_draft`` (error, tokenspeed: a ``text_config`` key reaches the draft's
plain config and fails tokenspeed's start-up),
``recipe.override_unknown_key`` (error: a key the target's transformers config class does not
have), ``recipe.override_conflict`` (error: one key given flat and nested in one source),
``recipe.override_absent`` (warning: a key a remote-code config lacks), ``recipe.override_hits_draft``
(warning, tokenspeed), ``recipe.override_placed`` (info: a key written elsewhere than where it
is rendered).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import recipecli.recipes.engines as E
from recipecli import codes
from recipecli.engines import engine_spec
from recipecli.engines.spec import (
    TEXT_KEYS_NESTED,
    TEXT_KEYS_ON_TEXT_CONFIG,
    TEXT_KEYS_ONE_LEVEL,
    OverridePlacement,
)
from recipecli.findings import Finding

# Keys vLLM reads from the TOP-level config even on a wrapper (v0.33.0
# vllm/transformers_utils/model_arch_config_convertor.py get_architectures reads
# hf_config.architectures; get_config picks the config class by the top-level model_type).
WRAPPER_TOP_KEYS: frozenset[str] = frozenset({"architectures", "model_type", "auto_map"})

# Fields of transformers' PreTrainedConfig itself (transformers 5.24.0
# src/transformers/configuration_utils.py, the dataclass fields of PreTrainedConfig; torch_dtype is
# the old name of dtype). config.json omits them at their defaults, so their absence says nothing.
BASE_CONFIG_FIELDS: frozenset[str] = frozenset(
    {
        "model_type",
        "transformers_version",
        "architectures",
        "output_hidden_states",
        "output_attentions",
        "return_dict",
        "dtype",
        "torch_dtype",
        "chunk_size_feed_forward",
        "is_encoder_decoder",
        "id2label",
        "label2id",
        "problem_type",
        "tie_word_embeddings",
        "use_cache",
    }
)

# Wrapper keys: a dict under one of them on a target that has no such sub-config is not a
# text-config override (tokenspeed: get_hf_text_config looks for these attributes).
WRAPPER_KEYS: frozenset[str] = frozenset(
    {"text_config", "language_config", "thinker_config", "llm_config"}
)

#: Error codes of overrides the engine would not apply: ``--force`` renders them anyway.
FORCEABLE_CODES: frozenset[str] = frozenset(
    {
        "recipe.override_breaks_draft",
        "recipe.override_is_engine_flag",
        "recipe.override_dropped",
        "recipe.override_unknown_key",
        "recipe.override_conflict",
    }
)


@dataclass(frozen=True)
class OverrideSource:
    """One place that sets config overrides.

    Attributes:
        label: how the user wrote it, e.g. ``text_overrides``,
            ``engines.vllm.args.hf-overrides``, ``--set hf-overrides``.
        where: ``file:line`` (or the ``--set`` text) for messages.
        value: the mapping as written; None or False clears every earlier source (the flag's
            usual "false drops it").
        text_only: every key is a text-model key (``text_overrides``, ``--set text_overrides.K``).
        remove: keys this source drops from the earlier ones (``--set text_overrides.K=``).
    """

    label: str
    where: str
    value: Mapping[str, Any] | Literal[False] | None
    text_only: bool = False
    remove: tuple[str, ...] = ()


@dataclass(frozen=True)
class Placed:
    """The result of :func:`place_overrides`.

    Attributes:
        value: the ``--hf-overrides`` mapping for the engine (empty: render no flag).
        text: merged text-model keys -> values.
        top: merged wrapper (top-level) keys -> values.
        findings: errors, warnings and infos (see the module docstring).
    """

    value: dict[str, Any]
    text: dict[str, Any] = field(default_factory=dict)
    top: dict[str, Any] = field(default_factory=dict)
    findings: tuple[Finding, ...] = ()


def tokenspeed_text_path(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The key path of the config tokenspeed applies ``--hf-overrides`` to.

    Mirrors tokenspeed f4d8ec6e ``hf_transformers_utils.py`` ``get_hf_text_config``: ``text_config``
    when present, replaced by ``language_config`` when present, replaced by ``thinker_config``
    (its ``text_config`` when it has one); else the top-level config (``()``).
    """
    path: tuple[str, ...] = ()
    if isinstance(config.get("text_config"), Mapping):
        path = ("text_config",)
    if isinstance(config.get("language_config"), Mapping):
        path = ("language_config",)
    thinker = config.get("thinker_config")
    if isinstance(thinker, Mapping):
        path = (
            ("thinker_config", "text_config") if "text_config" in thinker else ("thinker_config",)
        )
    return path


def _nest(path: Sequence[str], value: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = dict(value)
    for key in reversed(path):
        out = {key: out}
    return out


def _merge_into(base: dict[str, Any], top: Mapping[str, Any]) -> None:
    for key, value in top.items():
        if isinstance(base.get(key), Mapping) and isinstance(value, Mapping):
            inner = dict(base[key])
            _merge_into(inner, value)
            base[key] = inner
        else:
            base[key] = value


def _split(
    source: OverrideSource,
    path: tuple[str, ...],
    config: Mapping[str, Any] | None,
    text_config: Mapping[str, Any] | None,
) -> tuple[list[tuple[str, Any, bool]], dict[str, Any], list[str]]:
    """(text items [(key, value, written flat)], wrapper part, conflicting keys) of a source."""
    value = dict(source.value or {})
    if source.text_only:
        return [(k, v, False) for k, v in value.items()], {}, []
    nested: dict[str, Any] = {}
    top: dict[str, Any] = {}
    if path and isinstance(value.get(path[0]), Mapping):
        node: Mapping[str, Any] = value.pop(path[0])
        prefix: list[str] = [path[0]]
        for key in path[1:]:
            rest = {k: v for k, v in node.items() if k != key}
            if rest:
                _merge_into(top, _nest(prefix, rest))
            inner = node.get(key)
            if not isinstance(inner, Mapping):
                node = {}
                break
            node, prefix = inner, [*prefix, key]
        nested = dict(node)
    items = [(k, v, False) for k, v in nested.items()]
    conflicts = [k for k in value if k in nested and value[k] != nested[k]]
    for key, item in value.items():
        if key in conflicts:
            continue
        on_wrapper = bool(path) and config is not None and text_config is not None
        if (
            on_wrapper
            and config is not None
            and text_config is not None
            and (key in WRAPPER_TOP_KEYS or (key in config and key not in text_config))
        ):
            top[key] = item
        elif key not in nested:
            items.append((key, item, True))
    return items, top, conflicts


@dataclass
class _Placing:
    """The state of one :func:`place_overrides` run: the target's text config and its path,
    the merged text and wrapper keys (with the source each came from) and the findings."""

    engine: str
    config: Mapping[str, Any] | None
    text_config: Mapping[str, Any] | None
    path: tuple[str, ...]
    force: bool
    findings: list[Finding] = field(default_factory=list)
    text: dict[str, Any] = field(default_factory=dict)
    top: dict[str, Any] = field(default_factory=dict)
    where_of: dict[str, OverrideSource] = field(default_factory=dict)

    @property
    def placement(self) -> OverridePlacement:
        """How the engine applies the overrides (``EngineSpec.overrides``)."""
        return engine_spec(self.engine).overrides

    @property
    def title(self) -> str:
        """The engine's display name, as messages write it (``vLLM``, ``SGLang``)."""
        return engine_spec(self.engine).title

    def add(self, code: str, severity: str, key: str, message: str, src: OverrideSource) -> None:
        """One finding about ``key`` from ``src`` (source: its place; the engine's rule)."""
        evidence: dict[str, Any] = {"key": key, "from": src.label}
        if src.where.startswith("--set ") and message.startswith(src.label + ": "):
            message = message[len(src.label) + 2 :]  # the --set text already says where
        self.findings.append(
            codes.finding(
                code,
                message,
                severity=severity,
                engine=self.engine,
                source=f"{src.where}; {self.placement.rule}",
                **evidence,
            )
        )


def place_overrides(
    engine: str,
    sources: Sequence[OverrideSource],
    config: Mapping[str, Any] | None,
    *,
    known: Collection[str] = (),
    force: bool = False,
) -> Placed:
    """Merge override sources and place them where ``engine`` reads them for this target.

    Args:
        engine: ``vllm``, ``tokenspeed`` or ``sglang``.
        sources: lowest first (see the module docstring).
        config: the target's ``config.json`` (None: unknown — keys are taken as text keys, flat,
            and only the engine-flag check runs).
        known: ``text_overrides_known_keys``: keys the model code reads although config.json
            lacks them (no absent / unknown-key finding).
        force: keep keys the engine would drop in the value (their errors stay in
            ``findings``).

    Returns:
        :class:`Placed`; ``value`` is ``{}`` when there is nothing to render.
    """
    from recipecli.checkpoint.textconfig import resolve_text_config

    resolved = resolve_text_config(config) if config is not None else None
    state = _Placing(
        engine,
        config,
        resolved.config if resolved is not None else None,
        resolved.path if resolved is not None else (),
        force,
    )
    for src in sources:
        _take_source(state, src)
    from recipecli.engines.datafiles import (
        text_config_fields,  # the transformers class's own fields
    )

    known = {*known, *text_config_fields(engine_spec(engine).pin.transformers, config)}
    for key in list(state.text):
        src = state.where_of[key]
        if _refuse_text_key(state, key, src, known):
            if not force:
                state.text.pop(key)
            continue
        _warn_text_key(state, key, src, known)
    for key in list(state.top):
        src = state.where_of["\0" + key]
        if key in E.ENGINE_FLAG_KEYS:
            _engine_flag_finding(state, key, src)
            if not force:
                state.top.pop(key)

    return _PLACE[state.placement.text_keys](state)


def _take_source(state: _Placing, src: OverrideSource) -> None:
    """Merge one source into ``state`` (a ``false``/``null`` source clears what came before)."""
    text, top, where_of, add, path = state.text, state.top, state.where_of, state.add, state.path
    config, placement = state.config, state.placement
    if src.value is None or src.value is False:
        text.clear()
        top.clear()
        where_of.clear()
        return
    for key in src.remove:
        text.pop(key, None)
        top.pop(key, None)
    items, wrapper_part, conflicts = _split(src, path, config, state.text_config)
    for key in conflicts:
        add(
            "recipe.override_conflict",
            "error",
            key,
            f"{src.label} gives {key} both flat and under {'.'.join(path)} with different "
            f"values: keep one",
            src,
        )
    for key, value, flat in items:
        text.pop(key, None)  # last wins, and the key moves to the end
        text[key] = value
        where_of[key] = src
        if flat and path and placement.nests_text_keys:
            add(
                "recipe.override_placed",
                "info",
                key,
                f"{src.label}: {key} is rendered under {'.'.join(path)}: {state.title} sets "
                f"flat keys on the {(config or {}).get('model_type', 'wrapper')} wrapper config, where "
                f"the text model does not read them",
                src,
            )
    flattened = placement.text_keys == TEXT_KEYS_ON_TEXT_CONFIG
    if flattened and path and not src.text_only and path[0] in src.value:
        add(
            "recipe.override_placed",
            "info",
            path[0],
            f"{src.label}: keys under {'.'.join(path)} are rendered flat: {state.title} applies "
            f"{placement.flag} to the text config itself",
            src,
        )
    for key, value in wrapper_part.items():
        top.pop(key, None)
        top[key] = value
        where_of["\0" + key] = src


def _engine_flag_finding(state: _Placing, key: str, src: OverrideSource) -> None:
    state.add(
        "recipe.override_is_engine_flag",
        "error",
        key,
        f"{src.label}: {key} is an engine flag, not a model-config field: the engine "
        f"ignores it inside --hf-overrides; set serve.{key} or the engine arg instead",
        src,
    )


def _refuse_text_key(
    state: _Placing, key: str, src: OverrideSource, known: Collection[str]
) -> bool:
    """An error for a merged text key the engine would drop or that breaks its draft (True:
    the key is left out of the value unless ``force``)."""
    config, text_config, add = state.config, state.text_config, state.add
    if key in E.ENGINE_FLAG_KEYS:
        _engine_flag_finding(state, key, src)
        return True
    placement = state.placement
    if placement.reaches_draft and key in WRAPPER_KEYS and config is not None:
        why = _WRAPPER_KEY_ON_DRAFT[placement.text_keys]
        add(
            "recipe.override_breaks_draft",
            "error",
            key,
            f"{src.label}: {why.format(title=state.title, flag=placement.flag, key=key)}; "
            f"give the text-config keys flat",
            src,
        )
        return True
    if (
        text_config is not None
        and key not in text_config
        and key not in known
        and key not in BASE_CONFIG_FIELDS
        and config is not None
        and "auto_map" not in config
    ):
        cls = config.get("architectures", ["the target's config"])
        add(
            "recipe.override_unknown_key",
            "error",
            key,
            f"{src.label}: {key} is not a field of the target's text config "
            f"(model_type {text_config.get('model_type', config.get('model_type'))!r}, "
            f"{cls[0] if isinstance(cls, list) and cls else cls}): no code reads it; "
            f"fix the name, or list it in text_overrides_known_keys if the model code "
            f"does read it",
            src,
        )
        return True
    return False


def _warn_text_key(state: _Placing, key: str, src: OverrideSource, known: Collection[str]) -> None:
    """Warnings for a merged text key that is rendered: absent from a remote-code config, or a
    size a flat-on-text-config engine applies to its draft too (a one-level engine warns about
    those once they are placed: :func:`_place_one_level`)."""
    text_config, path, add = state.text_config, state.path, state.add
    if (
        text_config is not None
        and key not in text_config
        and key not in known
        and key not in BASE_CONFIG_FIELDS
    ):
        inside = f" ({'.'.join(path)})" if path else ""
        add(
            "recipe.override_absent",
            "warning",
            key,
            f"{src.label}: {key} is not in the target's text config{inside} (the model "
            f"code may still read it: if it does, list it in text_overrides_known_keys)",
            src,
        )
    placement = state.placement
    flattened = placement.text_keys == TEXT_KEYS_ON_TEXT_CONFIG
    if flattened and key in placement.draft_shared_keys:
        add(
            "recipe.override_hits_draft",
            "warning",
            key,
            f"{src.label}: {state.title} applies {placement.flag} to the draft config too: "
            f"overriding {key} breaks the EAGLE3 draft",
            src,
        )


def _place_nested(state: _Placing) -> Placed:
    """:data:`~recipecli.engines.spec.TEXT_KEYS_NESTED` (vLLM): wrapper keys flat, text keys nested under the
    wrapped target's text-config path (flat on a plain target)."""
    value: dict[str, Any] = dict(state.top)
    if state.text:
        _merge_into(value, _nest(state.path, state.text))
    return Placed(value, state.text, state.top, tuple(state.findings))


def _place_on_text_config(state: _Placing) -> Placed:
    """:data:`~recipecli.engines.spec.TEXT_KEYS_ON_TEXT_CONFIG` (tokenspeed): flat, on the config
    ``get_hf_text_config`` returns; wrapper keys cannot be reached (``recipe.override_dropped``)."""
    text, top, where_of, add = state.text, state.top, state.where_of, state.add
    config, path, force = state.config, state.path, state.force
    title, flag = state.title, state.placement.flag
    ts_path = tokenspeed_text_path(config) if config is not None else path
    value = dict(text)
    if config is not None and ts_path != path and text:
        src = where_of[next(iter(text))]
        add(
            "recipe.override_dropped",
            "error",
            next(iter(text)),
            f"{src.label}: {title} applies {flag} to "
            f"{'.'.join(ts_path) or 'the top-level config'}, but this target's text config is "
            f"{'.'.join(path) or 'the top-level config'}: the overrides would not reach it",
            src,
        )
        if not force:
            value = {}
    wrapper_name = (config or {}).get("model_type", "target's")
    for key, item in top.items():
        src = where_of["\0" + key]
        add(
            "recipe.override_dropped",
            "error",
            key,
            f"{src.label}: {key} belongs to the {wrapper_name} wrapper config, which {title}'s "
            f"{flag} cannot reach (it updates "
            f"{'.'.join(ts_path) or 'the text config'} only)",
            src,
        )
        if force:
            value[key] = item
    return Placed(value, text, top, tuple(state.findings))


def _place_one_level(state: _Placing) -> Placed:
    """:data:`~recipecli.engines.spec.TEXT_KEYS_ONE_LEVEL` (SGLang; module docstring): flat on a plain target;
    nothing that works on a wrapped one (``recipe.override_breaks_draft``; with ``force`` the
    nested form, which reaches the target and breaks the draft)."""
    text, top, path, config = state.text, state.top, state.path, state.config
    where_of, add, force, findings = state.where_of, state.add, state.force, state.findings
    title, flag = state.title, state.placement.flag
    draft_shared = state.placement.draft_shared_keys
    value: dict[str, Any] = {}
    if path and text:
        key = next(iter(text))
        src = where_of[key]
        wrapper = (config or {}).get("model_type", "wrapper")
        add(
            "recipe.override_breaks_draft",
            "error",
            key,
            f"{src.label}: no {flag} placement works for this pair on "
            f"{title}: the {wrapper} target reads {', '.join(text)} under {'.'.join(path)}, "
            f"and {title} applies the same JSON to the flat EAGLE3 draft config: nested, it sets "
            f"a {path[0]} dict there and get_hf_text_config fails at start-up; flat, the keys "
            f"land on the {wrapper} wrapper config, which the text model does not read",
            src,
        )
        if force:
            value = _nest(path, text)
    else:
        value = dict(text)
        for key in text:
            if key in draft_shared:
                add(
                    "recipe.override_hits_draft",
                    "warning",
                    key,
                    f"{where_of[key].label}: {title} applies {flag} to the "
                    f"draft config too: overriding {key} changes the EAGLE3 draft as well",
                    where_of[key],
                )
    for key, item in top.items():
        src = where_of["\0" + key]
        add(
            "recipe.override_hits_draft",
            "warning",
            key,
            f"{src.label}: {key} is set on the top-level config of the target and of the "
            f"EAGLE3 draft alike ({title} applies {flag} to both)",
            src,
        )
        value[key] = item
    return Placed(value, text, top, tuple(findings))


# engine placement (engines.OverridePlacement.text_keys) -> how the merged keys are placed
_PLACE = {
    TEXT_KEYS_NESTED: _place_nested,
    TEXT_KEYS_ON_TEXT_CONFIG: _place_on_text_config,
    TEXT_KEYS_ONE_LEVEL: _place_one_level,
}

# placement of an engine that applies the overrides to the draft too -> why a wrapper key
# (text_config, ...) on a plain target breaks the draft: the engine's get_hf_text_config then
# fails at start-up. One level deep (SGLang 0.5.23 utils/hf_transformers/config.py get_config,
# utils/hf_transformers/common.py get_hf_text_config asserts num_attention_heads); flat on the
# text config (tokenspeed f4d8ec6e hf_transformers_utils.py get_config / get_hf_text_config).
_WRAPPER_KEY_ON_DRAFT: dict[str, str] = {
    TEXT_KEYS_ONE_LEVEL: "{title} applies {flag} to the draft config too: on this plain "
    "target a {key} key sets a {key} dict on both configs, and get_hf_text_config then fails at "
    "start-up (no num_attention_heads)",
    TEXT_KEYS_ON_TEXT_CONFIG: "{title} applies {flag} to the draft config too, flat: a {key} "
    "key sets that attribute on the draft's LlamaConfig, and {title}'s get_hf_text_config then "
    "fails at startup ('text_config must define num_attention_heads')",
}
