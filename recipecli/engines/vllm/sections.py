"""What docs/engines/vllm.md says beside the load path: facts that are not a step (each under a
stable anchor) and notes on how the model is checked.
"""

from __future__ import annotations

from recipecli.engines.base import (
    Section,
)
from recipecli.engines.vllm.pin import PIN
from recipecli.engines.vllm.sources import EAGLE3_CAUSAL, EAGLE3_LOAD, LOGITS, TRANSFORMERS, src

SECTIONS = (
    Section(
        "target-config",
        "Target config and wrapped targets",
        "vLLM resolves the target's config with `get_config` and takes the language model's config "
        "with `get_hf_text_config`: for a multimodal or VL wrapper (MiniMax-M3 `minimax_m3_vl`, "
        "Qwen3-VL) that is the `text_config` sub-config, so the target's hidden size, vocabulary and "
        "layer count come from there, and the aux hidden states are captured by its language model "
        "(`SupportsEagle3.set_aux_hidden_state_layers` goes through `get_language_model()`).",
        (
            src("vllm/transformers_utils/config.py", "get_config / get_hf_text_config"),
            src(
                "vllm/model_executor/models/interfaces.py",
                "SupportsEagle3.set_aux_hidden_state_layers",
            ),
        ),
    ),
    Section(
        "vocabulary-maps",
        "Vocabulary maps",
        "`d2t` holds offsets: target id = draft id + `d2t[draft id]`. `Eagle3LlamaForCausalLM` "
        "allocates `draft_id_to_target_id` (zeros) only when `draft_vocab_size` differs from the "
        "target's vocabulary, loads `d2t` into it and drops `t2d`; `compute_logits` scatters the "
        "draft's logits to `arange(Vd) + draft_id_to_target_id`. A missing `d2t` therefore maps draft "
        "ids onto target ids 0..Vd-1 without an error, and a `d2t` with equal vocabularies has no "
        "parameter to load into.",
        (EAGLE3_CAUSAL, EAGLE3_LOAD, LOGITS),
    ),
    Section(
        "hf-overrides",
        "--hf-overrides placement",
        "`ModelConfig.__post_init__` splits the JSON: non-dict values are passed to `get_config` and "
        "set on the TOP-LEVEL config; each dict value goes through `_apply_dict_overrides`, which "
        "merges it recursively into an existing sub-config of that name (`text_config`) and otherwise "
        "replaces the attribute whole. On a wrapper, a flat key therefore lands on the outer config, "
        "where the language model never reads it — text-model keys must sit under `text_config`. "
        "Dict overrides apply to the target's config only, never to the draft's. Engine flags such "
        "as `tensor_parallel_size` inside `--hf-overrides` are config attributes nobody reads.",
        (
            src(
                "vllm/config/model.py",
                "ModelConfig.__post_init__ / _apply_dict_overrides",
                "vLLM PR #25727",
            ),
            src("vllm/transformers_utils/config.py", "get_config"),
        ),
    ),
    Section(
        "bench-serve",
        "vllm bench serve results",
        "`--save-result` writes one JSON document per run: the request rate is saved as the string "
        '`"inf"` when unbounded, `max_concurrency` as null when unset, and each `--metadata KEY=VALUE` '
        "as a top-level key (the dataset name and random lengths are not saved otherwise); "
        "`--result-filename` names the file and `--label` the run.",
        (src("vllm/benchmarks/serve.py", "main / add_cli_args (--save-result, --metadata)"),),
    ),
    Section(
        "removed-flags",
        f"Flags removed from the {PIN.version} CLI",
        f"`--rope-scaling` and `--rope-theta` are no longer engine arguments in {PIN.version} (set rope "
        "parameters through `--hf-overrides`); `EnableDisableAction` switches accept a hidden "
        "`--no-<flag>` form; `-sc` is short for `--speculative-config`.",
        (src("vllm/engine/arg_utils.py", "EngineArgs.add_cli_args"),),
    ),
)

#: how this model is checked (conformance, data extraction), listed on the engine's page
NOTES = (
    f"The registry and SupportsEagle3 data are extracted from the vllm {PIN.version} wheel by "
    "`scripts/build_engine_data.py vllm` (ast, no import); transformers' config defaults by "
    f"`scripts/extract_transformers_fields.py` at {TRANSFORMERS}, the release the conformance "
    "environment installs beside vLLM.",
    f"vLLM {PIN.version} runs the V2 model runner by default; this model follows it. With "
    "`VLLM_USE_V2_MODEL_RUNNER=0` the V1 runner also reads `eagle_config.eagle_aux_hidden_state_layer_ids` "
    "and refuses to share an embedding of another width.",
    "`tests/conformance/` checks this model against vLLM's own config classes, draft model and "
    "`load_weights` (on the meta device).",
    "`tests/conformance/test_vllm_accounting.py` checks the [accounting](#names) the same way, on every "
    "conformance pair: the parameters vLLM builds and fills, leaves at init or takes from the "
    "target, the tensors its loader drops or skips, and a name it raises on. One disagreement is "
    "left: an EAGLE-1 config (`bias` false, no `draft_vocab_size`) over an EAGLE3-shaped table, "
    "which vLLM loads as `Eagle3LlamaForCausalLM` and recipecli refuses (`draft.not_eagle3`), so "
    "it gives no accounting.",
)
