"""What docs/engines/sglang.md says beside the load path: facts that are not a step (each under a
stable anchor) and notes on how the model is checked.
"""

from __future__ import annotations

from recipecli.engines.base import (
    Section,
)
from recipecli.engines.sglang.pin import PIN
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
        "(only `pad/bos/eos_token_id` and `tie_word_embeddings` are copied across). The nested "
        '`{"text_config": {...}}` form is merged only where the wrapper\'s `text_config` is a '
        "`PretrainedConfig` when the override is applied: Qwen3-VL (transformers' `Qwen3VLConfig`) "
        "gets the keys on its text model; MiniMax-M3 (SGLang's own `MiniMaxM3VLConfig`, "
        "configs/minimax_vl.py) holds `text_config` as a plain dict under transformers "
        f"{TRANSFORMERS}, so the override dict replaces the whole text config and "
        "`get_hf_text_config` fails on the target too. On the flat EAGLE3 draft the nested form "
        "always becomes a new `text_config` attribute: `get_hf_text_config` converts it to a bare "
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
    f"Read from the sglang {PIN.version} wheel on PyPI. The registry data (EntryClass exports, which "
    "target classes have set_eagle3_layers_to_capture and the id rule each applies, the draft "
    "architecture renames) is extracted by `scripts/build_engine_data.py sglang` (ast, no import); "
    "how the common target families capture is read by hand and verified by the script.",
    f"transformers' config defaults come from {TRANSFORMERS}, the release SGLang {PIN.version} pins.",
    "The draft's tensor-parallel size is the target's (the Llama draft runs in the target's TP "
    "group); there is no separate draft TP.",
    f"Checked against SGLang {PIN.version}'s own code by the conformance suite (tests/conformance_sglang, "
    "`bash scripts/conformance/run_sglang_conformance.sh`, in CI): every rendered serve command "
    "through SGLang's parser and `ServerArgs` resolution, every `--json-model-override-args` "
    "render through `get_config` / `get_hf_text_config` on target and draft, and check's vocab "
    "padding, draft architecture, context-length refusal and aux layers against SGLang's own "
    "functions on the conformance pairs.",
)
