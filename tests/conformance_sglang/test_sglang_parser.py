"""Every SGLang command recipecli renders is accepted by SGLang 0.5.23's own parser.

Matrix: every bundled recipe x hardware profile x ``--what serve|bench|eval`` (those the recipe
has), rendered ``--engine sglang --format argv-json``. A recipe with ``unsupported: {sglang: ...}``
must refuse (exit 2, one line naming the reason); its ``--force`` render is parsed as well, since
that is what a user who overrides the refusal runs. A matrix of ``--set`` variations runs on
every recipe. For each serve command:

- ``python -m sglang.launch_server FLAGS`` parses through ``prepare_server_args`` (its
  ``__main__``), and ``sglang serve FLAGS`` through sglang/cli/main.py to the same record;
- every rendered flag is one of the parser's exact option strings (argparse would accept a
  prefix);
- the ``ServerArgs`` record holds what the recipe asked, worked out here from the recipe YAML:
  ``--speculative-algorithm EAGLE3`` for ``method: eagle3``; steps = ``num_speculative_tokens``;
  top-k 1 and draft tokens = steps + 1 (chain drafting: speculative/base_spec_worker.py asserts
  ``topk=1 requires speculative_num_draft_tokens == speculative_num_steps + 1``); draft path,
  target path, tp size, context length, max running requests, port, kv-cache dtype (the recipe's
  ``fp8`` is SGLang's ``fp8_e4m3``: fields/model.py choices have no plain ``fp8``) and
  ``--json-model-override-args``;
- ``ServerArgs.resolve_once`` (SGLang's validation pipeline, arg_groups/pipeline.py) runs on the
  record with ``--model-path`` pointed at a local copy of the target's config (the suite is
  offline). On a machine without an accelerator it stops at
  ``serving_hook.handle_missing_default_values`` (``utils/common.py get_device`` raises "No
  accelerator"); the hooks before it must pass. The whole pipeline (the speculative checks of
  ``speculative_hook.handle_speculative_decoding`` among them) then runs on the same command with
  ``--device cpu`` added (SGLang's CPU platform) and a local stand-in draft config of the same
  family: it must complete with the speculative values unchanged, or stop only where SGLang's CPU
  platform lacks the target's quantization (gpt-oss's mxfp4); what the GPU platforms add beyond
  that is not checked.

bench commands render ``vllm bench serve`` (recipecli's bench tool for every engine), not
``sglang.bench_serving``: they are checked with vLLM 0.33.0's own parser in the vLLM conformance
env (``RECIPECLI_CONFORMANCE_VLLM_PYTHON``, set by run_sglang_conformance.sh), and their
``--base-url`` port against the serve command's. eval commands render ``lm_eval``, not parsed
here (not an SGLang tool; its harness is not in the env): only its model and port are checked. Known recipecli
bugs run as ``xfail(strict=True)`` (``known_disagreements.json``, section ``parser``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sgl_cli
import yaml
from sgl_report import FIXTURES, RECIPES, REPO, REPORT, TARGETS, known

pytestmark = pytest.mark.conformance_sglang

RECIPE_FILES = sorted(RECIPES.glob("*.yaml"))


def _recipe(name: str) -> dict[str, Any]:
    return yaml.safe_load((RECIPES / f"{name}.yaml").read_text())


def _unsupported(r: dict[str, Any]) -> str | None:
    return (r.get("unsupported") or {}).get("sglang")


def render(name: str, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "recipecli", "render", name, "--engine", "sglang"]
    cmd += ["--format", "argv-json", *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)


def _argvs(proc: subprocess.CompletedProcess, what: str) -> list[list[str]]:
    assert proc.returncode == 0, f"render --what {what}: {proc.stderr.strip()}"
    data = json.loads(proc.stdout)
    return [d["argv"] for d in (data if isinstance(data, list) else [data])]


# ------------------------------------------------------------------ expectations from the YAML


def expected_serve(
    r: dict[str, Any], sets: dict[str, Any] | None = None, hw: str | None = None
) -> dict[str, Any]:
    """ServerArgs fields the recipe asks for, by hand from its YAML (see the module docstring);
    a hardware profile's ``target`` replaces the recipe's."""
    serve = {**(r.get("serve") or {}), **(sets or {})}
    profile = (r.get("hardware") or {}).get(hw or r.get("default_hardware"), {}) or {}
    spec = r["speculative"]
    steps = int(spec["num_speculative_tokens"])
    assert spec["method"] == "eagle3", spec
    out: dict[str, Any] = {
        "model_path": profile.get("target", r["target"]),
        "speculative_draft_model_path": r["draft"],
        "speculative_algorithm": "EAGLE3",
        "speculative_num_steps": steps,
        "speculative_eagle_topk": 1,
        "speculative_num_draft_tokens": steps + 1,
        "tp_size": int(serve.get("tensor_parallel_size", 1)),
    }
    if "max_model_len" in serve:
        out["context_length"] = int(serve["max_model_len"])
    if "max_num_seqs" in serve:
        out["max_running_requests"] = int(serve["max_num_seqs"])
    if "port" in serve:
        out["port"] = int(serve["port"])
    if "kv_cache_dtype" in serve:
        out["kv_cache_dtype"] = {"fp8": "fp8_e4m3"}.get(serve["kv_cache_dtype"])
    host = ((r.get("engines") or {}).get("sglang") or {}).get("args", {}).get("host")
    if host:
        out["host"] = host
    return out


def _record(pid: str, argv: list[str], got: dict[str, Any], outcome: str) -> None:
    REPORT["parser"].append(
        {
            "id": pid,
            "argv": argv,
            "accepted": got["accepted"],
            "error": got["error"],
            "outcome": outcome,
        }
    )


def check_serve(pid: str, argv: list[str], expected: dict[str, Any]) -> Any:
    """Parse both entry points, check exact flags and values; return the ServerArgs record."""
    assert argv[:3] == sgl_cli.LAUNCH, argv
    got = sgl_cli.parse_launch(argv)
    _record(pid, argv, got, "accepted" if got["accepted"] else "rejected")
    assert got["accepted"], f"SGLang rejected {pid}: {got['error']}\nargv: {argv}"
    flags = argv[3:]
    assert not sgl_cli.inexact_flags(flags), sgl_cli.inexact_flags(flags)
    args = got["args"]
    wrong = {k: (getattr(args, k), v) for k, v in expected.items() if getattr(args, k) != v}
    assert not wrong, f"{pid}: ServerArgs holds / recipe asked: {wrong}"
    serve = sgl_cli.parse_sglang_serve(flags)
    assert serve["accepted"], f"sglang serve rejected {pid}: {serve['error']}"
    import msgspec

    a, b = msgspec.structs.asdict(args), msgspec.structs.asdict(serve["args"])
    assert a == b, {k: (a[k], b.get(k)) for k in a if a[k] != b.get(k)}
    return args


def _local_target(argv: list[str], tmp: Path) -> list[str]:
    """``argv`` with ``--model-path`` pointed at a folder holding the target's config.json."""
    i = argv.index("--model-path") + 1
    snap = TARGETS / f"{argv[i].replace('/', '__')}.json"
    d = tmp / "target"
    d.mkdir(exist_ok=True)
    (d / "config.json").write_text(json.dumps(json.loads(snap.read_text())["config"]))
    return [*argv[:i], str(d), *argv[i + 1 :]]


def check_resolution(pid: str, argv: list[str], tmp: Path) -> None:
    i = argv.index("--model-path") + 1
    snap = json.loads((TARGETS / f"{argv[i].replace('/', '__')}.json").read_text())
    if "auto_map" in snap["config"] and "--trust-remote-code" in argv:
        REPORT["parser"][-1]["outcome"] = (
            "accepted; resolution skipped: the target's config needs its remote code "
            "(auto_map + --trust-remote-code), which this offline suite does not have"
        )
        return
    got = sgl_cli.parse_launch(_local_target(argv, tmp))
    assert got["accepted"], got["error"]
    res = sgl_cli.resolve(got["args"])
    REPORT["parser"][-1]["resolution"] = {k: v for k, v in res.items() if k != "hooks"}
    REPORT["parser"][-1]["resolution"]["hooks_run"] = len(res["hooks"])
    if not res["resolved"]:
        assert (
            res["stopped_at"] == sgl_cli.DEVICE_HOOK and sgl_cli.NO_ACCELERATOR in res["error"]
        ), f"{pid}: SGLang's resolution refused the command at {res['stopped_at']}: {res['error']}"
    outcome = (
        f"accepted; resolution passed {len(res['hooks']) - 1} hooks, stopped at "
        f"{sgl_cli.DEVICE_HOOK} (needs an accelerator)"
    )
    REPORT["parser"][-1]["outcome"] = outcome + "; " + check_cpu_resolution(pid, argv, tmp)


#: recipe draft -> a local draft config of the same family standing in for it (the suite is
#: offline): SGLang's speculative hook reads the draft's config (its architecture)
STAND_IN_DRAFTS = {
    "openai/gpt-oss-120b": "sgl-project-SpecForge-template__gpt-oss-120B-eagle3",
    "meta-llama/Llama-3.1-8B-Instruct": "sgl-project-SpecForge-template__llama3-8B-eagle3",
    "Qwen/Qwen3-30B-A3B": "sgl-project-SpecForge-template__qwen3-30B-A3B-eagle3",
}
#: what a CPU resolution may stop on: SGLang's CPU platform does not list the target's
#: quantization (configs/model_config.py _verify_quantization, e.g. gpt-oss's mxfp4)
CPU_ONLY_STOPS = ("Unknown quantization method",)
SPEC_FIELDS = (
    "speculative_algorithm",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
    "tp_size",
    "context_length",
    "kv_cache_dtype",
)


def check_cpu_resolution(pid: str, argv: list[str], tmp: Path) -> str:
    """The whole resolution pipeline, speculative hooks included, on ``argv + --device cpu``
    (SGLang's CPU platform) with local target and stand-in draft configs. Where it completes,
    the resolved speculative values must equal the rendered ones: SGLang resolves a
    ``--speculative-num-draft-tokens`` that breaks its top-k 1 rule to steps + 1 silently, and
    a rendered value it rewrites is a recipecli bug."""
    local = _local_target(argv, tmp)
    target = argv[argv.index("--model-path") + 1]
    j = local.index("--speculative-draft-model-path") + 1
    local[j] = str(FIXTURES / STAND_IN_DRAFTS[target])
    got = sgl_cli.parse_launch([*local, "--device", "cpu"])
    assert got["accepted"], got["error"]
    rendered = {k: getattr(got["args"], k) for k in SPEC_FIELDS}
    res = sgl_cli.resolve(got["args"])
    if not res["resolved"]:
        assert any(s in res["error"] for s in CPU_ONLY_STOPS), (
            f"{pid}: SGLang's CPU resolution refused the command at {res['stopped_at']}: "
            f"{res['error']}"
        )
        return f"--device cpu resolution stopped at {res['stopped_at']} ({res['error'][:60]}: CPU only)"
    resolved = got["args"].resolved_dict()
    wrong = {k: (resolved[k], v) for k, v in rendered.items() if resolved[k] != v}
    assert not wrong, f"{pid}: SGLang resolves / recipecli rendered: {wrong}"
    return f"--device cpu: all {len(res['hooks'])} hooks resolved, speculative values unchanged"


def check_bench(pid: str, argv: list[str]) -> None:
    assert argv[:3] == ["vllm", "bench", "serve"], f"{pid}: an unexpected bench tool {argv[:3]}"
    py = os.environ.get("RECIPECLI_CONFORMANCE_VLLM_PYTHON")
    if not py:
        pytest.skip(
            "bench renders `vllm bench serve`: set RECIPECLI_CONFORMANCE_VLLM_PYTHON to the vLLM "
            "conformance env's python (run_sglang_conformance.sh does) to parse it with vLLM"
        )
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import vllm_cli; "
        "r = vllm_cli.parse(json.loads(sys.argv[2])); ns = r.pop('namespace') or {}; "
        "r['missing'] = vllm_cli.flag_dests_missing(json.loads(sys.argv[2]), ns) if ns else []; "
        "r['base_url'] = ns.get('base_url'); print(json.dumps(r))"
    )
    proc = subprocess.run(
        [py, "-W", "ignore", "-c", code, str(REPO / "tests" / "conformance"), json.dumps(argv)],
        capture_output=True,
        text=True,
        env={**os.environ, "VLLM_TARGET_DEVICE": "cpu", "VLLM_LOGGING_LEVEL": "ERROR"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    _record(
        pid, argv, got, "accepted by vLLM 0.33.0's bench parser" if got["accepted"] else "rejected"
    )
    assert got["accepted"], f"vLLM's bench parser rejected {pid}: {got['error']}"
    assert not got["missing"], got["missing"]
    return got


def check_eval(pid: str, argv: list[str], r: dict[str, Any], hw: str) -> None:
    """eval renders ``lm_eval`` (EleutherAI's harness, not an SGLang tool, and not in this env):
    checked only that it asks the served model on the serve command's port."""
    assert "lm_eval" in argv, f"{pid}: an unexpected eval tool {argv[:3]}"
    args = dict(kv.split("=", 1) for kv in argv[argv.index("--model_args") + 1].split(","))
    port = (r.get("serve") or {}).get("port", 30000)  # SGLang's default (fields/serving.py port)
    profile = (r.get("hardware") or {}).get(hw, {}) or {}
    assert args["model"] == profile.get("target", r["target"]), args
    assert args["base_url"].startswith(f"http://127.0.0.1:{port}/"), args["base_url"]
    REPORT["parser"].append(
        {
            "id": pid,
            "argv": argv,
            "accepted": None,
            "error": None,
            "outcome": "lm_eval (not parsed: not an SGLang tool); model and port match the serve command",
        }
    )


# ------------------------------------------------------------------ the matrix


def _matrix():
    for path in RECIPE_FILES:
        r = yaml.safe_load(path.read_text())
        for hw in r.get("hardware") or {}:
            for what in ("serve", "bench", "eval"):
                if what != "serve" and not r.get(what):
                    continue
                pid = f"{r['name']}-{hw}-{what}"
                yield pytest.param(r["name"], hw, what, id=pid, marks=known("parser", pid))


@pytest.mark.parametrize(("name", "hw", "what"), list(_matrix()))
def test_rendered_command(name: str, hw: str, what: str, tmp_path: Path) -> None:
    r = _recipe(name)
    pid = f"{name}-{hw}-{what}"
    proc = render(name, "--hardware", hw, "--what", what)
    reason = _unsupported(r)
    if reason:
        lines = proc.stderr.strip().splitlines()
        REPORT["parser"].append(
            {
                "id": pid,
                "accepted": False,
                "error": None,
                "outcome": "refused by recipecli (unsupported.sglang)",
            }
        )
        assert proc.returncode == 2 and len(lines) == 1, (proc.returncode, proc.stderr)
        assert "is not served on sglang" in lines[0] and not proc.stdout.strip()
        proc = render(name, "--hardware", hw, "--what", what, "--force")
        pid += "-force"
    for argv in _argvs(proc, what):
        if what == "serve":
            check_serve(pid, argv, expected_serve(r, hw=hw))
            check_resolution(pid, argv, tmp_path)
        elif what == "bench":
            got = check_bench(pid, argv)
            port = (r.get("serve") or {}).get("port", 30000)
            assert got["base_url"].endswith(f":{port}"), (got["base_url"], port)
        else:
            check_eval(pid, argv, r, hw)


#: (--set NAME=VALUE, ServerArgs field, the value SGLang must hold, serve field it changes)
SETS: list[tuple[str, str, Any, dict[str, Any]]] = [
    ("max_model_len=65536", "context_length", 65536, {"max_model_len": 65536}),
    ("port=8001", "port", 8001, {"port": 8001}),
    ("max_num_seqs=32", "max_running_requests", 32, {"max_num_seqs": 32}),
    ("tensor_parallel_size=8", "tp_size", 8, {"tensor_parallel_size": 8}),
    ("gpu_memory_utilization=0.85", "mem_fraction_static", 0.85, {}),
    ("speculative.num_speculative_tokens=5", "speculative_num_steps", 5, {}),
    ("kv-cache-dtype=fp8_e4m3", "kv_cache_dtype", "fp8_e4m3", {}),
    # the serve field, written the recipe's way: rendered as SGLang spells it
    ("kv_cache_dtype=fp8", "kv_cache_dtype", "fp8_e4m3", {"kv_cache_dtype": "fp8"}),
    ("served-model-name=m3", "served_model_name", "m3", {}),
    ("enable-torch-compile=true", "enable_torch_compile", True, {}),
    ("chunked-prefill-size=4096", "chunked_prefill_size", 4096, {}),
    ("trust-remote-code=true", "trust_remote_code", True, {}),
]


def _set_matrix():
    for path in RECIPE_FILES:
        r = yaml.safe_load(path.read_text())
        for assignment, dest, value, serve in SETS:
            pid = f"{r['name']}-set-{assignment}"
            yield pytest.param(
                r["name"], assignment, dest, value, serve, id=pid, marks=known("parser", pid)
            )


@pytest.mark.parametrize(("name", "assignment", "dest", "value", "serve"), list(_set_matrix()))
def test_set_variation(name: str, assignment: str, dest: str, value: Any, serve: dict) -> None:
    r = _recipe(name)
    extra = ["--force"] if _unsupported(r) else []
    (argv,) = _argvs(render(name, "--set", assignment, *extra), "serve")
    expected = expected_serve(r, serve)
    if assignment.startswith("speculative.num_speculative_tokens="):
        expected.update(speculative_num_steps=5, speculative_num_draft_tokens=6)
    args = check_serve(f"{name}-set-{assignment}", argv, expected)
    assert getattr(args, dest) == value, (
        f"{dest}: SGLang holds {getattr(args, dest)!r}, --set asked {value!r}"
    )


def test_harness_rejects_what_sglang_rejects() -> None:
    """The harness itself: SGLang's parser refuses an unknown flag, a bad int and a
    --kv-cache-dtype outside its choices (fields/model.py: no plain ``fp8``); an abbreviated
    flag parses (argparse allow_abbrev) but is caught by the exact-flag check; resolution stops
    at the accelerator step, not before, on a minimal command."""
    base = [*sgl_cli.LAUNCH, "--model-path", "m"]
    assert not sgl_cli.parse_launch([*base, "--no-such-flag"])["accepted"]
    assert not sgl_cli.parse_launch([*base, "--tp-size", "abc"])["accepted"]
    bad = sgl_cli.parse_launch([*base, "--kv-cache-dtype", "fp8"])
    assert not bad["accepted"] and "fp8_e4m3" in bad["error"], bad["error"]
    got = sgl_cli.parse_launch([*base, "--speculative-num-step", "7"])
    assert got["accepted"] and got["args"].speculative_num_steps == 7
    assert sgl_cli.inexact_flags(["--speculative-num-step", "7"]) == ["--speculative-num-step"]
    assert not sgl_cli.parse_sglang_serve(["--model-path", "m", "--no-such-flag"])["accepted"]


def test_harness_sees_a_rewritten_draft_token_count(tmp_path: Path) -> None:
    """SGLang's CPU resolution rewrites a top-k 1 ``--speculative-num-draft-tokens`` that is not
    steps + 1 (7 -> 4 at 3 steps), so the equality check of check_cpu_resolution can fail."""
    argv = [
        *sgl_cli.LAUNCH,
        "--model-path",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--speculative-algorithm",
        "EAGLE3",
        "--speculative-draft-model-path",
        "d",
        "--speculative-num-steps",
        "3",
        "--speculative-eagle-topk",
        "1",
        "--speculative-num-draft-tokens",
        "7",
    ]
    with pytest.raises(AssertionError, match="speculative_num_draft_tokens"):
        check_cpu_resolution("harness", argv, tmp_path)
