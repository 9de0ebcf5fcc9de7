"""The override placement matrix: every source x each engine x flat / wrapped target.

Each rendered ``--hf-overrides`` is fed to a model of what the ENGINE does with it, written here
from the engines' code (not from recipecli's):

* vLLM v0.33.0 ``vllm/config/model.py`` ``ModelConfig.__post_init__`` splits the JSON into flat
  values and dict values; ``vllm/transformers_utils/config.py`` ``get_config`` applies the flat
  ones with ``config.update`` (the TOP-level config); ``ModelConfig._apply_dict_overrides`` merges
  a dict whose key is an existing sub-config (``PreTrainedConfig``) recursively
  (``_update_nested``) and sets any other dict value as it is. The text model then reads
  ``get_hf_text_config(config)`` (``text_config`` of a wrapper).
* tokenspeed f4d8ec6e ``python/tokenspeed/runtime/utils/hf_transformers_utils.py`` ``get_config``:
  ``text_config = get_hf_text_config(config)`` then ``text_config.update(overrides)`` (flat).

Targets: Llama-3.1-8B-Instruct (flat, transformers' own LlamaConfig), MiniMax-M3 (wrapper
``minimax_m3_vl``, remote code) and Qwen3-VL-30B-A3B-Instruct (wrapper ``qwen3_vl_moe``,
transformers' own config), from their public config.json files.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.targets import TARGETS, snapshot

from recipecli.recipes.lint import lint_recipe
from recipecli.recipes.render import render_command

REPO = Path(__file__).resolve().parents[2]

# keys that are sub-configs (PreTrainedConfig instances) in these targets' config classes
SUBCONFIGS = {"text_config", "vision_config", "thinker_config"}


def _update_nested(target: dict, updates: dict) -> None:
    for key, value in updates.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _update_nested(target[key], value)
        else:
            target[key] = value


def vllm_resolve(config: dict, overrides: dict) -> tuple[dict, dict]:
    """(top-level config, text config) after vLLM v0.33.0 applies ``overrides``."""
    cfg = copy.deepcopy(config)
    cfg.update({k: v for k, v in overrides.items() if not isinstance(v, dict)})
    for key, value in overrides.items():
        if isinstance(value, dict):
            if key in SUBCONFIGS and isinstance(cfg.get(key), dict):
                _update_nested(cfg[key], value)
            else:
                cfg[key] = value
    return cfg, cfg.get("text_config", cfg)


def tokenspeed_resolve(config: dict, overrides: dict) -> tuple[dict, dict]:
    """(top-level config, text config) after tokenspeed f4d8ec6e applies ``overrides``."""
    cfg = copy.deepcopy(config)
    text = cfg.get("text_config", cfg)
    text.update(overrides)
    return cfg, text


RESOLVE = {"vllm": vllm_resolve, "tokenspeed": tokenspeed_resolve}


KEY = "rms_norm_eps"  # in all three text configs (1e-05 / 1e-06 / 1e-06)


def recipe(tmp_path: Path, target: str, engine: str, **extra) -> str:
    tid, more, _ = TARGETS[target]
    data = {
        "name": "t",
        "target": tid,
        "draft": "d",
        "speculative": {"method": "eagle3", "num_speculative_tokens": 2},
        **more,
        **extra,
    }
    path = tmp_path / f"{target}-{engine}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def hf_value(argv: list[str]) -> dict:
    return json.loads(argv[argv.index("--hf-overrides") + 1])


# source -> (recipe fields, --set list); the value set is always 3e-06
SOURCES = {
    "text_overrides": (lambda e: {"text_overrides": {KEY: 3e-06}}, []),
    "engine-arg flat": (lambda e: {"engines": {e: {"args": {"hf-overrides": {KEY: 3e-06}}}}}, []),
    "engine-arg json text": (
        lambda e: {"engines": {e: {"args": {"hf-overrides": json.dumps({KEY: 3e-06})}}}},
        [],
    ),
    "hardware profile": (
        lambda e: {
            "default_hardware": "h",
            "hardware": {"h": {"vendor": "nvidia", "args": {e: {"hf-overrides": {KEY: 3e-06}}}}},
        },
        [],
    ),
    "--set hf-overrides": (lambda e: {}, [f'hf-overrides={{"{KEY}": 3e-06}}']),
    "--set text_overrides.KEY": (lambda e: {}, [f"text_overrides.{KEY}=3e-06"]),
}


@pytest.mark.parametrize("engine", ["vllm", "tokenspeed"])
@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("source", list(SOURCES))
def test_every_source_reaches_the_text_config(tmp_path, source, target, engine):
    fields, sets = SOURCES[source]
    path = recipe(tmp_path, target, engine, **fields(engine))
    r = render_command(path, engine, sets=sets)
    value = hf_value(r.argv)
    config = TARGETS[target][2]
    top, text = RESOLVE[engine](config, value)
    assert text[KEY] == 3e-06
    if "text_config" in config:
        # never both: the top-level (wrapper) config is untouched
        assert KEY not in top
        if engine == "vllm":
            assert value == {"text_config": {KEY: 3e-06}}
        else:
            assert value == {KEY: 3e-06}
    else:
        assert value == {KEY: 3e-06}
    assert [w for w in r.warnings if w.severity == "error"] == []
    # lint agrees: no error for this engine (lint reads the bundled snapshots only; SGLang has
    # no placement for a wrapped target and reports its own error: tests/recipes/test_render_sglang.py)
    assert [
        f for f in lint_recipe(path) if f.severity == "error" and f.engine in (engine, "any")
    ] == []


@pytest.mark.parametrize("engine", ["vllm", "tokenspeed"])
@pytest.mark.parametrize("target", ["wrapped-minimax", "wrapped-qwen3vl"])
def test_nested_engine_arg_is_read_the_same(tmp_path, target, engine):
    # a user who already nests under text_config gets the same result on either engine
    path = recipe(
        tmp_path,
        target,
        engine,
        engines={engine: {"args": {"hf-overrides": {"text_config": {KEY: 3e-06}}}}},
    )
    value = hf_value(render_command(path, engine).argv)
    top, text = RESOLVE[engine](TARGETS[target][2], value)
    assert text[KEY] == 3e-06 and KEY not in top


@pytest.mark.parametrize("engine", ["vllm", "tokenspeed"])
def test_sources_merge_per_key_last_wins(tmp_path, engine):
    # text_overrides 1e-06 < engine arg 2e-06 < hardware 3e-06 < --set hf-overrides 4e-06 <
    # --set text_overrides 5e-06 (command-line order); rope_theta only in text_overrides survives
    path = recipe(
        tmp_path,
        "wrapped-minimax",
        engine,
        text_overrides={KEY: 1e-06, "rope_theta": 7.0},
        engines={engine: {"args": {"hf-overrides": {KEY: 2e-06}}}},
        default_hardware="h",
        hardware={"h": {"vendor": "nvidia", "args": {engine: {"hf-overrides": {KEY: 3e-06}}}}},
    )
    config = TARGETS["wrapped-minimax"][2]
    for sets, want in (
        ([], 3e-06),
        ([f'hf-overrides={{"{KEY}": 4e-06}}'], 4e-06),
        ([f'hf-overrides={{"{KEY}": 4e-06}}', f"text_overrides.{KEY}=5e-06"], 5e-06),
        ([f"text_overrides.{KEY}=5e-06", f'hf-overrides={{"{KEY}": 4e-06}}'], 4e-06),
    ):
        value = hf_value(render_command(path, engine, sets=sets).argv)
        top, text = RESOLVE[engine](config, value)
        assert text[KEY] == want and text["rope_theta"] == 7.0
        assert KEY not in top and "rope_theta" not in top
    # an empty VALUE drops one key; hf-overrides=false drops them all
    value = hf_value(render_command(path, engine, sets=["text_overrides.rope_theta="]).argv)
    assert "rope_theta" not in json.dumps(value)
    r = render_command(path, engine, sets=["hf-overrides=false"])
    assert "--hf-overrides" not in r.argv


def test_done_when_set_hf_overrides_on_minimax():
    r = render_command("minimax-m3-eagle3", "vllm", sets=['hf-overrides={"index_topk_freq": 8}'])
    value = hf_value(r.argv)
    assert value == {"text_config": {"use_index_cache": True, "index_topk_freq": 8}}
    top, text = vllm_resolve(snapshot("nvidia__MiniMax-M3-NVFP4"), value)
    assert text["index_topk_freq"] == 8 and "index_topk_freq" not in top
    ts = render_command(
        "minimax-m3-eagle3", "tokenspeed", sets=['hf-overrides={"index_topk_freq": 8}']
    )
    assert hf_value(ts.argv) == {"use_index_cache": True, "index_topk_freq": 8}


def test_ported_engine_arg_on_minimax_lands_under_text_config(tmp_path):
    text = (REPO / "recipecli/data/recipes/minimax-m3-eagle3.yaml").read_text()
    text = text.replace(
        "text_overrides:\n  use_index_cache: true\n  index_topk_freq: 4\n", ""
    ).replace("text_overrides_known_keys: [use_index_cache, index_topk_freq]\n", "")
    text = text.replace(
        "      reasoning-parser: minimax_m3\n    order:",
        "      reasoning-parser: minimax_m3\n      hf-overrides: {index_topk_freq: 4}\n    order:",
        1,
    )
    path = tmp_path / "m3.yaml"
    path.write_text(text)
    line = 1 + text.splitlines().index("      hf-overrides: {index_topk_freq: 4}")
    r = render_command(str(path), "vllm", hardware="mi355x")
    assert hf_value(r.argv) == {"text_config": {"index_topk_freq": 4}}
    found = {(f.code, f.severity) for f in lint_recipe(str(path))}
    assert ("recipe.override_placed", "info") in found
    placed = next(f for f in lint_recipe(str(path)) if f.code == "recipe.override_placed")
    assert placed.source.startswith(f"{path}:{line}; ")
    assert "rendered under text_config" in placed.message


def run(*args):
    return subprocess.run(
        [sys.executable, "-m", "recipecli", *args], capture_output=True, text=True
    )


def test_engine_flag_in_engine_arg_is_lint_error_and_render_refuses_unless_force(tmp_path):
    path = recipe(
        tmp_path,
        "wrapped-minimax",
        "vllm",
        engines={"vllm": {"args": {"hf-overrides": {"tensor_parallel_size": 4}}}},
    )
    line = 1 + Path(path).read_text().splitlines().index("      hf-overrides:")
    lint = run("lint", path)
    assert lint.returncode == 1
    assert f"{path}:{line}: error: recipe.override_is_engine_flag" in lint.stdout
    message = "tensor_parallel_size is an engine flag, not a model-config field"
    assert message in lint.stdout
    proc = run("render", path, "--engine", "vllm")
    assert proc.returncode == 2 and proc.stdout == ""
    assert f"{path}:{line}: " in proc.stderr and message in proc.stderr
    assert "--force" in proc.stderr
    forced = run("render", path, "--engine", "vllm", "--force")
    assert forced.returncode == 0
    assert '"tensor_parallel_size": 4' in forced.stdout
    assert "warning" in forced.stderr and message in forced.stderr


def test_set_engine_flag_refused_with_the_same_words():
    proc = run(
        "render",
        "minimax-m3-eagle3",
        "--engine",
        "tokenspeed",
        "--set",
        'hf-overrides={"max_model_len": 8}',
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith('recipecli: error: --set hf-overrides={"max_model_len": 8}: ')
    assert "max_model_len is an engine flag" in proc.stderr


def test_wrapper_key_on_tokenspeed_is_dropped_error_vllm_keeps_it_flat(tmp_path):
    # vision_config is a key of the Qwen3-VL wrapper, not of its text config: vLLM merges it
    # into the vision sub-config (flat, at the top); tokenspeed cannot reach it
    sets = ['hf-overrides={"vision_config": {"depth": 2}}']
    path = recipe(tmp_path, "wrapped-qwen3vl", "vllm")
    value = hf_value(render_command(path, "vllm", sets=sets).argv)
    assert value == {"vision_config": {"depth": 2}}
    top, _ = vllm_resolve(TARGETS["wrapped-qwen3vl"][2], value)
    assert top["vision_config"]["depth"] == 2
    from recipecli.errors import RecipeError

    with pytest.raises(RecipeError, match="vision_config belongs to the qwen3_vl_moe wrapper"):
        render_command(path, "tokenspeed", sets=sets)


def test_architectures_stays_on_the_wrapper_for_vllm(tmp_path):
    # vLLM reads architectures from the top-level config (v0.33.0
    # model_arch_config_convertor.py get_architectures), although MiniMax's text_config has one
    path = recipe(tmp_path, "wrapped-minimax", "vllm")
    r = render_command(path, "vllm", sets=['hf-overrides={"architectures": ["X"]}'])
    assert hf_value(r.argv) == {"architectures": ["X"]}


def test_flat_and_nested_conflict_is_an_error(tmp_path):
    path = recipe(
        tmp_path,
        "wrapped-minimax",
        "vllm",
        engines={"vllm": {"args": {"hf-overrides": {"text_config": {KEY: 1e-06}, KEY: 2e-06}}}},
    )
    codes = [(f.code, f.severity) for f in lint_recipe(path)]
    assert ("recipe.override_conflict", "error") in codes


def test_unknown_key_error_on_transformers_class_warning_on_remote_code(tmp_path):
    from recipecli.errors import RecipeError

    llama = recipe(tmp_path, "flat-llama", "vllm")
    with pytest.raises(RecipeError, match="rope_foo is not a field of the target's text config"):
        render_command(llama, "vllm", sets=["text_overrides.rope_foo=1"])
    r = render_command(llama, "vllm", sets=["text_overrides.rope_foo=1"], force=True)
    assert hf_value(r.argv) == {"rope_foo": 1}
    minimax = recipe(tmp_path, "wrapped-minimax", "vllm")
    r = render_command(minimax, "vllm", sets=["text_overrides.rope_foo=1"])
    assert [w.code for w in r.warnings] == ["recipe.override_absent"]


def test_text_overrides_set_value_is_json_else_text():
    # the value lands in --hf-overrides (JSON) and config.json is JSON: JSON values are typed,
    # anything else is text verbatim (no YAML 1.1 look-alikes: no, 0x10, 2026-01-01)
    r = render_command(
        "minimax-m3-eagle3",
        "vllm",
        sets=[
            "text_overrides.use_index_cache=false",
            "text_overrides.index_topk_freq=0x10",
            "text_overrides.rope_theta=1e-06",
            "text_overrides.layer_types=no",
            'text_overrides.sparse_attention_config={"a": [1, 2]}',
        ],
    )
    assert hf_value(r.argv) == {
        "text_config": {
            "use_index_cache": False,
            "index_topk_freq": "0x10",
            "rope_theta": 1e-06,
            "layer_types": "no",
            "sparse_attention_config": {"a": [1, 2]},
        }
    }


def test_tokenspeed_text_config_key_on_a_plain_config_is_an_error(tmp_path):
    # tokenspeed f4d8ec6e: the same hf_overrides reach the draft (event_loop.py
    # _load_model_config); text_config.update({"text_config": {...}}) on the draft's plain
    # LlamaConfig leaves a dict attribute that get_hf_text_config rejects ("text_config must
    # define num_attention_heads") at start-up
    from recipecli.errors import RecipeError

    path = recipe(tmp_path, "flat-llama", "tokenspeed")
    sets = ['hf-overrides={"text_config": {"rope_theta": 1.0}}']
    with pytest.raises(RecipeError, match="fails at startup"):
        render_command(path, "tokenspeed", sets=sets)
    # on a wrapper the nested form is read as the text keys it names, rendered flat
    wrapped = recipe(tmp_path, "wrapped-minimax", "tokenspeed")
    r = render_command(wrapped, "tokenspeed", sets=sets)
    assert hf_value(r.argv) == {"rope_theta": 1.0}
