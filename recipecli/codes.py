"""The catalog of finding codes: every code ``check`` (and ``verify-kernel``) can report, what it
means, and how the failure shows. Codes are a public interface: keep every code listed here, and
alias a rename in :data:`ALIASES`.

Which engine steps emit a code comes from the engine models themselves (each
:class:`~recipecli.engines.base.Step` lists its codes); docs/engines/codes.md is generated from
both, and ``tests/test_codes.py`` fails when a step emits a code missing here.
"""

from __future__ import annotations

from collections.abc import Mapping

#: code -> (how it shows, meaning). "how": raises at load / runs wrong silently / depends on
#: training / nothing to do.
CODES: Mapping[str, tuple[str, str]] = {
    "draft.format": (
        "nothing to do",
        "The draft format recipecli detected (A original EAGLE release, B SpecForge, C ModelOpt, D speculators, F vLLM-internal).",
    ),
    "draft.not_eagle3": (
        "raises or runs wrong",
        "The DRAFT checkpoint is not an EAGLE3 draft (or TARGET and DRAFT are swapped).",
    ),
    "draft.layers": (
        "raises at load",
        "The engine's EAGLE3 draft takes exactly one decoder layer (tokenspeed's Llama draft; SGLang's MLA draft).",
    ),
    "draft.arch_name": (
        "raises at load",
        "The draft's architecture, after the engine's rename, is not an EAGLE3 draft class the engine registers.",
    ),
    "config.model_type": (
        "raises at load",
        "The draft's config cannot be built: no or unknown model_type, or a speculators layer type the engine refuses.",
    ),
    "config.null_value": (
        "raises at load",
        "A config value is null where transformers' strict config class needs one (e.g. num_attention_heads).",
    ),
    "config.invalid": (
        "raises at load",
        "transformers' config class refuses the geometry (hidden_size not divisible by num_attention_heads).",
    ),
    "config.target_hidden_null": (
        "raises at load",
        "target_hidden_size is present but null; vLLM and SGLang multiply it by k.",
    ),
    "config.draft_vocab_size_absent": (
        "raises at load",
        "The draft config has no draft_vocab_size key; SGLang's Llama EAGLE3 draft reads it as an attribute (AttributeError).",
    ),
    "config.aux_ids_null": (
        "raises at load",
        "eagle_aux_hidden_state_layer_ids is present but null; tokenspeed takes its len().",
    ),
    "target.no_weights": (
        "nothing checked / nothing to serve",
        "The target folder has no weight files: its embedding and head were not checked.",
    ),
    "target.unchecked": (
        "nothing checked",
        "The target source is a bare config: its tensors were not checked.",
    ),
    "target.unregistered": (
        "raises at load",
        "The target architecture is not in the engine's model registry.",
    ),
    "target.no_eagle3": (
        "raises at load",
        "The engine's target model class has no EAGLE3 capture (vLLM: SupportsEagle3; SGLang: set_eagle3_layers_to_capture).",
    ),
    "target.no_aux_capture": (
        "runs wrong silently",
        "tokenspeed's target model never returns the aux hidden states: the draft gets the final hidden state and skips fc.",
    ),
    "aux.default": (
        "depends on training",
        "The engine captures its default layers (2, L//2, L-3): info when the draft was trained on them, a warning when unknown, an error when the draft names other ids the engine does not read.",
    ),
    "aux.out_of_range": (
        "runs wrong / raises",
        "Some aux ids are never captured by the engine on this target, so the draft gets fewer states than its fc takes.",
    ),
    "aux.count": (
        "raises at load or first forward",
        "The number of aux states (captured, or in the checkpoint's fc) differs from the k the engine sizes fc for.",
    ),
    "aux.order": (
        "runs wrong silently",
        "vLLM captures aux states in ascending index order; unsorted ids feed fc's chunks in another order.",
    ),
    "aux.mismatch": (
        "depends on training",
        "The engine captures other hidden states than the draft's format says it was trained on (the id convention differs).",
    ),
    "aux.top_level_ignored": (
        "runs wrong / raises",
        "tokenspeed captures the eagle_config ids and ignores the top-level list that sizes fc.",
    ),
    "aux.convention": (
        "nothing to do",
        "Summary: the ids as written, what each engine captures, and what the format's convention implies.",
    ),
    "tensor.missing": (
        "runs wrong silently",
        "A weight the engine allocates is not in the checkpoint; neither engine's loader notices, it stays uninitialised.",
    ),
    "tensor.dropped": (
        "runs wrong silently",
        "A trained checkpoint tensor the engine skips without an error (e.g. fc.bias in vLLM).",
    ),
    "tensor.unchecked": (
        "nothing checked",
        "The draft source has no tensor table (a bare config or a snapshot without tensors).",
    ),
    "tensor.unexpected": (
        "raises (vLLM) / ignored (tokenspeed, SGLang)",
        "A checkpoint tensor the engine has no parameter for.",
    ),
    "shape.<role>": (
        "raises at load",
        "A checkpoint tensor's shape differs from what the engine allocates for the resolved config (shape.fc, shape.q_proj, shape.lm_head …).",
    ),
    "shape.d2t": ("raises at load", "d2t is not [draft_vocab_size]."),
    "hidden.mismatch": (
        "raises or runs wrong",
        "The draft's fc expects target hidden states of another width: it was trained for another target.",
    ),
    "hidden.tokenspeed_target_hidden": (
        "raises at load",
        "tokenspeed builds fc as [H, k*H] and ignores target_hidden_size.",
    ),
    "embed.width_mismatch": (
        "raises at first forward",
        "No draft embed_tokens and a draft hidden size unlike the target's: the shared embedding has the wrong width.",
    ),
    "embed.share_error": (
        "raises at load",
        "tokenspeed's set_embed_and_head cannot fit the target embedding into the draft at this TP.",
    ),
    "embed.layout_mismatch": (
        "runs wrong silently",
        "SGLang swaps the target's embedding into a draft embedding built for another vocab_size, with no shape check: lookups read the wrong rows.",
    ),
    "embed.tied_stale": (
        "runs wrong silently",
        "tokenspeed rebuilt the draft embedding replicated; a tied head keeps the old weight.",
    ),
    "lm_head.missing": (
        "raises or runs wrong",
        "No draft lm_head where the engine cannot borrow the target's.",
    ),
    "tie.reduced_vocab": (
        "raises at load",
        "tie_word_embeddings with draft_vocab_size < vocab_size ties a reduced head to the full embedding.",
    ),
    "vocab.mismatch": (
        "runs wrong silently",
        "Draft and target vocab_size differ: another tokenizer.",
    ),
    "vocab.draft_larger": (
        "raises at load",
        "draft_vocab_size is larger than the target vocabulary.",
    ),
    "vocab.d2t_missing": (
        "runs wrong silently",
        "draft_vocab_size < vocab_size and no d2t: draft ids are read as target ids.",
    ),
    "vocab.d2t_invalid": (
        "runs wrong / raises",
        "d2t is not a valid offset map (dtype, out of range, not increasing).",
    ),
    "vocab.d2t_absolute": (
        "runs wrong silently",
        "d2t holds absolute target ids where offsets are expected.",
    ),
    "vocab.d2t_identity": (
        "runs wrong silently",
        "d2t is all zeros with draft_vocab_size < vocab_size.",
    ),
    "vocab.d2t_ignored": (
        "raises at load",
        "draft_vocab_size equals vocab_size, so vLLM has no parameter for the checkpoint's d2t.",
    ),
    "vocab.t2d_invalid": (
        "nothing (t2d is dropped) / bad export",
        "t2d disagrees with d2t or draft_vocab_size.",
    ),
    "vocab.values_unavailable": (
        "nothing checked",
        "The d2t values could not be read from this source.",
    ),
    "norm.residual_unsupported": (
        "runs wrong silently",
        "norm_before_residual is true; tokenspeed and SGLang never read it.",
    ),
    "norm.residual_default": (
        "depends on training",
        "A speculators config without norm_before_residual: vLLM assumes true.",
    ),
    "norm.flag_ignored": (
        "runs wrong silently",
        "A norm flag sits under eagle_config, where the engine (vLLM, SGLang) does not read it.",
    ),
    "norm.qk_dropped": (
        "runs wrong silently",
        "The draft's Qwen3-style q_norm/k_norm weights have no parameter in tokenspeed's Llama EAGLE3 draft and are skipped.",
    ),
    "norm.output_meaning": (
        "nothing to do",
        "How norm_output is read for this format (Eagle 3.1 chaining in both engines).",
    ),
    "maxpos.short": (
        "raises (tokenspeed with --max-model-len; SGLang always) / nothing (vLLM)",
        "The draft's max_position_embeddings is below the serving length.",
    ),
    "tp.vocab_indivisible": (
        "raises at load",
        "The 64-padded vocabulary does not split over this TP size.",
    ),
    "tp.heads_indivisible": (
        "raises at load",
        "Attention or KV heads do not split over this TP size.",
    ),
    "draft_tp.invalid": (
        "raises at start-up",
        "vLLM's draft_tensor_parallel_size must be 1 or the target TP.",
    ),
    "kernel.pass": (
        "nothing to do",
        "The fused RMSNorm kernel matches the torch reference on the draft's norms.",
    ),
    "kernel.mismatch": (
        "runs wrong silently",
        "The fused kernel exceeded the tolerance on the draft's norms.",
    ),
    "kernel.ineligible": (
        "slower, not wrong",
        "The engine's guard sends this draft down the unfused path.",
    ),
    "kernel.skipped": (
        "nothing checked",
        "torch/triton are not installed or the device asked for is absent.",
    ),
}

#: old code -> current code (none renamed yet).
ALIASES: Mapping[str, str] = {}


def catalog_code(code: str) -> str:
    """The catalog entry a reported code belongs to (``shape.fc`` -> ``shape.<role>``)."""
    if code.startswith("shape.") and code not in CODES:
        return "shape.<role>"
    return ALIASES.get(code, code)
