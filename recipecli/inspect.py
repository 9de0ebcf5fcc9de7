"""`recipecli inspect`: a compact summary of a checkpoint (config + headers, never weights).

:func:`summarize` gives an :class:`InspectSummary` (frozen; ``recipecli.output.to_jsonable``
turns it into the ``--json`` document), :func:`format_summary` its text, :func:`tensor_table`
and :func:`tensor_table_json` the ``tensors`` table."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from recipecli.checkpoint.configcheck import validate_text_geometry
from recipecli.checkpoint.model import Checkpoint
from recipecli.display import shown_text, shown_value
from recipecli.draft import canonical_draft, detect_format


def quantization_method(ck: Checkpoint) -> str | None:
    """``quant_method`` of ``quantization_config`` (top level, then the text config)."""
    for cfg in (ck.config, ck.text.config):
        q = cfg.get("quantization_config")
        if isinstance(q, Mapping) and q.get("quant_method"):
            return str(q["quant_method"])
    return None


@dataclass(frozen=True)
class DraftSummary:
    """What ``inspect`` says of an EAGLE3 draft, from its canonical description
    (:func:`recipecli.draft.canonical_draft`); the ``draft`` object of ``inspect --json``.

    Attributes:
        format: the draft format letter (A-F; docs/check.md lists them).
        format_name: that format in words (who writes it).
        k: how many target hidden states the draft concatenates (3 for EAGLE3).
        aux_layer_ids: the target layers whose hidden states it reads, or None (engine defaults).
        aux_ids_where: the config field the ids came from.
        draft_vocab_size: Vd, the draft's vocabulary.
        target_hidden_size: Ht, the target's hidden size as the draft records it.
        embed_tokens, lm_head, d2t, t2d: whether the draft ships that tensor.
        fc_norm: whether it ships ``fc_norm.*`` weights or its config asks for them.
        input_norm: whether it ships the layer-0 input norm.
        norm_before_residual, norm_output, attention: how the draft was trained, as its
            format records it (None when it does not).
    """

    format: str
    format_name: str
    k: int | None
    aux_layer_ids: tuple[int, ...] | None
    aux_ids_where: str | None
    draft_vocab_size: int | None
    target_hidden_size: int | None
    embed_tokens: bool
    lm_head: bool
    d2t: bool
    t2d: bool
    fc_norm: bool
    input_norm: bool
    norm_before_residual: Any
    norm_output: Any
    attention: Any


@dataclass(frozen=True)
class InspectSummary:
    """The ``inspect`` summary of a checkpoint: config and tensor headers, never the weights.
    Its fields, in this order, are the keys of ``inspect --json`` before ``tensors``
    (docs/inspect.md, "--json keys"); :func:`format_summary` is its text.

    Attributes:
        source: the SOURCE as given.
        kind: ``local``, ``snapshot``, ``hf-cache``, ``hub`` or ``config``.
        revision: the Hub revision, or None.
        architecture: ``architectures[0]`` of the top-level config.
        model_type: ``model_type`` of the top-level config.
        wrapper: dotted path of the text config (``text_config``, …), None when flat.
        tensor_prefix: the tensor-name prefix the wrapper implies, None when flat.
        text_architecture: the text model's architecture (wrapped configs only).
        hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim,
            vocab_size: from the text config (for a speculators draft, missing ones from its
            ``transformer_layer_config``).
        head_dim_from: ``head_dim`` when the text config gives it, ``hidden_size /
            num_attention_heads`` when ``head_dim`` is that quotient, else None.
        config_dtype: ``torch_dtype`` (or transformers-5 ``dtype``), text config first.
        tensor_dtypes: safetensors dtype -> total bytes of the tensors of that dtype.
        quantization: ``quantization_config.quant_method``, or None.
        tie_word_embeddings: whether the embeddings are tied.
        weight_format: ``safetensors``, ``bin`` or ``none``.
        total_parameters, total_bytes, num_tensors, num_shards: sums over the tensor table.
        draft: the :class:`DraftSummary` of an EAGLE3 draft, else None.
    """

    source: str
    kind: str
    revision: str | None
    architecture: str | None
    model_type: str | None
    wrapper: str | None
    tensor_prefix: str | None
    text_architecture: str | None
    hidden_size: Any
    num_hidden_layers: Any
    num_attention_heads: Any
    num_key_value_heads: Any
    head_dim: Any
    head_dim_from: str | None
    vocab_size: Any
    config_dtype: Any
    tensor_dtypes: Mapping[str, int]
    quantization: str | None
    tie_word_embeddings: bool
    weight_format: str
    total_parameters: int
    total_bytes: int
    num_tensors: int
    num_shards: int
    draft: DraftSummary | None


#: The geometry fields of the summary, read from the text config (see :class:`InspectSummary`).
GEOMETRY: tuple[str, ...] = (
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "vocab_size",
)


def _draft_summary(ck: Checkpoint, d: Any) -> DraftSummary:
    return DraftSummary(
        format=d.format,
        format_name=d.format_name,
        k=d.k,
        aux_layer_ids=tuple(d.aux_ids) if d.aux_ids is not None else None,
        aux_ids_where=d.aux_ids_where,
        draft_vocab_size=d.Vd,
        target_hidden_size=d.Ht,
        embed_tokens=d.has_embed,
        lm_head=d.has_lm_head,
        d2t=d.has_d2t,
        t2d=d.has_t2d,
        fc_norm=any(n.startswith("fc_norm.") for n in ck.tensors) or d.fc_norm,
        input_norm=d.tensor("input_norm") in ck.tensors,
        norm_before_residual=d.norm_before_residual,
        norm_output=d.norm_output,
        attention=d.attention,
    )


def summarize(ck: Checkpoint) -> InspectSummary:
    """The inspect summary of ``ck`` (keys documented in docs/inspect.md).

    Raises:
        CheckpointFormatError: text-config geometry that cannot be (``validate_text_geometry``).
    """
    validate_text_geometry(ck)
    tc = ck.text.config
    geometry = {key: tc.get(key) for key in GEOMETRY}
    draft = None
    d = canonical_draft(ck) if detect_format(ck.config, frozenset(ck.tensors)) else None
    if d is not None and d.is_eagle3:
        tl = ck.config.get("transformer_layer_config")
        if isinstance(tl, Mapping):  # speculators: geometry lives in transformer_layer_config
            for key in GEOMETRY:
                if geometry[key] is None:
                    geometry[key] = tl.get(key)
        draft = _draft_summary(ck, d)
    head_dim_from = "head_dim" if tc.get("head_dim") is not None else None
    if geometry["head_dim"] is None and geometry["hidden_size"] and geometry["num_attention_heads"]:
        geometry["head_dim"] = geometry["hidden_size"] // geometry["num_attention_heads"]
        head_dim_from = "hidden_size / num_attention_heads"
    return InspectSummary(
        source=ck.source,
        kind=ck.kind,
        revision=ck.revision,
        architecture=(ck.config.get("architectures") or [None])[0],
        model_type=ck.config.get("model_type"),
        wrapper=ck.text.path_str or None,
        tensor_prefix=ck.text.tensor_prefix or None,
        text_architecture=(tc.get("architectures") or [None])[0] if ck.text.wrapped else None,
        hidden_size=geometry["hidden_size"],
        num_hidden_layers=geometry["num_hidden_layers"],
        num_attention_heads=geometry["num_attention_heads"],
        num_key_value_heads=geometry["num_key_value_heads"],
        head_dim=geometry["head_dim"],
        head_dim_from=head_dim_from,
        vocab_size=geometry["vocab_size"],
        config_dtype=tc.get("torch_dtype")
        or tc.get("dtype")
        or ck.config.get("torch_dtype")
        or ck.config.get("dtype"),
        # one C-level pass (1.5M tensors: benchmarks/bench_header_15m.py)
        tensor_dtypes=ck.bytes_by_dtype(),
        quantization=quantization_method(ck),
        tie_word_embeddings=bool(
            tc.get("tie_word_embeddings", ck.config.get("tie_word_embeddings", False))
        ),
        weight_format=ck.weight_format,
        total_parameters=ck.total_params,
        total_bytes=ck.total_bytes,
        num_tensors=len(ck.tensors),
        num_shards=len(ck.shards),
        draft=draft,
    )


def _gb(n: int) -> str:
    if n >= 1e9:
        return f"{n / 1e9:.2f} GB"
    if n >= 1e6:
        return f"{n / 1e6:.2f} MB"
    return f"{n} B"


def _params(n: int) -> str:
    for unit, div in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= div:
            return f"{n / div:.2f}{unit}"
    return str(n)


def _yes_no(flag: object) -> str:
    return "yes" if flag else "no"


def format_summary(s: InspectSummary) -> str:
    """The human-readable lines of an :class:`InspectSummary` (``recipecli inspect``'s text)."""
    yn, v = _yes_no, shown_value  # every string from the checkpoint: cut and escaped
    rev = f", rev {v(s.revision)}" if s.revision else ""
    lines = [
        f"source        {v(s.source)} ({s.kind}{rev})",
        f"architecture  {v(s.architecture)}  model_type={v(s.model_type)}",
    ]
    if s.wrapper:
        lines.append(
            f"text config   under `{v(s.wrapper)}` (tensors prefixed `{v(s.tensor_prefix)}`) "
            f"{v(s.text_architecture or '')}".rstrip()
        )
    quotient = " (hidden/heads)" if s.head_dim_from != "head_dim" else ""
    lines += [
        f"hidden        {s.hidden_size}   layers {s.num_hidden_layers}",
        f"heads         {s.num_attention_heads} q / {s.num_key_value_heads} kv   "
        f"head_dim {s.head_dim}{quotient}",
        f"vocab         {s.vocab_size}",
        f"dtype         config {s.config_dtype}; tensors "
        + (", ".join(f"{k} {_gb(v)}" for k, v in s.tensor_dtypes.items()) or "none"),
        f"quantization  {v(s.quantization or 'none')}   tied embeddings {yn(s.tie_word_embeddings)}",
        f"size          {_params(s.total_parameters)} parameters, {_gb(s.total_bytes)}, "
        f"{s.num_tensors} tensors in {s.num_shards} {s.weight_format} file(s)",
    ]
    d = s.draft
    if d:
        ids = list(d.aux_layer_ids) if d.aux_layer_ids is not None else None
        ships = ("embed_tokens", "lm_head", "d2t", "t2d", "fc_norm", "input_norm")
        lines += [
            f"EAGLE3 draft  format {d.format}: {d.format_name}",
            f"  k {d.k}   aux layer ids {ids if ids is not None else 'absent (engine defaults)'}"
            + (f" ({d.aux_ids_where})" if ids is not None else "")
            + f"   Vd {d.draft_vocab_size}   Ht {d.target_hidden_size}",
            "  ships       " + "  ".join(f"{k} {yn(getattr(d, k))}" for k in ships),
        ]
    return "\n".join(shown_text(line) for line in lines)  # config strings: cut, escaped


def tensor_table_json(ck: Checkpoint) -> str:
    """The tensor table as compact JSON text, built without intermediate dicts (92k tensors of
    DeepSeek-V3 in ~0.1 s); equal to ``json.dumps(tensor_table(ck), separators=(",", ":"))``."""
    enc = json.encoder.encode_basestring_ascii
    parts = [
        f'{enc(n)}:{{"dtype":{enc(t.dtype)},"shape":[{",".join(map(str, t.shape))}],'
        f'"bytes":{t.nbytes},"shard":{enc(t.shard)}}}'
        for n, t in ck.tensors.items()
    ]
    return "{" + ",".join(parts) + "}"


def tensor_table(ck: Checkpoint) -> dict[str, Any]:
    """Full tensor table: name -> {dtype, shape, bytes, shard}."""
    return {
        name: {"dtype": t.dtype, "shape": list(t.shape), "bytes": t.nbytes, "shard": t.shard}
        for name, t in ck.tensors.items()
    }


# --------------------------------------------------------------------------- inspect --bundled


@dataclass(frozen=True)
class BundledSnapshot:
    """One snapshot shipped with recipecli (a row of ``inspect --bundled``; its ``--json``
    objects).

    Attributes:
        repo_id: the Hugging Face repo id it stands for (SOURCE arguments resolve it offline).
        kind: ``target`` or ``draft``.
        file: the file inside the package (``recipecli/data/<folder>/<name>``).
        config_from: where its config.json text comes from (the snapshot's note).
        tensors_from: ``header`` (a real safetensors header) or ``config-derived`` (shapes
            built from the config by a build script).
        num_tensors: rows of its tensor table.
    """

    repo_id: str
    kind: str
    file: str
    config_from: str
    tensors_from: str
    num_tensors: int


def _bundled_kind(data: Mapping[str, Any], name: str) -> str:
    kind = data.get("bundled_kind")
    if isinstance(kind, str):
        return kind
    return "draft" if ".draft." in name else "target"


def bundled_catalog() -> list[BundledSnapshot]:
    """Every bundled snapshot, sorted by kind then repo id (reads each file once).

    Raises:
        CheckpointFormatError: a shipped file is unreadable (a broken install).
    """
    from recipecli.checkpoint.snapshot import (
        bundled_label,
        bundled_snapshot_paths,
        read_snapshot_file,
    )

    rows = []
    for repo, path in bundled_snapshot_paths().items():
        data = read_snapshot_file(path)
        rows.append(
            BundledSnapshot(
                repo_id=repo,
                kind=_bundled_kind(data, path.name),
                file=bundled_label(path),
                config_from=str(data.get("config_from") or data.get("note") or ""),
                tensors_from=str(data.get("tensors_from") or "config-derived"),
                num_tensors=len(data.get("tensors") or {}),
            )
        )
    return sorted(rows, key=lambda r: (r.kind != "target", r.repo_id.lower()))


def format_bundled(rows: list[BundledSnapshot], width: int = 100) -> str:
    """The text of ``inspect --bundled``: one line per snapshot (repo id, kind, tensors from,
    file), then where each config came from."""
    w = max((len(r.repo_id) for r in rows), default=7)
    lines = [f"{'repo id':<{w}}  kind    tensors         file"]
    lines += [f"{r.repo_id:<{w}}  {r.kind:<6}  {r.tensors_from:<14}  {r.file}" for r in rows]
    lines += ["", "config sources:"]
    for r in rows:
        text = f"{r.repo_id}: {r.config_from.removeprefix('config: ')}"
        lines += textwrap.wrap(text, width, initial_indent="  ", subsequent_indent="      ")
    lines += [
        "",
        "A SOURCE naming one of these repo ids (no --revision) opens the bundled snapshot, "
        "without the network; pass --revision to read the Hub.",
    ]
    return "\n".join(lines)
