"""lint: unknown/removed flags with "did you mean", vendor env mistakes, tokenspeed rules."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from recipecli.engines.catalog import load_catalog
from recipecli.recipes.lint import lint_recipe

BASE = {
    "name": "t",
    "target": "meta-llama/Llama-3.1-8B-Instruct",
    "draft": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
    "speculative": {"method": "eagle3", "num_speculative_tokens": 3},
    "serve": {"tensor_parallel_size": 1},
}


def write(tmp_path: Path, **extra) -> str:
    p = tmp_path / "r.yaml"
    p.write_text(yaml.safe_dump({**BASE, **extra}, sort_keys=False))
    return str(p)


def codes(findings):
    return [(f.code, f.severity) for f in findings]


def run_lint(*args):
    return subprocess.run(
        [sys.executable, "-m", "recipecli", "lint", *args], capture_output=True, text=True
    )


def test_bundled_recipes_have_no_errors():
    for name in (
        "minimax-m3-eagle3",
        "llama3.1-8b-eagle3",
        "qwen3-30b-a3b-eagle3",
        "gpt-oss-120b-eagle3",
    ):
        assert [f for f in lint_recipe(name) if f.severity == "error"] == [], name


def test_catalog_has_the_flags_of_vllm_pr_47391():
    serve = load_catalog("vllm").flags("serve")
    for flag in (
        "--no-enable-prefix-caching",
        "--language-model-only",
        "--moe-backend",
        "--no-async-scheduling",
        "--tool-call-parser",
        "--hf-overrides",
    ):
        assert flag in serve, flag
    assert serve["--speculative-config"]["kind"] == "json"
    assert "--rope-scaling" not in serve


def test_catalog_value_types_follow_the_engines_code():
    # vllm v0.33.0: ModelConfig.served_model_name: str | list[str] | None (nargs "+"),
    # SchedulerConfig.max_num_seqs: int, CacheConfig.gpu_memory_utilization: float,
    # ModelConfig.dtype: Literal[...] (choices), EngineArgs.enforce_eager: bool (switch);
    # vllm/benchmarks/serve.py --max-concurrency type=int, --request-rate type=float,
    # --metadata nargs="*"; tokenspeed f4d8ec6e server_args.py --max-prefill-tokens type=int,
    # --kv-cache-dtype choices ["auto", "fp8", "fp8_e4m3", "mxfp8"].
    vllm = load_catalog("vllm")
    serve = vllm.flags("serve")
    assert (serve["--served-model-name"]["type"], serve["--served-model-name"]["nargs"]) == (
        "str",
        "+",
    )
    assert serve["--max-num-seqs"]["type"] == "int"
    assert serve["--gpu-memory-utilization"]["type"] == "float"
    assert serve["--dtype"]["choices"][:3] == ["auto", "half", "float16"]
    assert serve["--enforce-eager"]["type"] == "switch"
    assert serve["--no-enable-prefix-caching"]["type"] == "switch"
    bench = vllm.flags("bench serve")
    assert bench["--max-concurrency"]["type"] == "int"
    assert bench["--request-rate"]["type"] == "float"
    assert bench["--metadata"]["nargs"] == "*"
    ts = load_catalog("tokenspeed").flags("serve")
    assert ts["--max-prefill-tokens"]["type"] == "int"
    assert ts["--kv-cache-dtype"]["choices"] == ["auto", "fp8", "fp8_e4m3", "mxfp8"]
    assert ts["--hf-overrides"]["type"] == "json"


def test_typo_flag_did_you_mean(tmp_path):
    path = write(tmp_path, engines={"vllm": {"args": {"max-num-seq": 8}}})
    [f] = lint_recipe(path)
    assert (f.code, f.severity) == ("recipe.flag_unknown", "error")
    assert "did you mean --max-num-seqs?" in f.message
    assert f.source.startswith(f"{path}:")
    proc = run_lint(path)
    assert proc.returncode == 1
    assert "did you mean --max-num-seqs?" in proc.stdout


def test_removed_flag_rope_scaling(tmp_path):
    path = write(tmp_path, engines={"vllm": {"args": {"rope-scaling": '{"rope_type": "yarn"}'}}})
    [f] = lint_recipe(path)
    assert f.code == "recipe.flag_removed"
    assert "--hf-overrides" in f.message
    # issue #28: the line said "removed" twice (the message and the catalog's hint)
    assert f.message.count("removed") <= 1, f.message


def test_rocm_env_mistake(tmp_path):
    path = write(
        tmp_path, hardware={"mi355x": {"vendor": "amd", "env": {"CUDA_VISIBLE_DEVICES": "0,1"}}}
    )
    [f] = lint_recipe(path)
    assert (f.code, f.severity) == ("recipe.env_vendor", "error")
    assert "HIP_VISIBLE_DEVICES" in f.message
    lines = Path(path).read_text().splitlines()
    line = int(f.source.split(";")[0].rsplit(":", 1)[1])
    assert "CUDA_VISIBLE_DEVICES" in lines[line - 1]
    assert run_lint(path).returncode == 1


def test_rocm_env_on_nvidia_and_unknown_vllm_env(tmp_path):
    path = write(
        tmp_path,
        hardware={
            "h200": {
                "vendor": "nvidia",
                "engine_env": {
                    "vllm": {"VLLM_ROCM_USE_AITER": 1, "VLLM_USE_BREAKABLE_CUDAGRAF": 0}
                },
            }
        },
    )
    got = codes(lint_recipe(path))
    assert ("recipe.env_vendor", "error") in got
    assert ("recipe.env_unknown", "warning") in got


def test_tokenspeed_tp_conflict_and_topk(tmp_path):
    path = write(
        tmp_path, engines={"tokenspeed": {"args": {"attn-tp-size": 2, "speculative-eagle-topk": 4}}}
    )
    got = codes(lint_recipe(path))
    assert ("recipe.tokenspeed_tp_conflict", "error") in got
    assert ("recipe.tokenspeed_topk", "error") in got


def test_engine_flag_in_text_overrides_and_spec_tp(tmp_path):
    path = write(
        tmp_path,
        text_overrides={"max_model_len": 4},
        engines={"vllm": {"speculative_config": {"tensor_parallel_size": 2}}},
    )
    got = codes(lint_recipe(path))
    assert ("recipe.override_is_engine_flag", "error") in got
    assert ("recipe.spec_tensor_parallel", "error") in got


def test_invalid_json_arg(tmp_path):
    path = write(tmp_path, engines={"vllm": {"args": {"compilation-config": "{not json"}}})
    assert codes(lint_recipe(path)) == [("recipe.json_invalid", "error")]


def test_unknown_serve_field_says_did_you_mean(tmp_path):
    # max_modle_len: two letters swapped from the serve field max_model_len
    path = write(tmp_path, serve={"tensor_parallel_size": 1, "max_modle_len": 8192})
    (msg,) = [f.message for f in lint_recipe(path) if f.code == "recipe.schema"]
    assert msg.startswith(
        "serve.max_modle_len: unknown field (did you mean 'max_model_len'? known: "
    )
    # nothing close: no suggestion, the known list only
    path = write(tmp_path, serve={"zzzz": 1})
    (msg,) = [f.message for f in lint_recipe(path) if f.code == "recipe.schema"]
    assert "did you mean" not in msg and "unknown field (known: tensor_parallel_size" in msg


def test_schema_errors_with_line(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text(
        "name: t\ntarget: a/b\ndraft: c\nspeculative:\n  method: eagle3\n"
        "  num_speculative_tokens: 0\nserv: {}\n"
    )
    found = lint_recipe(str(p))
    msgs = {f.source.split(";")[0]: f.message for f in found}
    assert any(k.endswith("bad.yaml:6") and "minimum" in v for k, v in msgs.items())
    assert any(k.endswith("bad.yaml:7") and "unknown field" in v for k, v in msgs.items())
    proc = run_lint(str(p), "--json")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc["ok"] is False and len(doc["recipes"][0]["findings"]) == 2


def test_missing_recipe_exits_2():
    proc = run_lint("/nonexistent/recipe.yaml")
    assert proc.returncode == 2
    assert "/nonexistent/recipe.yaml" in proc.stderr


@pytest.mark.parametrize(
    "text, needle",
    [
        ("a: &x 1\nb: *x\n", "aliases"),
        ("name: t\nname: u\n", "duplicate key"),
        ("name: [\n", "invalid YAML"),
    ],
)
def test_yaml_problems_are_findings(tmp_path, text, needle):
    p = tmp_path / "y.yaml"
    p.write_text(text)
    [f] = lint_recipe(str(p))
    assert f.code == "recipe.yaml" and needle in f.message
    assert "y.yaml:" in f.source


def test_bundled_recipes_pass_strict():
    # minimax-m3-eagle3 declares its two override keys in text_overrides_known_keys
    proc = run_lint("--strict", "--json", *sorted(p.stem for p in bundled_paths()))
    assert proc.returncode == 0, proc.stdout
    doc = json.loads(proc.stdout)
    assert doc["ok"] is True
    # llama3.1-8b-eagle3 and qwen3-30b-a3b-eagle3 say why tokenspeed and SGLang cannot serve
    # their pair, minimax-m3-eagle3 why SGLang cannot, gpt-oss-120b-eagle3 why tokenspeed cannot
    # (its draft's use_aux_hidden_state false; `unsupported:`): infos, not warnings
    assert [
        [(f["code"], f["severity"], f["engine"]) for f in r["findings"]] for r in doc["recipes"]
    ] == [
        [("recipe.engine_unsupported", "info", "tokenspeed")],
        [
            ("recipe.engine_unsupported", "info", "tokenspeed"),
            ("recipe.engine_unsupported", "info", "sglang"),
        ],
        [("recipe.engine_unsupported", "info", "sglang")],
        [
            ("recipe.engine_unsupported", "info", "tokenspeed"),
            ("recipe.engine_unsupported", "info", "sglang"),
        ],
    ]


def bundled_paths():
    from recipecli.recipes.loader import bundled_dir

    return sorted(bundled_dir().glob("*.yaml"))


def test_override_absent_unless_declared(tmp_path):
    # Llama's config has no auto_map: its class is transformers' LlamaConfig, whose fields
    # config.json lists, so a key it lacks is read by no code (an error). MiniMax-M3's config is
    # remote code (auto_map): its model code may read keys config.json lacks (a warning).
    path = write(tmp_path, text_overrides={"index_topk_freq": 4, "rope_foo": 1})
    got = [(f.code, f.severity, f.engine, f.evidence["key"]) for f in lint_recipe(path)]
    assert got == [
        ("recipe.override_unknown_key", "error", "any", "index_topk_freq"),
        ("recipe.override_unknown_key", "error", "any", "rope_foo"),
    ]
    path = write(
        tmp_path,
        text_overrides={"index_topk_freq": 4, "rope_foo": 1},
        text_overrides_known_keys=["index_topk_freq", "stale_key"],
    )
    got = [(f.code, f.severity, f.evidence["key"]) for f in lint_recipe(path)]
    assert got == [
        ("recipe.override_unknown_key", "error", "rope_foo"),
        ("recipe.known_key_unused", "warning", "stale_key"),
    ]
    assert run_lint(path).returncode == 1
    path = write(
        tmp_path,
        target="nvidia/MiniMax-M3-NVFP4",
        text_overrides={"index_topk_freq": 4, "rope_foo": 1},
        text_overrides_known_keys=["index_topk_freq"],
        # SGLang has no placement for text overrides on this wrapped target
        # (recipe.override_breaks_draft: tests/recipes/test_render_sglang.py); the recipe says so
        unsupported={"sglang": "no override placement"},
    )
    got = [
        (f.code, f.severity, f.evidence["key"])
        for f in lint_recipe(path)
        if f.code != "recipe.engine_unsupported"
    ]
    assert got == [("recipe.override_absent", "warning", "rope_foo")]
    assert run_lint(path).returncode == 0
    assert run_lint("--strict", path).returncode == 1


def test_known_keys_schema(tmp_path):
    path = write(tmp_path, text_overrides_known_keys="index_topk_freq")
    [f] = lint_recipe(path)
    assert f.code == "recipe.schema" and "expected array" in f.message


@pytest.mark.parametrize(
    "serve, needle",
    [
        ({"tensor_parallel_size": -4}, "serve.tensor_parallel_size: -4 is below the minimum 1"),
        ({"tensor_parallel_size": 0}, "serve.tensor_parallel_size: 0 is below the minimum 1"),
        ({"max_model_len": 0}, "serve.max_model_len: 0 is below the minimum 1"),
        ({"port": 70000}, "serve.port: 70000 is above the maximum 65535"),
        (
            {"gpu_memory_utilization": 1.2},
            "serve.gpu_memory_utilization: 1.2 is above the maximum 1",
        ),
        ({"kv_cache_dtype": ""}, "serve.kv_cache_dtype: must not be empty"),
    ],
)
def test_serve_ranges(tmp_path, serve, needle):
    path = write(tmp_path, serve=serve)
    [f] = lint_recipe(path)
    assert f.code == "recipe.schema" and f.message == needle


def test_engine_arg_values_checked_like_serve_fields(tmp_path):
    path = write(
        tmp_path,
        engines={
            "vllm": {"args": {"tensor-parallel-size": -4, "port": 8001, "enforce-eager": 3}},
            "tokenspeed": {"args": {"max-model-len": "abc", "disable-kvstore": "yes"}},
        },
    )
    got = [(f.engine, f.evidence["flag"], f.message) for f in lint_recipe(path)]
    assert got == [
        (
            "vllm",
            "--tensor-parallel-size",
            "--tensor-parallel-size -4: -4 is below the minimum 1 (as serve.tensor_parallel_size)",
        ),
        (
            "vllm",
            "--enforce-eager",
            "--enforce-eager 3: expected boolean, got int (as serve.enforce_eager)",
        ),
        (
            "tokenspeed",
            "--max-model-len",
            "--max-model-len 'abc': expected integer, got str (as serve.max_model_len)",
        ),
        (
            "tokenspeed",
            "--disable-kvstore",
            "--disable-kvstore is a switch: give true (or false to drop it), not 'yes'",
        ),
    ]


def test_lint_directory_lints_every_yaml(tmp_path):
    good = yaml.safe_load(yaml.safe_dump(BASE))
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(good))
    (tmp_path / "b.yml").write_text(yaml.safe_dump(dict(good, serve={"port": 0})))
    (tmp_path / "notes.txt").write_text("not a recipe")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.yaml").write_text("name: [\n")  # not recursive
    proc = run_lint("--json", str(tmp_path))
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert [r["recipe"] for r in doc["recipes"]] == [
        str(tmp_path / "a.yaml"),
        str(tmp_path / "b.yml"),
    ]
    assert [[f["code"] for f in r["findings"]] for r in doc["recipes"]] == [[], ["recipe.schema"]]


def test_lint_directory_without_recipes_exits_2(tmp_path):
    (tmp_path / "x.txt").write_text("")
    proc = run_lint(str(tmp_path))
    assert proc.returncode == 2
    assert f"{tmp_path}: is a directory with no *.yaml/*.yml recipe files" in proc.stderr
    assert "no such recipe" not in proc.stderr


@pytest.mark.parametrize(
    "annotation, want",
    [
        # the order of vllm v0.33.0 vllm/engine/arg_utils.py _compute_kwargs
        ("CompilationConfig", {"type": "json"}),
        ("bool | str | None", {"type": "optional"}),
        ("bool", {"type": "bool"}),
        ("Literal['auto', 'half'] | None", {"type": "str", "choices": ["auto", "half"]}),
        ("str | list[str] | None", {"type": "str", "nargs": "+"}),
        ("list[int] | None", {"type": "int", "nargs": "+"}),
        ("SkipValidation[int]", {"type": "int"}),
        ("int | None", {"type": "int"}),
        ("float", {"type": "float"}),
        ("dict[str, Any]", {"type": "json"}),
        ("dict[str, Any] | str", {"type": "json_or_str"}),
        ("str | None", {"type": "str"}),
        ("AttentionBackendEnum | None", {"type": "str"}),
    ],
)
def test_catalog_builder_value_types(annotation, want):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / "build_vllm_flag_catalog.py"
    spec = importlib.util.spec_from_file_location("build_vllm_flag_catalog", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.value_type_of_annotation(annotation) == want


def test_lint_page_lists_every_lint_code():
    # docs/lint.md's table is the reference a user reads a finding's code in: every recipe.*
    # code of the catalog (recipecli/codes/lint.py) has its row there
    from pathlib import Path

    from recipecli.codes import lint as lint_codes

    page = (Path(__file__).resolve().parents[2] / "docs" / "lint.md").read_text()
    assert [e.code for e in lint_codes.ENTRIES if f"| `{e.code}` |" not in page] == []
