"""``recipecli.recipecheck.check_recipe`` (the library behind ``check --recipe``).

Expected values from the bundled recipe by hand (recipecli/data/recipes/llama3.1-8b-eagle3.yaml):
it marks tokenspeed and sglang unsupported, serves with ``tensor_parallel_size: 1`` and
``max_model_len: 8192``, so ``--engine all`` checks vLLM alone, at TP 1 and max_model_len 8192,
on the bundled snapshots of meta-llama/Llama-3.1-8B-Instruct and yuhuili/EAGLE3-LLaMA3.1-Instruct-8B
(no network), and the vLLM verdict is the example's READY (README's quick start).
"""

from __future__ import annotations

import json

import pytest

from recipecli.errors import UsageError
from recipecli.output import json_text
from recipecli.recipecheck import check_recipe


def test_llama_recipe_checks_vllm_alone_and_says_why_not_the_others():
    result = check_recipe("llama3.1-8b-eagle3", kernel="skip")
    assert list(result.not_checked) == ["tokenspeed", "sglang"]
    ((group, res),) = result.runs
    assert [d.engine for d in group] == ["vllm"]
    d = group[0]
    assert (d.target, d.draft) == (
        "meta-llama/Llama-3.1-8B-Instruct",
        "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
    )
    assert (d.tp, d.draft_tp, d.max_model_len) == (1, None, 8192)
    assert result.ok() and res.ok()
    doc = json.loads(json_text(result.to_dict()))
    assert doc["recipe"]["not_checked"] == ["sglang", "tokenspeed"]  # sorted in JSON
    assert doc["checks"][0]["settings"] == {"tp": 1, "draft_tp": None, "max_model_len": 8192}
    text = result.format_text()
    assert text.startswith("recipe llama3.1-8b-eagle3, hardware h200: vllm at TP 1")
    assert "tokenspeed: not checked: the recipe marks it unsupported" in text


def test_an_engine_named_is_checked_even_when_marked_unsupported():
    result = check_recipe("llama3.1-8b-eagle3", engine="tokenspeed", kernel="skip")
    assert result.not_checked == {}
    ((group, res),) = result.runs
    assert [d.engine for d in group] == ["tokenspeed"]
    assert not res.ok()  # tokenspeed cannot load the published draft (its reason above)


def test_an_engine_recipes_do_not_render_for_is_refused():
    with pytest.raises(UsageError, match="recipes render for"):
        check_recipe("llama3.1-8b-eagle3", engine="trtllm", kernel="skip")
