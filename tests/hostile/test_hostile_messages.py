"""Messages in recipecli's words (issue #29, item 6): a refused ``.bin`` never passes on torch's
``weights_only=False`` advice and never garbles its path; a FIFO recipe is "not a regular
file"; a ``--target-config`` path naming nothing is an error; ``report`` refuses an acceptance
rate outside 0..100 %."""

from __future__ import annotations

import json
import os
import pickle
import socket

import pytest
from helpers.report import bench_json
from hostile_helpers import one_error_line

from recipecli.cli import main
from recipecli.errors import SourceError
from recipecli.recipes.targets import check_target_config

torch = pytest.importorskip("torch")

CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}


class _Mkdir:
    """A pickle whose load would create the folder ``path`` (the code a malicious .bin runs)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (os.mkdir, (self.path,))


def _checkpoint(root, write) -> str:
    root.mkdir()
    (root / "config.json").write_text(json.dumps(CONFIG))
    write(str(root / "pytorch_model.bin"))
    return str(root)


def _inspect_error(capsys, source: str) -> str:
    with pytest.raises(SystemExit) as exc:
        main(["inspect", source])
    assert exc.value.code == 2
    return one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("zip_layout", [True, False], ids=["zip", "pre-zip"])
def test_malicious_bin_is_refused_without_torch_advice(scratch, capsys, zip_layout):
    marker = scratch / "pwned"
    evil = {"w": _Mkdir(str(marker))}
    src = _checkpoint(
        scratch / "evil",
        lambda p: torch.save(evil, p, _use_new_zipfile_serialization=zip_layout),
    )
    line = _inspect_error(capsys, src)
    assert not marker.exists()  # the pickle's code never ran
    assert "weights_only" not in line and "arbitrary code" not in line, line
    assert line.startswith(f"recipecli: error: {src}/pytorch_model.bin: "), line
    assert "safetensors with a tool you trust" in line
    if zip_layout:  # torch refused the GLOBAL; we say so in our words
        assert "refused to load .bin file" in line and "recipecli did not load it" in line
    else:  # never handed to torch: refused by its layout
        assert "not in torch's zip layout" in line


def test_malicious_plain_pickle_never_runs(scratch, capsys):
    marker = scratch / "pwned"
    src = _checkpoint(
        scratch / "plain",
        lambda p: open(p, "wb").write(pickle.dumps({"w": _Mkdir(str(marker))})),
    )
    line = _inspect_error(capsys, src)
    assert not marker.exists()
    assert "weights_only" not in line and "not in torch's zip layout" in line, line


def test_benign_pre_zip_bin_names_its_path_once(scratch, capsys):
    # torch's own message reads "torch.save(<path>, _use_new_zipfile_serialization=True)"
    src = _checkpoint(
        scratch / "old",
        lambda p: torch.save({"w": torch.zeros(2)}, p, _use_new_zipfile_serialization=False),
    )
    line = _inspect_error(capsys, src)
    assert line.count("pytorch_model.bin") == 1, line
    assert "torch.save(" not in line and "before 1.6" in line, line


def test_corrupt_zip_bin_is_one_sentence_of_ours(scratch, capsys):
    src = _checkpoint(scratch / "cut", lambda p: open(p, "wb").write(b"PK\x03\x04" + b"\0" * 60))
    line = _inspect_error(capsys, src)
    assert "cannot load .bin file, corrupt or truncated?" in line, line
    assert line.count("pytorch_model.bin") == 1 and "weights_only" not in line, line


def _render_error(capsys, ref: str) -> str:
    with pytest.raises(SystemExit) as exc:
        main(["render", ref, "--engine", "vllm"])
    assert exc.value.code == 2
    return one_error_line(capsys.readouterr().err)


def test_fifo_recipe_is_not_a_regular_file(scratch, capsys):
    os.mkfifo("pipe.yaml")
    line = _render_error(capsys, "pipe.yaml")  # returns at once: a FIFO is never opened
    assert line == "recipecli: error: pipe.yaml: is a FIFO (named pipe), not a regular file — " + (
        "recipecli reads recipes only from regular files"
    )


def test_device_and_socket_recipes_are_not_regular_files(scratch, capsys):
    os.symlink("/dev/null", "null.yaml")
    assert "is a character device, not a regular file" in _render_error(capsys, "null.yaml")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind("sock.yaml")
        assert "is a socket, not a regular file" in _render_error(capsys, "sock.yaml")
    finally:
        sock.close()


def test_missing_and_dangling_recipes_are_still_no_such_file(scratch, capsys):
    os.symlink("nowhere.yaml", "dangling.yaml")
    for ref in ("dangling.yaml", "absent.yaml"):
        assert "no such recipe file or bundled recipe" in _render_error(capsys, ref)


@pytest.mark.parametrize("source", ["/nonexistent/config.json", "./absent", "~/absent-r29", ""])
def test_target_config_naming_nothing_is_an_error(scratch, source):
    with pytest.raises(SourceError, match="--target-config names no such file or directory"):
        check_target_config(source)


def test_target_config_dangling_link_is_an_error(scratch):
    os.symlink("gone.json", "link.json")
    with pytest.raises(SourceError):
        check_target_config("link.json")


@pytest.mark.parametrize("source", ["target", "target/config.json", "meta-llama/Llama-3.1-8B"])
def test_target_config_existing_path_or_repo_id_passes(scratch, source):
    assert check_target_config(source) == source


def _report_error(capsys, rate: float) -> str:
    with open("odd.json", "w") as f:
        json.dump(bench_json(spec_decode_acceptance_rate=rate), f)
    with pytest.raises(SystemExit) as exc:
        main(["report", "base.json", "odd.json"])
    assert exc.value.code == 2
    return one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("rate", [250.0, 100.01, -0.5])
def test_report_refuses_an_acceptance_rate_outside_0_to_100(scratch, capsys, rate):
    line = _report_error(capsys, rate)
    assert line.startswith(f"recipecli: error: odd.json: spec_decode_acceptance_rate={rate:g} ")
    assert "is not a percent" in line


@pytest.mark.parametrize("rate", [0.0, 100.0])
def test_report_accepts_the_bounds(scratch, capsys, rate):
    with open("edge.json", "w") as f:
        json.dump(bench_json(spec_decode_acceptance_rate=rate), f)
    with pytest.raises(SystemExit) as exc:
        main(["report", "base.json", "edge.json"])
    assert exc.value.code == 0
    row = next(r for r in capsys.readouterr().out.splitlines() if r.startswith("| Acceptance rate"))
    assert row.split(" | ")[2] == f"{rate:.3f}%", row
