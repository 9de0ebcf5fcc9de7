"""lint runs its later layers on the valid part of a recipe the schema refuses (issue #28
leftover): a wrong-typed ``serve.port`` no longer hides a misspelled engine flag.

Expected codes by hand: ``serve.port`` must be an integer (recipecli/recipes/schema.py), and
``--max-modle-len`` is not in vLLM's flag catalog (``--max-model-len`` is: vllm/engine/
arg_utils.py EngineArgs.add_cli_args)."""

from __future__ import annotations

import yaml

from recipecli.recipes.lint import lint_recipe

BASE = {
    "name": "bad",
    "target": "meta-llama/Llama-3.1-8B-Instruct",
    "draft": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
    "speculative": {"method": "eagle3", "num_speculative_tokens": 3},
}


def _lint(tmp_path, **extra):
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump({**BASE, **extra}, sort_keys=False))
    return [(f.code, f.source.split(";")[0].rsplit(":", 1)[-1]) for f in lint_recipe(str(path))]


def test_schema_error_and_unknown_flag_both_reported(tmp_path):
    got = _lint(
        tmp_path,
        serve={"port": "not-a-port"},
        engines={"vllm": {"args": {"max-modle-len": 8192}}},
    )
    # lines: name 1, target 2, draft 3, speculative 4-6, serve 7, port 8, engines 9, vllm 10,
    # args 11, max-modle-len 12 (yaml.safe_dump's block layout)
    assert got[0] == ("recipe.schema", "8")
    assert ("recipe.flag_unknown", "12") in got


def test_a_refused_section_is_left_out_not_linted_twice(tmp_path):
    # engines.vllm.args of the wrong type: the schema error only, the flag layer skips it
    got = _lint(tmp_path, engines={"vllm": {"args": ["max-model-len"]}})
    assert [code for code, _ in got] == ["recipe.schema"]


def test_a_valid_recipe_lints_as_before(tmp_path):
    got = _lint(tmp_path, engines={"vllm": {"args": {"max-modle-len": 8192}}})
    assert [code for code, _ in got] == ["recipe.flag_unknown"]
