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
    }
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
)
