"""Convert an EAGLE3 draft between formats, translating by meaning and verifying bit for bit.

Two output formats, registered in :mod:`recipecli.convert.formats` (one
:class:`~recipecli.convert.formats.OutputFormatSpec` each, holding every write-side fact; the
draft formats A-F it reads are described in docs/check.md):

* ``speculators`` (format D): ``config.json`` with ``speculators_model_type: "eagle3"``,
  ``architectures: ["Eagle3Speculator"]``, the layer geometry under ``transformer_layer_config``,
  top-level ``draft_vocab_size``, ``norm_before_residual`` (always written), ``target_hidden_size``,
  ``eagle_aux_hidden_state_layer_ids`` (hidden-state convention), ``norm_before_fc``, ``fc_norm``,
  ``norm_output`` (Eagle 3.1 post-norm chaining) and ``speculators_config`` whose verifier comes
  from ``--target``, so ``vllm serve OUT`` works alone. Tensors ``layers.{i}.*``.
* ``eagle3``: flat ``LlamaForCausalLMEagle3`` config with ``midlayer.*`` tensors (what tokenspeed
  and SGLang load: lightseekorg/tokenspeed@f4d8ec6e ``python/tokenspeed/runtime/models/
  llama_eagle3.py`` ``LlamaForCausalLMEagle3.load_weights``) and the aux ids, in layer-output
  convention, both at the top level (tokenspeed sizes ``fc`` from it) and under
  ``eagle_config`` (SGLang, SpecForge).

What is translated by meaning rather than copied by name (engine code: vLLM v0.33.0 and
tokenspeed@f4d8ec6e, files and functions named per rule; see also docs/convert.md):

* aux layer ids (vLLM ``vllm/model_executor/models/llama.py`` ``LlamaModel.forward`` captures the
  state entering layer i; tokenspeed ``models/base/causal_lm.py``
  ``BaseCausalLM.set_eagle3_layers_to_capture``): vLLM/speculators write the index of the hidden
  state entering layer i
  (``hidden-state``); SpecForge/SGLang/ModelOpt/tokenspeed write the output of layer i
  (``layer-output`` = hidden-state − 1). The source convention comes from the format
  (:data:`recipecli.draft.TRAINED_CONVENTION`, from the format specs) or ``--aux-id-convention``;
  unknown → refused. The output convention is the output format's
  (:attr:`~recipecli.convert.formats.OutputFormatSpec.aux_convention`).
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

Modules: :mod:`~recipecli.convert.formats` (the output formats), :mod:`~.options` (the
request: ConvertOptions), :mod:`~.plan` (the plan, decided before a byte is written),
:mod:`~.translate` (fields translated by meaning),
:mod:`~.tensors` (output tensors and shards), :mod:`~.config` (the output ``config.json``),
:mod:`~.semantics` (the meaning a conversion preserves), :mod:`~.casts`, :mod:`~.reader`,
:mod:`~.write`, :mod:`~.verify`, :mod:`~.progress` (the data path), :mod:`~.result` and
:mod:`~.run` (the driver). What a draft format means comes from :mod:`recipecli.draft`.

The names below are imported on first use (:pep:`562`), so that importing
:mod:`recipecli.convert.formats` (``convert --help``) imports no numpy.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

#: public name -> the module of this package defining it
_NAMES: dict[str, str] = {
    "CASTABLE": "casts",
    "CHUNK_BYTES": "casts",
    "ITEMSIZE": "casts",
    "cast_bytes": "casts",
    "f32_to_bf16_bits": "casts",
    "build_config": "config",
    "repo_id_or_none": "config",
    "verifier_name": "config",
    "OutputFormatSpec": "formats",
    "output_format": "formats",
    "output_formats": "formats",
    "CONFIG_DTYPE": "options",
    "DTYPE_OPTION": "options",
    "ConvertOptions": "options",
    "ConvertPlan": "plan",
    "plan_conversion": "plan",
    "Progress": "progress",
    "progress_bars_shown": "progress",
    "TensorReader": "reader",
    "open_reader": "reader",
    "ConvertResult": "result",
    "format_result": "result",
    "convert": "run",
    "convert_inputs": "run",
    "draft_semantics": "semantics",
    "semantic_diff": "semantics",
    "TensorMove": "tensors",
    "layout_shards": "tensors",
    "map_tensor_name": "tensors",
    "Translation": "translate",
    "derive_t2d": "translate",
    "verify_reopened": "verify",
    "make_temp_out": "write",
    "write_output": "write",
    "write_tensor": "write",
}

if TYPE_CHECKING:
    from recipecli.convert.casts import (
        CASTABLE,
        CHUNK_BYTES,
        ITEMSIZE,
        cast_bytes,
        f32_to_bf16_bits,
    )
    from recipecli.convert.config import build_config, repo_id_or_none, verifier_name
    from recipecli.convert.formats import OutputFormatSpec, output_format, output_formats
    from recipecli.convert.options import CONFIG_DTYPE, DTYPE_OPTION, ConvertOptions
    from recipecli.convert.plan import ConvertPlan, plan_conversion
    from recipecli.convert.progress import Progress, progress_bars_shown
    from recipecli.convert.reader import TensorReader, open_reader
    from recipecli.convert.result import ConvertResult, format_result
    from recipecli.convert.run import convert, convert_inputs
    from recipecli.convert.semantics import draft_semantics, semantic_diff
    from recipecli.convert.tensors import TensorMove, layout_shards, map_tensor_name
    from recipecli.convert.translate import Translation, derive_t2d
    from recipecli.convert.verify import verify_reopened
    from recipecli.convert.write import make_temp_out, write_output, write_tensor
else:

    def __getattr__(name: str) -> Any:
        """Import the module defining public name ``name`` on first use (:data:`_NAMES`)."""
        module = _NAMES.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(import_module(f"{__name__}.{module}"), name)
        globals()[name] = value
        return value


__all__ = [
    "CASTABLE",
    "CHUNK_BYTES",
    "CONFIG_DTYPE",
    "ConvertOptions",
    "ConvertPlan",
    "ConvertResult",
    "DTYPE_OPTION",
    "ITEMSIZE",
    "OutputFormatSpec",
    "Progress",
    "TensorMove",
    "TensorReader",
    "Translation",
    "build_config",
    "cast_bytes",
    "convert",
    "convert_inputs",
    "derive_t2d",
    "draft_semantics",
    "f32_to_bf16_bits",
    "format_result",
    "layout_shards",
    "make_temp_out",
    "map_tensor_name",
    "open_reader",
    "output_format",
    "output_formats",
    "plan_conversion",
    "progress_bars_shown",
    "repo_id_or_none",
    "semantic_diff",
    "verifier_name",
    "verify_reopened",
    "write_output",
    "write_tensor",
]
