"""The output ``config.json``: the layer config carried over, EAGLE keys re-derived from their
meaning, the verifier named by repo id (never a path of this machine), and the output format's
config writer (:attr:`~recipecli.convert.formats.OutputFormatSpec.write_config`) laying them
out."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from recipecli.checkpoint.model import Checkpoint
from recipecli.checkpoint.snapshot import bundled_origin
from recipecli.convert.formats import ConfigInputs, EagleValues, OutputFormatSpec, output_format
from recipecli.convert.options import CONFIG_DTYPE, DTYPE_OPTION, ConvertOptions
from recipecli.convert.translate import Translation, refuse
from recipecli.draft import (
    EAGLE_KEYS,
    DraftModel,
    FormatSpec,
    format_spec,
    from_hidden_state,
    layer_config,
)
from recipecli.draft.fields import LOADER_KEYS, NORM_FLAGS
from recipecli.errors import ConvertError


def _source_layer_config(ck: Checkpoint, d: DraftModel) -> tuple[dict[str, Any], dict[str, Any]]:
    """(layer/geometry keys, top-level keys) of the source config: the format's layer config
    (speculators ``transformer_layer_config``), else the top level without the EAGLE keys."""
    cfg = dict(ck.config)
    geo, prefix = layer_config(cfg, d.format)
    if prefix:
        return geo, cfg
    return {k: v for k, v in cfg.items() if k not in EAGLE_KEYS}, cfg


#: ``models--{org}--{name}/snapshots/{revision}``: a folder of the Hugging Face cache.
_HF_CACHE_SNAPSHOT = re.compile(r"models--(?P<repo>[^/]+)/snapshots/[^/]+/?$")


#: Longest namespace or name of a repo id the Hub accepts.
REPO_PART_MAX = 96


def _repo_part_ok(part: str) -> bool:
    """One side of ``namespace/name``: 1 to :data:`REPO_PART_MAX` characters, each an ASCII
    word character (``A-Z``, ``a-z``, ``0-9``, ``_``) or ``-`` or ``.``, the first and the last a
    word character."""
    if not 0 < len(part) <= REPO_PART_MAX:
        return False
    word = [c.isascii() and (c.isalnum() or c == "_") for c in part]
    return word[0] and word[-1] and all(w or c in "-." for w, c in zip(word, part, strict=True))


def repo_id_or_none(text: Any) -> str | None:
    """``text`` when it is a Hugging Face repo id (``org/name`` or ``name``) and not a path
    spelling (``/...``, ``./...``, ``~...``); else None.

    The rules are those ``huggingface_hub.utils.validate_repo_id`` states (its docstring and
    messages; tests/convert compares the two on a corpus): at most one ``/``; each side 1-96
    ASCII letters, digits, ``_``, ``-`` or ``.``, starting and ending with a letter, digit or
    ``_``; no ``--`` or ``..``; not ending in ``.git``. Written here because importing
    huggingface_hub's validator costs convert ~0.1 s of start-up (it imports the HTTP client;
    issue #30).
    """
    if not isinstance(text, str) or not text or text[0] in "./~" or "\\" in text:
        return None
    if text.count("/") > 1 or "--" in text or ".." in text or text.endswith(".git"):
        return None
    return text if all(_repo_part_ok(part) for part in text.split("/")) else None


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

    Taken from, in order: a Hub or HF-cache source (the repo id given); a repo id opened as its
    bundled snapshot (:func:`recipecli.checkpoint.snapshot.bundled_origin`); a snapshot taken from
    one (its recorded source); a folder inside the HF cache (``models--org--name/snapshots/…``);
    the config's ``_name_or_path`` when it is a repo id (transformers records the name the
    model was loaded by).

    Raises:
        ConvertError: none of these names a repo id (e.g. a local folder whose config has no
            ``_name_or_path``); the message asks for ``--verifier``.
    """
    if target_ck.kind in ("hub", "hf-cache") and repo_id_or_none(target_ck.source):
        return target_ck.source
    bundled = repo_id_or_none(bundled_origin(target_ck))  # a repo id opened as its bundled copy
    if bundled:
        return bundled
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


def _output_dtype(
    top: Mapping[str, Any], spec: FormatSpec | None, opts: ConvertOptions, trans: list[Translation]
) -> tuple[str, Any]:
    """(config key, value) of the output dtype: the source's spelling of the key (transformers-5
    writes ``dtype``), its value or the ``--dtype`` cast."""
    dtype_key = "dtype" if ("dtype" in top and "torch_dtype" not in top) else "torch_dtype"
    src_dtype = top.get("torch_dtype") or top.get("dtype")
    if src_dtype is None and spec and spec.layer_config_key:
        layer = top.get(spec.layer_config_key)
        if isinstance(layer, Mapping):
            src_dtype = layer.get("torch_dtype") or layer.get("dtype")
    cast_to = DTYPE_OPTION.get(opts.dtype)
    out_dtype = CONFIG_DTYPE[cast_to] if cast_to else src_dtype
    if cast_to and out_dtype != src_dtype:
        trans.append(Translation(dtype_key, src_dtype, out_dtype, f"--dtype {opts.dtype}"))
    return dtype_key, out_dtype


def _layer_fields(
    layer: dict[str, Any], d: DraftModel, n_layers: int, trans: list[Translation]
) -> None:
    """``tie_word_embeddings`` (false when Vd < V), ``model_type`` and ``num_hidden_layers`` (the
    layers the checkpoint holds) of the carried layer config, in place."""
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


def _dropped_keys(
    top: Mapping[str, Any], d: DraftModel, spec: FormatSpec | None, out: OutputFormatSpec
) -> list[tuple[str, str]]:
    """(key, why) of the source's format-specific keys with no meaning in the output."""
    dropped: list[tuple[str, str]] = []
    eagle_cfg = top.get("eagle_config")
    for k in eagle_cfg if isinstance(eagle_cfg, Mapping) else ():
        if k != "eagle_aux_hidden_state_layer_ids" and k not in NORM_FLAGS:
            dropped.append((f"eagle_config.{k}", f"no meaning in {out.key} output"))
    for k in LOADER_KEYS:
        if k in top and k not in out.carried_keys:
            dropped.append((k, f"{d.format}-specific; no meaning in {out.key} output"))
    if spec and spec.closed_schema:
        for k in top:
            if k not in EAGLE_KEYS:
                dropped.append((k, "top-level key of a speculators config outside its schema"))
    if "num_aux_hidden_states" in top:
        dropped.append(("num_aux_hidden_states", "k is written as the aux id list"))
    return dropped


def _verifier(
    ck: Checkpoint,
    opts: ConvertOptions,
    spec_cfg: Mapping[str, Any],
    target_ck: Checkpoint | None,
    trans: list[Translation],
) -> dict[str, Any]:
    """``speculators_config.verifier`` (for an output format that names the verifier): from
    ``--verifier``/``--target``, else the draft's own (refused when it is a path, or missing)."""
    verifier = dict(spec_cfg.get("verifier") or {})
    if target_ck is not None or opts.verifier:
        if target_ck is not None:
            archs = list(target_ck.config.get("architectures") or [])
        else:
            archs = list(verifier.get("architectures") or [])
        if not archs:
            raise refuse(
                "--verifier names the target, but its architectures (which the speculators "
                "verifier records) are unknown",
                ck.source,
                "add --target SOURCE (the target's directory, snapshot or repo id)",
            )
        named = opts.verifier if opts.verifier or target_ck is None else verifier_name(target_ck)
        new_verifier = {"name_or_path": named, "architectures": archs}
        why = "--verifier" if opts.verifier else "--target"
        if verifier and verifier != new_verifier:
            trans.append(Translation("speculators_config.verifier", verifier, new_verifier, why))
        verifier = new_verifier
    carried = verifier.get("name_or_path")
    if carried and target_ck is None and not opts.verifier and not repo_id_or_none(carried):
        raise refuse(
            f"the draft's speculators_config.verifier.name_or_path {carried!r} is a path, not "
            "a repo id; it would be written into the output",
            ck.source,
            "add --target SOURCE or --verifier REPO_ID",
        )
    if not verifier.get("name_or_path"):
        raise refuse(
            "speculators output needs the verifier (target) so that `vllm serve OUT` works alone",
            ck.source,
            "add --target SOURCE (the target repo id or directory)",
        )
    return verifier


def _aux_and_vocab(
    top: Mapping[str, Any],
    d: DraftModel,
    spec: FormatSpec | None,
    out: OutputFormatSpec,
    hidden_ids: tuple[int, ...] | None,
    trans: list[Translation],
) -> tuple[int | None, list[int] | None]:
    """(``draft_vocab_size`` to state, aux ids in the output's convention): Vd when the source
    declares it (under any of its format's spellings), the ids when there are any."""
    vd_out = d.Vd if d.draft_vocab_size_declared else None
    vd_key = spec.vocab_size_key if spec else "draft_vocab_size"
    if vd_key != "draft_vocab_size" and vd_key in top:
        trans.append(Translation("draft_vocab_size", {vd_key: d.Vd}, d.Vd, f"{d.format} spelling"))
        vd_out = d.Vd
    if hidden_ids is None:
        return vd_out, None
    return vd_out, list(from_hidden_state(hidden_ids, out.aux_convention))


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
    are re-derived from their meaning; the output format's writer lays the config out.

    Raises:
        ConvertError: an output format that names the verifier, whose verifier is unknown or a
            path (:func:`_verifier`).
    """
    out = output_format(opts.to)
    spec = format_spec(d.format)
    layer, top = _source_layer_config(ck, d)
    trans: list[Translation] = []
    dropped: list[tuple[str, str]] = []
    layer = {k: v for k, v in layer.items() if k not in ("torch_dtype", "dtype", "architectures")}
    _without_machine_paths(layer, dropped)
    dtype_key, out_dtype = _output_dtype(top, spec, opts, trans)
    _layer_fields(layer, d, n_layers, trans)
    dropped += _dropped_keys(top, d, spec, out)
    vd_out, out_ids = _aux_and_vocab(top, d, spec, out, hidden_ids, trans)
    ht_out = d.Ht if d.target_hidden_size_declared else None
    eagle = EagleValues(vd_out, ht_out, out_ids, nbr, chaining)
    spec_key = spec.verifier_config_key if spec else None
    spec_cfg: dict[str, Any] = {}
    verifier = None
    if out.names_verifier:
        spec_cfg = dict(top.get(spec_key) or {}) if spec_key else {}
        verifier = _verifier(ck, opts, spec_cfg, target_ck, trans)
    config = out.write_config(ConfigInputs(d, top, layer, eagle, spec_cfg, verifier))
    if out_dtype:
        config[dtype_key] = out_dtype
    if not out.names_verifier and spec_key:
        dropped.append((spec_key, f"{out.key} output names no verifier"))
    return config, trans, dropped
