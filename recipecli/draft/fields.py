"""Config fields of EAGLE3 drafts that carry EAGLE meaning, and what each means.

These keys are read by meaning (:func:`recipecli.draft.canonical_draft`) and translated, never
copied by name (``recipecli convert``); every other key of a draft config is plain layer
geometry or bookkeeping. Where formats disagree on a field's meaning, the format's
:class:`~recipecli.draft.formats.FormatSpec` says which meaning it uses.
"""

from __future__ import annotations

from collections.abc import Mapping

#: EAGLE config key -> its meaning
EAGLE_FIELDS: Mapping[str, str] = {
    "architectures": "the draft class; detection reads it (Eagle3 architectures, <Model>ForCausalLM)",
    "auto_map": "remote-code class map of a format's own loader",
    "draft_vocab_size": "Vd, the draft head's vocabulary (absent: = vocab_size)",
    "target_hidden_size": "Ht, the target hidden width fc takes k chunks of (absent: = hidden_size)",
    "eagle_aux_hidden_state_layer_ids": "the target layers whose hidden states feed fc, in the "
    "format's aux-id convention (FormatSpec.aux_convention)",
    "eagle_config": "SpecForge/SGLang/ModelOpt nested EAGLE settings (aux ids, norm flags, "
    "ModelOpt-only keys)",
    "norm_before_residual": "the normed (not the raw) hidden state is the layer's residual",
    "norm_before_fc": "Eagle 3.1: one RMSNorm over the concatenated aux states before fc",
    "fc_norm": "Eagle 3.1: one RMSNorm per aux chunk (fc_norm.{i}) before fc",
    "norm_output": "per format (FormatSpec.norm_output_meaning): norm before the head, or "
    "post-norm chaining",
    "num_aux_hidden_states": "k, when the aux ids are not written",
    "speculators_model_type": "speculators: the algorithm (eagle3)",
    "speculators_config": "speculators: verifier (target) and proposal methods",
    "speculators_version": "speculators: the library version that wrote the config",
    "transformer_layer_config": "speculators: the decoder layer's geometry",
    "torch_dtype": "serving dtype (transformers < 5 spelling)",
    "dtype": "serving dtype (transformers 5 spelling)",
    "tie_word_embeddings": "lm_head shares embed_tokens (impossible when Vd < V)",
    "has_no_defaults_at_init": "a loader flag of remote-code configs",
    "truncated_vocab_size": "nebius: Vd",
}
#: Config keys that carry EAGLE meaning (translated, never copied blindly).
EAGLE_KEYS = frozenset(EAGLE_FIELDS)

#: flags that may sit at the top level or under ``eagle_config``
NORM_FLAGS: tuple[str, ...] = ("fc_norm", "norm_before_fc", "norm_before_residual", "norm_output")
#: keys of one format's own loader, with no meaning in another format
LOADER_KEYS: tuple[str, ...] = (
    "auto_map",
    "has_no_defaults_at_init",
    "speculators_version",
    "truncated_vocab_size",
)

#: config dtype spelling -> safetensors dtype name
DTYPE_NAMES: Mapping[str, str] = {
    "float16": "F16",
    "bfloat16": "BF16",
    "float32": "F32",
    "half": "F16",
    "float": "F32",
}
