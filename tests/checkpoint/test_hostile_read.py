"""Hostile inputs for every reader: one line, exit 2, no traceback, no hang, no leaked bytes.

One test per reading defect found by the hostile-input survey (symlinks leaving the checkpoint,
FIFOs and folders where files belong, deep or huge-integer JSON and YAML, type mix-ups in
configs, snapshots and ``.bin`` state dicts, safetensors ``__metadata__`` that the safetensors
library refuses, ``rms_norm_eps: Infinity``); each failed before the safe-reading layer
(``recipecli.safeio``) and passes after. Hypothesis over the parsers (random and mutated headers,
configs, indexes, snapshots) is in test_header_parsers.py.

Expected values are worked out from the file formats (safetensors: 8-byte little-endian header
length, JSON header, ``data_offsets`` relative to the data buffer -- huggingface/safetensors
README "Format"), not taken from recipecli's output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from recipecli.checkpoint import open_checkpoint
from recipecli.cli import main
from recipecli.errors import CheckpointFormatError
from recipecli.testing.builder import TensorSpec, write_checkpoint, write_safetensors

CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4}
TOKEN = "hf_AbCdEfGhIjKlMnOpQrStUv"


def norm(name: str) -> TensorSpec:
    return TensorSpec(name, "F32", (4,), np.ones(4, np.float32))


def checkpoint(root: Path, config: dict | None = None) -> Path:
    write_checkpoint(root, config or CONFIG, [norm("a")])
    return root


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """Run the CLI in-process: (exit code, stdout, stderr). An unexpected exception propagates
    (that is the traceback a user would see)."""
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


def one_line(capsys, *args: str, fragments: tuple[str, ...] = ()) -> str:
    code, out, err = cli(capsys, *args)
    lines = err.strip().splitlines()
    assert code == 2, (code, err)
    assert len(lines) == 1, err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def run_subprocess(*args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    """For inputs that used to hang: a child process with a timeout (a hang fails the test)."""
    return subprocess.run(
        [sys.executable, "-m", "recipecli", *args], capture_output=True, text=True, timeout=timeout
    )


# ----------------------------------------------------------------------------- leaks


def test_symlink_to_a_token_file_is_refused_naming_the_link_not_the_bytes(tmp_path, capsys):
    """Before: 'safetensors header length 7380384427658553448 exceeds ...' -- the first 8 bytes of
    the token file as a little-endian number (``hf_`` and five token characters)."""
    secret = tmp_path / "home" / "token"
    secret.parent.mkdir()
    secret.write_text(TOKEN)
    root = checkpoint(tmp_path / "ck")
    (root / "model.safetensors").unlink()
    (root / "model.safetensors").symlink_to(secret)
    line = one_line(capsys, "inspect", str(root), fragments=("model.safetensors", "symlink"))
    leaked = str(int.from_bytes(TOKEN.encode()[:8], "little"))
    assert leaked not in line and TOKEN[:8] not in line and str(secret) not in line


def test_a_non_safetensors_file_never_has_its_first_bytes_printed(tmp_path, capsys):
    """Same file copied in (no symlink): the header-length field is not printed either."""
    root = checkpoint(tmp_path / "ck")
    (root / "model.safetensors").write_text(TOKEN)
    line = one_line(capsys, "inspect", str(root), fragments=("model.safetensors",))
    assert str(int.from_bytes(TOKEN.encode()[:8], "little")) not in line
    assert TOKEN[:8] not in line


def test_index_shard_symlinked_outside_the_checkpoint_is_refused(tmp_path, capsys):
    """Before: opened and read (the index name is inside, the link target is not)."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    write_safetensors(outside / "x.safetensors", [norm("a")])
    root = tmp_path / "ck"
    root.mkdir()
    (root / "config.json").write_text(json.dumps(CONFIG))
    (root / "model-1.safetensors").symlink_to(outside / "x.safetensors")
    (root / "model.safetensors.index.json").write_text(
        json.dumps({"weight_map": {"a": "model-1.safetensors"}})
    )
    with pytest.raises(CheckpointFormatError, match="symlink that leads outside") as info:
        open_checkpoint(str(root))
    assert info.value.path == str(root / "model-1.safetensors")


def test_links_inside_the_checkpoint_are_followed(tmp_path):
    root = checkpoint(tmp_path / "ck")
    (root / "store").mkdir()
    (root / "model.safetensors").rename(root / "store" / "w.safetensors")
    (root / "model.safetensors").symlink_to("store/w.safetensors")
    assert open_checkpoint(str(root)).read_tensor("a").tolist() == [1.0] * 4


def test_hf_cache_link_into_another_repos_blobs_is_refused(tmp_path):
    """snapshots/ -> blobs/ of the SAME repo only."""
    cache = tmp_path / "hub"
    other = cache / "models--org--other" / "blobs"
    other.mkdir(parents=True)
    write_safetensors(other / "h1", [norm("a")])
    snap = cache / "models--org--name" / "snapshots" / ("a" * 40)
    snap.mkdir(parents=True)
    (cache / "models--org--name" / "blobs").mkdir()
    (snap / "config.json").write_text(json.dumps(CONFIG))
    (snap / "model.safetensors").symlink_to("../../../models--org--other/blobs/h1")
    with pytest.raises(CheckpointFormatError, match="symlink that leads outside"):
        open_checkpoint(str(snap))


# ----------------------------------------------------------------------------- hangs


@pytest.mark.parametrize("name", ["model.safetensors", "model-00001-of-00002.safetensors"])
def test_fifo_named_safetensors_is_refused_without_blocking(tmp_path, name):
    """Before: open(2) of a FIFO without a writer blocks forever."""
    root = checkpoint(tmp_path / "ck")
    (root / "model.safetensors").unlink()
    os.mkfifo(root / name)
    proc = run_subprocess("inspect", str(root))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "FIFO" in proc.stderr and name in proc.stderr


def test_fifo_in_the_hf_cache_is_refused_without_blocking(tmp_path):
    cache = tmp_path / "hub"
    repo = cache / "models--org--name"
    (repo / "blobs").mkdir(parents=True)
    os.mkfifo(repo / "blobs" / "fifo")
    (repo / "blobs" / "cfg").write_text(json.dumps(CONFIG))
    snap = repo / "snapshots" / ("a" * 40)
    snap.mkdir(parents=True)
    (snap / "config.json").symlink_to("../../blobs/cfg")
    (snap / "model.safetensors").symlink_to("../../blobs/fifo")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("a" * 40)
    env = dict(os.environ, HF_HUB_CACHE=str(cache), HF_HUB_OFFLINE="1")
    proc = subprocess.run(
        [sys.executable, "-m", "recipecli", "inspect", "org/name"],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )
    assert proc.returncode == 2 and "FIFO" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_fifo_config_and_fifo_snapshot_are_refused_without_blocking(tmp_path):
    root = checkpoint(tmp_path / "ck")
    (root / "config.json").unlink()
    os.mkfifo(root / "config.json")
    os.mkfifo(tmp_path / "snap.json")
    for source in (root, tmp_path / "snap.json"):
        proc = run_subprocess("inspect", str(source))
        assert proc.returncode == 2 and "FIFO" in proc.stderr, proc.stderr


# ----------------------------------------------------------------------------- tracebacks


def test_folder_named_model_safetensors_is_one_line(tmp_path, capsys):
    """Before: IsADirectoryError traceback from os.pread."""
    root = checkpoint(tmp_path / "ck")
    (root / "model.safetensors").unlink()
    (root / "model.safetensors").mkdir()
    one_line(capsys, "inspect", str(root), fragments=("model.safetensors", "a directory"))


def test_folder_named_config_json_is_one_line(tmp_path, capsys):
    root = checkpoint(tmp_path / "ck")
    (root / "config.json").unlink()
    (root / "config.json").mkdir()
    one_line(capsys, "inspect", str(root), fragments=("config.json", "a directory"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads unreadable folders")
def test_unreadable_checkpoint_folder_is_one_line(tmp_path, capsys):
    root = checkpoint(tmp_path / "ck")
    root.chmod(0)
    try:
        one_line(capsys, "inspect", str(root), fragments=(str(root),))
    finally:
        root.chmod(0o755)


def test_unlistable_checkpoint_folder_is_one_line(tmp_path, capsys, monkeypatch):
    """The same as root: listing the folder fails with EACCES."""
    root = checkpoint(tmp_path / "ck")
    real = os.listdir

    def listdir(path="."):
        if os.fspath(path) == str(root):
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(os, "listdir", listdir)
    one_line(capsys, "inspect", str(root), fragments=(str(root), "Permission denied"))


def deep_json(levels: int) -> str:
    return (
        '{"architectures": ["X"], "model_type": "llama", "x": ' + "[" * levels + "]" * levels + "}"
    )


@pytest.mark.parametrize("levels", [100, 100_000])
def test_deeply_nested_config_is_one_line(tmp_path, capsys, levels):
    """Before: RecursionError traceback (100k levels) or a config json.dumps cannot write back."""
    root = checkpoint(tmp_path / "ck")
    (root / "config.json").write_text(deep_json(levels))
    one_line(capsys, "inspect", str(root), fragments=("config.json", "levels deep"))


def test_integer_over_4300_digits_in_config_is_one_line(tmp_path, capsys):
    """Before: ValueError 'Exceeds the limit (4300 digits) for integer string conversion'."""
    root = checkpoint(tmp_path / "ck")
    (root / "config.json").write_text('{"architectures": ["X"], "hidden_size": ' + "9" * 5000 + "}")
    one_line(capsys, "inspect", str(root), fragments=("config.json", "4300 digits"))


def test_deep_and_huge_integer_index_and_snapshot_are_one_line(tmp_path, capsys):
    root = checkpoint(tmp_path / "ck")
    (root / "model.safetensors.index.json").write_text('{"weight_map": ' + "[" * 50_000 + "}")
    one_line(capsys, "inspect", str(root), fragments=("index.json",))
    snap = tmp_path / "snap.json"
    snap.write_text('{"recipecli_snapshot": ' + "1" * 5000 + "}")
    one_line(capsys, "inspect", str(snap), fragments=("snap.json", "digits"))


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("engine: " + "[" * 5000 + "]" * 5000 + "\n", "levels deep"),
        ("engine: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n", "levels deep"),
        ("speculative:\n  num_speculative_tokens: " + "9" * 5000 + "\n", "4300 digits"),
    ],
)
def test_deep_or_huge_integer_recipe_is_one_line(tmp_path, capsys, text, fragment):
    """Before: RecursionError from PyYAML's composer / ValueError from int()."""
    recipe = tmp_path / "r.yaml"
    recipe.write_text(text)
    one_line(capsys, "render", str(recipe), "--engine", "vllm", fragments=("r.yaml", fragment))


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[" * 100_000 + "]" * 100_000, "levels deep"),
        ('{"completed": ' + "9" * 5000 + "}", "digits"),
    ],
)
def test_deep_or_huge_integer_bench_file_is_one_line(tmp_path, capsys, text, fragment):
    bench = tmp_path / "base.json"
    bench.write_text(text)
    one_line(capsys, "report", str(bench), str(bench), fragments=("base.json", fragment))


@pytest.mark.parametrize(
    ("architectures", "fragment"),
    [(5, "got 5"), ("LlamaForCausalLM", "got 'LlamaForCausalLM'"), ([1], "got [1]")],
)
def test_architectures_must_be_a_list_of_strings(tmp_path, capsys, architectures, fragment):
    """5: before, TypeError traceback ('int' object is not subscriptable); a string: before,
    shown as 'architecture L' (its first letter)."""
    root = checkpoint(tmp_path / "ck", dict(CONFIG, architectures=architectures))
    line = one_line(capsys, "inspect", str(root), fragments=("architectures", fragment))
    assert "config.json" in line


def test_wrapped_text_config_architectures_are_typed_too(tmp_path, capsys):
    config = dict(CONFIG, text_config={"hidden_size": 4, "architectures": "Qwen3"})
    root = checkpoint(tmp_path / "ck", config)
    one_line(capsys, "inspect", str(root), fragments=("text_config.architectures",))


@pytest.mark.parametrize(
    ("mutate", "fragment"),
    [
        (lambda d: d["tensors"]["a"].update(shape=[-4]), "non-negative"),
        (lambda d: d["tensors"]["a"].update(dtype=["F32"]), "unknown dtype"),
        (lambda d: d["tensors"]["a"].update(shape=[True, 4]), "non-negative"),
        (lambda d: d["tensors"]["a"].update(shape="4"), "non-negative"),
        (lambda d: d.update(shards=5), "'shards'"),
        (lambda d: d.update(revision={"x": 1}), "'revision'"),
        (lambda d: d.update(source=["x"]), "'source'"),
        (lambda d: d.update(weight_format=7), "weight_format"),
        (lambda d: d.update(values={"a": 5}), "base64"),
        (lambda d: d["tensors"].update(a=5), "not an object"),
        (lambda d: d["config"].update(architectures=5), "architectures"),
    ],
)
def test_mistyped_snapshot_is_one_line(tmp_path, capsys, mutate, fragment):
    """Negative shape: before accepted (numel negative). dtype list, shards 5, revision object:
    before, TypeError/AttributeError tracebacks."""
    snap = {
        "recipecli_snapshot": 1,
        "config": dict(CONFIG),
        "tensors": {"a": {"dtype": "F32", "shape": [4], "bytes": 16, "shard": "m"}},
        "values": {},
    }
    mutate(snap)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(snap))
    one_line(capsys, "inspect", str(path), fragments=("s.json", fragment))


@pytest.mark.parametrize(
    ("state", "fragment"),
    [
        ({"model": {"w": 1}}, "entry 'model' is dict"),
        ({"w": 5}, "entry 'w' is int"),
        (5, "holds int"),
    ],
)
def test_bin_that_is_not_a_flat_state_dict_is_one_line(tmp_path, capsys, state, fragment):
    """Before: AttributeError ('dict'/'int' object has no attribute 'dtype') traceback."""
    torch = pytest.importorskip("torch")
    root = tmp_path / "ck"
    root.mkdir()
    (root / "config.json").write_text(json.dumps(CONFIG))
    torch.save(state, root / "pytorch_model.bin")
    one_line(capsys, "inspect", str(root), fragments=("pytorch_model.bin", fragment))


# ----------------------------------------------------------------------------- wrong verdicts


@pytest.mark.parametrize("value", [5, None, ["pt"], {"a": "b"}, True])
def test_metadata_with_non_string_values_is_refused(tmp_path, capsys, value):
    """The safetensors library reads __metadata__ as a map of strings to strings and refuses
    these files, so the engines cannot load them: recipecli refused none of them before."""
    root = tmp_path / "ck"
    root.mkdir()
    (root / "config.json").write_text(json.dumps(CONFIG))
    header = json.dumps(
        {
            "__metadata__": {"format": value},
            "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
        },
        separators=(",", ":"),
    ).encode()
    header += b" " * (-len(header) % 8)
    (root / "model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * 4)
    safetensors = pytest.importorskip("safetensors")
    with pytest.raises(safetensors.SafetensorError):  # the library itself refuses the file
        safetensors.safe_open(str(root / "model.safetensors"), "np")
    one_line(capsys, "inspect", str(root), fragments=("__metadata__", "not a string"))


@pytest.mark.parametrize("eps", ["Infinity", "-Infinity", "NaN", "1e999", "0", "-1e-5"])
def test_rms_norm_eps_must_be_finite_and_positive(tmp_path, capsys, eps):
    """Infinity/NaN/1e999: before accepted (``not inf > 0`` is False)."""
    root = checkpoint(tmp_path / "ck")
    text = json.dumps(CONFIG)[:-1] + f', "rms_norm_eps": {eps}}}'
    (root / "config.json").write_text(text)
    one_line(capsys, "inspect", str(root), fragments=("rms_norm_eps must be a positive number",))
