"""vLLM's registry entry: how recipecli serves, overrides, drafts and lints for vLLM.

Every trait cites vLLM's code at the pinned release (``pin.py``; paths inside the wheel):
the serve flags are in ``data/`` (built from ``vllm/engine/arg_utils.py`` by
``scripts/build_vllm_flag_catalog.py``), the override placement is
``vllm/config/model.py`` ``ModelConfig.__post_init__`` (docs/engines/vllm.md#hf-overrides).
"""

from __future__ import annotations

from types import MappingProxyType

from recipecli.engines.spec import (
    TEXT_KEYS_NESTED,
    EngineSpec,
    EnvVars,
    NodeLaunch,
    OverridePlacement,
    SpeculativeConfigRules,
)
from recipecli.engines.vllm.pin import PIN
from recipecli.engines.vllm.recipe import CITE, speculative_flags

REPO = "vllm-project/vllm"

#: recipe serve field -> vLLM long flag (``vllm/engine/arg_utils.py`` ``EngineArgs.add_cli_args``,
#: the frontend's ``cli_args.py`` for host/port/served-model-name).
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
        "served_model_name": "--served-model-name",
        "host": "--host",
        "port": "--port",
        # layouts beyond TP (issue #25/#26): EngineArgs.add_cli_args parallel group
        "pipeline_parallel_size": "--pipeline-parallel-size",
        "data_parallel_size": "--data-parallel-size",
        "enable_expert_parallel": "--enable-expert-parallel",
    }
)

#: serve fields vLLM has no flag for, and why (``recipecli render`` refuses them with this)
SERVE_FIELD_REASONS = MappingProxyType(
    {
        "enable_dp_attention": "vLLM has no DP-attention switch: with --data-parallel-size N "
        "each DP rank runs attention on its own TP group and an MoE target's experts are "
        "sharded across the ranks with --enable-expert-parallel (vllm/config/parallel.py "
        "ParallelConfig); set data_parallel_size (and enable_expert_parallel) instead",
    }
)

#: multi-node launch (multiprocessing): EngineArgs.add_cli_args ``--nnodes/--node-rank/
#: --master-addr/--master-port`` (ParallelConfig defaults master_port 29501), ``--headless`` on
#: the other nodes (vllm/entrypoints/cli/serve.py run_headless: no API server); DP ranks and
#: their local count are inferred from --nnodes/--node-rank and the DP address is the master
#: address (EngineArgs.create_engine_config); Ray: --distributed-executor-backend ray
#: (ParallelConfig.__post_init__: nnodes > 1 needs mp, uni or external_launcher), one serve
#: command on the Ray head whose TP x PP workers Ray places on the cluster's GPUs
#: (vllm/v1/executor/ray_utils.py initialize_ray_cluster), each node's own address in
#: VLLM_HOST_IP (vllm/envs.py; ray_utils.py WORKER_SPECIFIC_ENV_VARS: not copied from the head)
NODES = NodeLaunch(
    nnodes="--nnodes",
    node_rank="--node-rank",
    addr="--master-addr",
    port="--master-port",
    default_port=29501,
    worker_flags=("--headless",),
    nprocs_per_node=None,
    world_size=None,
    timeout="--distributed-timeout-seconds",
    health="/health",
    dp_attention_in_tp=False,
    ray_backend=("--distributed-executor-backend", "ray"),
    source=f"{CITE} vllm/engine/arg_utils.py EngineArgs.add_cli_args, "
    "EngineArgs.create_engine_config; vllm/entrypoints/cli/serve.py run_headless; "
    "vllm/entrypoints/serve/instrumentator/health.py health; "
    "vllm/v1/executor/ray_utils.py initialize_ray_cluster",
    ray_host_ip="VLLM_HOST_IP",
)

#: ``vllm/config/model.py`` ``ModelConfig.__post_init__``: flat keys go to
#: ``vllm/transformers_utils/config.py`` ``get_config`` (``config.update``, the TOP-level config);
#: a dict whose key names an existing sub-config is merged into it recursively
#: (``ModelConfig._apply_dict_overrides`` / ``_update_nested``). The draft has its own config.
OVERRIDES = OverridePlacement(
    "--hf-overrides",
    TEXT_KEYS_NESTED,
    reaches_draft=False,
    draft_shared_keys=frozenset(),
    rule=f"{CITE} vllm/config/model.py ModelConfig._apply_dict_overrides, "
    "vllm/transformers_utils/config.py get_config; docs/engines/vllm.md#hf-overrides",
)

#: ``vllm/config/speculative.py``: ``--speculative-config`` is a SpeculativeConfig;
#: ``SpeculativeConfig._verify_args`` rejects ``tensor_parallel_size`` (the draft's is
#: ``draft_tensor_parallel_size``) and ``SpeculativeConfig.__post_init__`` guesses ``method``
#: from the draft path when it is missing, so a recipe names it.
SPECULATIVE_CONFIG = SpeculativeConfigRules(
    "--speculative-config",
    required=("method",),
    refused=MappingProxyType({"tensor_parallel_size": "draft_tensor_parallel_size"}),
    advice=MappingProxyType({"draft_tensor_parallel_size": "1 or the target TP"}),
    source=f"{CITE} vllm/config/speculative.py SpeculativeConfig._verify_args",
)

SPEC = EngineSpec(
    name=PIN.engine,
    title="vLLM",
    repo=REPO,
    pin=PIN,
    home="recipecli.engines.vllm",
    model="recipecli.engines.vllm.model",
    serve_command=("vllm", "serve"),
    model_flag=None,
    default_port=8000,
    env_vars=EnvVars("VLLM_", "vllm/envs.py"),
    serve_flags=SERVE_FLAGS,
    value_spellings=MappingProxyType({}),
    overrides=OVERRIDES,
    speculative_flags=speculative_flags,
    speculative_config=SPECULATIVE_CONFIG,
    # vllm/utils/argparse_utils.py FlexibleArgumentParser.load_config_file: `vllm serve --config
    # FILE` reads a YAML file of flags (recipecli/recipes/text.py vllm_config_text writes it).
    serve_config_format="vllm-config",
    lint=None,
    # vllm/benchmarks/serve.py: `vllm bench serve` (its flags are the catalog's "bench serve")
    bench_command=("vllm", "bench", "serve"),
    serve_field_reasons=SERVE_FIELD_REASONS,
    nodes=NODES,
)
