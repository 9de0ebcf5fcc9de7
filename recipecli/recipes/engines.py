"""Engine data tables used to render and lint recipes: no if-chains per engine, only rows.

Every row cites where the engine rule comes from (``../shared/reference/engine-facts.md`` §4 for
vLLM, §5 for tokenspeed, and the two seed PRs).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

ENGINES: tuple[str, ...] = ("vllm", "tokenspeed")
VENDORS: tuple[str, ...] = ("amd", "nvidia")
WHATS: tuple[str, ...] = ("serve", "bench", "eval")

# serve field -> (JSON-schema type, {engine: long flag}). Same meaning on both engines
# (engine-facts §4 `vllm serve` flags; §5 "Flags used by recipes").
SERVE_FIELDS: dict[str, tuple[str, dict[str, str]]] = {
    "tensor_parallel_size": (
        "integer",
        {"vllm": "--tensor-parallel-size", "tokenspeed": "--tensor-parallel-size"},
    ),
    "max_model_len": ("integer", {"vllm": "--max-model-len", "tokenspeed": "--max-model-len"}),
    "max_num_seqs": ("integer", {"vllm": "--max-num-seqs", "tokenspeed": "--max-num-seqs"}),
    "gpu_memory_utilization": (
        "number",
        {"vllm": "--gpu-memory-utilization", "tokenspeed": "--gpu-memory-utilization"},
    ),
    "kv_cache_dtype": ("string", {"vllm": "--kv-cache-dtype", "tokenspeed": "--kv-cache-dtype"}),
    "block_size": ("integer", {"vllm": "--block-size", "tokenspeed": "--block-size"}),
    "trust_remote_code": (
        "boolean",
        {"vllm": "--trust-remote-code", "tokenspeed": "--trust-remote-code"},
    ),
    "enforce_eager": ("boolean", {"vllm": "--enforce-eager", "tokenspeed": "--enforce-eager"}),
    "served_model_name": ("string", {"vllm": "--served-model-name"}),
    "host": ("string", {"vllm": "--host", "tokenspeed": "--host"}),
    "port": ("integer", {"vllm": "--port", "tokenspeed": "--port"}),
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
}

# recipe speculative.method -> tokenspeed --speculative-algorithm (engine-facts §5); vLLM takes
# the method verbatim inside --speculative-config (§4).
TOKENSPEED_ALGORITHM: dict[str, str] = {"eagle3": "EAGLE3"}

# Flag that carries the target's text-config overrides, and whether it nests under the wrapper
# key: vLLM merges a dict under an existing sub-config key recursively and puts flat keys on the
# OUTER config (a silent no-op on wrappers: §4, vLLM PR #25727, recipes PR #621); tokenspeed
# applies --hf-overrides to the TEXT config directly, flat (§5).
OVERRIDES_FLAG: dict[str, tuple[str, bool]] = {
    "vllm": ("--hf-overrides", True),
    "tokenspeed": ("--hf-overrides", False),
}

# Keys that are engine flags, not model-config fields: placed in --hf-overrides they are ignored
# (§4, docker/model-runner #912). text_overrides holding one is an error.
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

# lm-eval --model type per endpoint (§4, lm-eval #3125: mixing them -> "Field required: messages").
LM_EVAL_MODEL_TYPE: dict[str, str] = {
    "/v1/chat/completions": "local-chat-completions",
    "/v1/completions": "local-completions",
}

# Hosts a server binds to that a client cannot connect to as such.
WILDCARD_HOSTS: frozenset[str] = frozenset({"0.0.0.0", "::", "[::]", ""})
CLIENT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def _tokenspeed_spec(method: str, draft: str, n: int, extra: Mapping[str, Any]) -> list:
    """tokenspeed EAGLE3 flags (engine-facts §5): topk must be 1, draft tokens = steps + 1."""
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
    """vLLM --speculative-config (engine-facts §4): always names `method` (else vLLM guesses
    from the draft path), never `tensor_parallel_size`; extra keys (e.g.
    `draft_tensor_parallel_size`, `attention_backend`) follow in recipe order."""
    config: dict[str, Any] = {"method": method, "model": draft, "num_speculative_tokens": n}
    config.update(extra)
    return [("--speculative-config", config)]


# engine -> builder(method, draft, num_speculative_tokens, extra config keys) -> [(flag, value)]
SPECULATIVE_FLAGS: dict[str, Callable[[str, str, int, Mapping[str, Any]], list]] = {
    "vllm": _vllm_spec,
    "tokenspeed": _tokenspeed_spec,
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
        "seed 000 (MI355X) exports HIP_VISIBLE_DEVICES",
    ),
    EnvRule(
        "ROCR_VISIBLE_DEVICES",
        "amd",
        "use HIP_VISIBLE_DEVICES (as seed 000 does)",
        "seed 000 (MI355X) exports HIP_VISIBLE_DEVICES",
    ),
    EnvRule("HIP_VISIBLE_DEVICES", "nvidia", "use CUDA_VISIBLE_DEVICES on NVIDIA", "CUDA"),
    EnvRule("ROCR_VISIBLE_DEVICES", "nvidia", "ROCm-only; use CUDA_VISIBLE_DEVICES", "CUDA"),
    EnvRule("VLLM_ROCM_*", "nvidia", "ROCm-only vLLM setting; remove it on NVIDIA", "vllm/envs.py"),
    EnvRule("HSA_*", "nvidia", "ROCm runtime setting; remove it on NVIDIA", "ROCm"),
)

# Env prefixes an engine reads; names with the prefix are checked against the engine's catalog.
ENGINE_ENV_PREFIX: dict[str, str] = {"vllm": "VLLM_"}
