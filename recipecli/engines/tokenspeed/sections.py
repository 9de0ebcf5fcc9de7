"""What docs/engines/tokenspeed.md says beside the load path: facts that are not a step (each under
a stable anchor) and notes on how the model is checked.
"""

from __future__ import annotations

from recipecli.engines.base import (
    Section,
)
from recipecli.engines.tokenspeed.sources import COMMIT, GET_CONFIG, MODEL_CONFIG, TRANSFORMERS, src

SECTIONS = (
    Section(
        "hf-overrides",
        "--hf-overrides placement",
        "`get_config` applies the `--hf-overrides` JSON with `text_config.update(...)`: flat keys, set on "
        "the TEXT config (for a wrapper such as MiniMax-M3 that is its `text_config`; for a plain "
        "config the config itself), with no recursion. The same overrides are applied to the draft's "
        "config (`_load_model_config(..., is_draft_worker=True)` passes the same server args), so a key "
        "meant for the target (`num_hidden_layers`, `vocab_size`, `hidden_size`) also rewrites the "
        'draft. A nested `{"text_config": {...}}` sets an attribute named `text_config` holding a '
        "dict: on a wrapper it is a silent no-op, on a plain config (every Llama EAGLE3 draft) "
        "`ModelConfig` then fails with `text_config must define num_attention_heads.`",
        (GET_CONFIG, MODEL_CONFIG, src("engine/event_loop.py", "EventLoop._load_model_config")),
    ),
    Section(
        "serve-flags",
        "tokenspeed serve flags for EAGLE3",
        "`--speculative-algorithm` takes EAGLE3, MTP, DFLASH or DSPARK; `--speculative-eagle-topk` "
        "accepts only 1; `--speculative-num-draft-tokens` defaults to `--speculative-num-steps` + 1; "
        "`--speculative-config` JSON is read for `method`, `model` and `num_speculative_tokens` only; "
        "`--eagle3-layers-to-capture` (comma-separated ids) overrides the draft config's ids; "
        "`--tensor-parallel-size`/`--tp` is an alias of `--attn-tp-size` (giving both is an error); "
        "there is no separate draft TP.",
        (src("utils/server_args.py", "ServerArgs.add_cli_args / resolve_speculative_decoding"),),
        aliases=("speculative-flags",),
    ),
)

#: how this model is checked (conformance, data extraction), listed on the engine's page
NOTES = (
    f"Pinned at commit {COMMIT} of lightseekorg/tokenspeed (2026-08-22, the newest available).",
    "tokenspeed is not on PyPI, so there is no conformance run against its own code: this "
    "model is checked against data extracted from the pinned source snapshot by "
    "`scripts/build_engine_data.py tokenspeed` (the registry's `EntryClass` exports, its own "
    "config classes' defaults, and hand-read facts about each target class that the script "
    "verifies still hold at the commit).",
    f"transformers' config defaults come from {TRANSFORMERS}, the release tokenspeed pins.",
)
