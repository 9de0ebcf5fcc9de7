"""Engine data tables used to render and lint recipes: no if-chains per engine, only rows.

Every row cites where the engine rule comes from: the engine's repository, version or commit,
file and function (vLLM v0.33.0; lightseekorg/tokenspeed f4d8ec6e; sgl-project/sglang 0.5.23, the
PyPI wheel, paths under python/sglang/srt/), a public PR or issue, or a section of
docs/engines/vllm.md / docs/engines/tokenspeed.md / docs/engines/sglang.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

# The engine names are the engine-models registry's (one list; re-exported for the recipe
# modules and commands that import it from here). Every table below is keyed by them.
from recipecli.engines import ENGINES

VENDORS: tuple[str, ...] = ("amd", "nvidia")
WHATS: tuple[str, ...] = ("serve", "bench", "eval")

# serve field -> (JSON-schema type, {engine: long flag}). Same meaning on both engines (the flags
# are in recipecli/data/catalogs: vLLM's built from the v0.33.0 wheel's vllm/engine/arg_utils.py,
# tokenspeed's from f4d8ec6e python/tokenspeed/runtime/utils/server_args.py ServerArgs.add_cli_args,
# SGLang's from 0.5.23 server_args.py ServerArgs.add_cli_args by scripts/build_sglang_flag_catalog.py).
# SGLang names: tp_size (--tp-size; --tensor-parallel-size is its alias) in arg_groups/fields/
# parallel.py; context_length, kv_cache_dtype, trust_remote_code in fields/model.py;
# max_running_requests, mem_fraction_static (weights + KV pool, SGLang's counterpart of vLLM's
# fraction) and page_size (tokens per KV page) in fields/schedule.py; host, port,
# served_model_name in fields/serving.py. enforce_eager has no one SGLang flag (its
# --disable-cuda-graph is deprecated for two --cuda-graph-backend-{decode,prefill}=disabled).
SERVE_FIELDS: dict[str, tuple[str, dict[str, str]]] = {
    "tensor_parallel_size": (
        "integer",
        {
            "vllm": "--tensor-parallel-size",
            "tokenspeed": "--tensor-parallel-size",
            "sglang": "--tp-size",
        },
    ),
    "max_model_len": (
        "integer",
        {"vllm": "--max-model-len", "tokenspeed": "--max-model-len", "sglang": "--context-length"},
    ),
    "max_num_seqs": (
        "integer",
        {
            "vllm": "--max-num-seqs",
            "tokenspeed": "--max-num-seqs",
            "sglang": "--max-running-requests",
        },
    ),
    "gpu_memory_utilization": (
        "number",
        {
            "vllm": "--gpu-memory-utilization",
            "tokenspeed": "--gpu-memory-utilization",
            "sglang": "--mem-fraction-static",
        },
    ),
    "kv_cache_dtype": (
        "string",
        {
            "vllm": "--kv-cache-dtype",
            "tokenspeed": "--kv-cache-dtype",
            "sglang": "--kv-cache-dtype",
        },
    ),
    "block_size": (
        "integer",
        {"vllm": "--block-size", "tokenspeed": "--block-size", "sglang": "--page-size"},
    ),
    "trust_remote_code": (
        "boolean",
        {
            "vllm": "--trust-remote-code",
            "tokenspeed": "--trust-remote-code",
            "sglang": "--trust-remote-code",
        },
    ),
    "enforce_eager": ("boolean", {"vllm": "--enforce-eager", "tokenspeed": "--enforce-eager"}),
    "served_model_name": (
        "string",
        {"vllm": "--served-model-name", "sglang": "--served-model-name"},
    ),
    "host": ("string", {"vllm": "--host", "tokenspeed": "--host", "sglang": "--host"}),
    "port": ("integer", {"vllm": "--port", "tokenspeed": "--port", "sglang": "--port"}),
}

# serve field -> extra JSON-schema keywords (ranges), checked by the schema (recipe files, lint)
# and by `--set`. Sizes and counts are positive (a TP size, length or batch of 0 or less is
# refused by both engines' argument checks); a port is a TCP port; the memory fraction is in (0, 1].
SERVE_LIMITS: dict[str, dict[str, Any]] = {
    "tensor_parallel_size": {"minimum": 1},
    "max_model_len": {"minimum": 1},
    "max_num_seqs": {"minimum": 1},
    "gpu_memory_utilization": {"exclusiveMinimum": 0, "maximum": 1},
    "kv_cache_dtype": {"minLength": 1},
    "block_size": {"minimum": 1},
    "served_model_name": {"minLength": 1},
    "host": {"minLength": 1},
    "port": {"minimum": 1, "maximum": 65535},
}


# engine -> {flag: serve field}: engine args that set a serve field's flag get its checks.
SERVE_FLAG_FIELDS: dict[str, dict[str, str]] = {
    engine: {flags[engine]: name for name, (_, flags) in SERVE_FIELDS.items() if engine in flags}
    for engine in ENGINES
}


def serve_field_schema(name: str) -> dict[str, Any]:
    """JSON schema of serve field ``name``: its type plus :data:`SERVE_LIMITS`."""
    return {"type": SERVE_FIELDS[name][0], **SERVE_LIMITS.get(name, {})}


# How each engine is launched and names its speculative flags.
SERVE_COMMAND: dict[str, tuple[str, ...]] = {
    "vllm": ("vllm", "serve"),
    "tokenspeed": ("tokenspeed", "serve"),
    # SGLang 0.5.23 sglang/launch_server.py: `python -m sglang.launch_server` parses
    # ServerArgs.add_cli_args; the model is the required --model-path (fields/model.py model_path
    # has no default, so add_cli_args_from_dataclass makes it required), not a positional.
    "sglang": ("python", "-m", "sglang.launch_server"),
}

# engine -> the flag that names the target when it is not a positional after SERVE_COMMAND.
SERVE_MODEL_FLAG: dict[str, str] = {"sglang": "--model-path"}

# serve field -> {engine: {recipe value: engine spelling}}: values a recipe writes the vLLM way
# that another engine spells differently. SGLang 0.5.23 --kv-cache-dtype (fields/model.py
# kv_cache_dtype choices: auto, fp8_e5m2, fp8_e4m3, mxfp8, bf16, bfloat16, nvfp4, fp4_mx_block16)
# has no plain "fp8"; vLLM's "fp8" is its fp8_e4m3 (v0.33.0 vllm/config/cache.py CacheDType,
# "fp8" = "fp8_e4m3" on CUDA).
SERVE_VALUE_SPELLING: dict[str, dict[str, dict[Any, Any]]] = {
    "kv_cache_dtype": {"sglang": {"fp8": "fp8_e4m3"}},
}

# recipe speculative.method -> tokenspeed --speculative-algorithm (tokenspeed f4d8ec6e
# server_args.py: choices EAGLE3, MTP, DFLASH, DSPARK); vLLM takes the method verbatim inside
# --speculative-config (v0.33.0 vllm/config/speculative.py SpeculativeConfig.method).
TOKENSPEED_ALGORITHM: dict[str, str] = {"eagle3": "EAGLE3"}

# Keys that are engine flags, not model-config fields: placed in --hf-overrides they are set on
# the HF config, where no engine reads them (docker/model-runner#912; docs/engines/vllm.md#hf-overrides).
# An override source holding one is an error (recipecli/recipes/overrides.py).
ENGINE_FLAG_KEYS: frozenset[str] = frozenset(
    {
        "max_model_len",
        "tensor_parallel_size",
        "pipeline_parallel_size",
        "data_parallel_size",
        "max_num_seqs",
        "max_num_batched_tokens",
        "gpu_memory_utilization",
        "kv_cache_dtype",
        "block_size",
        "enforce_eager",
        "trust_remote_code",
        "quantization",
        "dtype",
        "served_model_name",
        "port",
        "host",
        "speculative_config",
        "attention_backend",
        "moe_backend",
        "enable_prefix_caching",
        "max_prefill_tokens",
        "chunked_prefill_size",
        "attn_tp_size",
        "ep_size",
        "enable_expert_parallel",
    }
)

# tokenspeed: --hf-overrides also reaches the draft config (lightseekorg/tokenspeed f4d8ec6e
# runtime/engine/event_loop.py _load_model_config passes server_args.hf_overrides to the draft's
# ModelConfig too); overriding these target sizes rewrites the EAGLE3 draft's as well
# (docs/engines/tokenspeed.md#hf-overrides).
TOKENSPEED_DRAFT_SHARED_KEYS: frozenset[str] = frozenset(
    {"num_hidden_layers", "vocab_size", "hidden_size", "max_position_embeddings"}
)

# SGLang: flat keys are set on the EAGLE3 draft's config as well (0.5.23
# configs/model_config.py ModelConfig.from_server_args -> utils/hf_transformers/config.py
# get_config with is_draft_model=True); these change the draft's geometry or positions
# (models/llama_eagle3.py LlamaModel.__init__ builds num_hidden_layers layers of hidden_size from
# them; configs/model_config.py _derive_context_length reads max_position_embeddings / rope).
SGLANG_DRAFT_SHARED_KEYS: frozenset[str] = frozenset(
    {
        "num_hidden_layers",
        "vocab_size",
        "hidden_size",
        "intermediate_size",
        "num_attention_heads",
        "num_key_value_heads",
        "head_dim",
        "max_position_embeddings",
        "rope_scaling",
        "rope_parameters",
        "rope_theta",
    }
)

# Where an engine puts the merged text-model keys of the config overrides
# (OverridePlacement.text_keys); recipecli/recipes/overrides.py holds one placement per value.
#: Flat keys are set on the TOP-level config and a dict whose key names an existing sub-config is
#: merged into it recursively, so a wrapped target's text keys are nested under its wrapper path
#: (``text_config``) and its wrapper keys stay flat.
TEXT_KEYS_NESTED = "nested-under-wrapper"
#: Every key is set flat on the config the engine takes as the text config (``text_config.update``
#: on what its ``get_hf_text_config`` returns); a wrapper key cannot be reached.
TEXT_KEYS_ON_TEXT_CONFIG = "flat-on-text-config"
#: One level deep on the TOP-level config: a dict onto an existing sub-config is merged into it,
#: any other key is set as an attribute; nothing reaches the text config of a wrapped target
#: without also setting a sub-config dict on the (flat) draft.
TEXT_KEYS_ONE_LEVEL = "one-level-on-top"


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
    text_keys: str
    reaches_draft: bool
    draft_shared_keys: frozenset[str]
    rule: str

    @property
    def nests_text_keys(self) -> bool:
        """A wrapped target's text keys are rendered nested under its wrapper path."""
        return self.text_keys == TEXT_KEYS_NESTED


# engine -> how it applies config overrides: recipecli/recipes/overrides.py places them by these
# rows (docs/engines/vllm.md#hf-overrides, docs/engines/tokenspeed.md#hf-overrides,
# docs/engines/sglang.md#json-model-override-args; vLLM PR #25727).
OVERRIDE_PLACEMENT: dict[str, OverridePlacement] = {
    # vLLM v0.33.0 vllm/config/model.py ModelConfig.__post_init__: flat keys go to
    # vllm/transformers_utils/config.py get_config (config.update, the TOP-level config); a dict
    # whose key names an existing sub-config is merged into it recursively
    # (ModelConfig._apply_dict_overrides / _update_nested). The draft has its own config.
    "vllm": OverridePlacement(
        "--hf-overrides",
        TEXT_KEYS_NESTED,
        reaches_draft=False,
        draft_shared_keys=frozenset(),
        rule="vllm v0.33.0 vllm/config/model.py ModelConfig._apply_dict_overrides, "
        "vllm/transformers_utils/config.py get_config; docs/engines/vllm.md#hf-overrides",
    ),
    # lightseekorg/tokenspeed f4d8ec6e python/tokenspeed/runtime/utils/hf_transformers_utils.py
    # get_config: text_config.update(model_override_args) on the config get_hf_text_config
    # returns, for the target and for the draft alike (runtime/engine/event_loop.py
    # _load_model_config).
    "tokenspeed": OverridePlacement(
        "--hf-overrides",
        TEXT_KEYS_ON_TEXT_CONFIG,
        reaches_draft=True,
        draft_shared_keys=TOKENSPEED_DRAFT_SHARED_KEYS,
        rule="lightseekorg/tokenspeed f4d8ec6e "
        "python/tokenspeed/runtime/utils/hf_transformers_utils.py get_config; "
        "docs/engines/tokenspeed.md#hf-overrides",
    ),
    # SGLang 0.5.23 fields/model.py json_model_override_args (JSON text), applied one level deep
    # to the target's AND the draft's config (utils/hf_transformers/config.py get_config;
    # configs/model_config.py ModelConfig.from_server_args passes the same JSON for both).
    "sglang": OverridePlacement(
        "--json-model-override-args",
        TEXT_KEYS_ONE_LEVEL,
        reaches_draft=True,
        draft_shared_keys=SGLANG_DRAFT_SHARED_KEYS,
        rule="sgl-project/sglang 0.5.23 python/sglang/srt/utils/hf_transformers/config.py "
        "get_config, configs/model_config.py ModelConfig.from_server_args; "
        "docs/engines/sglang.md#json-model-override-args",
    ),
}

# engine -> (flag that carries the target's config overrides, whether a wrapped target's text
# keys nest under the wrapper key): the flag and nesting of OVERRIDE_PLACEMENT, kept under its
# older name.
OVERRIDES_FLAG: dict[str, tuple[str, bool]] = {
    engine: (p.flag, p.nests_text_keys) for engine, p in OVERRIDE_PLACEMENT.items()
}


@dataclass(frozen=True)
class SpeculativeConfigRules:
    """An engine whose speculative settings are one JSON-mapping flag, and what it refuses in it.

    Attributes:
        flag: the serve flag holding the mapping.
        required: keys the mapping must name.
        refused: key the engine rejects -> the key to use instead.
    """

    flag: str
    required: tuple[str, ...]
    refused: Mapping[str, str]


# engine -> the checks on its speculative JSON mapping (engines whose speculative settings are
# separate flags have no row). vLLM v0.33.0 vllm/config/speculative.py: --speculative-config is
# a SpeculativeConfig; SpeculativeConfig._verify_args rejects tensor_parallel_size (the draft's
# is draft_tensor_parallel_size) and SpeculativeConfig.__post_init__ guesses `method` from the
# draft path when it is missing, so a recipe names it.
SPECULATIVE_CONFIG_RULES: dict[str, SpeculativeConfigRules] = {
    "vllm": SpeculativeConfigRules(
        "--speculative-config",
        required=("method",),
        refused={"tensor_parallel_size": "draft_tensor_parallel_size"},
    ),
}

# engine -> the `recipecli render --format` of the YAML file its serve command reads with
# --config: vLLM v0.33.0 vllm/utils/argparse_utils.py FlexibleArgumentParser.load_config_file
# (`vllm serve --config FILE`; recipecli/recipes/text.py vllm_config_text writes it).
SERVE_CONFIG_FILE_FORMAT: dict[str, str] = {"vllm": "vllm-config"}

# lm-eval --model type per endpoint (EleutherAI/lm-evaluation-harness#3125: mixing them ->
# "Field required: messages").
LM_EVAL_MODEL_TYPE: dict[str, str] = {
    "/v1/chat/completions": "local-chat-completions",
    "/v1/completions": "local-completions",
}

# Hosts a server binds to that a client cannot connect to as such.
WILDCARD_HOSTS: frozenset[str] = frozenset({"0.0.0.0", "::", "[::]", ""})
CLIENT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
# engine -> the port its server listens on when the command sets none (SGLang 0.5.23
# arg_groups/fields/serving.py port = 30000).
ENGINE_DEFAULT_PORT: dict[str, int] = {"sglang": 30000}


def _tokenspeed_spec(method: str, draft: str, n: int, extra: Mapping[str, Any]) -> list:
    """tokenspeed EAGLE3 flags (tokenspeed f4d8ec6e server_args.py: --speculative-eagle-topk has
    choices=[1]; --speculative-num-draft-tokens defaults to num_steps + 1 in
    resolve_config_aliases; docs/engines/tokenspeed.md#speculative-flags)."""
    algo = TOKENSPEED_ALGORITHM.get(method)
    if algo is None:
        from recipecli.errors import RecipeError

        raise RecipeError(
            f"speculative.method {method!r} has no tokenspeed algorithm "
            f"(known: {', '.join(TOKENSPEED_ALGORITHM)})"
        )
    return [
        ("--speculative-algorithm", algo),
        ("--speculative-draft-model-path", draft),
        ("--speculative-num-steps", n),
        ("--speculative-eagle-topk", 1),
        ("--speculative-num-draft-tokens", n + 1),
    ]


def _vllm_spec(method: str, draft: str, n: int, extra: Mapping[str, Any]) -> list:
    """vLLM --speculative-config (v0.33.0 vllm/config/speculative.py): always names `method`
    (SpeculativeConfig.__post_init__ guesses it from the draft path otherwise), never
    `tensor_parallel_size` (SpeculativeConfig._verify_args rejects it); extra keys (e.g.
    `draft_tensor_parallel_size`, `attention_backend`) follow in recipe order."""
    config: dict[str, Any] = {"method": method, "model": draft, "num_speculative_tokens": n}
    config.update(extra)
    return [("--speculative-config", config)]


# recipe speculative.method -> SGLang --speculative-algorithm (SGLang 0.5.23 fields/spec.py
# speculative_algorithm: builtins EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM, DFLASH, DSPARK, UNO).
SGLANG_ALGORITHM: dict[str, str] = {"eagle3": "EAGLE3"}


def _sglang_spec(method: str, draft: str, n: int, extra: Mapping[str, Any]) -> list:
    """SGLang EAGLE3 flags: a chain of ``n`` draft steps, top-k 1, ``n + 1`` draft tokens.

    SGLang 0.5.23 arg_groups/speculative_hook.py ``_handle_eagle_family``: with
    ``--speculative-num-steps`` unset it asserts top-k and draft tokens are unset too and picks all
    three itself (``_auto_choose_speculative_params``); with steps given, top-k must be given
    (it is compared with ``> 1``); with top-k 1, draft tokens are reset to steps + 1. So all three
    are rendered, consistently (docs/engines/sglang.md). A wider tree (top-k > 1) is set with the
    engine args ``speculative-eagle-topk`` / ``speculative-num-draft-tokens``.

    Raises:
        RecipeError: a method with no SGLang algorithm.
    """
    algo = SGLANG_ALGORITHM.get(method)
    if algo is None:
        from recipecli.errors import RecipeError

        raise RecipeError(
            f"speculative.method {method!r} has no SGLang algorithm "
            f"(known: {', '.join(SGLANG_ALGORITHM)})"
        )
    return [
        ("--speculative-algorithm", algo),
        ("--speculative-draft-model-path", draft),
        ("--speculative-num-steps", n),
        ("--speculative-eagle-topk", 1),
        ("--speculative-num-draft-tokens", n + 1),
    ]


# engine -> builder(method, draft, num_speculative_tokens, extra config keys) -> [(flag, value)]
SPECULATIVE_FLAGS: dict[str, Callable[[str, str, int, Mapping[str, Any]], list]] = {
    "vllm": _vllm_spec,
    "tokenspeed": _tokenspeed_spec,
    "sglang": _sglang_spec,
}


@dataclass(frozen=True)
class EnvRule:
    """An env var that is wrong for a vendor, and what to use instead.

    Attributes:
        prefix: env var name, or a prefix when it ends with ``*``.
        vendor: the vendor on which the var is a mistake.
        message: what to do instead.
        source: where the rule comes from.
    """

    prefix: str
    vendor: str
    message: str
    source: str

    def matches(self, name: str) -> bool:
        """True when ``name`` is this var (or starts with the prefix before ``*``)."""
        if self.prefix.endswith("*"):
            return name.startswith(self.prefix[:-1])
        return name == self.prefix


ENV_RULES: tuple[EnvRule, ...] = (
    EnvRule(
        "CUDA_VISIBLE_DEVICES",
        "amd",
        "use HIP_VISIBLE_DEVICES on ROCm",
        "vLLM PR #47391 (its MI355X command exports HIP_VISIBLE_DEVICES)",
    ),
    EnvRule(
        "ROCR_VISIBLE_DEVICES",
        "amd",
        "use HIP_VISIBLE_DEVICES (as vLLM PR #47391's MI355X command does)",
        "vLLM PR #47391 (its MI355X command exports HIP_VISIBLE_DEVICES)",
    ),
    EnvRule("HIP_VISIBLE_DEVICES", "nvidia", "use CUDA_VISIBLE_DEVICES on NVIDIA", "CUDA"),
    EnvRule("ROCR_VISIBLE_DEVICES", "nvidia", "ROCm-only; use CUDA_VISIBLE_DEVICES", "CUDA"),
    EnvRule("VLLM_ROCM_*", "nvidia", "ROCm-only vLLM setting; remove it on NVIDIA", "vllm/envs.py"),
    EnvRule("HSA_*", "nvidia", "ROCm runtime setting; remove it on NVIDIA", "ROCm"),
)

# Env prefixes an engine reads; names with the prefix are checked against the engine's catalog.
ENGINE_ENV_PREFIX: dict[str, str] = {"vllm": "VLLM_"}
