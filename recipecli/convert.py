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
  (:data:`recipecli.check.TRAINED_CONVENTION`) or ``--aux-id-convention``; unknown → refused.
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
"""

from __future__ import annotations

import json
import mmap
import os
import queue
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from recipecli.checkpoint.model import Checkpoint
from recipecli.checkpoint.safetensors_header import read_file_header
from recipecli.draft import LAYER_ROLES, DraftModel, canonical_draft
from recipecli.errors import ConvertError, UsageError
from recipecli.hints import HF_DOWNLOAD
from recipecli.safe_write import (
    CONVERT_MARKER,
    check_parent,
    checkpoint_inputs,
    convert_marker_text,
    current_umask,
    fsync_dir,
    interrupt_on_signals,
    path_inputs,
    prepare_dir,
    replace_dir,
)

OutputFormat = Literal["speculators", "eagle3"]
Convention = Literal["hidden-state", "layer-output"]

#: bytes moved per read/cast/write/compare step (bounds the working set)
CHUNK_BYTES = 32 << 20
#: bytes per cast step (numpy temporaries stay cache-sized: ~2x faster than 32 MB steps)
CAST_CHUNK_BYTES = 4 << 20
#: bytes compared per step of the (memory-mapped) verification
VERIFY_CHUNK = 8 << 20

#: floating dtypes ``--dtype`` may cast between; everything else (I64, BOOL, FP8, U8 …) is copied
CASTABLE = frozenset({"F16", "BF16", "F32"})
ITEMSIZE: Mapping[str, int] = {"F16": 2, "BF16": 2, "F32": 4}
DTYPE_OPTION: Mapping[str, str | None] = {"keep": None, "bf16": "BF16", "fp16": "F16"}
CONFIG_DTYPE: Mapping[str, str] = {"BF16": "bfloat16", "F16": "float16", "F32": "float32"}

#: Convention the aux ids of each source format are written in (docs/convert.md, aux ids); the same table
#: `check` uses. Formats not listed (NeMo, nebius) need ``--aux-id-convention``.
SOURCE_CONVENTION: Mapping[str, Convention] = {
    "A": "layer-output",
    "B": "layer-output",
    "C": "layer-output",
    "D": "hidden-state",
    "F": "hidden-state",
}
OUTPUT_CONVENTION: Mapping[str, Convention] = {
    "speculators": "hidden-state",
    "eagle3": "layer-output",
}

#: Config keys that carry EAGLE meaning (translated, never copied blindly).
EAGLE_KEYS = frozenset(
    {
        "architectures",
        "auto_map",
        "draft_vocab_size",
        "target_hidden_size",
        "eagle_aux_hidden_state_layer_ids",
        "eagle_config",
        "norm_before_residual",
        "norm_before_fc",
        "fc_norm",
        "norm_output",
        "num_aux_hidden_states",
        "speculators_model_type",
        "speculators_config",
        "speculators_version",
        "transformer_layer_config",
        "torch_dtype",
        "dtype",
        "tie_word_embeddings",
        "has_no_defaults_at_init",
        "truncated_vocab_size",
    }
)

DEFAULT_PROPOSAL_METHODS = [
    {
        "accept_tolerance": 0.0,
        "proposal_type": "greedy",
        "speculative_tokens": 3,
        "verifier_accept_k": 1,
    }
]

_TOP_NAMES = re.compile(
    r"^(fc\.weight|fc\.bias|norm\.weight|lm_head\.weight|d2t|t2d|embed_tokens\.weight|"
    r"input_norm\.weight|fc_norm\.\d+\.weight|mask_hidden)$"
)
_LAYER_NAME = re.compile(r"^(?:midlayer\.(?:(\d+)\.)?|layers\.(\d+)\.)(.+)$")
_LAYER_SUFFIXES = frozenset(LAYER_ROLES.values()) | {"self_attn.rotary_emb.inv_freq"}


# --------------------------------------------------------------------------- option parsing


def parse_size(text: str) -> int:
    """Parse ``--max-shard-size`` (``5GB``, ``500MB``, ``2GiB``, ``1000000``) into bytes.

    Decimal units (KB, MB, GB, TB) are powers of 1000 as in Hugging Face's ``save_pretrained``;
    binary units (KiB, MiB, GiB, TiB) powers of 1024.

    Raises:
        UsageError: not a positive size.
    """
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)?\s*", text or "", re.IGNORECASE)
    if not m:
        raise UsageError(f"--max-shard-size {text!r}: expected a size such as 5GB, 500MB or 2GiB")
    unit = (m.group(2) or "B").upper()
    scale = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
    scale |= {"KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}
    size = int(float(m.group(1)) * scale[unit])
    if size <= 0:
        raise UsageError(f"--max-shard-size {text!r}: must be positive")
    return size


def parse_aux_ids(text: str) -> tuple[int, ...]:
    """Parse ``--aux-ids 1,23,44``.

    Raises:
        UsageError: empty or non-integer entries, or negative ids.
    """
    try:
        ids = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        ids = ()
    if not ids or any(i < 0 for i in ids):
        raise UsageError(f"--aux-ids {text!r}: expected comma-separated layer ids, e.g. 1,23,44")
    return ids


def to_hidden_state(ids: Sequence[int], convention: Convention) -> tuple[int, ...]:
    """Aux ids as HF ``hidden_states`` indices (vLLM convention: ``vllm/model_executor/models/
    llama.py`` ``LlamaModel.forward`` captures the state entering layer i)."""
    return tuple(i + 1 for i in ids) if convention == "layer-output" else tuple(ids)


def from_hidden_state(ids: Sequence[int], convention: Convention) -> tuple[int, ...]:
    """Inverse of :func:`to_hidden_state`."""
    return tuple(i - 1 for i in ids) if convention == "layer-output" else tuple(ids)


# --------------------------------------------------------------------------- casts


def f32_to_bf16_bits(f32: np.ndarray) -> np.ndarray:
    """Round float32 values to bfloat16 bit patterns, round-to-nearest-even.

    Same rule as torch's scalar ``c10::BFloat16`` (``round_to_nearest_even``): NaN becomes 0x7FC0
    (torch's vectorised CPU path writes 0x7FFF; both are NaN), overflow rounds to ±inf.

    Args:
        f32: float32 array, any shape.

    Returns:
        uint16 array of the same shape.
    """
    u = np.ascontiguousarray(f32, dtype=np.float32).view(np.uint32)
    r = u >> np.uint32(16)  # in-place steps: few temporaries, fast on cache-sized chunks
    r &= np.uint32(1)
    r += np.uint32(0x7FFF)
    r += u
    r >>= np.uint32(16)
    out = r.astype(np.uint16)
    nan = np.isnan(u.view(np.float32))
    if nan.any():
        out[nan] = 0x7FC0
    return out


def _as_f32(raw: Any, dtype: str) -> np.ndarray:
    if dtype == "BF16":
        return (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << np.uint32(16)).view(np.float32)
    if dtype == "F16":
        return np.frombuffer(raw, dtype="<f2").astype(np.float32)
    if dtype == "F32":
        return np.frombuffer(raw, dtype="<f4")
    raise ValueError(f"cannot cast {dtype}")


def cast_bytes(raw: Any, src: str, dst: str) -> bytes:
    """Cast little-endian tensor bytes between F32, F16 and BF16 with numpy (no torch).

    fp16 ↔ fp32 ↔ bf16 go through float32, which holds every fp16 and bf16 value exactly; the one
    rounding step is round-to-nearest-even (numpy's float32→float16, :func:`f32_to_bf16_bits`).

    Args:
        raw: bytes-like holding a whole number of ``src`` elements.
        src, dst: safetensors dtype names in :data:`CASTABLE`.

    Returns:
        The ``dst`` bytes (a copy of ``raw`` when ``src == dst``).
    """
    if src == dst:
        return bytes(raw)
    f32 = _as_f32(raw, src)
    if dst == "F32":
        return f32.astype("<f4").tobytes()
    if dst == "F16":
        with np.errstate(over="ignore"):  # out-of-range values become ±inf, as in torch
            return f32.astype("<f2").tobytes()
    if dst == "BF16":
        return f32_to_bf16_bits(f32).astype("<u2").tobytes()
    raise ValueError(f"cannot cast to {dst}")


# --------------------------------------------------------------------------- vocab maps


def derive_t2d(d2t: np.ndarray, V: int) -> np.ndarray:
    """``t2d`` [V] bool from ``d2t`` [Vd] int64 offsets (target id = i + d2t[i], as vLLM v0.33.0
    ``Eagle3LlamaForCausalLM.compute_logits`` maps draft logits).

    ``target_id = i + d2t[i]``; ``t2d[target_id] = True`` for every draft id i.

    Raises:
        ConvertError: ``d2t`` is not a valid map (a target id outside [0, V), or not strictly
            increasing), so no ``t2d`` can be derived without inventing one.
    """
    d2t = np.asarray(d2t, dtype=np.int64)
    ids = np.arange(d2t.shape[0], dtype=np.int64) + d2t
    if ids.size and (ids.min() < 0 or ids.max() >= V):
        bad = int(np.flatnonzero((ids < 0) | (ids >= V))[0])
        raise ConvertError(
            f"d2t maps draft id {bad} to target id {int(ids[bad])}, outside [0, {V}): "
            "d2t holds offsets (target = i + d2t[i]); fix the map before converting",
            hint="see docs/convert.md, vocab maps",
        )
    if ids.size > 1 and not np.all(np.diff(ids) > 0):
        bad = int(np.flatnonzero(np.diff(ids) <= 0)[0]) + 1
        raise ConvertError(
            f"d2t is not strictly increasing at draft id {bad} (target ids {int(ids[bad - 1])}, "
            f"{int(ids[bad])}): not a valid draft→target map, so no t2d can be derived",
            hint="see docs/convert.md, vocab maps",
        )
    t2d = np.zeros(V, dtype=bool)
    t2d[ids] = True
    return t2d


# --------------------------------------------------------------------------- plan


@dataclass(frozen=True)
class ConvertOptions:
    """What ``recipecli convert`` was asked to do.

    Attributes:
        to: ``speculators`` or ``eagle3``.
        aux_ids: ``--aux-ids`` (in ``aux_id_convention``), or None.
        aux_id_convention: convention of the source ids (or of ``aux_ids``), or None = by format.
        norm_before_residual: ``--norm-before-residual``, or None = from the source.
        dtype: ``keep``, ``bf16`` or ``fp16``.
        embed: ``keep`` or ``drop`` (drop only when byte-identical to the target's embedding).
        max_shard_size: bytes per output shard (a larger tensor gets a shard of its own).
        force: replace a previous convert output in OUT, and accept tokenspeed-unservable
            output, conflicting flags and check errors.
        verifier: ``--verifier``: ``speculators_config.verifier.name_or_path`` as given (a
            repo id, or a path the user chose to publish), or None = from ``--target``
            (:func:`verifier_name`).
    """

    to: OutputFormat
    aux_ids: tuple[int, ...] | None = None
    aux_id_convention: Convention | None = None
    norm_before_residual: bool | None = None
    dtype: str = "keep"
    embed: str = "keep"
    max_shard_size: int = 5 * 10**9
    force: bool = False
    verifier: str | None = None


@dataclass(frozen=True)
class TensorMove:
    """One output tensor: where it comes from and how.

    Attributes:
        src: source tensor name (for a derived tensor, the tensor it is derived from).
        dst: output tensor name.
        src_dtype, dst_dtype: safetensors dtypes (differ only for a requested cast).
        shape: tensor shape (never changed).
        nbytes: output size in bytes.
        derived: True when the values are computed (``t2d`` from ``d2t``), not copied.
        shard: output file holding it (set by :func:`layout_shards`).
    """

    src: str
    dst: str
    src_dtype: str
    dst_dtype: str
    shape: tuple[int, ...]
    nbytes: int
    derived: bool = False
    shard: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"from": self.src, "to": self.dst, "shape": list(self.shape)}
        out["dtype"] = (
            self.dst_dtype
            if self.src_dtype == self.dst_dtype
            else f"{self.src_dtype}->{self.dst_dtype}"
        )
        out["bytes"] = self.nbytes
        out["shard"] = self.shard
        if self.derived:
            out["derived"] = True
        return out


@dataclass(frozen=True)
class Translation:
    """A config field whose value or key changed by meaning (JSON ``translated``)."""

    field: str
    source: Any
    output: Any
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "from": self.source, "to": self.output, "why": self.why}


@dataclass(frozen=True)
class ConvertPlan:
    """Everything :func:`convert` will write, decided before a byte is written.

    Attributes:
        draft: the source in canonical form.
        options: the request.
        config: the output ``config.json``.
        moves: output tensors in file order, with shards assigned.
        dropped: (source tensor, why) for tensors deliberately not written (``--embed drop``).
        translations: every field translated by meaning.
        config_keys_dropped: (source key, why) for format-specific keys with no output meaning.
        derived: output name -> bytes for computed tensors.
        expected: the semantic view (:func:`draft_semantics`) the output must have.
        notes: warnings worth showing (``--force`` overrides, check findings).
    """

    draft: DraftModel
    options: ConvertOptions
    config: dict[str, Any]
    moves: tuple[TensorMove, ...]
    dropped: tuple[tuple[str, str], ...]
    translations: tuple[Translation, ...]
    config_keys_dropped: tuple[tuple[str, str], ...]
    derived: Mapping[str, bytes]
    expected: Mapping[str, Any]
    notes: tuple[str, ...] = ()

    @property
    def total_bytes(self) -> int:
        return sum(m.nbytes for m in self.moves)

    @property
    def largest_tensor_bytes(self) -> int:
        return max((m.nbytes for m in self.moves), default=0)


def draft_semantics(d: DraftModel, *, norm_output_meaning: str | None = None) -> dict[str, Any]:
    """The format-independent meaning of a draft: what a conversion must preserve.

    Names, prefixes, where keys sit and ``norm_output``'s spelling are left out; aux ids are
    expressed as hidden-state indices and ``norm_output`` as two booleans (see the module
    docstring): ``norm_before_head`` and ``post_norm_chaining``.

    Args:
        d: canonical draft.
        norm_output_meaning: override the format's reading of ``norm_output`` (the ``eagle3``
            output is written in tokenspeed's chaining meaning although it detects as format B).

    Returns:
        A flat dict of plain values.
    """
    meaning = norm_output_meaning or d.norm_output_meaning
    if meaning == "norm-before-head":
        chaining, before_head = False, d.norm_output is not False
    else:
        chaining, before_head = bool(d.norm_output), True
    conv = SOURCE_CONVENTION.get(d.format or "")
    if d.aux_ids is None:
        aux: Any = None
    elif conv is None:
        aux = {"unknown-convention": list(d.aux_ids)}
    else:
        aux = list(to_hidden_state(d.aux_ids, conv))
    return {
        "H": d.H,
        "nh": d.nh,
        "nkv": d.nkv,
        "hd": d.hd,
        "I": d.I,
        "layers": d.layers,
        "eps": d.eps,
        "V": d.V,
        "Vd": d.Vd,
        "Ht": d.Ht,
        "k": d.k,
        "attention": d.attention,
        "attention_bias": d.attention_bias,
        "max_position_embeddings": d.max_position_embeddings,
        "aux_hidden_states": aux,
        "fc_norm": d.fc_norm,
        "norm_before_fc": d.norm_before_fc,
        "norm_before_residual": d.norm_before_residual,
        "norm_before_head": before_head,
        "post_norm_chaining": chaining,
        "has_embed": d.has_embed,
        "has_lm_head": d.has_lm_head,
        "has_d2t": d.has_d2t,
        "has_t2d": d.has_t2d,
        "has_fc_bias": d.has_fc_bias,
        "tie_word_embeddings": d.tie_word_embeddings,
        "dtype": d.dtype,
    }


def semantic_diff(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Fields whose values differ between two :func:`draft_semantics` views."""
    return {k: (a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)}


def map_tensor_name(name: str, d: DraftModel, to: OutputFormat, n_layers: int) -> str | None:
    """Output name of source tensor ``name`` (``midlayer.*`` <-> ``layers.{i}.*``, the rename vLLM
    v0.33.0 ``Eagle3LlamaForCausalLM.load_weights`` applies), or None when unknown.

    ``midlayer.*`` / ``midlayer.{i}.*`` / ``layers.{i}.*`` become ``layers.{i}.*`` (speculators) or
    ``midlayer.*`` (eagle3, one layer; ``midlayer.{i}.*`` for more); top-level roles keep their
    names; a NeMo ``model.`` prefix is stripped.
    """
    if d.tensor_prefix and name.startswith(d.tensor_prefix):
        name = name[len(d.tensor_prefix) :]
    if _TOP_NAMES.match(name):
        return name
    m = _LAYER_NAME.match(name)
    if not m or m.group(3) not in _LAYER_SUFFIXES:
        return None
    idx = int(m.group(1) or m.group(2) or 0)
    if to == "speculators":
        return f"layers.{idx}.{m.group(3)}"
    return f"midlayer.{m.group(3)}" if n_layers == 1 else f"midlayer.{idx}.{m.group(3)}"


def _layer_indices(names: Sequence[str], d: DraftModel) -> set[int]:
    out = set()
    for n in names:
        n = n[len(d.tensor_prefix) :] if d.tensor_prefix and n.startswith(d.tensor_prefix) else n
        m = _LAYER_NAME.match(n)
        if m:
            out.add(int(m.group(1) or m.group(2) or 0))
    return out


def _refuse(msg: str, path: str, hint: str | None = None) -> ConvertError:
    return ConvertError(msg, path=path, hint=hint)


def _source_layer_config(ck: Checkpoint, d: DraftModel) -> tuple[dict[str, Any], dict[str, Any]]:
    """(layer/geometry keys, top-level keys) of the source config."""
    cfg = dict(ck.config)
    if d.format == "D" and isinstance(cfg.get("transformer_layer_config"), Mapping):
        return dict(cfg["transformer_layer_config"]), cfg
    return {k: v for k, v in cfg.items() if k not in EAGLE_KEYS}, cfg


def _resolve_aux(
    ck: Checkpoint, d: DraftModel, opts: ConvertOptions, fc_k: int | None
) -> tuple[tuple[int, ...] | None, list[Translation], list[str]]:
    """Aux ids in hidden-state convention for the output (None = absent), translations, notes."""
    src = ck.source
    by_format = SOURCE_CONVENTION.get(d.format or "")
    # --aux-id-convention describes --aux-ids when they are given, else the draft's own ids
    conv = by_format if opts.aux_ids is not None else (opts.aux_id_convention or by_format)
    trans: list[Translation] = []
    notes: list[str] = []
    src_hidden: tuple[int, ...] | None = None
    if d.aux_ids is not None and conv is None and opts.aux_ids is not None:
        notes.append(
            f"the draft's aux ids {list(d.aux_ids)} (convention unknown) replaced by --aux-ids"
        )
    elif d.aux_ids is not None:
        if conv is None:
            raise _refuse(
                f"format {d.format} does not say whether its aux ids {list(d.aux_ids)} are hidden-state or "
                "layer-output indices",
                src,
                "pass --aux-id-convention hidden-state|layer-output (docs/convert.md, aux ids)",
            )
        src_hidden = to_hidden_state(d.aux_ids, conv)
    if opts.aux_ids is not None:
        if opts.aux_id_convention is None:
            raise UsageError(
                "--aux-ids needs --aux-id-convention hidden-state|layer-output to say which convention "
                "the ids are written in (docs/convert.md, aux ids)"
            )
        given = to_hidden_state(opts.aux_ids, opts.aux_id_convention)
        if src_hidden is not None and given != src_hidden and not opts.force:
            raise _refuse(
                f"--aux-ids {list(opts.aux_ids)} ({opts.aux_id_convention}) = hidden states {list(given)} "
                f"but the draft's own ids {list(d.aux_ids)} mean hidden states {list(src_hidden)}",
                src,
                "drop --aux-ids, or add --force to override the draft's ids",
            )
        if src_hidden is not None and given != src_hidden:
            notes.append(
                f"--force: aux ids overridden, hidden states {list(src_hidden)} → {list(given)}"
            )
        trans.append(
            Translation(
                "aux_hidden_states",
                list(src_hidden) if src_hidden is not None else None,
                list(given),
                f"--aux-ids {','.join(map(str, opts.aux_ids))} in {opts.aux_id_convention} convention",
            )
        )
        src_hidden = given
    if src_hidden is None:
        if fc_k is not None and fc_k != 3:
            raise _refuse(
                f"fc takes {fc_k} target hidden states but the config names no aux layer ids; engines "
                "would build a 3-chunk fc",
                src,
                "pass --aux-ids and --aux-id-convention (docs/convert.md, aux ids)",
            )
        return None, trans, notes
    if fc_k is not None and len(src_hidden) != fc_k:
        raise _refuse(
            f"{len(src_hidden)} aux ids {list(src_hidden)} but fc takes {fc_k} target hidden states",
            src,
            "give as many aux ids as fc chunks",
        )
    out_conv = OUTPUT_CONVENTION[opts.to]
    out_ids = from_hidden_state(src_hidden, out_conv)
    if any(i < 0 for i in out_ids):
        raise _refuse(
            f"aux hidden states {list(src_hidden)} include the embedding output (index 0), which "
            f"{opts.to} output cannot express in {out_conv} convention",
            src,
            "see docs/convert.md, aux ids",
        )
    if d.aux_ids is not None and opts.aux_ids is None:
        trans.append(
            Translation(
                "eagle_aux_hidden_state_layer_ids",
                {"ids": list(d.aux_ids), "where": d.sources.get("aux_ids"), "convention": conv},
                {"ids": list(out_ids), "where": _aux_where(opts.to), "convention": out_conv},
                "hidden states entering layers "
                f"{list(src_hidden)}; vLLM/speculators write hidden-state indices, SpecForge/SGLang/"
                "ModelOpt/tokenspeed layer-output indices (= hidden-state - 1)",
            )
        )
    return src_hidden, trans, notes


def _aux_where(to: OutputFormat) -> str:
    if to == "speculators":
        return "eagle_aux_hidden_state_layer_ids"
    return "eagle_aux_hidden_state_layer_ids + eagle_config.eagle_aux_hidden_state_layer_ids"


def plan_conversion(
    ck: Checkpoint, opts: ConvertOptions, target_ck: Checkpoint | None = None
) -> ConvertPlan:
    """Decide the whole conversion (config, tensor moves, translations) without writing anything.

    Reads only the config, tensor headers and, when present, ``d2t`` values (to derive ``t2d``).

    Args:
        ck: the source draft (local safetensors or ``.bin`` directory).
        opts: the request.
        target_ck: ``--target`` (sets the speculators verifier; needed for ``--embed drop``).

    Returns:
        A :class:`ConvertPlan` with shards laid out.

    Raises:
        ConvertError: the conversion would lose or invent information (each case names the field
            and the flag that resolves it).
        UsageError: inconsistent flags.
    """
    src = ck.source
    if opts.verifier is not None and opts.to != "speculators":
        raise UsageError(
            "--verifier applies to --to speculators only (eagle3 output names no verifier)"
        )
    d = canonical_draft(ck)
    if d.format is None:
        raise _refuse(
            "not an EAGLE3 draft (no speculators_model_type, Eagle3 architecture or one-layer Llama "
            "with draft_vocab_size)",
            src,
            "see docs/check.md for the draft formats convert reads",
        )
    if d.attention == "MLA":
        raise _refuse(
            f"MLA draft ({d.architecture}) has no speculators or LlamaForCausalLMEagle3 layout",
            src,
            "serve it in its own format",
        )
    names = sorted(ck.tensors)
    layers = _layer_indices(names, d)
    n_layers = max(len(layers), 1)
    trans: list[Translation] = []
    notes: list[str] = []

    # ---------------------------------------------------------------- tokenspeed-servable?
    fc_name = d.tensor("fc")
    fc_k = None
    if fc_name in ck.tensors and d.Ht:
        width = ck.tensors[fc_name].shape[-1]
        fc_k = width // d.Ht if width % d.Ht == 0 else None
    hidden_ids, aux_trans, aux_notes = _resolve_aux(ck, d, opts, fc_k)
    trans += aux_trans
    notes += aux_notes

    # ---------------------------------------------------------------- norm_before_residual
    nbr = d.norm_before_residual
    if opts.norm_before_residual is not None:
        if nbr is not None and nbr != opts.norm_before_residual and not opts.force:
            raise _refuse(
                f"--norm-before-residual {str(opts.norm_before_residual).lower()} contradicts the draft's "
                f"{d.sources.get('norm_before_residual')} = {str(nbr).lower()}",
                src,
                "drop the flag, or add --force to override",
            )
        if nbr != opts.norm_before_residual:
            trans.append(
                Translation(
                    "norm_before_residual",
                    nbr,
                    opts.norm_before_residual,
                    "--norm-before-residual (formats A/B/C do not record it)",
                )
            )
        nbr = opts.norm_before_residual
    if opts.to == "speculators" and nbr is None:
        raise _refuse(
            f"format {d.format} does not record norm_before_residual and speculators output must state it "
            "(vLLM assumes true when a speculators config omits it, speculators' default is false)",
            src,
            "pass --norm-before-residual true|false as the draft was trained",
        )

    # ---------------------------------------------------------------- norm_output
    if d.norm_output_meaning == "norm-before-head":
        if d.norm_output is False:
            raise _refuse(
                f"norm_output false in format {d.format} means no norm before the lm_head, which "
                "speculators, vLLM and tokenspeed cannot express",
                src,
                "see docs/convert.md, norm_output",
            )
        chaining = False
        if d.norm_output is not None:
            trans.append(
                Translation(
                    "norm_output",
                    d.norm_output,
                    False if opts.to == "speculators" else None,
                    f"format {d.format} norm_output means 'norm before lm_head' (SpecForge); the output "
                    "key means Eagle 3.1 post-norm chaining, which this draft does not do",
                )
            )
    else:
        chaining = bool(d.norm_output)

    # ---------------------------------------------------------------- tokenspeed refusals
    if opts.to == "eagle3":
        why = []
        if n_layers > 1:
            why.append(
                f"{n_layers} decoder layers (tokenspeed: 'EAGLE3 currently only supports 1 layer')"
            )
        if d.target_hidden_size_declared and d.Ht != d.H:
            why.append(
                f"target_hidden_size {d.Ht} != hidden_size {d.H} (tokenspeed's Llama path ignores target_hidden_size)"
            )
        if nbr is True:
            why.append(
                "norm_before_residual true (tokenspeed always adds the raw hidden as residual)"
            )
        if why and not opts.force:
            raise _refuse(
                "tokenspeed cannot serve this draft as eagle3: " + "; ".join(why),
                src,
                "convert --to speculators for vLLM, or add --force (docs/convert.md, tokenspeed)",
            )
        notes += [f"--force: tokenspeed cannot serve this output: {w}" for w in why]

    # ---------------------------------------------------------------- vocab maps
    V, Vd = d.V, d.Vd
    if V is not None and Vd < V and not d.has_d2t:
        raise _refuse(
            f"draft_vocab_size {Vd} < vocab_size {V} but there is no d2t: the draft→target map is "
            "unknown (engines would map draft ids onto target ids 0..Vd-1)",
            src,
            "add the d2t the draft was trained with; convert never invents one",
        )
    derived: dict[str, bytes] = {}
    if d.has_d2t and not d.has_t2d:
        if V is None:
            notes.append("d2t kept; t2d not derived because vocab_size is unknown")
        else:
            d2t = ck.read_tensor("d2t")
            t2d = derive_t2d(d2t, V)
            derived["t2d"] = t2d.tobytes()
            trans.append(
                Translation(
                    "t2d",
                    None,
                    f"derived from d2t: bool [{V}] with {int(t2d.sum())} entries true",
                    "t2d[i + d2t[i]] = True for every draft id i",
                )
            )

    # ---------------------------------------------------------------- tensors
    cast_to = DTYPE_OPTION.get(opts.dtype)
    if opts.dtype not in DTYPE_OPTION:
        raise UsageError(f"--dtype {opts.dtype!r}: expected keep, bf16 or fp16")
    unknown = [n for n in names if map_tensor_name(n, d, opts.to, n_layers) is None]
    if unknown:
        raise _refuse(
            f"{len(unknown)} tensor(s) have no place in {opts.to} output: {', '.join(unknown[:5])}"
            + (" …" if len(unknown) > 5 else ""),
            src,
            "convert never drops weights; remove them from the checkpoint first if they are junk",
        )
    dropped: list[tuple[str, str]] = []
    moves: list[TensorMove] = []
    embed_name = d.tensor("embed_tokens")
    for n in names:
        info = ck.tensors[n]
        if n == embed_name and opts.embed == "drop":
            _check_embed_drop(ck, d, target_ck, opts)
            dropped.append((n, "--embed drop: byte-identical to the target's embedding"))
            continue
        dst_dtype = cast_to if (cast_to and info.dtype in CASTABLE) else info.dtype
        nbytes = info.nbytes
        if dst_dtype != info.dtype:
            nbytes = info.nbytes // ITEMSIZE[info.dtype] * ITEMSIZE[dst_dtype]
        moves.append(
            TensorMove(
                n,
                map_tensor_name(n, d, opts.to, n_layers) or n,
                info.dtype,
                dst_dtype,
                tuple(info.shape),
                nbytes,
            )
        )
    for dst, raw in derived.items():
        moves.append(TensorMove("d2t", dst, "BOOL", "BOOL", (int(V or 0),), len(raw), derived=True))
    dsts = [m.dst for m in moves]
    if len(set(dsts)) != len(dsts):
        dup = sorted({x for x in dsts if dsts.count(x) > 1})
        raise _refuse(f"two source tensors map to the same output name: {dup}", src)
    moves.sort(key=lambda m: m.dst)
    moves = layout_shards(moves, opts.max_shard_size)

    # ---------------------------------------------------------------- config
    config, cfg_trans, cfg_dropped = build_config(
        ck,
        d,
        opts,
        hidden_ids=hidden_ids,
        nbr=nbr,
        chaining=chaining,
        target_ck=target_ck,
        n_layers=n_layers,
    )
    trans += cfg_trans

    # ---------------------------------------------------------------- expected meaning
    expected = draft_semantics(d)
    expected["aux_hidden_states"] = list(hidden_ids) if hidden_ids is not None else None
    expected["norm_before_residual"] = nbr
    expected["post_norm_chaining"] = chaining
    expected["norm_before_head"] = True
    expected["has_t2d"] = d.has_t2d or "t2d" in derived
    expected["has_embed"] = d.has_embed and opts.embed != "drop"
    if V is not None and Vd < V:
        expected["tie_word_embeddings"] = False
    if cast_to:
        expected["dtype"] = cast_to
    expected["layers"] = n_layers
    if hidden_ids is not None:
        expected["k"] = len(hidden_ids)
    return ConvertPlan(
        d,
        opts,
        config,
        tuple(moves),
        tuple(dropped),
        tuple(trans),
        tuple(cfg_dropped),
        derived,
        expected,
        tuple(notes),
    )


def layout_shards(moves: Sequence[TensorMove], max_shard_size: int) -> list[TensorMove]:
    """Assign shard files greedily in order: a new shard starts when the next tensor would push
    the current one past ``max_shard_size`` (a tensor larger than that gets a shard to itself).

    Returns:
        The moves with ``shard`` set: ``model.safetensors`` for one shard, else
        ``model-0000i-of-0000N.safetensors``.
    """
    groups: list[list[TensorMove]] = [[]]
    size = 0
    for m in moves:
        if groups[-1] and size + m.nbytes > max_shard_size:
            groups.append([])
            size = 0
        groups[-1].append(m)
        size += m.nbytes
    n = len(groups)
    out = []
    for i, g in enumerate(groups, start=1):
        name = "model.safetensors" if n == 1 else f"model-{i:05d}-of-{n:05d}.safetensors"
        out += [replace(m, shard=name) for m in g]
    return out


def _check_embed_drop(
    ck: Checkpoint, d: DraftModel, target_ck: Checkpoint | None, opts: ConvertOptions
) -> None:
    """``--embed drop`` is allowed only when the engines can share the target's embedding and it is
    byte-identical to the draft's (vLLM v0.33.0 ``vllm/v1/worker/gpu/spec_decode/eagle/utils.py``
    ``load_eagle_model`` shares the target's embedding with a draft that ships none; tokenspeed
    PR #837 for replicated vs sharded sharing)."""
    src = ck.source
    if d.target_hidden_size_declared and d.Ht != d.H:
        raise _refuse(
            f"--embed drop: draft hidden {d.H} != target hidden {d.Ht}, so the target embedding cannot be "
            "shared; the draft must ship its own embed_tokens",
            src,
            "keep the embedding (--embed keep)",
        )
    if opts.force:
        return
    if target_ck is None:
        raise _refuse(
            "--embed drop needs --target to prove the draft's embed_tokens is byte-identical to the "
            "target's (else dropping it loses weights)",
            src,
            "add --target SOURCE, or --force to drop it unchecked",
        )
    from recipecli.target import target_model

    tm = target_model(target_ck)
    name = d.tensor("embed_tokens")
    mine = ck.tensors[name]
    theirs = target_ck.tensors.get(tm.embed_name or "")
    if theirs is None or (theirs.dtype, theirs.shape) != (mine.dtype, mine.shape):
        raise _refuse(
            "--embed drop: the target's embedding "
            + (f"{theirs.dtype} {list(theirs.shape)}" if theirs else "is not in its tensor table")
            + f" differs from the draft's {mine.dtype} {list(mine.shape)}",
            src,
            "keep the embedding (--embed keep)",
        )
    a, b = open_reader(ck), open_reader(target_ck)
    try:
        for off in range(0, mine.nbytes, CHUNK_BYTES):
            n = min(CHUNK_BYTES, mine.nbytes - off)
            if bytes(a.read(name, off, n)) != bytes(b.read(theirs.name, off, n)):
                raise _refuse(
                    "--embed drop: the draft's embed_tokens differs from the target's (first differing "
                    f"chunk at byte {off}); dropping it would lose trained weights",
                    src,
                    "keep the embedding (--embed keep)",
                )
    finally:
        a.close()
        b.close()


#: ``models--{org}--{name}/snapshots/{revision}``: a folder of the Hugging Face cache.
_HF_CACHE_SNAPSHOT = re.compile(r"models--(?P<repo>[^/]+)/snapshots/[^/]+/?$")


def repo_id_or_none(text: Any) -> str | None:
    """``text`` when it is a Hugging Face repo id (``org/name`` or ``name``, as
    ``huggingface_hub.utils.validate_repo_id`` accepts it) and not a path spelling
    (``/...``, ``./...``, ``~...``); else None."""
    if not isinstance(text, str) or not text or text[0] in "./~" or "\\" in text:
        return None
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(text)
    except HFValidationError:
        return None
    return text


def _snapshot_origin_kind(path: str) -> str | None:
    """The ``kind`` a snapshot file recorded for its source (hub, hf-cache, local, …)."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError, RecursionError):
        return None
    kind = data.get("kind") if isinstance(data, dict) else None
    return kind if isinstance(kind, str) else None


def verifier_name(target_ck: Checkpoint) -> str:
    """``speculators_config.verifier.name_or_path`` for a ``--target``: the target's Hugging Face
    repo id, never a path of this machine (the output is meant to be published; ``vllm serve
    OUT`` loads the verifier by this name).

    Taken from, in order: a Hub or HF-cache source (the repo id given); a snapshot taken from
    one (its recorded source); a folder inside the HF cache (``models--org--name/snapshots/…``);
    the config's ``_name_or_path`` when it is a repo id (transformers records the name the
    model was loaded by).

    Raises:
        ConvertError: none of these names a repo id (e.g. a local folder whose config has no
            ``_name_or_path``); the message asks for ``--verifier``.
    """
    if target_ck.kind in ("hub", "hf-cache") and repo_id_or_none(target_ck.source):
        return target_ck.source
    if target_ck.kind == "snapshot" and target_ck.origin:
        if _snapshot_origin_kind(target_ck.root) in ("hub", "hf-cache"):
            named = repo_id_or_none(target_ck.origin)
            if named:
                return named
    if target_ck.kind in ("local", "hf-cache") and target_ck.root:
        m = _HF_CACHE_SNAPSHOT.search(os.path.realpath(target_ck.root))
        if m and repo_id_or_none(m["repo"].replace("--", "/", 1)):
            return m["repo"].replace("--", "/", 1)
    named = repo_id_or_none(target_ck.config.get("_name_or_path"))
    if named:
        return named
    raise ConvertError(
        "cannot tell the target's Hugging Face repo id, which speculators output names as its "
        "verifier (a local path would be this machine's and is not written): the target is "
        "not from the Hub or its cache and its config has no _name_or_path naming one",
        path=target_ck.source,
        hint="add --verifier REPO_ID, e.g. --verifier meta-llama/Llama-3.1-8B-Instruct "
        "(or --verifier PATH to write a path on purpose)",
    )


def _without_machine_paths(layer: dict[str, Any], dropped: list[tuple[str, str]]) -> None:
    """Drop a carried ``_name_or_path`` that is not a repo id (a path where the draft was
    saved: nothing a loader reads, and no machine path belongs in a published output)."""
    value = layer.get("_name_or_path")
    if value is not None and repo_id_or_none(value) is None:
        del layer["_name_or_path"]
        dropped.append(("_name_or_path", "a local path where the draft was saved, not a repo id"))


def build_config(
    ck: Checkpoint,
    d: DraftModel,
    opts: ConvertOptions,
    *,
    hidden_ids: tuple[int, ...] | None,
    nbr: bool | None,
    chaining: bool,
    target_ck: Checkpoint | None,
    n_layers: int = 1,
) -> tuple[dict[str, Any], list[Translation], list[tuple[str, str]]]:
    """The output ``config.json``, the config translations, and dropped format-specific keys.

    Every non-EAGLE key of the source layer config (geometry, ``head_dim``, rope fields in either
    form, ``max_position_embeddings``, token ids, custom keys) is carried over unchanged; EAGLE keys
    are re-derived from their meaning.
    """
    layer, top = _source_layer_config(ck, d)
    trans: list[Translation] = []
    dropped: list[tuple[str, str]] = []
    layer = {k: v for k, v in layer.items() if k not in ("torch_dtype", "dtype", "architectures")}
    _without_machine_paths(layer, dropped)
    # dtype key: keep the spelling the source used (transformers-5 writes `dtype`)
    dtype_key = "dtype" if ("dtype" in top and "torch_dtype" not in top) else "torch_dtype"
    src_dtype = top.get("torch_dtype") or top.get("dtype")
    if src_dtype is None and d.format == "D":
        tlc = top.get("transformer_layer_config") or {}
        src_dtype = tlc.get("torch_dtype") or tlc.get("dtype")
    cast_to = DTYPE_OPTION.get(opts.dtype)
    out_dtype = CONFIG_DTYPE[cast_to] if cast_to else src_dtype
    if cast_to and out_dtype != src_dtype:
        trans.append(Translation(dtype_key, src_dtype, out_dtype, f"--dtype {opts.dtype}"))

    tie = d.tie_word_embeddings
    if d.V is not None and d.Vd < d.V and tie:
        trans.append(
            Translation(
                "tie_word_embeddings",
                True,
                False,
                f"draft_vocab_size {d.Vd} < vocab_size {d.V}: a tied head would be the full embedding "
                "(shape mismatch at load)",
            )
        )
        tie = False
    layer["tie_word_embeddings"] = tie
    layer.setdefault("model_type", "llama")
    if d.layers != n_layers:
        trans.append(
            Translation(
                "num_hidden_layers",
                d.layers,
                n_layers,
                f"the checkpoint holds {n_layers} draft decoder layer(s); the config value is not "
                "reliable in format A (one 13B release says 40)",
            )
        )
    layer["num_hidden_layers"] = n_layers

    vd_out = d.Vd if d.draft_vocab_size_declared else None
    ht_out = d.Ht if d.target_hidden_size_declared else None
    eagle_cfg = top.get("eagle_config") if isinstance(top.get("eagle_config"), Mapping) else {}
    for k in eagle_cfg:
        if k != "eagle_aux_hidden_state_layer_ids" and k not in (
            "norm_before_fc",
            "fc_norm",
            "norm_output",
            "norm_before_residual",
        ):
            dropped.append((f"eagle_config.{k}", f"no meaning in {opts.to} output"))
    for k in ("auto_map", "has_no_defaults_at_init", "speculators_version", "truncated_vocab_size"):
        if k in top and not (opts.to == "speculators" and k == "speculators_version"):
            dropped.append((k, f"{d.format}-specific; no meaning in {opts.to} output"))
    if d.format == "D":
        for k in top:
            if k not in EAGLE_KEYS:
                dropped.append((k, "top-level key of a speculators config outside its schema"))
    if "num_aux_hidden_states" in top:
        dropped.append(("num_aux_hidden_states", "k is written as the aux id list"))
    if d.format == "nebius" and "truncated_vocab_size" in top:
        trans.append(
            Translation("draft_vocab_size", {"truncated_vocab_size": d.Vd}, d.Vd, "nebius spelling")
        )
        vd_out = d.Vd
    out_ids = (
        list(from_hidden_state(hidden_ids, OUTPUT_CONVENTION[opts.to]))
        if hidden_ids is not None
        else None
    )

    if opts.to == "speculators":
        spec_cfg = dict(top.get("speculators_config") or {}) if d.format == "D" else {}
        verifier = dict(spec_cfg.get("verifier") or {})
        if target_ck is not None or opts.verifier:
            if target_ck is not None:
                archs = list(target_ck.config.get("architectures") or [])
            else:
                archs = list(verifier.get("architectures") or [])
            if not archs:
                raise _refuse(
                    "--verifier names the target, but its architectures (which the speculators "
                    "verifier records) are unknown",
                    ck.source,
                    "add --target SOURCE (the target's directory, snapshot or repo id)",
                )
            new_verifier = {
                "name_or_path": opts.verifier or verifier_name(target_ck),
                "architectures": archs,
            }
            why = "--verifier" if opts.verifier else "--target"
            if verifier and verifier != new_verifier:
                trans.append(
                    Translation("speculators_config.verifier", verifier, new_verifier, why)
                )
            verifier = new_verifier
        carried = verifier.get("name_or_path")
        if carried and target_ck is None and not opts.verifier and not repo_id_or_none(carried):
            raise _refuse(
                f"the draft's speculators_config.verifier.name_or_path {carried!r} is a path, not "
                "a repo id; it would be written into the output",
                ck.source,
                "add --target SOURCE or --verifier REPO_ID",
            )
        if not verifier.get("name_or_path"):
            raise _refuse(
                "speculators output needs the verifier (target) so that `vllm serve OUT` works alone",
                ck.source,
                "add --target SOURCE (the target repo id or directory)",
            )
        config: dict[str, Any] = {
            "architectures": ["Eagle3Speculator"],
            "speculators_model_type": "eagle3",
        }
        if "speculators_version" in top:
            config["speculators_version"] = top["speculators_version"]
        if out_ids is not None:
            # vLLM sizes fc from num_aux_hidden_states (llama_eagle3.py LlamaModel.__init__),
            # which reaches the draft config only from transformer_layer_config
            # (speculators/base.py extract_transformers_pre_trained_config): without it a draft
            # with other than 3 ids gets a 3-wide fc and fails to load.
            layer = {**layer, "num_aux_hidden_states": len(out_ids)}
        config |= {
            "transformer_layer_config": layer,
            "draft_vocab_size": vd_out if vd_out is not None else d.Vd,
            "target_hidden_size": ht_out,
            "norm_before_residual": nbr,
            "norm_before_fc": d.norm_before_fc,
            "fc_norm": d.fc_norm,
            "norm_output": chaining,
        }
        if out_ids is not None:
            config["eagle_aux_hidden_state_layer_ids"] = out_ids
        config["speculators_config"] = {
            "algorithm": "eagle3",
            "proposal_methods": spec_cfg.get("proposal_methods") or DEFAULT_PROPOSAL_METHODS,
            "default_proposal_method": spec_cfg.get("default_proposal_method") or "greedy",
            "verifier": verifier,
        }
        if out_dtype:
            config[dtype_key] = out_dtype
        return config, trans, dropped

    config = {"architectures": ["LlamaForCausalLMEagle3"], **layer}
    if vd_out is not None:
        config["draft_vocab_size"] = vd_out
    if ht_out is not None:
        config["target_hidden_size"] = ht_out
    if out_ids is not None:
        config["eagle_aux_hidden_state_layer_ids"] = out_ids
        config["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": out_ids}
    if nbr is not None:
        config["norm_before_residual"] = nbr
    if d.norm_before_fc:
        config["norm_before_fc"] = True
    if d.fc_norm:
        config["fc_norm"] = True
    if chaining:
        config["norm_output"] = True
    if out_dtype:
        config[dtype_key] = out_dtype
    if d.format == "D":
        dropped.append(("speculators_config", "eagle3 output names no verifier"))
    return config, trans, dropped


# --------------------------------------------------------------------------- byte readers


class TensorReader:
    """Reads byte ranges of one checkpoint's tensors without materialising whole tensors.

    safetensors: ``pread`` at the header offset (and ``copy_file_range`` for whole copies);
    ``.bin``: torch ``weights_only`` + ``mmap`` (torch imported only here), viewed as bytes.
    """

    def __init__(self, ck: Checkpoint):
        self.ck = ck
        self.root = Path(ck.root)
        self._fds: dict[str, int] = {}
        self._offsets: dict[str, tuple[str, int]] = {}
        #: tensor -> (absolute shard path, absolute data offset), safetensors sources only
        self.offsets: dict[str, tuple[str, int]] = {}
        self._states: dict[str, Mapping[str, Any]] = {}
        self._cached: tuple[str, memoryview] | None = None
        if ck.weight_format == "safetensors":
            for shard in ck.shards:
                header = read_file_header(self.root / shard)
                for name, raw in header.tensors.items():
                    self._offsets[name] = (shard, header.data_start + raw.begin)
                    self.offsets[name] = (str(self.root / shard), header.data_start + raw.begin)

    def _fd(self, shard: str) -> int:
        if shard not in self._fds:
            self._fds[shard] = os.open(self.root / shard, os.O_RDONLY)
        return self._fds[shard]

    def _bin_view(self, name: str) -> memoryview:
        if self._cached and self._cached[0] == name:
            return self._cached[1]
        import torch

        from recipecli.checkpoint.local import load_torch_state

        shard = self.ck.tensors[name].shard
        if shard not in self._states:
            self._states[shard] = load_torch_state(self.root / shard)
        t = self._states[shard][name].contiguous().reshape(-1).view(torch.uint8)
        view = memoryview(t.numpy()).cast("B")
        self._cached = (name, view)
        return view

    def read(self, name: str, offset: int, n: int, out: bytearray | None = None) -> Any:
        """``n`` bytes of tensor ``name`` starting at byte ``offset``.

        Args:
            out: reusable buffer; used (filled in place and returned) when it is exactly ``n``
                bytes long, so that comparisons are a plain ``memcmp`` of two bytearrays.

        Returns:
            A bytearray (safetensors sources) or a memoryview (``.bin`` sources, zero copy).
        """
        if name in self._offsets:
            shard, start = self._offsets[name]
            buf = out if out is not None and len(out) == n else bytearray(n)
            view = memoryview(buf)
            got = os.preadv(self._fd(shard), [view], start + offset)
            while got < n:  # short reads are legal
                more = os.preadv(self._fd(shard), [view[got:]], start + offset + got)
                if more <= 0:
                    raise ConvertError(
                        f"short read of tensor {name!r}", path=str(self.root / shard)
                    )
                got += more
            return buf
        if self.ck.weight_format == "bin":
            return self._bin_view(name)[offset : offset + n]
        return memoryview(self.ck.read_raw_bytes(name))[offset : offset + n]

    def open_all(self) -> None:
        """Open every shard now (readers shared between threads must not open lazily)."""
        for shard, _ in self._offsets.values():
            self._fd(shard)

    def copy_to(self, name: str, nbytes: int, dst_fd: int) -> bool:
        """Copy a whole tensor into ``dst_fd`` (at its position) in the kernel; False if unsupported."""
        if name not in self._offsets or not hasattr(os, "copy_file_range"):
            return False
        shard, start = self._offsets[name]
        done = 0
        try:
            while done < nbytes:
                n = os.copy_file_range(self._fd(shard), dst_fd, nbytes - done, start + done)
                if n <= 0:
                    break
                done += n
        except OSError:
            if done:
                os.lseek(dst_fd, -done, os.SEEK_CUR)
            return False
        if done != nbytes:
            os.lseek(dst_fd, -done, os.SEEK_CUR)
            return False
        return True

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        self._states.clear()
        self._cached = None


def open_reader(ck: Checkpoint) -> TensorReader:
    """A :class:`TensorReader` for a local checkpoint.

    Raises:
        ConvertError: the source has no local weight files (Hub, snapshot or bare config).
    """
    if ck.kind in ("local", "hf-cache") and ck.weight_format not in ("safetensors", "bin"):
        raise ConvertError(
            "the folder has no weight files (no model.safetensors, index or pytorch_model.bin "
            "next to config.json)",
            path=ck.source,
            hint=f"download the weights ({HF_DOWNLOAD}) into it",
        )
    if ck.kind not in ("local", "hf-cache"):
        raise ConvertError(
            f"convert needs the weights on local disk, but this is a {ck.kind} source",
            path=ck.source,
            hint=f"download it first ({HF_DOWNLOAD}) and pass DIR",
        )
    return TensorReader(ck)


# --------------------------------------------------------------------------- progress


class Progress:
    """Byte progress on stderr: a tqdm bar when stderr is a terminal (tqdm's ``disable=None``)
    and tqdm is installed; otherwise silent (:func:`convert` logs one summary line instead, so
    CI logs get no per-step lines)."""

    def __init__(self, total: int, desc: str, enabled: bool = True):
        self.total, self.desc, self.enabled, self.done = total, desc, enabled, 0
        self._bar = None
        if enabled:
            try:
                from tqdm import tqdm
            except ImportError:
                return
            self._bar = tqdm(
                total=total,
                desc=desc,
                unit="B",
                unit_scale=True,
                file=sys.stderr,
                leave=False,
                disable=None,  # no bar unless stderr is a TTY
            )

    def update(self, n: int) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def progress_bars_shown() -> bool:
    """Whether :class:`Progress` draws bars here: stderr is a terminal and tqdm is installed."""
    import importlib.util

    return sys.stderr.isatty() and importlib.util.find_spec("tqdm") is not None


# --------------------------------------------------------------------------- write + verify


def _chunk_elems(m: TensorMove) -> int:
    return max(
        1, CAST_CHUNK_BYTES // max(ITEMSIZE.get(m.src_dtype, 1), ITEMSIZE.get(m.dst_dtype, 1))
    )


def expected_chunks(
    m: TensorMove, reader: TensorReader, derived: Mapping[str, bytes], buf: bytearray
) -> Iterator[tuple[int, Any]]:
    """(output byte offset, expected output bytes) of ``m``, chunk by chunk.

    Uncast tensors are cut into :data:`CHUNK_BYTES` pieces; cast tensors into whole elements.
    """
    if m.derived:
        yield 0, derived[m.dst]
        return
    if m.src_dtype == m.dst_dtype:
        for off in range(0, m.nbytes, CHUNK_BYTES):
            yield off, reader.read(m.src, off, min(CHUNK_BYTES, m.nbytes - off), buf)
        return
    si, di = ITEMSIZE[m.src_dtype], ITEMSIZE[m.dst_dtype]
    numel = m.nbytes // di
    step = _chunk_elems(m)
    for e in range(0, numel, step):
        k = min(step, numel - e)
        raw = reader.read(m.src, e * si, k * si, buf)
        yield e * di, cast_bytes(raw, m.src_dtype, m.dst_dtype)


def safetensors_header(moves: Sequence[TensorMove]) -> bytes:
    """The 8-byte length + JSON header (space-padded to 8 bytes) of one output shard."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    off = 0
    for m in moves:
        header[m.dst] = {
            "dtype": m.dst_dtype,
            "shape": list(m.shape),
            "data_offsets": [off, off + m.nbytes],
        }
        off += m.nbytes
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    return len(raw).to_bytes(8, "little") + raw


def _write_all(fd: int, data: Any) -> None:
    view = memoryview(data).cast("B")
    while view:
        n = os.write(fd, view)
        view = view[n:]


def write_tensor(
    m: TensorMove,
    fd: int,
    reader: TensorReader,
    derived: Mapping[str, bytes],
    buf: bytearray,
    progress: Progress,
) -> None:
    """Write tensor ``m`` at ``fd``'s position: a kernel copy when uncast, else chunked casts."""
    if not m.derived and m.src_dtype == m.dst_dtype and reader.copy_to(m.src, m.nbytes, fd):
        progress.update(m.nbytes)
        return
    for _off, data in expected_chunks(m, reader, derived, buf):
        _write_all(fd, data)
        progress.update(len(data))


def output_layout(plan: ConvertPlan) -> dict[str, tuple[str, int]]:
    """Output tensor -> (shard, absolute file offset of its data), as :func:`safetensors_header`
    lays the shards out."""
    layout: dict[str, tuple[str, int]] = {}
    shards: dict[str, list[TensorMove]] = {}
    for m in plan.moves:
        shards.setdefault(m.shard, []).append(m)
    for shard, moves in shards.items():
        pos = len(safetensors_header(moves))
        for m in moves:
            layout[m.dst] = (shard, pos)
            pos += m.nbytes
    return layout


def write_output(
    plan: ConvertPlan,
    reader: TensorReader,
    tmp: Path,
    *,
    progress: bool = True,
    fsync: bool = True,
    on_written: Callable[[TensorMove], None] | None = None,
) -> list[str]:
    """Write ``config.json``, the shards and (for several shards) the index into ``tmp``.

    Each shard is sized to its final length first (so it can be memory-mapped while being
    written), then filled tensor by tensor; ``on_written(move)`` is called after each tensor.

    Returns:
        Shard file names in order.
    """
    shards: dict[str, list[TensorMove]] = {}
    for m in plan.moves:
        shards.setdefault(m.shard, []).append(m)
    bar = Progress(plan.total_bytes, "convert: write", progress)
    buf = bytearray(CHUNK_BYTES)
    try:
        for shard, moves in shards.items():
            fd = os.open(tmp / shard, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                header = safetensors_header(moves)
                os.ftruncate(fd, len(header) + sum(m.nbytes for m in moves))
                _write_all(fd, header)
                for m in moves:
                    write_tensor(m, fd, reader, plan.derived, buf, bar)
                    if on_written is not None:
                        on_written(m)
                if fsync:
                    os.fsync(fd)
            finally:
                os.close(fd)
    finally:
        bar.close()
    if len(shards) > 1:
        index = {
            "metadata": {"total_size": plan.total_bytes},
            "weight_map": {m.dst: m.shard for m in plan.moves},
        }
        write_new_file(tmp / "model.safetensors.index.json", json.dumps(index, indent=2) + "\n")
    write_new_file(tmp / "config.json", json.dumps(plan.config, indent=2) + "\n")
    return list(shards)


class MappedFiles:
    """Read-only memory maps of whole files, handing out zero-copy numpy views of byte ranges.

    Views are released with ``MADV_DONTNEED`` after use, so the resident set stays at a few
    chunks although every byte of both checkpoints is read (the pages stay in the page cache).
    """

    def __init__(self) -> None:
        self._maps: dict[str, mmap.mmap] = {}
        self._lock = threading.Lock()

    def _map(self, path: str) -> mmap.mmap:
        with self._lock:
            if path not in self._maps:
                fd = os.open(path, os.O_RDONLY)
                try:
                    self._maps[path] = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
                finally:
                    os.close(fd)
            return self._maps[path]

    def view(self, path: str, offset: int, n: int) -> np.ndarray:
        """uint8 array over bytes [offset, offset + n) of ``path`` (no copy)."""
        return np.frombuffer(self._map(path), dtype=np.uint8, count=n, offset=offset)

    def release(self, path: str, offset: int, n: int) -> None:
        """Drop the pages of [offset, offset + n) from this process (not from the page cache)."""
        m = self._maps.get(path)
        if m is None or not hasattr(m, "madvise"):
            return
        start = offset // mmap.PAGESIZE * mmap.PAGESIZE
        length = (offset + n - start) // mmap.PAGESIZE * mmap.PAGESIZE
        if length > 0:
            m.madvise(mmap.MADV_DONTNEED, start, length)

    def close(self) -> None:
        for m in self._maps.values():
            try:
                m.close()
            except BufferError:  # a view is still alive; the map goes with it
                pass
        self._maps.clear()


def same_array(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-for-bit equality of two uint8 arrays, compared as uint64 words when aligned."""
    if a.shape != b.shape:
        return False
    n = a.size - a.size % 8
    if n and a[:n].ctypes.data % 8 == 0 and b[:n].ctypes.data % 8 == 0:
        if not np.array_equal(a[:n].view(np.uint64), b[:n].view(np.uint64)):
            return False
        return bool(np.array_equal(a[n:], b[n:]))
    return bool(np.array_equal(a, b))


def verify_tensor(
    m: TensorMove,
    reader: TensorReader,
    src_maps: MappedFiles,
    out_maps: MappedFiles,
    out_at: tuple[str, int],
    derived: Mapping[str, bytes],
    buf: bytearray,
) -> int:
    """Compare output tensor ``m`` (at ``out_at`` = (file, offset)) with its source, bit for bit.

    Uncast safetensors tensors: both files memory-mapped, compared in :data:`VERIFY_CHUNK` slices.
    Cast or derived tensors: the expected bytes are recomputed from the source (the same
    :func:`cast_bytes`) and compared with the mapped output.

    Returns:
        Bytes compared.

    Raises:
        ConvertError: naming the tensor and the first differing byte range.
    """
    out_path, out_off = out_at

    def fail(off: int, n: int) -> ConvertError:
        return ConvertError(
            f"verification: tensor {m.dst} differs from source {m.src} in bytes [{off}, {off + n})",
            path=str(Path(out_path).parent),
            hint="the output was not kept; report this as a bug",
        )

    if not m.derived and m.src_dtype == m.dst_dtype and m.src in reader.offsets:
        src_path, src_off = reader.offsets[m.src]
        for off in range(0, m.nbytes, VERIFY_CHUNK):
            n = min(VERIFY_CHUNK, m.nbytes - off)
            a = src_maps.view(src_path, src_off + off, n)
            b = out_maps.view(out_path, out_off + off, n)
            if not same_array(a, b):
                raise fail(off, n)
            del a, b
            src_maps.release(src_path, src_off + off, n)
            out_maps.release(out_path, out_off + off, n)
        return m.nbytes
    for off, data in expected_chunks(m, reader, derived, buf):
        n = len(data)
        b = out_maps.view(out_path, out_off + off, n)
        if not same_array(np.frombuffer(data, dtype=np.uint8), b):
            raise fail(off, n)
        del b
        out_maps.release(out_path, out_off + off, n)
    return m.nbytes


def verify_reopened(plan: ConvertPlan, tmp: Path) -> Checkpoint:
    """Reopen ``tmp`` with the checkpoint reader and check it is the plan: the same tensor set,
    dtypes, shapes and data offsets (so the bytes compared are the bytes a loader reads), and the
    same meaning (:func:`draft_semantics`, only the planned translations differ from the source).

    Raises:
        ConvertError: any difference.
    """
    from recipecli.checkpoint import open_checkpoint

    out_ck = open_checkpoint(str(tmp))
    want = {m.dst: m for m in plan.moves}
    got = set(out_ck.tensors)
    if got != set(want):
        raise ConvertError(
            f"verification: output tensors differ from the plan (missing {sorted(set(want) - got)[:3]}, "
            f"extra {sorted(got - set(want))[:3]})",
            path=str(tmp),
        )
    layout = output_layout(plan)
    headers = {shard: read_file_header(tmp / shard) for shard in out_ck.shards}
    for m in plan.moves:
        info = out_ck.tensors[m.dst]
        if (info.dtype, tuple(info.shape)) != (m.dst_dtype, m.shape):
            raise ConvertError(
                f"verification: {m.dst} is {info.dtype} {list(info.shape)}, expected "
                f"{m.dst_dtype} {list(m.shape)}",
                path=str(tmp),
            )
        h = headers[info.shard]
        if (info.shard, h.data_start + h.tensors[m.dst].begin) != layout[m.dst]:
            raise ConvertError(
                f"verification: {m.dst} is not where it was written", path=str(tmp / info.shard)
            )
    meaning = "post-norm-chaining" if plan.options.to == "eagle3" else None
    got_sem = draft_semantics(canonical_draft(out_ck), norm_output_meaning=meaning)
    diff = semantic_diff(plan.expected, got_sem)
    if diff:
        raise ConvertError(
            "verification: the output draft means something else than the source: "
            + "; ".join(f"{k} {a!r} -> {b!r}" for k, (a, b) in diff.items()),
            path=str(tmp),
            hint="the output was not kept; report this as a bug",
        )
    return out_ck


class Verifier:
    """Compares tensors with the source on a background thread while later ones are written.

    ``submit(move)`` after a tensor is written; ``finish()`` waits and re-raises the first
    mismatch. Memory: two mapped :data:`VERIFY_CHUNK` slices (plus one cast chunk) at a time.
    """

    def __init__(self, plan: ConvertPlan, reader: TensorReader, tmp: Path, progress: bool):
        self.plan, self.reader, self.tmp = plan, reader, tmp
        self.layout = output_layout(plan)
        self.src_maps, self.out_maps = MappedFiles(), MappedFiles()
        self.queue: queue.Queue[TensorMove | None] = queue.Queue()
        self.error: BaseException | None = None
        self.compared = 0
        self.bar = Progress(plan.total_bytes, "convert: verify", progress)
        self.thread = threading.Thread(target=self._run, name="recipecli-verify", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        buf = bytearray(CHUNK_BYTES)
        while True:
            m = self.queue.get()
            if m is None:
                return
            if self.error is not None:
                continue
            try:
                shard, off = self.layout[m.dst]
                n = verify_tensor(
                    m,
                    self.reader,
                    self.src_maps,
                    self.out_maps,
                    (str(self.tmp / shard), off),
                    self.plan.derived,
                    buf,
                )
                self.compared += n
                self.bar.update(n)
            except BaseException as exc:  # handed to the writer thread
                self.error = exc

    def submit(self, m: TensorMove) -> None:
        """Queue ``m`` for comparison; raises at once if an earlier tensor already differed."""
        if self.error is not None:
            raise self.error
        self.queue.put(m)

    def finish(self) -> int:
        """Wait for every queued tensor; returns bytes compared or raises the first mismatch."""
        self.queue.put(None)
        self.thread.join()
        self.bar.close()
        self.src_maps.close()
        self.out_maps.close()
        if self.error is not None:
            raise self.error
        return self.compared


def verify_output(
    plan: ConvertPlan,
    reader: TensorReader,
    tmp: Path,
    *,
    progress: bool = True,
) -> dict[str, Any]:
    """Reopen ``tmp`` and prove it holds exactly the plan: tensors bit for bit, same meaning.

    The same checks :func:`convert` runs while writing, for an output already on disk.

    Returns:
        ``{"tensors_compared", "bytes_compared", "semantic_differences": {}, "out_checkpoint"}``.

    Raises:
        ConvertError: a missing/extra tensor, a dtype/shape/offset or byte mismatch, or a meaning
            that differs from the plan.
    """
    out_ck = verify_reopened(plan, tmp)
    v = Verifier(plan, reader, tmp, progress)
    for m in plan.moves:
        v.submit(m)
    compared = v.finish()
    return {
        "tensors_compared": len(plan.moves),
        "bytes_compared": compared,
        "semantic_differences": {},
        "out_checkpoint": out_ck,
    }


# --------------------------------------------------------------------------- driver


@dataclass
class ConvertResult:
    """What :func:`convert` did; ``to_dict`` is the ``--json`` document."""

    source: str
    out: str
    plan: ConvertPlan
    shards: list[str]
    verification: dict[str, Any]
    check: Any = None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        p = self.plan
        out: dict[str, Any] = {
            "source": self.source,
            "out": self.out,
            "to": p.options.to,
            "source_format": p.draft.format,
            "source_format_name": p.draft.format_name,
            "tensors": [m.to_dict() for m in p.moves],
            "dropped_tensors": [{"name": n, "why": w} for n, w in p.dropped],
            "translated": [t.to_dict() for t in p.translations],
            "config_keys_dropped": [{"key": k, "why": w} for k, w in p.config_keys_dropped],
            "config": p.config,
            "shards": self.shards,
            "bytes_written": p.total_bytes,
            "largest_tensor_bytes": p.largest_tensor_bytes,
            "verification": {k: v for k, v in self.verification.items() if k != "out_checkpoint"},
            "seconds": round(self.seconds, 3),
            "notes": list(p.notes) + self.notes,
            "ok": True,
        }
        if self.check is not None:
            out["check"] = {
                "engines": list(self.check.engines),
                "findings": [f.to_dict() for f in self.check.findings],
                "ok": self.check.ok(),
            }
        return out


def fsync_tree(root: Path) -> None:
    """fsync every file directly under ``root``, then ``root`` itself."""
    for p in sorted(root.iterdir()):
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    fsync_dir(root)


#: Modes of what convert creates, before the umask (``mkdtemp`` would leave 0700).
DIR_MODE = 0o755
FILE_MODE = 0o644


def check_out_parent(out: Path) -> None:
    """Refuse an OUT whose directory cannot hold it, before any work is done: the folder rule
    of every writer (:func:`recipecli.safe_write.check_parent`; the parent is never created).

    Raises:
        UsageError: one line naming OUT: the parent is missing, is a file (or lies under one),
            or is not writable.
    """
    check_parent(out, what="OUT", noun="OUT")


def make_temp_out(out: Path) -> Path:
    """Create the temporary directory next to ``out`` that becomes ``out`` after verification,
    with the mode a plain ``mkdir`` gives (``0o755 & ~umask``), not ``mkdtemp``'s 0700.

    Raises:
        UsageError: the directory cannot be created (read-only or virtual file system, …).
    """
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    except OSError as exc:
        raise UsageError(
            f"cannot write OUT: {exc.strerror or exc}", path=str(out), hint="give another OUT"
        ) from None
    os.chmod(tmp, DIR_MODE & ~current_umask())
    return tmp


def write_new_file(path: Path, text: str) -> None:
    """Create ``path`` (must not exist) holding ``text`` in UTF-8, mode ``0o644 & ~umask``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def convert_inputs(ck: Checkpoint, target_ck: Checkpoint | None) -> list[tuple[str, Any]]:
    """What convert reads, for the OUT checks: the draft's folder and files, the target's."""
    inputs = checkpoint_inputs(ck, f"the draft {ck.source}")
    if target_ck is not None:
        inputs += checkpoint_inputs(target_ck, f"the --target {target_ck.source}")
    return inputs


def convert(
    draft: str | Checkpoint,
    out: str | os.PathLike[str],
    options: ConvertOptions,
    *,
    target: str | Checkpoint | None = None,
    progress: bool = True,
    fsync: bool = True,
    run_target_check: bool = True,
    log: Callable[[str], None] | None = None,
) -> ConvertResult:
    """Convert ``draft`` into ``out`` (see the module docstring for what is translated).

    Args:
        draft: source directory (or an opened checkpoint).
        out: output directory; must not exist, or with ``options.force`` be empty or a
            previous convert output holding only the files its marker lists (only those are
            deleted). Never an input, a folder holding one or inside one
            (:func:`recipecli.safe_write.prepare_dir`).
        options: the request.
        target: ``--target`` source (speculators verifier, ``--embed drop`` proof, post-write check).
        progress: show progress bars on stderr when it is a terminal (:class:`Progress`);
            otherwise one summary line through ``log`` at the end.
        fsync: flush every shard to disk before the rename.
        run_target_check: run ``check`` against ``target`` after writing (when given).
        log: where notes go (stderr lines in the CLI).

    Returns:
        :class:`ConvertResult`.

    Raises:
        ConvertError: refusals (see :func:`plan_conversion`), verification failures, check errors
            without ``--force``.
        UsageError: OUT is, holds or lies inside the draft or the target, is the current
            directory, exists (without ``--force``), is not a previous convert output (with
            it), is a link or a file; inconsistent flags; OUT's directory is missing (never
            created), a file, or not writable (:func:`check_out_parent`, :func:`make_temp_out`).
        KeyboardInterrupt: Ctrl-C, SIGTERM or SIGHUP (nothing is left behind).
    """
    with interrupt_on_signals():  # SIGTERM/SIGHUP clean up like Ctrl-C: no OUT, no temp dir
        return _convert(draft, out, options, target, progress, fsync, run_target_check, log)


def _convert(draft, out, options, target, progress, fsync, run_target_check, log) -> ConvertResult:
    """:func:`convert`, under its signal handlers."""
    from recipecli.checkpoint import open_checkpoint

    t0 = time.perf_counter()
    ck = draft if isinstance(draft, Checkpoint) else open_checkpoint(draft)
    out = Path(out)
    where = {"what": "OUT", "noun": "OUT", "force": options.force}
    early = convert_inputs(ck, None)
    if isinstance(target, str):
        early += path_inputs(f"the --target {target}", target)
    prepare_dir(out, inputs=early, existing=False, **where)  # a bad OUT before opening the target
    target_ck = (
        target if isinstance(target, Checkpoint) or target is None else open_checkpoint(target)
    )
    inputs = convert_inputs(ck, target_ck)
    out_abs, _owned = prepare_dir(out, inputs=inputs, **where)
    reader = open_reader(ck)
    try:
        plan = plan_conversion(ck, options, target_ck)
        for note in plan.notes:
            if log:
                log(note)
        tmp = make_temp_out(out_abs)
        try:
            # write on this thread, compare each finished tensor with the source on another,
            # flush to disk while the last comparisons run; all finish before the rename
            verifier = Verifier(plan, reader, tmp, progress)
            written = False
            try:
                shards = write_output(
                    plan, reader, tmp, progress=progress, fsync=False, on_written=verifier.submit
                )
                # the mark that lets a later --force replace this folder, and only its files
                files = sorted(p.name for p in tmp.iterdir())
                write_new_file(tmp / CONVERT_MARKER, convert_marker_text(files, options.to))
                written = True
            finally:
                with ThreadPoolExecutor(1) as pool:
                    flushed = pool.submit(fsync_tree, tmp) if fsync and written else None
                    compared = verifier.finish()
                    if flushed is not None:
                        flushed.result()
            out_ck = verify_reopened(plan, tmp)
            verification = {
                "tensors_compared": len(plan.moves),
                "bytes_compared": compared,
                "semantic_differences": {},
                "out_checkpoint": out_ck,
            }
            check_res = None
            notes: list[str] = []
            if target_ck is not None and run_target_check:
                check_res = _post_check(target_ck, verification["out_checkpoint"], options, notes)
            # OUT again, just before replacing it: it may have changed during the conversion
            out_abs, owned = prepare_dir(out, inputs=inputs, **where)
            try:
                left = replace_dir(tmp, out_abs, owned)
            except OSError as exc:
                raise UsageError(
                    f"cannot write OUT: {exc.strerror or exc}",
                    path=str(out),
                    hint="give another OUT",
                ) from None
            if left:
                notes.append(left)
            if fsync:
                fsync_dir(out_abs.parent)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    finally:
        reader.close()
    seconds = time.perf_counter() - t0
    if progress and log and not progress_bars_shown():
        log(
            f"wrote and verified {plan.total_bytes / 1e6:.1f} MB in {len(shards)} "
            f"shard(s) into {out} ({seconds:.1f} s)"
        )
    return ConvertResult(
        ck.display_name,
        str(out),
        plan,
        shards,
        verification,
        check_res,
        seconds,
        notes,
    )


def _post_check(target_ck: Checkpoint, out_ck: Checkpoint, opts: ConvertOptions, notes: list[str]):
    """Run ``check`` on the written output against the target for the engine the output is for
    (speculators → vLLM, eagle3 → tokenspeed) at TP 1; errors refuse unless ``--force``."""
    from recipecli.check import run_check

    engine = "vllm" if opts.to == "speculators" else "tokenspeed"
    res = run_check(target_ck, out_ck, engines=(engine,), tps=(1,))
    errors = [f for f in res.findings if f.severity == "error"]
    if errors and not opts.force:
        first = errors[0]
        raise ConvertError(
            f"check against the target found {len(errors)} error(s) for {engine}, first: "
            f"[{first.code}] {first.message}",
            path=out_ck.source,
            hint="fix the draft (or the flags), or add --force to write it anyway",
        )
    notes += [f"--force: check error [{f.code}] {f.message}" for f in errors]
    return res


def format_result(res: ConvertResult) -> str:
    """Human summary of a conversion."""
    p = res.plan
    lines = [
        f"{res.source} (format {p.draft.format}: {p.draft.format_name}) -> {res.out} ({p.options.to})",
        f"  {len(p.moves)} tensors, {p.total_bytes / 1e9:.3f} GB in {len(res.shards)} shard(s), "
        f"verified bit for bit in {res.seconds:.1f} s",
    ]
    renamed = [m for m in p.moves if m.src != m.dst and not m.derived]
    if renamed:
        lines.append(f"  renamed {len(renamed)} tensors, e.g. {renamed[0].src} -> {renamed[0].dst}")
    cast = [m for m in p.moves if m.src_dtype != m.dst_dtype]
    if cast:
        lines.append(f"  cast {len(cast)} tensors to {cast[0].dst_dtype}")
    for n, why in p.dropped:
        lines.append(f"  dropped {n}: {why}")
    for t in p.translations:
        lines.append(f"  translated {t.field}: {t.source!r} -> {t.output!r} ({t.why})")
    for k, why in p.config_keys_dropped:
        lines.append(f"  config key {k} not carried: {why}")
    for n in list(p.notes) + res.notes:
        lines.append(f"  note: {n}")
    if res.check is not None:
        errs = sum(f.severity == "error" for f in res.check.findings)
        warns = sum(f.severity == "warning" for f in res.check.findings)
        lines.append(
            f"  check vs target ({', '.join(res.check.engines)}, TP1): {errs} error(s), {warns} warning(s)"
        )
    return "\n".join(lines)


__all__ = [
    "CHUNK_BYTES",
    "ConvertOptions",
    "ConvertPlan",
    "ConvertResult",
    "TensorMove",
    "Translation",
    "cast_bytes",
    "convert",
    "derive_t2d",
    "draft_semantics",
    "f32_to_bf16_bits",
    "format_result",
    "map_tensor_name",
    "parse_aux_ids",
    "parse_size",
    "plan_conversion",
    "semantic_diff",
]
