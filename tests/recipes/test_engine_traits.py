"""The per-engine traits of the registry entries (recipecli/engines/<engine>/spec.py) that the
recipe steps read instead of comparing engine names: how config overrides are placed, which
engine's speculative settings are one JSON mapping, which engine's serve command reads a
``--config`` YAML file.

Expected values come from the engines' code (cited per test), not from the tables under test.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

import recipecli.recipes.engines as E
from recipecli.engines import ENGINES, engine_spec, registered, spec
from recipecli.errors import RecipeError, UsageError
from recipecli.recipes import overrides
from recipecli.recipes.lint import lint_recipe
from recipecli.recipes.render import check_config_file_format, render_command


def write_recipe(tmp_path: Path, name: str = "t", **extra) -> str:
    data = {
        "name": name,
        "target": "meta-llama/Llama-3.1-8B-Instruct",
        "draft": "org/draft",
        "speculative": {"method": "eagle3", "num_speculative_tokens": 3},
        **extra,
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def test_every_placement_an_engine_uses_has_its_placer():
    # every placement an engine uses has its placer, and an engine whose overrides reach the
    # draft has the message saying why a wrapper key breaks it
    for engine in ENGINES:
        p = engine_spec(engine).overrides
        assert p.text_keys in overrides._PLACE
        if p.reaches_draft:
            assert p.text_keys in overrides._WRAPPER_KEY_ON_DRAFT
        else:
            assert p.draft_shared_keys == frozenset()
    assert set(E.SERVE_CONFIG_FILE_FORMAT) <= set(ENGINES)


def test_override_placement_follows_each_engines_code():
    vllm, ts, sgl = (engine_spec(e).overrides for e in ("vllm", "tokenspeed", "sglang"))
    # vLLM v0.33.0 vllm/engine/arg_utils.py --hf-overrides; vllm/config/model.py
    # ModelConfig._apply_dict_overrides merges a dict into an existing sub-config (nested), and
    # the draft gets its own ModelConfig (vllm/config/speculative.py), without the overrides
    assert (vllm.flag, vllm.text_keys, vllm.reaches_draft) == (
        "--hf-overrides",
        spec.TEXT_KEYS_NESTED,
        False,
    )
    # tokenspeed f4d8ec6e hf_transformers_utils.py get_config: text_config.update(overrides);
    # runtime/engine/event_loop.py _load_model_config passes them to the draft too
    assert (ts.flag, ts.text_keys, ts.reaches_draft) == (
        "--hf-overrides",
        spec.TEXT_KEYS_ON_TEXT_CONFIG,
        True,
    )
    # SGLang 0.5.23 fields/model.py json_model_override_args; utils/hf_transformers/config.py
    # get_config merges one level deep; ModelConfig.from_server_args uses it for the draft too
    assert (sgl.flag, sgl.text_keys, sgl.reaches_draft) == (
        "--json-model-override-args",
        spec.TEXT_KEYS_ONE_LEVEL,
        True,
    )
    # the draft's layer count and width come from these keys in both engines' EAGLE3 drafts
    # (tokenspeed's LlamaConfig of the draft; SGLang models/llama_eagle3.py LlamaModel.__init__)
    for p in (ts, sgl):
        assert {"num_hidden_layers", "hidden_size", "vocab_size"} <= p.draft_shared_keys


def test_placement_does_not_depend_on_the_engine_name():
    # an engine under another name with vLLM's traits places overrides exactly as vLLM does:
    # the placement reads the traits, never the name (the title only shows in messages)
    cfg = {
        "model_type": "wrap",
        "architectures": ["W"],
        "text_config": {"model_type": "t", "rope_theta": 1.0, "hidden_size": 8},
    }
    src = [overrides.OverrideSource("text_overrides", "f:1", {"rope_theta": 2.0}, True)]
    like_vllm = replace(
        engine_spec("vllm"), name="other", pin=replace(engine_spec("vllm").pin, engine="other")
    )
    with registered(like_vllm):
        assert overrides.place_overrides("other", src, cfg).value == {
            "text_config": {"rope_theta": 2.0}
        }
    assert overrides.place_overrides("vllm", src, cfg).value == {"text_config": {"rope_theta": 2.0}}
    # tokenspeed's traits: the same key flat, on the text config
    like_ts = replace(like_vllm, overrides=engine_spec("tokenspeed").overrides)
    with registered(like_ts):
        assert overrides.place_overrides("other", src, cfg).value == {"rope_theta": 2.0}


def test_vllm_speculative_config_refuses_tensor_parallel_size(tmp_path):
    # vLLM v0.33.0 vllm/config/speculative.py SpeculativeConfig._verify_args rejects a
    # tensor_parallel_size in --speculative-config (draft_tensor_parallel_size is the draft's)
    spec = (
        '{"method": "eagle3", "model": "d", "num_speculative_tokens": 3, "tensor_parallel_size": 2}'
    )
    with pytest.raises(RecipeError) as err:
        render_command(write_recipe(tmp_path), "vllm", sets=[f"speculative-config={spec}"])
    assert "--speculative-config must not contain tensor_parallel_size (vLLM rejects it; " in str(
        err.value
    )
    assert "use draft_tensor_parallel_size)" in str(err.value)


def test_vllm_speculative_config_must_name_method(tmp_path):
    # SpeculativeConfig.__post_init__ guesses the method from the draft path when it is missing:
    # a recipe names it. (A mapping engine arg is merged into the rendered one, which names the
    # method; JSON text replaces it.)
    spec = '{"model": "d", "num_speculative_tokens": 3}'
    path = write_recipe(tmp_path, engines={"vllm": {"args": {"speculative-config": spec}}})
    with pytest.raises(RecipeError, match="--speculative-config must name method"):
        render_command(path, "vllm")
    # tokenspeed's speculative settings are separate flags (server_args.py
    # --speculative-algorithm ...): no mapping to check
    assert engine_spec("tokenspeed").speculative_config is None
    r = render_command(path, "tokenspeed")
    assert "--speculative-algorithm" in r.argv


def test_config_file_format_is_vllm_serve_only():
    # vLLM v0.33.0 vllm/utils/argparse_utils.py FlexibleArgumentParser.load_config_file reads
    # `vllm serve --config FILE`; tokenspeed's and SGLang's launchers have no such file format
    check_config_file_format("vllm-config", "vllm", "serve")
    msg = "--format vllm-config needs --engine vllm and --what serve"
    for engine, what in (("tokenspeed", "serve"), ("sglang", "serve"), ("vllm", "bench")):
        with pytest.raises(UsageError) as err:
            check_config_file_format("vllm-config", engine, what)
        assert str(err.value) == msg


def test_sglang_rules_skip_a_recipe_that_does_not_serve_sglang(tmp_path):
    # two names of one SGLang argument (--tp-size and its alias --tensor-parallel-size, SGLang
    # 0.5.23 arg_groups/fields/parallel.py) warn on a recipe that serves SGLang only
    args = {"tp-size": 2, "tensor-parallel-size": 2}
    served = write_recipe(tmp_path, "served", engines={"sglang": {"args": args}})
    unserved = write_recipe(
        tmp_path, "unserved", engines={"sglang": {"args": args}}, unsupported={"sglang": "no"}
    )
    assert "recipe.sglang_alias_conflict" in [f.code for f in lint_recipe(served)]
    assert "recipe.sglang_alias_conflict" not in [f.code for f in lint_recipe(unserved)]


def test_tokenspeed_rules_run_on_a_recipe_that_does_not_serve_tokenspeed(tmp_path):
    # tokenspeed f4d8ec6e server_args.py: --speculative-eagle-topk has choices=[1]; its rules
    # read only tokenspeed's own args, so they speak even when the recipe marks it unsupported
    path = write_recipe(
        tmp_path,
        engines={"tokenspeed": {"args": {"speculative-eagle-topk": 2}}},
        unsupported={"tokenspeed": "no"},
    )
    assert "recipe.tokenspeed_topk" in [f.code for f in lint_recipe(path)]
