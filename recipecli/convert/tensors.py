"""The output's tensors: where each comes from and under which name, how they are laid out in
shards, and the proof that lets ``--embed drop`` leave the embedding out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from recipecli.checkpoint.model import Checkpoint
from recipecli.convert.casts import CASTABLE, CHUNK_BYTES, ITEMSIZE
from recipecli.convert.formats import TensorNaming, output_format
from recipecli.convert.options import DTYPE_OPTION, ConvertOptions
from recipecli.convert.reader import open_reader
from recipecli.convert.translate import refuse
from recipecli.draft import DraftModel, strip_prefix
from recipecli.draft.tensors import LAYER_SUFFIXES, is_top_name, split_layer_name
from recipecli.errors import UsageError


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


def map_tensor_name(name: str, d: DraftModel, naming: TensorNaming, n_layers: int) -> str | None:
    """Output name of source tensor ``name`` under the output format's ``naming``
    (``midlayer.*`` <-> ``layers.{i}.*``, the rename vLLM v0.33.0
    ``Eagle3LlamaForCausalLM.load_weights`` applies), or None when unknown.

    ``midlayer.*`` / ``midlayer.{i}.*`` / ``layers.{i}.*`` become ``layers.{i}.*`` (speculators) or
    ``midlayer.*`` (eagle3, one layer; ``midlayer.{i}.*`` for more); top-level roles keep their
    names; a NeMo ``model.`` prefix is stripped (naming: :mod:`recipecli.draft.tensors`).
    """
    name = strip_prefix(name, d.tensor_prefix)
    if is_top_name(name):
        return name
    parsed = split_layer_name(name)
    if not parsed or parsed[1] not in LAYER_SUFFIXES:
        return None
    idx, rest = parsed
    return naming.layer_name(idx, rest, n_layers)


def plan_moves(
    ck: Checkpoint,
    d: DraftModel,
    opts: ConvertOptions,
    target_ck: Checkpoint | None,
    n_layers: int,
    derived: dict[str, bytes],
) -> tuple[list[TensorMove], list[tuple[str, str]]]:
    """The output tensors, sorted by name and laid out in shards, and the dropped ones.

    Raises:
        ConvertError: a tensor with no place in the output (convert never drops weights), two
            tensors mapping to one name, or an ``--embed drop`` that is not proven safe.
        UsageError: an unknown ``--dtype``.
    """
    src = ck.source
    names = sorted(ck.tensors)
    cast_to = DTYPE_OPTION.get(opts.dtype)
    if opts.dtype not in DTYPE_OPTION:
        raise UsageError(f"--dtype {opts.dtype!r}: expected keep, bf16 or fp16")
    naming = output_format(opts.to).naming
    unknown = [n for n in names if map_tensor_name(n, d, naming, n_layers) is None]
    if unknown:
        raise refuse(
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
            check_embed_drop(ck, d, target_ck, opts)
            dropped.append((n, "--embed drop: byte-identical to the target's embedding"))
            continue
        dst_dtype = cast_to if (cast_to and info.dtype in CASTABLE) else info.dtype
        nbytes = info.nbytes
        if dst_dtype != info.dtype:
            nbytes = info.nbytes // ITEMSIZE[info.dtype] * ITEMSIZE[dst_dtype]
        dst = map_tensor_name(n, d, naming, n_layers) or n
        moves.append(TensorMove(n, dst, info.dtype, dst_dtype, tuple(info.shape), nbytes))
    for dst, raw in derived.items():
        moves.append(
            TensorMove("d2t", dst, "BOOL", "BOOL", (int(d.V or 0),), len(raw), derived=True)
        )
    dsts = [m.dst for m in moves]
    if len(set(dsts)) != len(dsts):
        dup = sorted({x for x in dsts if dsts.count(x) > 1})
        raise refuse(f"two source tensors map to the same output name: {dup}", src)
    moves.sort(key=lambda m: m.dst)
    return layout_shards(moves, opts.max_shard_size), dropped


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


def check_embed_drop(
    ck: Checkpoint, d: DraftModel, target_ck: Checkpoint | None, opts: ConvertOptions
) -> None:
    """``--embed drop`` is allowed only when the engines can share the target's embedding and it is
    byte-identical to the draft's (vLLM v0.33.0 ``vllm/v1/worker/gpu/spec_decode/eagle/utils.py``
    ``load_eagle_model`` shares the target's embedding with a draft that ships none; tokenspeed
    PR #837 for replicated vs sharded sharing)."""
    src = ck.source
    if d.target_hidden_size_declared and d.Ht != d.H:
        raise refuse(
            f"--embed drop: draft hidden {d.H} != target hidden {d.Ht}, so the target embedding cannot be "
            "shared; the draft must ship its own embed_tokens",
            src,
            "keep the embedding (--embed keep)",
        )
    if opts.force:
        return
    if target_ck is None:
        raise refuse(
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
        raise refuse(
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
                raise refuse(
                    "--embed drop: the draft's embed_tokens differs from the target's (first differing "
                    f"chunk at byte {off}); dropping it would lose trained weights",
                    src,
                    "keep the embedding (--embed keep)",
                )
    finally:
        a.close()
        b.close()
