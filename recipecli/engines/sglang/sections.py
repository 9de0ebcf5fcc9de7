"""What docs/engines/sglang.md says beside the load path: facts that are not a step (each under a
stable anchor) and notes on how the model is checked.
"""

from __future__ import annotations

from recipecli.engines.base import (
    Section,
)
from recipecli.engines.sglang.sources import (
    GET_CONFIG,
    MODEL_CONFIG,
    TEXT_CONFIG,
    TRANSFORMERS,
    VOCAB,
)

SECTIONS = (
    Section(
        "json-model-override-args",
        "--json-model-override-args placement",
        "`ModelConfig.from_server_args` passes the same `--json-model-override-args` JSON to the draft's "
        "config as to the target's. `get_config` applies it key by key: a dict value for a key that is "
        "already a sub-config (`text_config` on a multimodal wrapper) is merged into it one level deep "
        "(`PretrainedConfig.update`); `rope_scaling` / `rope_parameters` dicts are merged into the "
        "existing dict; anything else is set on the TOP-LEVEL config. So a flat key on a wrapped target "
        "(MiniMax-M3, Qwen3-VL) lands on the outer config, where the language model never reads it "
        "(only `pad/bos/eos_token_id` and `tie_word_embeddings` are copied across), while the nested "
        '`{"text_config": {...}}` form that reaches it also reaches the flat EAGLE3 draft, where it '
        "becomes a new `text_config` attribute: `get_hf_text_config` converts it to a bare "
        "`PretrainedConfig` and asserts it has `num_attention_heads`, so start-up fails with an "
        "`AssertionError` (or, if the override includes `num_attention_heads`, the draft's text config "
        "is replaced by that partial one). A key meant for the target's text model therefore has no "
        "placement that works for a wrapped target and a Llama draft at once; a flat key meant for both "
        "(a plain target) rewrites the draft too.",
        (GET_CONFIG, MODEL_CONFIG, TEXT_CONFIG),
    ),
    Section(
        "vocab-padding",
        "Vocabulary padding and TP",
        "`VocabParallelEmbedding` pads the vocabulary to a multiple of 64; when that padded size does not "
        "divide by the TP size it pads to a multiple of 64 x TP instead, so every TP size splits the "
        "embedding and head (e.g. 151552 rows at TP 6: 151552 is not divisible by 6, so it pads to "
        "151680 = 395 x 384, 25280 rows per rank). vLLM and tokenspeed refuse such a TP.",
        (VOCAB,),
    ),
)

#: how this model is checked (conformance, data extraction), listed on the engine's page
NOTES = (
    "Read from the sglang 0.5.23 wheel on PyPI. The registry data (EntryClass exports, which "
    "target classes have set_eagle3_layers_to_capture and the id rule each applies, the draft "
    "architecture renames) is extracted by `scripts/build_engine_data.py sglang` (ast, no import); "
    "how the common target families capture is read by hand and verified by the script.",
    f"transformers' config defaults come from {TRANSFORMERS}, the release SGLang 0.5.23 pins.",
    "The draft's tensor-parallel size is the target's (the Llama draft runs in the target's TP "
    "group); there is no separate draft TP.",
    "No conformance run against SGLang's own code yet: its config code needs the torch and "
    "torchvision versions SGLang pins.",
)
