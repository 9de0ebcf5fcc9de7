"""`recipecli render --engine sglang`: SGLang 0.5.23 serve commands, override placement, refusals.

Expected values are worked out from SGLang 0.5.23's source (the PyPI wheel; paths below are
under ``python/sglang/srt/``), never from recipecli's output:

* ``arg_groups/fields/model.py``: ``model_path`` has no default (``add_cli_args_from_dataclass``
  in ``arg_groups/arg_utils.py`` makes it a required ``--model-path``, alias ``--model``);
  ``context_length`` -> ``--context-length``; ``kv_cache_dtype`` choices auto, fp8_e5m2, fp8_e4m3,
  mxfp8, bf16, bfloat16, nvfp4, fp4_mx_block16; ``trust_remote_code: bool`` -> store_true;
  ``json_model_override_args`` JSON text;
* ``arg_groups/fields/parallel.py``: ``tp_size`` -> ``--tp-size``, alias ``--tensor-parallel-size``;
* ``arg_groups/fields/schedule.py``: ``max_running_requests``, ``mem_fraction_static``, ``page_size``;
* ``arg_groups/speculative_hook.py`` ``_handle_eagle_family``: steps, top-k and draft tokens all
  given or all left out; top-k 1 resets draft tokens to steps + 1; top-k > 1 with page size > 1
  only on flashinfer / fa3 / triton;
* ``utils/hf_transformers/config.py`` ``get_config``: the override JSON, one level deep, applied to
  the target's and (``configs/model_config.py`` ``ModelConfig.from_server_args``) the draft's
  config; ``utils/hf_transformers/common.py`` ``get_hf_text_config`` asserts the text config has
  ``num_attention_heads``.

Conformance against SGLang's own parser and config loading is not tested here.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.targets import TARGETS

from recipecli.engines.catalog import load_catalog
from recipecli.errors import RecipeError, UsageError
from recipecli.recipes.lint import lint_recipe
from recipecli.recipes.render import format_shell, render_command, split_shell

REPO = Path(__file__).resolve().parents[2]
SGLANG_SRC = Path(os.environ.get("SGLANG_SRC", "/work/ref/sglang-0.5.23"))
FLAG = "--json-model-override-args"
KEY = "rms_norm_eps"  # in the text config of all three targets


# A flat EAGLE3 draft config as SGLang's LlamaForCausalLMEagle3 reads it (models/llama_eagle3.py).
DRAFT = {
    "architectures": ["LlamaForCausalLMEagle3"],
    "model_type": "llama",
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "num_hidden_layers": 1,
    "rms_norm_eps": 1e-05,
    "vocab_size": 128256,
    "draft_vocab_size": 32000,
}
SUBCONFIGS = {"text_config", "vision_config", "thinker_config", "language_config"}


class StartupError(Exception):
    """What SGLang raises at start-up (here: get_hf_text_config's assertion)."""


def sglang_apply(config: dict, overrides: dict) -> dict:
    """SGLang 0.5.23 get_config's override loop on a config dict: a dict value onto an existing
    sub-config is merged one level (PretrainedConfig.update); rope_scaling/rope_parameters dicts
    merge; anything else is set on the top-level config."""
    cfg = copy.deepcopy(config)
    for key, value in overrides.items():
        current = cfg.get(key)
        if isinstance(value, dict) and key in SUBCONFIGS and isinstance(current, dict):
            current.update(value)
        elif key in ("rope_scaling", "rope_parameters") and isinstance(value, dict):
            cfg[key] = {**(current or {}), **value}
        else:
            cfg[key] = value
    return cfg


def sglang_text_config(cfg: dict) -> dict:
    """get_hf_text_config: the text sub-config when there is one (a dict given by an override
    becomes a bare PretrainedConfig, which must have num_attention_heads), else the config."""
    text = cfg.get("text_config")
    if text is None:
        return cfg
    if "num_attention_heads" not in text:
        raise StartupError("text_config has no num_attention_heads")
    return text


def recipe(tmp_path: Path, target: str = "flat-llama", **extra) -> str:
    tid, more, _ = TARGETS[target]
    data = {
        "name": "t",
        "target": tid,
        "draft": "org/draft",
        "speculative": {"method": "eagle3", "num_speculative_tokens": 3},
        **more,
        **extra,
    }
    path = tmp_path / f"{target}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def override_value(argv: list[str]) -> dict:
    return json.loads(argv[argv.index(FLAG) + 1])


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "recipecli", *args], capture_output=True, text=True, env=env
    )


# --------------------------------------------------------------------------- serve argv


def test_serve_argv_from_sglang_server_args(tmp_path):
    path = recipe(
        tmp_path,
        serve={
            "tensor_parallel_size": 2,
            "max_model_len": 4096,
            "max_num_seqs": 32,
            "gpu_memory_utilization": 0.85,
            "trust_remote_code": True,
            "served_model_name": "m",
            "host": "0.0.0.0",
            "port": 30001,
        },
    )
    r = render_command(path, "sglang")
    assert r.argv == [
        "python",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--tp-size",
        "2",
        "--context-length",
        "4096",
        "--max-running-requests",
        "32",
        "--mem-fraction-static",
        "0.85",
        "--trust-remote-code",
        "--served-model-name",
        "m",
        "--host",
        "0.0.0.0",
        "--port",
        "30001",
        # a chain of 3: steps 3, top-k 1, steps + 1 = 4 draft tokens (_handle_eagle_family)
        "--speculative-algorithm",
        "EAGLE3",
        "--speculative-draft-model-path",
        "org/draft",
        "--speculative-num-steps",
        "3",
        "--speculative-eagle-topk",
        "1",
        "--speculative-num-draft-tokens",
        "4",
    ]
    text = format_shell(r.env, r.argv, head=r.head)
    assert text.splitlines()[0] == (
        "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct \\"
    )
    assert split_shell(text) == (r.env, r.argv)


def test_every_rendered_flag_is_in_the_catalog(tmp_path):
    r = render_command(
        recipe(tmp_path, serve={"tensor_parallel_size": 1, "block_size": 1}), "sglang"
    )
    flags = load_catalog("sglang").flags()
    assert [a for a in r.argv[3:] if a.startswith("--") and a not in flags] == []


def test_kv_cache_dtype_spelled_the_sglang_way(tmp_path):
    # vLLM's "fp8" is its fp8_e4m3; SGLang has no plain "fp8" choice
    r = render_command(recipe(tmp_path, serve={"kv_cache_dtype": "fp8"}), "sglang")
    assert r.argv[r.argv.index("--kv-cache-dtype") + 1] == "fp8_e4m3"
    r = render_command(recipe(tmp_path, serve={"kv_cache_dtype": "fp8"}), "vllm")
    assert r.argv[r.argv.index("--kv-cache-dtype") + 1] == "fp8"
    r = render_command(recipe(tmp_path), "sglang", sets=["kv_cache_dtype=fp8_e5m2"])
    assert r.argv[r.argv.index("--kv-cache-dtype") + 1] == "fp8_e5m2"
    # --set writes the same recipe field as the file: the recipe's fp8 is spelled fp8_e4m3 too
    r = render_command(recipe(tmp_path), "sglang", sets=["kv_cache_dtype=fp8"])
    assert r.argv[r.argv.index("--kv-cache-dtype") + 1] == "fp8_e4m3"
    with pytest.raises(UsageError) as exc:
        render_command(recipe(tmp_path), "sglang", sets=["kv_cache_dtype=fp9"])
    assert "fp8_e4m3" in str(exc.value) and "\n" not in str(exc.value)


def test_enforce_eager_has_no_sglang_flag(tmp_path):
    # SGLang's --disable-cuda-graph is deprecated for two --cuda-graph-backend-* flags
    r = render_command(recipe(tmp_path, serve={"enforce_eager": True}), "sglang")
    assert "--enforce-eager" not in r.argv and "--disable-cuda-graph" not in r.argv
    assert [w.code for w in r.warnings] == ["recipe.serve_field_unsupported"]


def test_wider_tree_from_engine_args(tmp_path):
    path = recipe(
        tmp_path,
        engines={
            "sglang": {"args": {"speculative-eagle-topk": 4, "speculative-num-draft-tokens": 8}}
        },
    )
    argv = render_command(path, "sglang").argv
    assert argv[argv.index("--speculative-eagle-topk") + 1] == "4"
    assert argv[argv.index("--speculative-num-draft-tokens") + 1] == "8"
    assert argv.count("--speculative-eagle-topk") == 1


# --------------------------------------------------------------------------- catalog


def test_catalog_facts_read_from_server_args():
    flags = load_catalog("sglang").flags()
    assert load_catalog("sglang").version == "0.5.23"
    assert flags["--tensor-parallel-size"]["alias_of"] == "--tp-size"
    assert flags["--model"]["alias_of"] == "--model-path"
    assert flags["--kv-cache-dtype"]["choices"] == [
        "auto",
        "fp8_e5m2",
        "fp8_e4m3",
        "mxfp8",
        "bf16",
        "bfloat16",
        "nvfp4",
        "fp4_mx_block16",
    ]
    assert flags["--trust-remote-code"]["kind"] == "flag"  # bool -> store_true, no --no- form
    assert "--no-trust-remote-code" not in flags
    assert flags[FLAG]["type"] == "json"
    assert flags["--speculative-num-steps"]["type"] == "int"
    assert flags["--context-length"]["type"] == "int"  # human_readable_int
    assert flags["--mem-fraction-static"]["type"] == "float"
    assert flags["--disable-cuda-graph"].get("deprecated") is True
    assert "--speculative-boundary-reduction" not in flags  # Arg(no_cli=True)


@pytest.mark.skipif(
    not (SGLANG_SRC / "sglang/srt/server_args.py").is_file(), reason="no SGLang source"
)
def test_catalog_is_what_the_script_builds(tmp_path):
    out = tmp_path / "c.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts/build_sglang_flag_catalog.py"),
            "--source",
            str(SGLANG_SRC),
            "--version",
            "0.5.23",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    committed = REPO / "recipecli/engines/sglang/data/sglang-0.5.23-flags.json"
    assert json.loads(out.read_text()) == json.loads(committed.read_text())


# --------------------------------------------------------------------------- overrides

SOURCES = {
    "text_overrides": (lambda: {"text_overrides": {KEY: 3e-06}}, []),
    "engine arg": (
        lambda: {"engines": {"sglang": {"args": {"json-model-override-args": {KEY: 3e-06}}}}},
        [],
    ),
    "engine arg json text": (
        lambda: {
            "engines": {"sglang": {"args": {"json-model-override-args": json.dumps({KEY: 3e-06})}}}
        },
        [],
    ),
    "hardware profile": (
        lambda: {
            "default_hardware": "h",
            "hardware": {
                "h": {
                    "vendor": "nvidia",
                    "args": {"sglang": {"json-model-override-args": {KEY: 3e-06}}},
                }
            },
        },
        [],
    ),
    "--set json-model-override-args": (
        lambda: {},
        [f'json-model-override-args={{"{KEY}": 3e-06}}'],
    ),
    "--set text_overrides.KEY": (lambda: {}, [f"text_overrides.{KEY}=3e-06"]),
}


@pytest.mark.parametrize("source", list(SOURCES))
def test_flat_target_overrides_go_flat_and_reach_target_and_draft(tmp_path, source):
    fields, sets = SOURCES[source]
    r = render_command(recipe(tmp_path, **fields()), "sglang", sets=sets)
    value = override_value(r.argv)
    assert value == {KEY: 3e-06}
    config = TARGETS["flat-llama"][2]
    assert sglang_text_config(sglang_apply(config, value))[KEY] == 3e-06
    # the same JSON reaches the flat draft, which still starts
    assert sglang_text_config(sglang_apply(DRAFT, value))[KEY] == 3e-06
    assert "--hf-overrides" not in r.argv
    assert [w for w in r.warnings if w.severity == "error"] == []


def test_flat_target_geometry_override_warns_it_hits_the_draft(tmp_path):
    r = render_command(
        recipe(tmp_path, text_overrides={"max_position_embeddings": 65536}), "sglang"
    )
    assert override_value(r.argv) == {"max_position_embeddings": 65536}
    # get_config sets it on the draft too: the draft's derived context length changes
    assert (
        sglang_apply(DRAFT, {"max_position_embeddings": 65536})["max_position_embeddings"] == 65536
    )
    assert [w.code for w in r.warnings] == ["recipe.override_hits_draft"]


@pytest.mark.parametrize("target", ["wrapped-minimax", "wrapped-qwen3vl"])
def test_wrapped_target_has_no_placement_and_render_refuses(tmp_path, target):
    config = TARGETS[target][2]
    # by hand: neither placement works for a wrapped target with a flat draft
    nested = {"text_config": {KEY: 3e-06}}
    assert sglang_apply(config, nested)["text_config"][KEY] == 3e-06  # the target would be right
    with pytest.raises(StartupError):
        sglang_text_config(sglang_apply(DRAFT, nested))  # but the draft fails at start-up
    flat = {KEY: 3e-06}
    assert sglang_text_config(sglang_apply(config, flat))[KEY] == config["text_config"][KEY]
    # so render refuses, one line naming where
    path = recipe(tmp_path, target, text_overrides={KEY: 3e-06})
    with pytest.raises(RecipeError) as exc:
        render_command(path, "sglang")
    msg = str(exc.value)
    assert "no --json-model-override-args placement works" in msg and "\n" not in msg
    assert exc.value.path.endswith(".yaml:" + exc.value.path.rsplit(":", 1)[1])
    # lint says the same, as an SGLang error only
    found = [(f.code, f.severity, f.engine) for f in lint_recipe(path) if f.severity == "error"]
    assert found == [("recipe.override_breaks_draft", "error", "sglang")]
    # --force renders the nested form (reaches the target; the message above says the draft fails)
    r = render_command(path, "sglang", force=True)
    assert override_value(r.argv) == nested
    assert "recipe.override_breaks_draft" in [w.code for w in r.warnings]
    # vLLM still renders it (nested), unaffected
    assert "--hf-overrides" in render_command(path, "vllm").argv


def test_wrapped_target_with_sglang_unsupported_lints_clean(tmp_path):
    path = recipe(
        tmp_path,
        "wrapped-minimax",
        text_overrides={"index_topk_freq": 4},
        text_overrides_known_keys=["index_topk_freq"],
        unsupported={"sglang": "no override placement"},
    )
    assert [f for f in lint_recipe(path) if f.severity == "error"] == []
    with pytest.raises(RecipeError, match="not served on sglang"):
        render_command(path, "sglang")


def test_text_config_key_on_flat_target_breaks_the_draft(tmp_path):
    path = recipe(
        tmp_path,
        engines={"sglang": {"args": {"json-model-override-args": {"text_config": {KEY: 1e-06}}}}},
    )
    # by hand: a text_config dict lands on the flat draft (and target) -> start-up assertion
    with pytest.raises(StartupError):
        sglang_text_config(sglang_apply(DRAFT, {"text_config": {KEY: 1e-06}}))
    with pytest.raises(RecipeError) as exc:
        render_command(path, "sglang")
    assert "get_hf_text_config" in str(exc.value)


def test_engine_flag_inside_overrides_is_refused(tmp_path):
    path = recipe(tmp_path, text_overrides={"max_model_len": 4096})
    with pytest.raises(RecipeError, match="engine flag"):
        render_command(path, "sglang")


# --------------------------------------------------------------------------- lint rules


def codes_for(path: str) -> list[tuple[str, str]]:
    return [(f.code, f.severity) for f in lint_recipe(path) if f.engine == "sglang"]


def test_lint_draft_tokens_reset_with_topk_1(tmp_path):
    path = recipe(tmp_path, engines={"sglang": {"args": {"speculative-num-draft-tokens": 6}}})
    # top-k 1, steps 3: SGLang resets draft tokens to 4
    assert codes_for(path) == [("recipe.sglang_draft_tokens", "warning")]


def test_lint_topk_tree_on_pages(tmp_path):
    args = {"speculative-eagle-topk": 4, "speculative-num-draft-tokens": 8}
    paged = {"block_size": 16}
    path = recipe(
        tmp_path,
        serve=paged,
        engines={"sglang": {"args": {**args, "attention-backend": "trtllm_mha"}}},
    )
    assert codes_for(path) == [("recipe.sglang_topk_page_size", "error")]
    with pytest.raises(RecipeError, match="page"):
        render_command(path, "sglang")
    path = recipe(
        tmp_path, serve=paged, engines={"sglang": {"args": {**args, "attention-backend": "fa3"}}}
    )
    assert codes_for(path) == []
    path = recipe(tmp_path, serve=paged, engines={"sglang": {"args": args}})
    assert codes_for(path) == [("recipe.sglang_topk_page_size", "warning")]
    path = recipe(tmp_path, serve={"block_size": 1}, engines={"sglang": {"args": args}})
    assert codes_for(path) == []


def test_lint_alias_given_twice(tmp_path):
    path = recipe(
        tmp_path,
        serve={"tensor_parallel_size": 2},
        engines={"sglang": {"args": {"tensor-parallel-size": 4}}},
    )
    assert codes_for(path) == [("recipe.sglang_alias_conflict", "warning")]


def test_lint_unknown_sglang_flag_suggests(tmp_path):
    path = recipe(tmp_path, engines={"sglang": {"args": {"context-lenght": 4096}}})
    [f] = [f for f in lint_recipe(path) if f.engine == "sglang"]
    assert f.severity == "error" and "--context-length" in f.message


# --------------------------------------------------------------------------- bundled recipes, CLI


def test_bundled_recipes_render_or_say_why():
    from recipecli.recipes.loader import bundled_names, load_recipe

    served, refused = [], []
    for name in bundled_names():
        r = load_recipe(name)
        if "sglang" in (r.get("unsupported") or {}):
            with pytest.raises(RecipeError, match="not served on sglang"):
                render_command(r, "sglang")
            refused.append(name)
        else:
            argv = render_command(r, "sglang").argv
            assert argv[:4] == ["python", "-m", "sglang.launch_server", "--model-path"]
            served.append(name)
    assert served == ["gpt-oss-120b-eagle3"]
    assert refused == ["llama3.1-8b-eagle3", "minimax-m3-eagle3", "qwen3-30b-a3b-eagle3"]


def test_cli_render_and_refusal():
    ok = run_cli("render", "gpt-oss-120b-eagle3", "--engine", "sglang", "--format", "argv-json")
    assert ok.returncode == 0, ok.stderr
    argv = json.loads(ok.stdout)["argv"]
    assert argv[argv.index("--tp-size") + 1] == "4"
    assert argv[argv.index("--host") + 1] == "0.0.0.0"
    bad = run_cli("render", "llama3.1-8b-eagle3", "--engine", "sglang")
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
    assert "not served on sglang" in bad.stderr


def test_check_recipe_engine_sglang():
    proc = run_cli(
        "check",
        "--recipe",
        "llama3.1-8b-eagle3",
        "--engine",
        "sglang",
        "--kernel",
        "skip",
        "--json",
    )
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    [dep] = doc["recipe"]["deployments"]
    # --tp-size 1 and --context-length 8192 read back from the rendered SGLang command
    assert (dep["engine"], dep["tp"], dep["max_model_len"]) == ("sglang", 1, 8192)


def test_bench_and_eval_target_sglang_default_port(tmp_path):
    # no serve.port: SGLang listens on 30000 (arg_groups/fields/serving.py port), vLLM on 8000
    extra = {
        "bench": {"backend": "openai-chat", "num_prompts": 4},
        "eval": {"tasks": "gsm8k"},
    }
    path = recipe(tmp_path, **extra)
    bench = render_command(path, "sglang", what="bench").argv
    assert bench[bench.index("--base-url") + 1] == "http://127.0.0.1:30000"
    ev = render_command(path, "sglang", what="eval").argv
    assert "base_url=http://127.0.0.1:30000/v1/chat/completions" in ev[ev.index("--model_args") + 1]
    bench = render_command(path, "vllm", what="bench").argv
    assert bench[bench.index("--base-url") + 1] == "http://127.0.0.1:8000"


def test_force_on_an_unsupported_engine_renders_with_the_reason_as_a_warning():
    # llama3.1-8b-eagle3.yaml marks sglang unsupported (the published draft's
    # LlamaForCausalLM is no SGLang EAGLE3 draft class): refused, or rendered with --force and
    # the recipe's reason said beside the command
    with pytest.raises(RecipeError, match="is not served on sglang"):
        render_command("llama3.1-8b-eagle3", "sglang")
    r = render_command("llama3.1-8b-eagle3", "sglang", force=True)
    first = r.warnings[0]
    assert (first.code, first.severity, first.engine) == (
        "recipe.engine_unsupported",
        "warning",
        "sglang",
    )
    assert "LlamaForCausalLM" in first.message and first.message.endswith("(--force)")
    assert not any(
        w.code == "recipe.engine_unsupported"
        for w in render_command("llama3.1-8b-eagle3", "vllm", force=True).warnings
    )
