"""Engine-independent facts recipes are rendered and linted by, and the per-engine traits as the
recipe steps read them from the engine registry (:func:`recipecli.engines.engine_spec`).

Nothing here is keyed by an engine name: an engine's serve command, flags, value spellings,
override placement, speculative flags and lint rules are fields of its
:class:`~recipecli.engines.spec.EngineSpec` (``recipecli/engines/<engine>/spec.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from recipecli.engines import BENCH_CLIENT, engine_names, engine_spec
from recipecli.engines.catalog import Catalog, load_catalog

VENDORS: tuple[str, ...] = ("amd", "nvidia")
WHATS: tuple[str, ...] = ("serve", "bench", "eval")
#: The registered engines, in display order, when this module was imported.
ENGINES: tuple[str, ...] = engine_names()

# serve field -> JSON-schema type. The same meaning on every engine; each engine's spec maps
# the field to its own flag (EngineSpec.serve_flags), and a field an engine has no flag for is
# refused when rendering for it.
SERVE_FIELD_TYPES: dict[str, str] = {
    "tensor_parallel_size": "integer",
    "max_model_len": "integer",
    "max_num_seqs": "integer",
    "gpu_memory_utilization": "number",
    "kv_cache_dtype": "string",
    "block_size": "integer",
    "trust_remote_code": "boolean",
    "enforce_eager": "boolean",
    "served_model_name": "string",
    "host": "string",
    "port": "integer",
    # layouts beyond TP (issues #25, #26): each engine's flag, or a reason it has none
    # (EngineSpec.serve_field_reasons: refused, not dropped)
    "pipeline_parallel_size": "integer",
    "data_parallel_size": "integer",
    "enable_expert_parallel": "boolean",
    "enable_dp_attention": "boolean",
}

#: serve fields that shape the deployment's layout: one an engine has no flag for is refused
#: with the engine's reason (:func:`serve_field_reason`) instead of being left out.
LAYOUT_FIELDS: tuple[str, ...] = (
    "pipeline_parallel_size",
    "data_parallel_size",
    "enable_expert_parallel",
    "enable_dp_attention",
)

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
    "pipeline_parallel_size": {"minimum": 1},
    "data_parallel_size": {"minimum": 1},
}


def serve_field_schema(name: str) -> dict[str, Any]:
    """JSON schema of serve field ``name``: its type plus :data:`SERVE_LIMITS`."""
    return {"type": SERVE_FIELD_TYPES[name], **SERVE_LIMITS.get(name, {})}


def serve_flag(engine: str, field: str) -> str | None:
    """``engine``'s long flag for serve field ``field`` (None: the engine has none)."""
    return engine_spec(engine).serve_flags.get(field)


def serve_field_reason(engine: str, field: str) -> str | None:
    """Why ``engine`` has no flag for serve field ``field`` (``EngineSpec.serve_field_reasons``),
    or None when it gives no reason (or has the flag)."""
    return engine_spec(engine).serve_field_reasons.get(field)


def serve_flag_fields(engine: str) -> dict[str, str]:
    """``engine``'s {flag: serve field}: engine args that set a serve field's flag get its checks."""
    return {flag: name for name, flag in engine_spec(engine).serve_flags.items()}


def bench_command() -> tuple[str, ...]:
    """The benchmark client every engine's bench command runs (:data:`BENCH_CLIENT`'s
    ``bench_command``: ``vllm bench serve`` speaks the OpenAI API each engine serves)."""
    command = engine_spec(BENCH_CLIENT).bench_command
    assert command is not None, f"{BENCH_CLIENT} ships no benchmark client"
    return command


def bench_catalog() -> Catalog:
    """The flag catalog whose ``bench serve`` command holds the benchmark client's flags."""
    return load_catalog(BENCH_CLIENT)


def bench_name() -> str:
    """The benchmark client as messages write it (``vllm bench serve``)."""
    return " ".join(bench_command())


#: engine -> the ``recipecli render --format`` of the YAML file its serve command reads with
#: ``--config`` (engines whose serve command reads none are absent).
SERVE_CONFIG_FILE_FORMAT: dict[str, str] = {
    e: fmt for e in ENGINES if (fmt := engine_spec(e).serve_config_format) is not None
}

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

# lm-eval --model type per endpoint (EleutherAI/lm-evaluation-harness#3125: mixing them ->
# "Field required: messages").
LM_EVAL_MODEL_TYPE: dict[str, str] = {
    "/v1/chat/completions": "local-chat-completions",
    "/v1/completions": "local-completions",
}

# Hosts a server binds to that a client cannot connect to as such.
WILDCARD_HOSTS: frozenset[str] = frozenset({"0.0.0.0", "::", "[::]", ""})
CLIENT_HOST = "127.0.0.1"


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

#: Env vars that list the GPUs a serve command may use, as comma-separated device indices
#: (CUDA's, and ROCm's HIP and ROCR runtimes'). A recipe whose profile lists exactly the first
#: N devices for a TP size of N derives them from the TP size: ``--set tensor_parallel_size=M``
#: re-derives them as the first M (:mod:`.resolve`).
VISIBLE_DEVICES_VARS: tuple[str, ...] = (
    "CUDA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
)
