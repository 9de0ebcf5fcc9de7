"""tokenspeed's registry entry: how recipecli serves, overrides, drafts and lints for tokenspeed.

Every trait cites lightseekorg/tokenspeed at the pinned commit (``pin.py``; paths under
``python/tokenspeed/``): serve flags from ``runtime/utils/server_args.py``
``ServerArgs.add_cli_args`` (its catalog in ``data/``), the override placement
from ``runtime/utils/hf_transformers_utils.py`` ``get_config`` (docs/engines/tokenspeed.md).
"""

from __future__ import annotations

from types import MappingProxyType

from recipecli.engines.spec import (
    TEXT_KEYS_ON_TEXT_CONFIG,
    EngineLint,
    EngineSpec,
    NodeLaunch,
    OverridePlacement,
)
from recipecli.engines.tokenspeed.lint import lint_rules
from recipecli.engines.tokenspeed.pin import PIN
from recipecli.engines.tokenspeed.recipe import speculative_flags

REPO = "lightseekorg/tokenspeed"

#: recipe serve field -> tokenspeed long flag (``server_args.py`` ``ServerArgs.add_cli_args``);
#: tokenspeed has no --served-model-name.
SERVE_FLAGS = MappingProxyType(
    {
        "tensor_parallel_size": "--tensor-parallel-size",
        "max_model_len": "--max-model-len",
        "max_num_seqs": "--max-num-seqs",
        "gpu_memory_utilization": "--gpu-memory-utilization",
        "kv_cache_dtype": "--kv-cache-dtype",
        "block_size": "--block-size",
        "trust_remote_code": "--trust-remote-code",
        "enforce_eager": "--enforce-eager",
        "host": "--host",
        "port": "--port",
        # layouts beyond TP (issue #25/#26): its DP is attention DP (resolve_parallelism:
        # attn_dp_size = data_parallel_size); --enable-expert-parallel sets ep_size = world
        "data_parallel_size": "--data-parallel-size",
        "enable_expert_parallel": "--enable-expert-parallel",
    }
)

#: serve fields tokenspeed has no flag for, and why (``recipecli render`` refuses them)
SERVE_FIELD_REASONS = MappingProxyType(
    {
        "pipeline_parallel_size": "tokenspeed has no pipeline parallelism (no pipeline field "
        "in ServerArgs, no --pp flag in ServerArgs.add_cli_args); use tensor parallelism "
        "across the nodes",
        "enable_dp_attention": "tokenspeed's --data-parallel-size is attention DP already "
        "(server_args.py ServerArgs.resolve_parallelism: attn_dp_size = data_parallel_size); "
        "set data_parallel_size only",
    }
)

#: multi-node launch: server_args.py ServerArgs.add_cli_args ``--nnodes/--node-rank/
#: --dist-init-addr`` (``HOST:PORT``; docs/serving/parallelism.md shows port 25000),
#: ``--nprocs-per-node/--world-size`` (resolve_parallelism: world = attn TP x attn DP),
#: --distributed-timeout-seconds; rank 0 serves HTTP (entrypoints/control_server.py health,
#: started by cli/serve_smg.py _start_control_server)
NODES = NodeLaunch(
    nnodes="--nnodes",
    node_rank="--node-rank",
    addr="--dist-init-addr",
    port=None,
    default_port=25000,
    worker_flags=(),
    nprocs_per_node="--nprocs-per-node",
    world_size="--world-size",
    timeout="--distributed-timeout-seconds",
    health="/health",
    dp_attention_in_tp=False,
    ray_backend=None,
    source=f"{REPO} {PIN.short} python/tokenspeed/runtime/utils/server_args.py "
    "ServerArgs.add_cli_args, ServerArgs.resolve_parallelism; "
    "runtime/entrypoints/control_server.py health (cli/serve_smg.py _start_control_server)",
)

#: --hf-overrides also reaches the draft config (``runtime/engine/event_loop.py``
#: ``_load_model_config`` passes ``server_args.hf_overrides`` to the draft's ModelConfig too);
#: overriding these target sizes rewrites the EAGLE3 draft's as well
#: (docs/engines/tokenspeed.md#hf-overrides).
DRAFT_SHARED_KEYS: frozenset[str] = frozenset(
    {"num_hidden_layers", "vocab_size", "hidden_size", "max_position_embeddings"}
)

#: ``runtime/utils/hf_transformers_utils.py`` ``get_config``: ``text_config.update(
#: model_override_args)`` on the config ``get_hf_text_config`` returns, for the target and for
#: the draft alike (``runtime/engine/event_loop.py`` ``_load_model_config``).
OVERRIDES = OverridePlacement(
    "--hf-overrides",
    TEXT_KEYS_ON_TEXT_CONFIG,
    reaches_draft=True,
    draft_shared_keys=DRAFT_SHARED_KEYS,
    rule=f"{REPO} {PIN.short} python/tokenspeed/runtime/utils/hf_transformers_utils.py "
    "get_config; docs/engines/tokenspeed.md#hf-overrides",
)

SPEC = EngineSpec(
    name=PIN.engine,
    title="tokenspeed",
    repo=REPO,
    pin=PIN,
    home="recipecli.engines.tokenspeed",
    model="recipecli.engines.tokenspeed.model",
    serve_command=("tokenspeed", "serve"),
    model_flag=None,
    default_port=8000,
    env_vars=None,
    serve_flags=SERVE_FLAGS,
    value_spellings=MappingProxyType({}),
    overrides=OVERRIDES,
    speculative_flags=speculative_flags,
    speculative_config=None,
    serve_config_format=None,
    # its rules read only the serve fields and its own args, so they run on every recipe
    lint=EngineLint(
        lint_rules, sees_speculative=False, skip_when_unsupported=False, strips_arg_dashes=False
    ),
    bench_command=None,
    serve_field_reasons=SERVE_FIELD_REASONS,
    nodes=NODES,
)
