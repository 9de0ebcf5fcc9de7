"""`recipecli inspect`: a compact summary of a checkpoint (config + headers, never weights)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from recipecli.checkpoint.model import Checkpoint
from recipecli.configcheck import validate_text_geometry
from recipecli.draft import canonical_draft, detect_format


def quantization_method(ck: Checkpoint) -> str | None:
    """``quant_method`` of ``quantization_config`` (top level, then the text config)."""
    for cfg in (ck.config, ck.text.config):
        q = cfg.get("quantization_config")
        if isinstance(q, Mapping) and q.get("quant_method"):
            return str(q["quant_method"])
    return None


def summarize(ck: Checkpoint) -> dict[str, Any]:
    """The inspect summary as a JSON-ready dict (keys documented in docs/inspect.md)."""
    validate_text_geometry(ck)
    tc = ck.text.config
    dtypes = ck.bytes_by_dtype()  # one C-level pass (1.5M tensors: benchmarks/bench_header_15m.py)
    summary: dict[str, Any] = {
        "source": ck.source,
        "kind": ck.kind,
        "revision": ck.revision,
        "architecture": (ck.config.get("architectures") or [None])[0],
        "model_type": ck.config.get("model_type"),
        "wrapper": ck.text.path_str or None,
        "tensor_prefix": ck.text.tensor_prefix or None,
        "text_architecture": (tc.get("architectures") or [None])[0] if ck.text.wrapped else None,
        "hidden_size": tc.get("hidden_size"),
        "num_hidden_layers": tc.get("num_hidden_layers"),
        "num_attention_heads": tc.get("num_attention_heads"),
        "num_key_value_heads": tc.get("num_key_value_heads"),
        "head_dim": tc.get("head_dim"),
        "head_dim_from": "head_dim" if tc.get("head_dim") is not None else None,
        "vocab_size": tc.get("vocab_size"),
        "config_dtype": tc.get("torch_dtype")
        or tc.get("dtype")
        or ck.config.get("torch_dtype")
        or ck.config.get("dtype"),
        "tensor_dtypes": dtypes,
        "quantization": quantization_method(ck),
        "tie_word_embeddings": bool(
            tc.get("tie_word_embeddings", ck.config.get("tie_word_embeddings", False))
        ),
        "weight_format": ck.weight_format,
        "total_parameters": ck.total_params,
        "total_bytes": ck.total_bytes,
        "num_tensors": len(ck.tensors),
        "num_shards": len(ck.shards),
        "draft": None,
    }
    d = canonical_draft(ck) if detect_format(ck.config, frozenset(ck.tensors)) else None
    if d is not None and d.is_eagle3:
        cfg = ck.config
        tl = cfg.get("transformer_layer_config")
        if isinstance(tl, Mapping):  # speculators: geometry lives in transformer_layer_config
            for key in (
                "hidden_size",
                "num_hidden_layers",
                "num_attention_heads",
                "num_key_value_heads",
                "head_dim",
                "vocab_size",
            ):
                if summary[key] is None:
                    summary[key] = tl.get(key)
        summary["draft"] = {
            "format": d.format,
            "format_name": d.format_name,
            "k": d.k,
            "aux_layer_ids": list(d.aux_ids) if d.aux_ids is not None else None,
            "aux_ids_where": d.aux_ids_where,
            "draft_vocab_size": d.Vd,
            "target_hidden_size": d.Ht,
            "embed_tokens": d.has_embed,
            "lm_head": d.has_lm_head,
            "d2t": d.has_d2t,
            "t2d": d.has_t2d,
            "fc_norm": any(n.startswith("fc_norm.") for n in ck.tensors) or d.fc_norm,
            "input_norm": d.tensor("input_norm") in ck.tensors,
            "norm_before_residual": d.norm_before_residual,
            "norm_output": d.norm_output,
            "attention": d.attention,
        }
    if summary["head_dim"] is None and summary["hidden_size"] and summary["num_attention_heads"]:
        summary["head_dim"] = summary["hidden_size"] // summary["num_attention_heads"]
        summary["head_dim_from"] = "hidden_size / num_attention_heads"
    return summary


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


def format_summary(s: Mapping[str, Any]) -> str:
    """Human-readable lines of :func:`summarize`'s result."""
    yn = lambda b: "yes" if b else "no"  # noqa: E731
    lines = [
        f"source        {s['source']} ({s['kind']}{', rev ' + s['revision'] if s['revision'] else ''})",
        f"architecture  {s['architecture']}  model_type={s['model_type']}",
    ]
    if s["wrapper"]:
        lines.append(
            f"text config   under `{s['wrapper']}` (tensors prefixed `{s['tensor_prefix']}`) {s['text_architecture'] or ''}".rstrip()
        )
    lines += [
        f"hidden        {s['hidden_size']}   layers {s['num_hidden_layers']}",
        f"heads         {s['num_attention_heads']} q / {s['num_key_value_heads']} kv   head_dim {s['head_dim']}{' (hidden/heads)' if s['head_dim_from'] != 'head_dim' else ''}",
        f"vocab         {s['vocab_size']}",
        f"dtype         config {s['config_dtype']}; tensors "
        + (", ".join(f"{k} {_gb(v)}" for k, v in s["tensor_dtypes"].items()) or "none"),
        f"quantization  {s['quantization'] or 'none'}   tied embeddings {yn(s['tie_word_embeddings'])}",
        f"size          {_params(s['total_parameters'])} parameters, {_gb(s['total_bytes'])}, "
        f"{s['num_tensors']} tensors in {s['num_shards']} {s['weight_format']} file(s)",
    ]
    d = s.get("draft")
    if d:
        ids = d["aux_layer_ids"]
        lines += [
            f"EAGLE3 draft  format {d['format']}: {d['format_name']}",
            f"  k {d['k']}   aux layer ids {ids if ids is not None else 'absent (engine defaults)'}"
            + (f" ({d['aux_ids_where']})" if ids is not None else "")
            + f"   Vd {d['draft_vocab_size']}   Ht {d['target_hidden_size']}",
            "  ships       "
            + "  ".join(
                f"{k} {yn(d[k])}"
                for k in ("embed_tokens", "lm_head", "d2t", "t2d", "fc_norm", "input_norm")
            ),
        ]
    return "\n".join(lines)


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
