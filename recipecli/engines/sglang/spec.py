"""SGLang's registry entry: how recipecli serves, overrides, drafts and lints for SGLang.

Every trait cites SGLang at the pinned release (``pin.py``; the PyPI wheel, paths under
``python/sglang/srt/``): serve flags from ``server_args.py`` ``ServerArgs.add_cli_args`` and the
``arg_groups/fields/*.py`` fields it registers (its catalog, built by
``scripts/build_sglang_flag_catalog.py``), the override placement from
``utils/hf_transformers/config.py`` ``get_config`` (docs/engines/sglang.md).
"""

from __future__ import annotations

from types import MappingProxyType

from recipecli.engines.sglang.lint import lint_rules
from recipecli.engines.sglang.pin import PIN
from recipecli.engines.sglang.recipe import CITE, speculative_flags
from recipecli.engines.spec import (
    TEXT_KEYS_ONE_LEVEL,
    EngineLint,
    EngineSpec,
    NodeLaunch,
    OverridePlacement,
)

REPO = "sgl-project/sglang"

#: recipe serve field -> SGLang long flag: tp_size (``--tp-size``; ``--tensor-parallel-size`` is
#: its alias) in ``arg_groups/fields/parallel.py``; context_length, kv_cache_dtype,
#: trust_remote_code in ``fields/model.py``; max_running_requests, mem_fraction_static (weights +
#: KV pool, SGLang's counterpart of vLLM's fraction) and page_size (tokens per KV page) in
#: ``fields/schedule.py``; host, port, served_model_name in ``fields/serving.py``. enforce_eager
#: has no one SGLang flag (its --disable-cuda-graph is deprecated for two
#: --cuda-graph-backend-{decode,prefill}=disabled).
SERVE_FLAGS = MappingProxyType(
    {
        "tensor_parallel_size": "--tp-size",
        "max_model_len": "--context-length",
        "max_num_seqs": "--max-running-requests",
        "gpu_memory_utilization": "--mem-fraction-static",
        "kv_cache_dtype": "--kv-cache-dtype",
        "block_size": "--page-size",
        "trust_remote_code": "--trust-remote-code",
        "served_model_name": "--served-model-name",
        "host": "--host",
        "port": "--port",
        # layouts beyond TP (issue #25/#26): fields/parallel.py pp_size, dp_size; the
        # --enable-dp-attention switch (server_args.py add_cli_args, deprecated:
        # parallel_hook.py _handle_deprecated_dp_attention resolves --dp-size N with it to
        # attn_dp_size N, dp_size 1)
        "pipeline_parallel_size": "--pp-size",
        "data_parallel_size": "--dp-size",
        "enable_dp_attention": "--enable-dp-attention",
    }
)

#: serve fields SGLang has no flag for, and why (``recipecli render`` refuses them with this)
SERVE_FIELD_REASONS = MappingProxyType(
    {
        "enable_expert_parallel": "SGLang has no expert-parallel switch: its expert "
        "parallelism is a size, --ep-size N (arg_groups/fields/parallel.py ep_size); set "
        "engines.sglang.args.ep-size instead",
    }
)

#: multi-node launch: fields/parallel.py nnodes, node_rank, dist_init_addr (``HOST:PORT``; its
#: help shows port 25000), dist_timeout; the HTTP server's /health
#: (entrypoints/http_server.py health_generate serves /health and /health_generate)
NODES = NodeLaunch(
    nnodes="--nnodes",
    node_rank="--node-rank",
    addr="--dist-init-addr",
    port=None,
    default_port=25000,
    worker_flags=(),
    nprocs_per_node=None,
    world_size=None,
    timeout="--dist-timeout",
    health="/health",
    dp_attention_in_tp=True,
    ray_backend=None,
    source=f"{CITE}arg_groups/fields/parallel.py nnodes, node_rank, dist_init_addr, "
    "dist_timeout; entrypoints/http_server.py health_generate",
)

#: ``--kv-cache-dtype`` (``fields/model.py`` kv_cache_dtype choices: auto, fp8_e5m2, fp8_e4m3,
#: mxfp8, bf16, bfloat16, nvfp4, fp4_mx_block16) has no plain "fp8"; vLLM's "fp8", as recipes
#: write it, is fp8_e4m3 (vLLM ``vllm/config/cache.py`` CacheDType: "fp8" = "fp8_e4m3" on CUDA).
VALUE_SPELLINGS = MappingProxyType({"kv_cache_dtype": MappingProxyType({"fp8": "fp8_e4m3"})})

#: Flat override keys are set on the EAGLE3 draft's config as well
#: (``configs/model_config.py`` ``ModelConfig.from_server_args`` ->
#: ``utils/hf_transformers/config.py`` ``get_config`` with ``is_draft_model=True``); these change
#: the draft's geometry or positions (``models/llama_eagle3.py`` ``LlamaModel.__init__`` builds
#: num_hidden_layers layers of hidden_size from them; ``configs/model_config.py``
#: ``_derive_context_length`` reads max_position_embeddings / rope).
DRAFT_SHARED_KEYS: frozenset[str] = frozenset(
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

#: ``fields/model.py`` json_model_override_args (JSON text), applied one level deep to the
#: target's AND the draft's config (``utils/hf_transformers/config.py`` ``get_config``;
#: ``configs/model_config.py`` ``ModelConfig.from_server_args`` passes the same JSON for both).
OVERRIDES = OverridePlacement(
    "--json-model-override-args",
    TEXT_KEYS_ONE_LEVEL,
    reaches_draft=True,
    draft_shared_keys=DRAFT_SHARED_KEYS,
    rule=f"{CITE}utils/hf_transformers/config.py get_config, configs/model_config.py "
    "ModelConfig.from_server_args; docs/engines/sglang.md#json-model-override-args",
)

SPEC = EngineSpec(
    name=PIN.engine,
    title="SGLang",
    repo=REPO,
    pin=PIN,
    home="recipecli.engines.sglang",
    model="recipecli.engines.sglang.model",
    # sglang/launch_server.py: `python -m sglang.launch_server` parses ServerArgs.add_cli_args;
    # the model is the required --model-path (fields/model.py model_path has no default, so
    # add_cli_args_from_dataclass makes it required), not a positional.
    serve_command=("python", "-m", "sglang.launch_server"),
    model_flag="--model-path",
    # arg_groups/fields/serving.py port = 30000
    default_port=30000,
    env_vars=None,
    serve_flags=SERVE_FLAGS,
    value_spellings=VALUE_SPELLINGS,
    overrides=OVERRIDES,
    speculative_flags=speculative_flags,
    speculative_config=None,
    serve_config_format=None,
    # its layers include the speculative flags rendered from the recipe's own speculative
    # section, which any recipe has, so its rules would speak about a pair the recipe says
    # SGLang does not serve: skipped there
    lint=EngineLint(
        lint_rules, sees_speculative=True, skip_when_unsupported=True, strips_arg_dashes=True
    ),
    bench_command=None,
    serve_field_reasons=SERVE_FIELD_REASONS,
    nodes=NODES,
)
