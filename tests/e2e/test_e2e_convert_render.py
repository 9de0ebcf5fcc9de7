"""End to end: a recipe whose draft tokenspeed and SGLang cannot load -> ``recipecli convert ...
--to eagle3`` (check's own fix) -> ``render --engine tokenspeed|sglang --set draft=OUT`` renders
without ``--force`` (issue #28, item 7); and ``render`` refuses a TP size the engine refuses
(item 6), as ``check`` does.

Why each verdict (the engines' code at their pins, as docs/engines/ cites it):

* the draft is format A (``architectures: ["LlamaForCausalLM"]`` + ``draft_vocab_size``, the
  original EAGLE3 release layout): tokenspeed looks it up as ``LlamaForCausalLMNextN``
  (tokenspeed get_config: arch + "NextN"), which it does not register; SGLang 0.5.23 keeps
  ``LlamaForCausalLM`` (configs/model_config.py _config_draft_model), its target class. Both
  are what the recipe's ``unsupported`` section says.
* ``convert --to eagle3`` writes ``architectures: ["LlamaForCausalLMEagle3"]``, the EAGLE3
  draft class both register: the converted draft loads on both.
* geometry (tests/helpers/convert.py TINY): 4 attention heads and 2 KV heads, target and draft.
  TP 2 splits both; TP 3 splits neither (4 % 3 = 1, 2 % 3 = 2 and 3 % 2 = 1): every engine's
  attention asserts heads % TP == 0 (vLLM LlamaAttention.__init__).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.convert import TARGET_CONFIG, tiny, write_draft, write_target

from recipecli.testing.specs import valid_vocab_map

UNSUPPORTED = (
    "the draft says LlamaForCausalLM; convert it first (recipecli convert ... --to eagle3)"
)


def _recipecli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "recipecli", *args], cwd=cwd, env=env, capture_output=True, text=True
    )


@pytest.fixture(scope="module")
def work(tmp_path_factory, fixture_config_module) -> Path:
    root = tmp_path_factory.mktemp("convert-render")
    write_target(root / "target", {**TARGET_CONFIG, "num_hidden_layers": 8})
    cfg = tiny(fixture_config_module("SafeAILab__EAGLE3-traineagle3-config"))
    d2t, t2d = valid_vocab_map(1000, 100, seed=3)
    write_draft(root / "draft", cfg, d2t=d2t, t2d=t2d)
    recipe = {
        "name": "tiny",
        "target": "target/config.json",
        "draft": "draft",
        "unsupported": {"tokenspeed": UNSUPPORTED, "sglang": UNSUPPORTED},
        "speculative": {"method": "eagle3", "num_speculative_tokens": 3},
        "serve": {"tensor_parallel_size": 1, "max_model_len": 2048},
    }
    (root / "recipe.yaml").write_text(yaml.safe_dump(recipe, sort_keys=False))
    proc = _recipecli(root, "convert", "draft", "out", "--to", "eagle3", "--target", "target")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((root / "out" / "config.json").read_text())["architectures"] == [
        "LlamaForCausalLMEagle3"
    ]
    return root


@pytest.fixture(scope="module")
def fixture_config_module():
    from helpers.fixtures import load_fixture_config

    return load_fixture_config


@pytest.mark.parametrize("engine", ["tokenspeed", "sglang"])
def test_the_recipes_draft_is_refused(work, engine):
    proc = _recipecli(work, "render", "recipe.yaml", "--engine", engine)
    assert proc.returncode == 2
    assert f"tiny is not served on {engine}" in proc.stderr


@pytest.mark.parametrize("engine", ["tokenspeed", "sglang"])
def test_the_converted_draft_renders_without_force(work, engine):
    proc = _recipecli(work, "render", "recipe.yaml", "--engine", engine, "--set", "draft=out")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # check finds nothing wrong with the converted pair
    assert "out" in proc.stdout.split()  # the draft path flag's value
    assert "draft" not in proc.stdout.split()  # not the recipe's own draft


@pytest.mark.parametrize("engine", ["tokenspeed", "sglang"])
def test_another_unconverted_draft_gets_checks_verdict(work, engine):
    """A draft other than the recipe's is judged by check, not by the recipe's reason: the same
    format A draft under another name renders, with check's draft.arch_name error as a warning."""
    proc = _recipecli(work, "render", "recipe.yaml", "--engine", engine, "--set", "draft=./draft")
    assert proc.returncode == 0
    assert f"check ({engine}, TP 1): " in proc.stderr
    assert "LlamaForCausalLMEagle3" in proc.stderr  # the fix check gives


def test_a_tp_the_heads_do_not_split_is_refused(work):
    ok = _recipecli(work, "render", "recipe.yaml", "--engine", "vllm", "--set", "draft=out")
    assert ok.returncode == 0, ok.stderr
    two = ("--set", "draft=out", "--set", "tensor_parallel_size=2")
    assert _recipecli(work, "render", "recipe.yaml", "--engine", "vllm", *two).returncode == 0
    three = ("--set", "draft=out", "--set", "tensor_parallel_size=3")
    proc = _recipecli(work, "render", "recipe.yaml", "--engine", "vllm", *three)
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.startswith("recipecli: error: --set tensor_parallel_size=3: vllm refuses TP 3: ")
    assert "attention heads 4 / KV heads 2 do not split over TP 3" in line
    forced = _recipecli(work, "render", "recipe.yaml", "--engine", "vllm", *three, "--force")
    assert forced.returncode == 0
    assert "do not split over TP 3" in forced.stderr


def test_a_recipe_tp_the_engine_refuses_is_refused(work):
    text = (
        (work / "recipe.yaml")
        .read_text()
        .replace("tensor_parallel_size: 1", "tensor_parallel_size: 3")
    )
    (work / "tp3.yaml").write_text(text)
    proc = _recipecli(work, "render", "tp3.yaml", "--engine", "vllm", "--set", "draft=out")
    assert proc.returncode == 2
    assert "tp3.yaml:" in proc.stderr and "vllm refuses TP 3" in proc.stderr
