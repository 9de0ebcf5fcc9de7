"""The checkpoint reader on bad inputs (validated while reading) and on the good paths.

Every bad input is checked twice: the library raises ``CheckpointFormatError`` naming the file,
and ``python -m recipecli inspect DIR`` exits 2 with exactly one stderr line naming the file and
no traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recipecli.checkpoint import IO_STATS, open_checkpoint
from recipecli.checkpoint import safetensors_format as sf
from recipecli.checkpoint import safetensors_header as sh
from recipecli.errors import CheckpointFormatError, MissingDependencyError
from recipecli.testing.builder import (
    TensorSpec,
    write_bin_checkpoint,
    write_checkpoint,
    write_safetensors,
)
from recipecli.testing.specs import draft_specs, norm_values, target_specs, valid_vocab_map

TINY_CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4}


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recipecli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
    )


def raw_safetensors(path: Path, header: dict, *, data: bytes = b"", header_len: int | None = None):
    """Write a safetensors file byte by byte (header as given, no validation)."""
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    n = len(raw) if header_len is None else header_len
    path.write_bytes(n.to_bytes(8, "little") + raw + data)


def entry(dtype: str, shape: list[int], begin: int, end: int) -> dict:
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


def single(root: Path, header: dict, **kw) -> Path:
    """A checkpoint dir with config.json and model.safetensors from a raw header; returns the file."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps(TINY_CONFIG))
    path = root / "model.safetensors"
    raw_safetensors(path, header, **kw)
    return path


def sharded(root: Path, weight_map: dict[str, str], shards: dict[str, list[TensorSpec]]) -> Path:
    """A sharded checkpoint dir with the given index and shard contents; returns the index."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps(TINY_CONFIG))
    for name, specs in shards.items():
        write_safetensors(root / name, specs)
    index = root / "model.safetensors.index.json"
    index.write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    return index


def norm(name: str) -> TensorSpec:
    return TensorSpec(name, "F32", (4,), np.ones(4, np.float32))


# Each case builds a bad checkpoint under tmp and returns (dir, file the message must name,
# a fragment of the message).
def bad_config(tmp: Path):
    path = tmp / "ck" / "config.json"
    write_checkpoint(tmp / "ck", TINY_CONFIG, [norm("a")])
    path.write_text('{"hidden_size": 4,')
    return tmp / "ck", path, "malformed config.json"


def bad_header_json(tmp: Path):
    path = single(tmp / "ck", {})
    path.write_bytes((8).to_bytes(8, "little") + b"{not js}")
    return tmp / "ck", path, "malformed safetensors header"


def metadata_not_object(tmp: Path):
    header = {"__metadata__": ["pt"], "a": entry("F32", [1], 0, 4)}
    path = single(tmp / "ck", header, data=b"\0" * 4)
    return tmp / "ck", path, "__metadata__ is not an object"


def header_not_object(tmp: Path):
    path = single(tmp / "ck", {})
    path.write_bytes((8).to_bytes(8, "little") + b"[1]     ")
    return tmp / "ck", path, "not a JSON object"


def header_longer_than_file(tmp: Path):
    path = single(tmp / "ck", {"a": entry("F32", [1], 0, 4)}, data=b"\0" * 4, header_len=4096)
    return tmp / "ck", path, "larger than the file"


def header_absurd(tmp: Path):
    path = single(tmp / "ck", {}, header_len=200 * 1024 * 1024)  # > 100 MB cap
    return tmp / "ck", path, "over the 104857600-byte cap"


def overlapping(tmp: Path):
    header = {"a": entry("F32", [2], 0, 8), "b": entry("F32", [2], 4, 12)}
    path = single(tmp / "ck", header, data=b"\0" * 12)
    return tmp / "ck", path, "overlaps"


def out_of_order(tmp: Path):
    path = single(tmp / "ck", {"a": entry("F32", [1], 8, 4)}, data=b"\0" * 8)
    return tmp / "ck", path, "out of order"


def truncated(tmp: Path):
    header = {"a": entry("F32", [4], 0, 16), "b": entry("F32", [4], 16, 32)}
    path = single(tmp / "ck", header, data=b"\0" * 20)  # 12 bytes missing
    return tmp / "ck", path, "truncated"


def byte_count_mismatch(tmp: Path):
    # F32 x [3] is 12 bytes, the offsets span 16
    path = single(tmp / "ck", {"a": entry("F32", [3], 0, 16)}, data=b"\0" * 16)
    return tmp / "ck", path, "12 bytes"


def unknown_dtype(tmp: Path):
    path = single(tmp / "ck", {"a": entry("F33", [1], 0, 4)}, data=b"\0" * 4)
    return tmp / "ck", path, "unknown dtype"


def missing_shard(tmp: Path):
    index = sharded(
        tmp / "ck",
        {"a": "model-1.safetensors", "b": "model-2.safetensors"},
        {"model-1.safetensors": [norm("a")]},
    )
    return tmp / "ck", index, "'model-2.safetensors', which is missing"


def dotdot_shard(tmp: Path):
    write_safetensors(tmp / "x.safetensors", [norm("b")])  # exists, but outside the dir
    index = sharded(
        tmp / "ck",
        {"a": "model-1.safetensors", "b": "../x.safetensors"},
        {"model-1.safetensors": [norm("a")]},
    )
    return tmp / "ck", index, "outside the checkpoint directory"


def absolute_shard(tmp: Path):
    write_safetensors(tmp / "x.safetensors", [norm("b")])
    index = sharded(
        tmp / "ck",
        {"a": "model-1.safetensors", "b": str(tmp / "x.safetensors")},
        {"model-1.safetensors": [norm("a")]},
    )
    return tmp / "ck", index, "outside the checkpoint directory"


def in_index_not_in_shard(tmp: Path):
    sharded(
        tmp / "ck",
        {"a": "model-1.safetensors", "ghost": "model-1.safetensors"},
        {"model-1.safetensors": [norm("a")]},
    )
    return tmp / "ck", tmp / "ck" / "model-1.safetensors", "'ghost'"


def in_shard_not_in_index(tmp: Path):
    sharded(
        tmp / "ck",
        {"a": "model-1.safetensors"},
        {"model-1.safetensors": [norm("a"), norm("stray")]},
    )
    return tmp / "ck", tmp / "ck" / "model-1.safetensors", "'stray'"


def misplaced_in_index(tmp: Path):
    sharded(
        tmp / "ck",
        {"a": "model-2.safetensors", "b": "model-1.safetensors"},
        {"model-1.safetensors": [norm("a"), norm("b")], "model-2.safetensors": [norm("c")]},
    )
    return tmp / "ck", tmp / "ck" / "model-1.safetensors", "puts it in 'model-2.safetensors'"


def duplicate_without_index(tmp: Path):
    root = tmp / "ck"
    root.mkdir()
    (root / "config.json").write_text(json.dumps(TINY_CONFIG))
    write_safetensors(root / "part-a.safetensors", [norm("w")])
    write_safetensors(root / "part-b.safetensors", [norm("w")])
    return root, root / "part-b.safetensors", "appears in two shards"


def malformed_index(tmp: Path):
    index = sharded(tmp / "ck", {"a": "model-1.safetensors"}, {"model-1.safetensors": [norm("a")]})
    index.write_text("{")
    return tmp / "ck", index, "malformed weight index"


BAD_INPUTS: dict[str, Callable[[Path], tuple[Path, Path, str]]] = {
    "malformed config.json": bad_config,
    "malformed header JSON": bad_header_json,
    "__metadata__ not an object": metadata_not_object,
    "header not an object": header_not_object,
    "header length larger than file": header_longer_than_file,
    "absurd header length": header_absurd,
    "overlapping offsets": overlapping,
    "out-of-order offsets": out_of_order,
    "data past EOF": truncated,
    "dtype/shape/byte-count disagreement": byte_count_mismatch,
    "unknown dtype": unknown_dtype,
    "index names a missing shard": missing_shard,
    "index shard ../": dotdot_shard,
    "index shard absolute path": absolute_shard,
    "tensor in index, absent from its shard": in_index_not_in_shard,
    "tensor in shard, absent from index": in_shard_not_in_index,
    "malformed index JSON": malformed_index,
    "index puts a tensor in another shard": misplaced_in_index,
    "tensor in two shards (no index)": duplicate_without_index,
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_library_error_names_file(tmp_path, case):
    root, bad_file, fragment = BAD_INPUTS[case](tmp_path)
    with pytest.raises(CheckpointFormatError) as info:
        open_checkpoint(str(root))
    assert info.value.path == str(bad_file)
    assert str(bad_file) in str(info.value)
    assert fragment in str(info.value)


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_cli_exit_2_one_line(tmp_path, case):
    root, bad_file, fragment = BAD_INPUTS[case](tmp_path)
    proc = run_cli("inspect", str(root))
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert str(bad_file) in lines[0] and fragment in lines[0]
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_symlinked_shards_are_accepted(tmp_path):
    """The HF cache stores models--ORG--NAME/snapshots/<sha>/<shard> as symlinks to
    ../../blobs/<hash> (huggingface_hub's cache layout): those links are followed."""
    repo = tmp_path / "models--org--name"
    blobs = repo / "blobs"
    blobs.mkdir(parents=True)
    write_safetensors(blobs / "h1", [norm("a")])
    write_safetensors(blobs / "h2", [norm("b")])
    (blobs / "h0").write_text(json.dumps(TINY_CONFIG))
    root = repo / "snapshots" / ("a" * 40)
    root.mkdir(parents=True)
    (root / "config.json").symlink_to("../../blobs/h0")
    (root / "model-1.safetensors").symlink_to("../../blobs/h1")
    (root / "model-2.safetensors").symlink_to("../../blobs/h2")
    weight_map = {"a": "model-1.safetensors", "b": "model-2.safetensors"}
    (root / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    ck = open_checkpoint(str(root))
    assert ck.shards == ("model-1.safetensors", "model-2.safetensors")
    assert ck.read_tensor("b").tolist() == [1.0] * 4


def test_dotdot_inside_name_that_stays_inside_is_still_refused(tmp_path):
    # "sub/../model-1.safetensors" normalises inside the dir, but ".." is refused outright
    index = sharded(
        tmp_path / "ck",
        {"a": "sub/../model-1.safetensors"},
        {"model-1.safetensors": [norm("a")]},
    )
    with pytest.raises(CheckpointFormatError, match="outside the checkpoint directory") as info:
        open_checkpoint(str(tmp_path / "ck"))
    assert info.value.path == str(index)


def test_debug_shows_traceback(tmp_path):
    root, _, _ = truncated(tmp_path)
    proc = run_cli("--debug", "inspect", str(root))
    assert proc.returncode != 0 and "Traceback" in proc.stderr


# ----------------------------------------------------------------------------- good paths


def test_open_reads_headers_only_and_read_tensor_reads_only_that_tensor(tmp_path):
    # a 64 MiB hole between two small tensors
    specs = [
        TensorSpec("norm.weight", "BF16", (8,), np.arange(8, dtype=np.float32)),
        TensorSpec("big.weight", "BF16", (4096, 8192)),
        TensorSpec("d2t", "I64", (5,), np.array([0, 1, 1, 3, 7])),
    ]
    root = write_checkpoint(tmp_path / "ck", TINY_CONFIG, specs)
    file = root / "model.safetensors"
    header_len = int.from_bytes(file.read_bytes()[:8], "little")
    config_len = (root / "config.json").stat().st_size

    before = IO_STATS.bytes_read
    ck = open_checkpoint(str(root))
    assert IO_STATS.bytes_read - before == config_len + 8 + header_len

    before = IO_STATS.bytes_read
    assert ck.read_tensor("d2t").tolist() == [0, 1, 1, 3, 7]
    assert IO_STATS.bytes_read - before == 5 * 8
    before = IO_STATS.bytes_read
    assert ck.read_tensor("norm.weight").tolist() == list(range(8))  # exact in bf16
    assert IO_STATS.bytes_read - before == 8 * 2
    assert ck.tensors["big.weight"].nbytes == 4096 * 8192 * 2


def test_hundred_plus_shard_full_size_checkpoint(tmp_path, fixture_config):
    config = fixture_config("meta-llama__Meta-Llama-3.1-8B")
    root = write_checkpoint(tmp_path / "ck", config, target_specs(config), num_shards=120)
    ck = open_checkpoint(str(root))
    assert len(ck.shards) == 120
    assert len(ck.tensors) == 1 + 32 * 9 + 2
    assert ck.total_bytes == 2 * 8_030_261_248  # worked out in tests/testing/test_specs.py
    assert ck.tensors["model.layers.5.self_attn.k_proj.weight"].shape == (1024, 4096)
    name = "model.layers.17.post_attention_layernorm.weight"
    got = ck.read_tensor(name)
    want = norm_values(name, 4096)
    # stored as BF16: 8 mantissa bits -> relative error <= 2**-8
    assert np.allclose(got, want, rtol=2**-8, atol=0)
    proc = run_cli("inspect", str(root), "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert len(doc["tensors"]) == len(ck.tensors)


def tiny_draft_config() -> dict:
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 16,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "intermediate_size": 32,
        "num_hidden_layers": 1,
        "vocab_size": 64,
        "draft_vocab_size": 16,
        "torch_dtype": "float16",
    }


def test_bin_draft_checkpoint_loads_with_torch(tmp_path):
    pytest.importorskip("torch")
    config = tiny_draft_config()
    d2t, t2d = valid_vocab_map(64, 16, seed=5)
    specs = draft_specs(config, d2t=d2t, t2d=t2d)
    root = write_bin_checkpoint(tmp_path / "draft", config, specs)
    ck = open_checkpoint(str(root))
    assert ck.weight_format == "bin"
    assert ck.tensors["midlayer.self_attn.q_proj.weight"].shape == (16, 32)  # [2*8, 2*16]
    assert ck.tensors["midlayer.self_attn.q_proj.weight"].dtype == "F16"
    assert ck.tensors["fc.weight"].shape == (16, 48)
    assert ck.tensors["t2d"].dtype == "BOOL"
    assert np.array_equal(ck.read_tensor("d2t"), d2t)
    assert np.array_equal(ck.read_tensor("t2d"), t2d)
    norm_f16 = norm_values("norm.weight", 16).astype(np.float16)
    assert np.array_equal(ck.read_tensor("norm.weight"), norm_f16)


def test_bin_without_torch_says_torch_is_needed(tmp_path):
    pytest.importorskip("torch")  # needed to write the .bin
    config = tiny_draft_config()
    root = write_bin_checkpoint(tmp_path / "draft", config, draft_specs(config))
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from recipecli.cli import main\n"
        f"main(['inspect', {str(root)!r}])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs torch" in lines[0] and "Traceback" not in proc.stderr
    assert str(root / "pytorch_model.bin") in lines[0]
    # and in-process the library error is MissingDependencyError
    code_lib = (
        "import sys; sys.modules['torch'] = None\n"
        "from recipecli.checkpoint import open_checkpoint\n"
        "from recipecli.errors import MissingDependencyError\n"
        "try:\n"
        f"    open_checkpoint({str(root)!r})\n"
        "except MissingDependencyError as e:\n"
        "    print('OK', e)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code_lib], capture_output=True, text=True)
    assert proc.stdout.startswith("OK"), proc.stderr
    assert MissingDependencyError.__name__ == "MissingDependencyError"


# ----------------------------------------------------------------------------- header fast path

_DTYPES = ["BF16", "F32", "I64", "BOOL", "F8_E4M3", "U8", "F4"]
_BAD_VALUES = [-1, True, 1.5, "3", None, [1], 2**70]


@st.composite
def mutated_headers(draw):
    """A valid header (contiguous offsets) and then 0-2 random corruptions of it."""
    n = draw(st.integers(1, 6))
    header, offset = {}, 0
    for i in range(n):
        dtype = draw(st.sampled_from(_DTYPES))
        shape = draw(st.lists(st.integers(0, 5), max_size=3))
        size = (
            sf.tensor_nbytes(dtype, tuple(shape))
            if dtype != "F4" or (np.prod(shape) % 2 == 0)
            else None
        )
        if size is None:
            shape, size = [2], 1
        header[f"t{i}"] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    data_len = offset
    for _ in range(draw(st.integers(0, 2))):
        name = draw(st.sampled_from(sorted(header)))
        field = draw(st.sampled_from(["dtype", "shape", "data_offsets", "entry", "data_len"]))
        bad = draw(st.sampled_from(_BAD_VALUES))
        if field == "entry":
            header[name] = bad
        elif field == "data_len":
            data_len += draw(st.integers(-3, 3))
        elif field == "shape" and isinstance(header[name], dict):
            if not isinstance(header[name]["shape"], list):
                continue
            shape = list(header[name]["shape"]) + [bad]
            header[name]["shape"] = draw(st.sampled_from([shape, bad, shape[:1]]))
        elif field == "data_offsets" and isinstance(header[name], dict):
            offsets = header[name]["data_offsets"]
            if not (isinstance(offsets, list) and len(offsets) == 2):
                continue
            b, e = offsets
            if not (type(b) is int and type(e) is int):
                continue
            header[name]["data_offsets"] = draw(
                st.sampled_from([[e, b], [b + 1, e + 1], [b, e, e], [b, bad], bad])
            )
        elif isinstance(header[name], dict):
            header[name]["dtype"] = draw(st.sampled_from([bad, "F33", "I64", "F16"]))
    return header, data_len


@settings(max_examples=300, deadline=None)
@given(mutated_headers())
def test_header_fast_path_agrees_with_entry_loop(case):
    header, data_len = case
    try:
        fast = sh._fast_entries(header, data_len)
    except Exception as exc:  # the fast path must never raise, only decline
        raise AssertionError(f"fast path raised {exc!r}") from exc
    original, sh._fast_entries = sh._fast_entries, lambda *a: None
    try:
        slow = sh.validate_entries(header, where="x", data_len=data_len)[0]
    except CheckpointFormatError:
        slow = None
    finally:
        sh._fast_entries = original
    if fast is not None:
        assert slow == fast


def test_header_fast_path_fires_on_valid_headers():
    header = {
        "__metadata__": {"format": "pt"},
        "b": {"dtype": "F32", "shape": [2], "data_offsets": [2, 10]},
        "a": {"dtype": "BF16", "shape": [1], "data_offsets": [0, 2]},
        "z": {"dtype": "I64", "shape": [0, 3], "data_offsets": [10, 10]},
    }
    fast = sh._fast_entries(header, 10)
    assert fast is not None and set(fast) == {"a", "b", "z"}
    assert fast["b"] == sf.RawTensor("b", "F32", (2,), 2, 10)
    assert sh._fast_entries(header, 11) is None  # trailing byte: declined, loop reports it


TARGETS = [
    "meta-llama__Meta-Llama-3.1-8B",
    "meta-llama__Meta-Llama-3.1-70B",
    "Qwen__Qwen3-8B",
    "Qwen__Qwen3-30B-A3B",
    "Qwen__Qwen3-VL-30B-A3B-Instruct",
    "openai__gpt-oss-120b",
    "deepseek-ai__DeepSeek-V3",
    "MiniMaxAI__MiniMax-M3",
    "nvidia__MiniMax-M3-NVFP4",
]


@pytest.mark.parametrize("name", TARGETS)
def test_full_size_sparse_target_round_trips(full_size_target, fixture_config, name):
    """Every fixture target's full-size spec list writes as a valid sparse checkpoint whose
    tensor table the reader returns unchanged (shapes, dtypes, bytes), reading headers only."""
    config = fixture_config(name)
    specs = target_specs(config)
    root = full_size_target(name)
    disk = sum(f.stat().st_blocks * 512 for f in root.iterdir())
    before = IO_STATS.bytes_read
    ck = open_checkpoint(str(root))
    assert {n: (t.dtype, t.shape, t.nbytes) for n, t in ck.tensors.items()} == {
        s.name: (s.dtype, s.shape, s.nbytes) for s in specs
    }
    assert IO_STATS.bytes_read - before < disk  # headers + config only
    assert ck.text.tensor_prefix + "embed_tokens.weight" in ck.tensors or (
        "model.embed_tokens.weight" in ck.tensors
    )
