"""diff: semantic diff of rendered commands. Expected changes are worked out by hand from the
bundled recipe YAML (recipecli/data/recipes/*.yaml), not from the code under test."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from recipecli.diff import (
    diff_commands,
    diff_recipes,
    diff_structured,
    format_diff,
    parse_flags,
    structured_value,
)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recipecli", *args], capture_output=True, text=True, timeout=60
    )


def by_op(d, kind):
    """{op: {name: (a, b)}} of the diff's changes of ``kind``."""
    out: dict[str, dict[str, tuple]] = {"added": {}, "removed": {}, "changed": {}}
    for c in d.of(kind):
        out[c.op][c.name] = (c.a, c.b)
    return out


# --------------------------------------------------------------------------- one recipe, two profiles


def test_minimax_mi355x_vs_default_nvidia_profile():
    # A: vLLM on b200 (default, NVIDIA): no vLLM args or env in the profile.
    # B: vLLM on mi355x: target amd/MiniMax-M3-MXFP4, env HIP_VISIBLE_DEVICES + 8 engine_env.vllm
    #    vars, args.vllm: port 8010, no-enable-prefix-caching, attention-backend TRITON_ATTN,
    #    moe-backend aiter, no-async-scheduling. --hf-overrides nests under text_config on both
    #    (both targets are text_config wrappers), so it is unchanged.
    d = diff_recipes("minimax-m3-eagle3", hardware="b200", vs_hardware="mi355x")
    assert d.a.hardware == "b200" and d.b.hardware == "mi355x"
    assert [(c.name, c.a, c.b) for c in d.of("command")] == [
        ("model", "nvidia/MiniMax-M3-NVFP4", "amd/MiniMax-M3-MXFP4")
    ]
    env = by_op(d, "env")
    assert env["removed"] == {} and env["changed"] == {}
    assert env["added"] == {
        "HIP_VISIBLE_DEVICES": (None, "0,1,2,3"),
        "VLLM_ROCM_USE_AITER": (None, "1"),
        "VLLM_ROCM_USE_AITER_MOE": (None, "1"),
        "VLLM_ROCM_USE_AITER_FUSION_SHARED_EXPERTS": (None, "1"),
        "VLLM_ROCM_SHUFFLE_KV_CACHE_LAYOUT": (None, "1"),
        "VLLM_ROCM_QUICK_REDUCE_QUANTIZATION": (None, "INT4"),
        "VLLM_ROCM_QUICK_REDUCE_CAST_BF16_TO_FP16": (None, "0"),
        "VLLM_ROCM_QUICK_REDUCE_QUANTIZATION_MIN_SIZE_KB": (None, "256"),
        "VLLM_USE_BREAKABLE_CUDAGRAPH": (None, "0"),
    }
    flags = by_op(d, "flag")
    assert flags["removed"] == {}
    assert flags["changed"] == {"--port": ("8000", "8010")}
    assert flags["added"] == {
        "--no-enable-prefix-caching": (None, True),
        "--attention-backend": (None, "TRITON_ATTN"),
        "--moe-backend": (None, "aiter"),
        "--no-async-scheduling": (None, True),
    }
    # serve fields (tp, trust-remote-code, block-size, kv-cache-dtype) + 7 vLLM engine args
    # + --hf-overrides + --speculative-config = 4 + 7 + 2 = 13 unchanged.
    assert len(d.unchanged_flags) == 13
    assert "--hf-overrides" in d.unchanged_flags and "--speculative-config" in d.unchanged_flags


def test_hardware_diff_human_output():
    text = format_diff(diff_recipes("minimax-m3-eagle3", hardware="b200", vs_hardware="mi355x"))
    lines = text.splitlines()
    assert lines[0] == "--- minimax-m3-eagle3 (vllm, b200) serve"
    assert lines[1] == "+++ minimax-m3-eagle3 (vllm, mi355x) serve"
    assert "  ~ model: nvidia/MiniMax-M3-NVFP4 -> amd/MiniMax-M3-MXFP4" in lines
    assert "  + HIP_VISIBLE_DEVICES=0,1,2,3" in lines
    assert "  ~ --port: 8000 -> 8010" in lines
    assert "  + --attention-backend TRITON_ATTN" in lines
    assert "  + --no-async-scheduling" in lines
    assert lines[-1] == (
        "4 flags added, 0 removed, 1 changed, 13 unchanged; env 9 added, 0 removed, 0 changed"
    )


# --------------------------------------------------------------------------- one recipe, two engines


def test_minimax_vllm_vs_tokenspeed():
    # Worked out from minimax-m3-eagle3.yaml on the default profile b200:
    # vLLM only: engines.vllm.args language-model-only, max-num-batched-tokens, tool-call-parser,
    #   enable-auto-tool-choice, reasoning-parser, and --speculative-config (vLLM's speculative flag).
    # tokenspeed only: engines.tokenspeed.args max-prefill-tokens, chunked-prefill-size,
    #   gpu-memory-utilization, disable-cuda-graph-padding, disable-kvstore, host; b200
    #   args.tokenspeed attention-backend, moe-backend, drafter-attention-backend; and the 5
    #   speculative flags of tokenspeed f4d8ec6e server_args.py (steps 3, topk 1, draft tokens 3+1).
    # both, different: max-model-len 32768/81920, max-num-seqs 256/16, --hf-overrides nested/flat.
    # Compared by meaning (issue #28 item 10): vLLM's --speculative-config keys method/model/
    # num_speculative_tokens are tokenspeed's --speculative-algorithm (EAGLE3 = eagle3),
    # --speculative-draft-model-path and --speculative-num-steps: the same values, unchanged;
    # topk and the n + 1 draft tokens have no vLLM flag (added).
    d = diff_recipes("minimax-m3-eagle3", engine="vllm", vs_engine="tokenspeed")
    assert [(c.name, c.a, c.b) for c in d.of("command")] == [("program", "vllm", "tokenspeed")]
    assert d.of("env") == []
    flags = by_op(d, "flag")
    assert set(flags["removed"]) == {
        "--language-model-only",
        "--max-num-batched-tokens",
        "--tool-call-parser",
        "--enable-auto-tool-choice",
        "--reasoning-parser",
    }
    assert flags["added"] == {
        "--max-prefill-tokens": (None, "8192"),
        "--chunked-prefill-size": (None, "8192"),
        "--gpu-memory-utilization": (None, "0.95"),
        "--disable-cuda-graph-padding": (None, True),
        "--attention-backend": (None, "trtllm"),
        "--moe-backend": (None, "flashinfer_trtllm"),
        "--speculative-eagle-topk": (None, "1"),
        "--speculative-num-draft-tokens": (None, "4"),
        "--drafter-attention-backend": (None, "fa4"),
        "--disable-kvstore": (None, True),
        "--host": (None, "0.0.0.0"),
    }
    assert set(flags["changed"]) == {"--max-model-len", "--max-num-seqs", "--hf-overrides"}
    assert flags["changed"]["--max-model-len"] == ("32768", "81920")
    assert flags["changed"]["--max-num-seqs"] == ("256", "16")
    assert sorted(d.unchanged_flags) == sorted(
        [
            "--tensor-parallel-size",
            "--trust-remote-code",
            "--block-size",
            "--kv-cache-dtype",
            "--port",
            "--speculative-config.method / --speculative-algorithm",
            "--speculative-config.model / --speculative-draft-model-path",
            "--speculative-config.num_speculative_tokens / --speculative-num-steps",
        ]
    )
    # key by key: the two overrides moved from under text_config (vLLM) to the top (tokenspeed).
    hf = next(c for c in d.of("flag", "changed") if c.name == "--hf-overrides")
    assert [(k.op, k.from_path, k.path, k.b) for k in hf.keys] == [
        ("moved", ("text_config", "use_index_cache"), ("use_index_cache",), True),
        ("moved", ("text_config", "index_topk_freq"), ("index_topk_freq",), 4),
    ]
    text = format_diff(d)
    assert "      > text_config.index_topk_freq moved to index_topk_freq: 4" in text
    assert "11 flags added, 5 removed, 3 changed, 8 unchanged" in text


def test_vs_set_changes_speculative_config_key_by_key():
    d = diff_recipes("minimax-m3-eagle3", vs_sets=["num_speculative_tokens=4"])
    (c,) = d.of("flag")
    assert c.name == "--speculative-config" and c.op == "changed"
    assert [k.to_dict() for k in c.keys] == [
        {"op": "changed", "path": ["num_speculative_tokens"], "a": 3, "b": 4}
    ]
    # tokenspeed: steps = n, draft tokens = n + 1 (f4d8ec6e server_args.py resolve_config_aliases)
    d = diff_recipes("minimax-m3-eagle3", engine="tokenspeed", vs_sets=["num_speculative_tokens=4"])
    assert by_op(d, "flag")["changed"] == {
        "--speculative-num-steps": ("3", "4"),
        "--speculative-num-draft-tokens": ("4", "5"),
    }


def test_identical_and_exit_codes():
    proc = run_cli("diff", "llama3.1-8b-eagle3", "llama3.1-8b-eagle3")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "identical (6 flags)"
    proc = run_cli("diff", "minimax-m3-eagle3", "--vs-engine", "tokenspeed")
    assert proc.returncode == 1
    assert proc.stdout.startswith("--- minimax-m3-eagle3 (vllm, b200) serve\n")


# --------------------------------------------------------------------------- two recipes


def test_two_recipes_bench():
    # llama3.1-8b-eagle3 vs qwen3-30b-a3b-eagle3 bench sections: random_input_len 1024/2048,
    # max_concurrency 16/32, num_prompts 160/320; --model is the target; same port 8000.
    d = diff_recipes("llama3.1-8b-eagle3", "qwen3-30b-a3b-eagle3", what="bench")
    assert d.of("command") == [] and d.of("env") == []
    flags = by_op(d, "flag")
    assert flags["added"] == {} and flags["removed"] == {}
    assert flags["changed"] == {
        "--model": ("meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-30B-A3B"),
        "--random-input-len": ("1024", "2048"),
        "--max-concurrency": ("16", "32"),
        "--num-prompts": ("160", "320"),
        # recipecli's recording flags (label, result file, workload metadata) differ with them
        "--label": ("llama3.1-8b-eagle3-vllm-h200", "qwen3-30b-a3b-eagle3-vllm-h200x2"),
        "--result-filename": (
            "llama3.1-8b-eagle3-vllm-h200-c16.json",
            "qwen3-30b-a3b-eagle3-vllm-h200x2-c32.json",
        ),
        "--metadata": flags["changed"]["--metadata"],
    }
    meta_a, meta_b = flags["changed"]["--metadata"]
    assert "random_input_len=1024" in meta_a and "random_input_len=2048" in meta_b


def test_two_recipes_eval_key_value_lists():
    # minimax (b200, port 8000) vs llama (h200) lm-eval: launcher differs (uvx … vs lm_eval),
    # --model_args keys model/tokenizer/num_concurrent, num_fewshot 25/5, gen_kwargs max_tokens,
    # minimax's --output_path only.
    d = diff_recipes("minimax-m3-eagle3", "llama3.1-8b-eagle3", what="eval")
    (cmd,) = d.of("command")
    assert cmd.name == "command"
    assert cmd.a == ["uvx", "--from", "lm-eval[api]", "lm_eval"] and cmd.b == ["lm_eval"]
    flags = by_op(d, "flag")
    assert set(flags["removed"]) == {"--output_path"}
    assert set(flags["changed"]) == {"--model_args", "--num_fewshot", "--gen_kwargs"}
    margs = next(c for c in d.of("flag") if c.name == "--model_args")
    assert [(k.op, k.path, k.a, k.b) for k in margs.keys] == [
        ("changed", ("model",), "nvidia/MiniMax-M3-NVFP4", "meta-llama/Llama-3.1-8B-Instruct"),
        ("changed", ("tokenizer",), "nvidia/MiniMax-M3-NVFP4", "meta-llama/Llama-3.1-8B-Instruct"),
        ("changed", ("num_concurrent",), "200", "32"),
    ]


def test_json_output_is_one_document():
    proc = run_cli(
        "diff", "minimax-m3-eagle3", "--hardware", "b200", "--vs-hardware", "mi355x", "--json"
    )
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["a"] == {
        "recipe": "minimax-m3-eagle3",
        "engine": "vllm",
        "hardware": "b200",
        "what": "serve",
        "sets": [],
    }
    assert doc["b"]["hardware"] == "mi355x"
    assert doc["identical"] is False
    assert doc["summary"] == {
        "flag_added": 4,
        "flag_removed": 0,
        "flag_changed": 1,
        "env_added": 9,
        "env_removed": 0,
        "env_changed": 0,
        "command_changed": 1,
        "flags_unchanged": 13,
    }
    assert {"kind": "flag", "op": "changed", "name": "--port", "a": "8000", "b": "8010"} in doc[
        "changes"
    ]


# --------------------------------------------------------------------------- units


def test_parse_flags():
    argv = [
        "prog",
        "sub",
        "M",
        "--a",
        "1",
        "--bare",
        "--multi",
        "x",
        "y",
        "--neg",
        "-3",
        "--a",
        "2",
    ]
    assert parse_flags(argv, 3) == {
        "--a": ["1", "2"],
        "--bare": True,
        "--multi": ["x", "y"],
        "--neg": "-3",
    }


def test_structured_values_and_key_diff():
    assert structured_value("--x", '{"b": 1, "a": [1, 2]}') == {"b": 1, "a": [1, 2]}
    assert structured_value("--x", "{not json") is None
    assert structured_value("--model_args", "a=1,b=x") == {"a": "1", "b": "x"}
    assert structured_value("--other", "a=1,b=x") is None
    a = {"method": "eagle3", "cfg": {"x": 1, "y": [1, 2]}, "gone": None}
    b = {"cfg": {"y": [1, 3], "x": 1, "z": {}}, "method": "eagle3"}
    assert [k.to_dict() for k in diff_structured(a, b)] == [
        {"op": "changed", "path": ["cfg", "y"], "a": [1, 2], "b": [1, 3]},
        {"op": "removed", "path": ["gone"], "a": None},
        {"op": "added", "path": ["cfg", "z"], "b": {}},
    ]


def test_json_flag_spelling_is_not_a_change():
    a = ({}, ["vllm", "serve", "M", "--speculative-config", '{"a": 1, "b": 2}'], 3)
    b = ({}, ["vllm", "serve", "M", "--speculative-config", '{"b":2,"a":1}'], 3)
    d = diff_commands(a, b)
    assert d.identical and d.unchanged_flags == ("--speculative-config",)


def test_env_changed_and_removed():
    a = ({"A": "1", "B": "x"}, ["p", "--f"], 1)
    b = ({"A": "2"}, ["p", "--f"], 1)
    d = diff_commands(a, b)
    assert by_op(d, "env") == {
        "added": {},
        "removed": {"B": ("x", None)},
        "changed": {"A": ("1", "2")},
    }


# --------------------------------------------------------------------------- bad input


def test_unknown_recipe_exit_2_names_it(tmp_path):
    missing = tmp_path / "nope.yaml"
    proc = run_cli("diff", str(missing), "minimax-m3-eagle3")
    assert proc.returncode == 2
    assert str(missing) in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_unknown_hardware_exit_2_names_file():
    proc = run_cli("diff", "minimax-m3-eagle3", "--vs-hardware", "h100")
    assert proc.returncode == 2
    assert "minimax-m3-eagle3.yaml" in proc.stderr and "h100" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_invalid_recipe_file_exit_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ntarget: [unclosed\n")
    proc = run_cli("diff", str(bad))
    assert proc.returncode == 2 and str(bad) in proc.stderr


@pytest.mark.parametrize("args", [["diff", "minimax-m3-eagle3", "--vs-engine", "tokenspeed"]])
def test_diff_does_not_import_torch(args):
    code = (
        "import sys\nfrom click.testing import CliRunner\nfrom recipecli.cli import cli\n"
        f"CliRunner().invoke(cli, {args!r})\nprint('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
