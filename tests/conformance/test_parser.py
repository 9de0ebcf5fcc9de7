"""Every vLLM command recipecli renders is accepted by vLLM 0.33.0's own CLI parser.

Matrix: every bundled recipe x every hardware profile x ``--what serve|bench`` (``eval`` renders
``lm_eval``, which vLLM does not parse), a matrix of ``--set`` variations on each recipe, and the
``--format vllm-config`` YAML through ``vllm serve --config``. Beyond "accepted", each test checks
that every rendered flag reached its own argparse dest (no abbreviation matched), that the
``--speculative-config`` JSON passes ``SpeculativeConfig``'s field declarations and equals what
was rendered, and that a ``--set`` value landed in vLLM's namespace as typed. Known recipecli
bugs run as ``xfail(strict=True)`` (``known_disagreements.json``, section ``parser``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import vllm_cli
import yaml
from conftest import REPORT

pytestmark = pytest.mark.conformance

REPO = Path(__file__).resolve().parents[2]
RECIPES = sorted((REPO / "recipecli" / "data" / "recipes").glob("*.yaml"))
KNOWN: dict[str, str] = json.loads(
    (Path(__file__).with_name("known_disagreements.json")).read_text()
)["parser"]


def _recipe(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


def render(name: str, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "recipecli", "render", name, "--engine", "vllm", *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)


def _argv(name: str, *args: str) -> list[str]:
    proc = render(name, "--format", "argv-json", *args)
    assert proc.returncode == 0, f"recipecli render {name} {' '.join(args)}: {proc.stderr.strip()}"
    data = json.loads(proc.stdout)
    if isinstance(data, list):
        assert len(data) == 1, data
        data = data[0]
    return data["argv"]


def _mark(pid: str):
    return [pytest.mark.xfail(strict=True, reason=KNOWN[pid])] if pid in KNOWN else []


def _check_parsed(pid: str, argv: list[str]) -> dict[str, Any]:
    """Parse with vLLM; assert accepted, dests exact, speculative fields valid; return ns."""
    got = vllm_cli.parse(argv)
    REPORT["parser"].append(
        {"id": pid, "argv": argv, "accepted": got["accepted"], "error": got["error"]}
    )
    assert got["accepted"], f"vLLM rejected {pid}: {got['error']}\nargv: {argv}"
    ns = got["namespace"]
    assert not vllm_cli.flag_dests_missing(argv, ns), vllm_cli.flag_dests_missing(argv, ns)
    if "--speculative-config" in argv:
        rendered = json.loads(argv[argv.index("--speculative-config") + 1])
        assert ns["speculative_config"] == rendered
        problems = vllm_cli.check_speculative_fields(ns["speculative_config"])
        assert not problems, problems
    return ns


def _matrix():
    for path in RECIPES:
        r = _recipe(path)
        for hw in r.get("hardware") or {}:
            for what in ("serve", "bench"):
                if what == "bench" and not r.get("bench"):
                    continue
                pid = f"{r['name']}-{hw}-{what}"
                yield pytest.param(r["name"], hw, what, id=pid, marks=_mark(pid))


@pytest.mark.parametrize(("name", "hw", "what"), list(_matrix()))
def test_rendered_command_parses(name: str, hw: str, what: str) -> None:
    argv = _argv(name, "--hardware", hw, "--what", what)
    assert argv[0] == "vllm" and argv[1] == ("serve" if what == "serve" else "bench"), argv
    ns = _check_parsed(f"{name}-{hw}-{what}", argv)
    if what == "serve":
        assert ns["model_tag"] == argv[2]


#: (--set NAME=VALUE, dest in vLLM's namespace, the value vLLM must hold)
SETS = [
    ("max_model_len=65536", "max_model_len", 65536),
    ("port=8001", "port", 8001),
    ("max_num_seqs=32", "max_num_seqs", 32),
    ("gpu_memory_utilization=0.85", "gpu_memory_utilization", 0.85),
    ("speculative.num_speculative_tokens=5", "speculative_config.num_speculative_tokens", 5),
    ("served-model-name=no", "served_model_name", ["no"]),
    ("served-model-name=m3", "served_model_name", ["m3"]),
    ("enforce-eager=true", "enforce_eager", True),
    ("kv-cache-dtype=fp8", "kv_cache_dtype", "fp8"),
    ("max-num-batched-tokens=16384", "max_num_batched_tokens", 16384),
    ("block-size=64", "block_size", 64),
]


def _set_matrix():
    for path in RECIPES:
        r = _recipe(path)
        for assignment, dest, value in SETS:
            pid = f"{r['name']}-set-{assignment}"
            yield pytest.param(r["name"], assignment, dest, value, id=pid, marks=_mark(pid))


@pytest.mark.parametrize(("name", "assignment", "dest", "value"), list(_set_matrix()))
def test_set_variation_parses(name: str, assignment: str, dest: str, value: Any) -> None:
    argv = _argv(name, "--set", assignment)
    ns = _check_parsed(f"{name}-set-{assignment}", argv)
    if "." in dest:
        top, key = dest.split(".")
        assert ns[top][key] == value
    else:
        assert ns[dest] == value, f"{dest}: vLLM holds {ns[dest]!r}, --set asked {value!r}"


def _config_matrix():
    for path in RECIPES:
        r = _recipe(path)
        for hw in r.get("hardware") or {}:
            pid = f"{r['name']}-{hw}-vllm-config"
            yield pytest.param(r["name"], hw, id=pid, marks=_mark(pid))


@pytest.mark.parametrize(("name", "hw"), list(_config_matrix()))
def test_vllm_config_yaml_matches_argv(name: str, hw: str, tmp_path: Path) -> None:
    """``vllm serve --config FILE`` must leave vLLM holding what the argv render does."""
    proc = render(name, "--hardware", hw, "--format", "vllm-config")
    assert proc.returncode == 0, proc.stderr
    path = tmp_path / f"{name}.yaml"
    path.write_text(proc.stdout)
    via_config = _check_parsed(f"{name}-{hw}-vllm-config", ["vllm", "serve", "--config", str(path)])
    argv = _argv(name, "--hardware", hw, "--what", "serve")
    via_argv = vllm_cli.parse(argv)["namespace"]
    # the YAML names the model as `model:`, the argv as the positional model_tag
    via_argv["model"] = via_argv.pop("model_tag")
    via_config.pop("model_tag")
    diff = {
        k: (via_config.get(k), via_argv.get(k))
        for k in sorted(set(via_config) | set(via_argv))
        if k != "config" and via_config.get(k) != via_argv.get(k)
    }
    assert not diff, f"--config vs argv differ in vLLM's namespace: {diff}"


def test_harness_rejects_what_vllm_rejects() -> None:
    """The harness itself: vLLM's parser refuses an unknown flag and a bad int; an abbreviated
    flag parses (argparse allow_abbrev) but is caught by the exact-dest check; a bad
    speculative field is caught by SpeculativeConfig's declarations (num_speculative_tokens is
    ``int`` with ``Gt(0)``; ``method`` a Literal; extra keys are forbidden)."""
    assert not vllm_cli.parse(["vllm", "serve", "m", "--no-such-flag"])["accepted"]
    assert not vllm_cli.parse(["vllm", "serve", "m", "--max-model-len", "abc"])["accepted"]
    got = vllm_cli.parse(["vllm", "serve", "m", "--max-num-seq", "8"])
    assert got["accepted"] and got["namespace"]["max_num_seqs"] == 8
    assert vllm_cli.flag_dests_missing(["--max-num-seq", "8"], got["namespace"]) == [
        "--max-num-seq"
    ]
    assert (
        vllm_cli.check_speculative_fields({"method": "eagle3", "num_speculative_tokens": 3}) == []
    )
    bad = vllm_cli.check_speculative_fields(
        {"method": "eagle4", "num_speculative_tokens": 0, "draft_model": "x"}
    )
    assert len(bad) == 3, bad
