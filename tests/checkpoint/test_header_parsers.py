"""The safetensors header parsers under hypothesis: the compact-layout fast path
(:mod:`recipecli.checkpoint.compact_header`) must agree with ``json.loads`` + the entry loop
byte for byte on random and mutated headers; random configs, weight indexes and snapshots give a
summary or one ``RecipeCliError``, never another exception. (The hand-written hostile inputs are
in test_hostile_read.py.)

Expected values are worked out from the file formats (safetensors: 8-byte little-endian header
length, JSON header, ``data_offsets`` relative to the data buffer -- huggingface/safetensors
README "Format"), not taken from recipecli's output.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recipecli.checkpoint import open_checkpoint
from recipecli.checkpoint import safetensors_header as sh
from recipecli.checkpoint.compact_header import compact_columns
from recipecli.errors import CheckpointFormatError, RecipeCliError
from recipecli.testing.builder import TensorSpec, write_checkpoint

CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4}


def norm(name: str) -> TensorSpec:
    return TensorSpec(name, "F32", (4,), np.ones(4, np.float32))


# ----------------------------------------------------------------------------- speed path


def test_library_written_headers_take_the_compact_path(tmp_path):
    """The safetensors library's own layout must be parsed by the fast path (a 100 MB header of
    1.5 million tensors: benchmarks/bench_header_15m.py)."""
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    path = tmp_path / "m.safetensors"
    safetensors_numpy.save_file(
        {"b": np.zeros((2, 3), np.float32), "a": np.zeros(4, np.int64), "z": np.zeros(0, np.uint8)},
        str(path),
        metadata={"format": "np", "k": "v"},
    )
    raw = path.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    compact = compact_columns([raw[8 : 8 + n]], len(raw) - 8 - n)
    assert compact is not None
    cols, meta, ok = compact
    assert ok and meta == {"format": "np", "k": "v"}
    # sizes by hand: I64 x [4] = 32 bytes, F32 x [2, 3] = 24, U8 x [0] = 0
    got = {name: (dt, shape, e - b) for name, dt, shape, b, e in zip(*cols, strict=True)}
    assert got == {"a": ("I64", (4,), 32), "b": ("F32", (2, 3), 24), "z": ("U8", (0,), 0)}


def test_header_cap_message_for_non_compact_huge_headers(tmp_path):
    """Headers in another layout are parsed by json.loads only up to MAX_LOOSE_HEADER_BYTES."""
    entry = '"t{}": {{"dtype": "U8", "shape": [1], "data_offsets": [{}, {}]}}'
    count = sh.MAX_LOOSE_HEADER_BYTES // 50
    header = ("{" + ", ".join(entry.format(i, i, i + 1) for i in range(count)) + "}").encode()
    path = tmp_path / "m.safetensors"
    path.write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * count)
    with pytest.raises(CheckpointFormatError, match="compact layout"):
        sh.read_file_columns(path)


# ----------------------------------------------------------------------------- hypothesis

DTYPES = ["F32", "BF16", "F16", "I64", "U8", "BOOL", "F8_E4M3", "F4"]
names = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=12
)


@st.composite
def headers(draw):
    """A safetensors header (dict) and its data length: valid, then maybe mutated."""
    count = draw(st.integers(1, 6))
    tensor_names = draw(st.lists(names, min_size=count, max_size=count, unique=True))
    header: dict = {}
    if draw(st.booleans()):
        header["__metadata__"] = draw(
            st.dictionaries(names, st.one_of(names, st.integers(), st.none()), max_size=3)
        )
    offset = 0
    order = draw(st.permutations(range(count)))
    entries = []
    for i in range(count):
        dtype = draw(st.sampled_from(DTYPES))
        shape = draw(st.lists(st.integers(0, 5), max_size=3))
        bits = {"F4": 4, "F32": 32, "BF16": 16, "F16": 16, "I64": 64}.get(dtype, 8)
        nbytes = int(np.prod(shape, dtype=np.int64)) * bits // 8 if shape else bits // 8
        entries.append((tensor_names[i], dtype, shape, nbytes))
    for i in order:
        name, dtype, shape, nbytes = entries[i]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    data_len = offset + draw(st.sampled_from([0, 0, 0, 1, -1]))
    if draw(st.booleans()):  # one mutation
        victim = draw(st.sampled_from(tensor_names))
        field = draw(st.sampled_from(["dtype", "shape", "data_offsets", "entry", "extra"]))
        bad = draw(
            st.one_of(
                st.integers(-3, 10**20), st.text(max_size=3), st.none(), st.floats(), st.booleans()
            )
        )
        if field == "entry":
            header[victim] = bad
        elif field == "extra":
            header[victim]["x"] = bad
        else:
            header[victim][field] = draw(st.sampled_from([bad, [bad], [bad, bad], [0, bad]]))
    return header, max(data_len, 0)


def encode(header: dict, style: str) -> bytes:
    if style == "compact":
        raw = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    elif style == "ascii":
        raw = json.dumps(header, separators=(",", ":")).encode()
    else:
        raw = json.dumps(header, indent=1).encode()
    return raw + b" " * (-len(raw) % 8)


def reference(raw: bytes, data_len: int):
    """json.loads + validate_entries: the slow path that the compact parser must agree with."""
    try:
        header = json.loads(raw)
        if not isinstance(header, dict):
            return "error"
        tensors, meta = sh.validate_entries(header, where="x", data_len=data_len)
    except (CheckpointFormatError, ValueError, RecursionError):
        return "error"
    return {n: (t.dtype, t.shape, t.begin, t.end) for n, t in tensors.items()}, meta


def compact_result(raw: bytes, data_len: int, tmp_path: Path):
    path = tmp_path / "h.safetensors"
    path.write_bytes(len(raw).to_bytes(8, "little") + raw + b"\0" * data_len)
    try:
        _, _, _, cols, meta = sh._header_columns(path)
    except CheckpointFormatError:
        return "error"
    return {n: (d, s, b, e) for n, d, s, b, e in zip(*cols, strict=True)}, meta


@settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(headers(), st.sampled_from(["compact", "ascii", "indent"]))
def test_header_parsers_agree(tmp_path, case, style):
    header, data_len = case
    raw = encode(header, style)
    assert compact_result(raw, data_len, tmp_path) == reference(raw, data_len)


@settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(headers(), st.data())
def test_mutated_header_bytes_only_give_format_errors(tmp_path, case, data):
    """Flip, drop or insert bytes of a compact header: the reader agrees with the reference or
    raises CheckpointFormatError, never another exception."""
    header, data_len = case
    raw = bytearray(encode(header, "compact"))
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(raw) - 1))
        op = data.draw(st.sampled_from(["flip", "drop", "insert"]))
        byte = data.draw(st.sampled_from(list(b'"{}[],:\\\x00\x01\x03 0179aZ\xff')))
        if op == "flip":
            raw[i] = byte
        elif op == "drop" and len(raw) > 1:
            del raw[i]
        else:
            raw.insert(i, byte)
    assert compact_result(bytes(raw), data_len, tmp_path) == reference(bytes(raw), data_len)


json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**30), 10**30),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=8),
    ),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=12,
)
CONFIG_KEYS = [
    "architectures",
    "model_type",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "vocab_size",
    "rms_norm_eps",
    "tie_word_embeddings",
    "torch_dtype",
    "quantization_config",
    "text_config",
    "draft_vocab_size",
    "max_position_embeddings",
]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.dictionaries(st.sampled_from(CONFIG_KEYS), json_values, max_size=6))
def test_random_configs_give_a_summary_or_one_error(tmp_path, overrides):
    """open_checkpoint + the inspect summary: a result, or a RecipeCliError."""
    from recipecli.inspect import format_summary, summarize

    root = tmp_path / "ck"
    if not root.exists():
        write_checkpoint(root, CONFIG, [norm("a")])
    (root / "config.json").write_text(json.dumps(dict(CONFIG, **overrides)))
    try:
        ck = open_checkpoint(str(root))
        format_summary(summarize(ck))
    except RecipeCliError:
        pass


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(json_values, st.sampled_from(["weight_map", "whole"]))
def test_random_index_files_give_one_error(tmp_path, value, where):
    root = tmp_path / "ck"
    if not root.exists():
        write_checkpoint(root, CONFIG, [norm("a"), norm("b")], num_shards=2)
    index = {"weight_map": value} if where == "weight_map" else value
    (root / "model.safetensors.index.json").write_text(json.dumps(index))
    try:
        open_checkpoint(str(root))
    except RecipeCliError:
        pass


SNAPSHOT = {
    "recipecli_snapshot": 1,
    "source": "x",
    "revision": None,
    "kind": "local",
    "weight_format": "safetensors",
    "shards": ["model.safetensors"],
    "config": dict(CONFIG),
    "tensors": {"a": {"dtype": "F32", "shape": [4], "bytes": 16, "shard": "model.safetensors"}},
    "values": {"a": "AACAPwAAgD8AAIA/AACAPw=="},
}


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([(), ("tensors",), ("tensors", "a"), ("values",), ("config",)]),
            st.sampled_from(list(SNAPSHOT) + ["dtype", "shape", "bytes", "shard", "a", "b"]),
            json_values,
        ),
        min_size=1,
        max_size=3,
    )
)
def test_mutated_snapshots_give_a_summary_or_one_error(tmp_path, edits):
    from recipecli.inspect import format_summary, summarize

    snap = json.loads(json.dumps(SNAPSHOT))
    for path, key, value in edits:
        node = snap
        for part in path:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node[key] = value
    file = tmp_path / "s.json"
    file.write_text(json.dumps(snap))
    try:
        ck = open_checkpoint(str(file))
        format_summary(summarize(ck))
        for name in ck.tensors:
            if ck.has_values(name):
                ck.read_tensor(name)
    except RecipeCliError:
        pass


@pytest.mark.slow  # 4.7-7 s on a shared 2-core machine (pytest --durations)
@settings(max_examples=100, deadline=None)
@given(st.integers(1, 3000), st.sampled_from(["list", "object"]))
def test_json_and_yaml_depth_limits_are_one_error(depth, kind):
    """Nesting ``depth`` levels: accepted up to 64 (MAX_JSON_DEPTH), one error beyond."""
    from recipecli.safeio import check_yaml_limits, loads_json

    if kind == "list":
        text = "[" * depth + "]" * depth
    else:
        text = '{"a": ' * depth + "1" + "}" * depth
    try:
        loads_json(text, where="x", error=RecipeCliError)
        assert depth <= 64
    except RecipeCliError as exc:
        assert "levels deep" in str(exc) and depth > 64
    # YAML flow style: a top-level mapping holding ``depth`` nested sequences
    try:
        check_yaml_limits("a: " + "[" * depth + "]" * depth, where="x", error=RecipeCliError)
        assert depth + 1 <= 64
    except RecipeCliError as exc:
        assert "levels deep" in str(exc) and depth + 1 > 64
