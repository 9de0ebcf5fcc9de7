"""Convert an EAGLE3 draft between formats, translating by meaning and verifying bit for bit.

Two output formats (the draft formats A-F are described in docs/check.md):

* ``speculators`` (format D): ``config.json`` with ``speculators_model_type: "eagle3"``,
  ``architectures: ["Eagle3Speculator"]``, the layer geometry under ``transformer_layer_config``,
  top-level ``draft_vocab_size``, ``norm_before_residual`` (always written), ``target_hidden_size``,
  ``eagle_aux_hidden_state_layer_ids`` (hidden-state convention), ``norm_before_fc``, ``fc_norm``,
  ``norm_output`` (Eagle 3.1 post-norm chaining) and ``speculators_config`` whose verifier comes
  from ``--target``, so ``vllm serve OUT`` works alone. Tensors ``layers.{i}.*``.
* ``eagle3``: flat ``LlamaForCausalLMEagle3`` config with ``midlayer.*`` tensors (what tokenspeed
  and SGLang load: lightseekorg/tokenspeed@f4d8ec6e ``python/tokenspeed/runtime/models/
  llama_eagle3.py`` ``LlamaForCausalLMEagle3.load_weights``) and the aux ids, in layer-output
  convention, both at the top
  level (tokenspeed sizes ``fc`` from it) and under ``eagle_config`` (SGLang, SpecForge).

What is translated by meaning rather than copied by name (engine code: vLLM v0.33.0 and
tokenspeed@f4d8ec6e, files and functions named per rule; see also docs/convert.md):

* aux layer ids (vLLM ``vllm/model_executor/models/llama.py`` ``LlamaModel.forward`` captures the
  state entering layer i; tokenspeed ``models/base/causal_lm.py``
  ``BaseCausalLM.set_eagle3_layers_to_capture``): vLLM/speculators write the index of the hidden
  state entering layer i
  (``hidden-state``); SpecForge/SGLang/ModelOpt/tokenspeed write the output of layer i
  (``layer-output`` = hidden-state − 1). The source convention comes from the format
  (:data:`recipecli.draft.TRAINED_CONVENTION`, from the format specs) or ``--aux-id-convention``; unknown → refused.
  Absent ids stay absent: both engines then capture their default [2, L//2, L-3].
* ``norm_before_residual`` (vLLM ``vllm/transformers_utils/configs/speculators/algos.py``
  ``update_eagle3``): written explicitly in speculators output (vLLM would assume
  true when missing); unknown and not given → refused.
* ``norm_output`` (vLLM ``vllm/model_executor/models/llama_eagle3.py`` ``LlamaModel.forward``:
  post-norm aux output): SpecForge formats (A, B) mean "apply ``norm`` before the head", the
  others mean Eagle 3.1 post-norm chaining; the output is written in the chaining meaning.
* ``tie_word_embeddings`` forced false when Vd < V (vLLM ``Eagle3LlamaForCausalLM.__init__``
  sizes ``lm_head`` by ``draft_vocab_size``); ``head_dim``, rope fields (legacy
  ``rope_theta``/``rope_scaling`` and transformers-5 ``rope_parameters``) and
  ``max_position_embeddings`` carried over.
* vocabulary maps (vLLM ``Eagle3LlamaForCausalLM.load_weights`` / ``compute_logits``: target id
  = i + d2t[i]): ``d2t``/``t2d`` kept byte for byte; ``t2d`` derived from ``d2t`` when it is
  missing and V is known; Vd < V without ``d2t`` refused; int64/bool buffers never cast.

Data path: one tensor at a time, in chunks of :data:`CHUNK_BYTES` (uncast tensors of safetensors
sources go through ``os.copy_file_range``), so memory stays far below the largest tensor. The
output is written into a hidden temporary directory next to OUT, reopened and compared with the
source chunk by chunk, and renamed into place only after that verification passes.

Modules: :mod:`~recipecli.convert.options` (the request: ConvertOptions), :mod:`~.plan` (the
plan, decided before a byte is written), :mod:`~.translate` (fields translated by meaning),
:mod:`~.tensors` (output tensors and shards), :mod:`~.config` (the output ``config.json``),
:mod:`~.semantics` (the meaning a conversion preserves), :mod:`~.casts`, :mod:`~.reader`,
:mod:`~.write`, :mod:`~.verify`, :mod:`~.progress` (the data path), :mod:`~.result` and
:mod:`~.run` (the driver). What a draft format means comes from :mod:`recipecli.draft`.
"""

from recipecli.convert.casts import CASTABLE, CHUNK_BYTES, ITEMSIZE, cast_bytes, f32_to_bf16_bits
from recipecli.convert.config import build_config, repo_id_or_none, verifier_name
from recipecli.convert.options import (
    CONFIG_DTYPE,
    DTYPE_OPTION,
    OUTPUT_CONVENTION,
    ConvertOptions,
    OutputFormat,
)
from recipecli.convert.plan import ConvertPlan, plan_conversion
from recipecli.convert.progress import Progress, progress_bars_shown
from recipecli.convert.reader import TensorReader, open_reader
from recipecli.convert.result import ConvertResult, format_result
from recipecli.convert.run import check_out_parent, convert, convert_inputs
from recipecli.convert.semantics import draft_semantics, semantic_diff
from recipecli.convert.tensors import TensorMove, layout_shards, map_tensor_name
from recipecli.convert.translate import Translation, derive_t2d
from recipecli.convert.verify import verify_output, verify_reopened
from recipecli.convert.write import make_temp_out, write_output, write_tensor
from recipecli.draft import EAGLE_KEYS, Convention, from_hidden_state, to_hidden_state

#: The convention the aux ids of each source format are written in: the draft specs' table
#: (:data:`recipecli.draft.TRAINED_CONVENTION`), under the name this module used.
from recipecli.draft import TRAINED_CONVENTION as SOURCE_CONVENTION  # noqa: E402

__all__ = [
    "CASTABLE",
    "CHUNK_BYTES",
    "CONFIG_DTYPE",
    "DTYPE_OPTION",
    "EAGLE_KEYS",
    "ITEMSIZE",
    "OUTPUT_CONVENTION",
    "SOURCE_CONVENTION",
    "Convention",
    "ConvertOptions",
    "ConvertPlan",
    "ConvertResult",
    "OutputFormat",
    "Progress",
    "TensorMove",
    "TensorReader",
    "Translation",
    "build_config",
    "cast_bytes",
    "check_out_parent",
    "convert",
    "convert_inputs",
    "derive_t2d",
    "draft_semantics",
    "f32_to_bf16_bits",
    "format_result",
    "from_hidden_state",
    "layout_shards",
    "make_temp_out",
    "map_tensor_name",
    "open_reader",
    "plan_conversion",
    "progress_bars_shown",
    "repo_id_or_none",
    "semantic_diff",
    "to_hidden_state",
    "verifier_name",
    "verify_output",
    "verify_reopened",
    "write_output",
    "write_tensor",
]
