"""The engine registry: an engine is one folder plus one registry entry.

``tests/fixtures/engines/toyengine/`` is a throw-away engine laid out as a built-in engine folder
(``pin.py``, ``spec.py``, ``model.py``, ``data/``). It is registered in a fresh interpreter (the
modules that read ``ENGINES`` at import see it, as they would a plug-in registered first) and
``render``, ``lint`` and ``check`` run with it. Expected values are worked out from the toy's own
spec and from the bundled pair's configs by hand, not from recipecli's output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import fields, replace
from pathlib import Path
from typing import get_args

import pytest

from recipecli.engines import EngineName, engine_names, engine_spec, register, registered
from recipecli.engines.spec import EngineSpec
from recipecli.errors import RecipeError

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "engines"
RECIPE = REPO / "recipecli" / "data" / "recipes" / "llama3.1-8b-eagle3.yaml"

RUNNER = """
import sys
from recipecli.engines import register
from toyengine.spec import SPEC
register(SPEC)
from recipecli.cli import main
main(sys.argv[1:])
"""


def run_with_toy(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(FIXTURE), "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-c", RUNNER, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )


def test_the_registry_line_is_the_builtin_engines():
    # EngineName (recipecli/engines/__init__.py) is the one list; each name is a folder
    assert get_args(EngineName) == ("vllm", "tokenspeed", "sglang")
    assert engine_names()[:3] == get_args(EngineName)
    for name in get_args(EngineName):
        spec = engine_spec(name)
        assert (spec.name, spec.pin.engine, spec.home) == (name, name, f"recipecli.engines.{name}")
        assert (REPO / "recipecli" / "engines" / name / "data" / spec.pin.data_file).is_file()
        assert (REPO / "recipecli" / "engines" / name / "data" / spec.pin.catalog_file).is_file()


def test_a_missing_trait_is_a_construction_error():
    # every field is required: an entry without, say, its serve command cannot be built
    vllm = engine_spec("vllm")
    kwargs = {f.name: getattr(vllm, f.name) for f in fields(EngineSpec)}
    del kwargs["serve_command"]
    with pytest.raises(TypeError, match="serve_command"):
        EngineSpec(**kwargs)
    with pytest.raises(ValueError, match="its pin names 'vllm'"):
        replace(vllm, name="other")


def test_register_refuses_a_second_engine_of_one_name():
    with pytest.raises(ValueError, match="registered already"):
        register(engine_spec("sglang"))
    other = replace(
        engine_spec("vllm"), name="other", pin=replace(engine_spec("vllm").pin, engine="other")
    )
    with registered(other):
        assert engine_names()[-1] == "other"
    assert "other" not in engine_names()


def test_a_throw_away_engine_renders():
    # the toy spec: serve_command ("toy", "serve"), the target behind --model, serve fields
    # tensor_parallel_size -> --tp and max_model_len -> --context (the recipe: 8192), the draft
    # and num_speculative_tokens (3) as --draft / --draft-steps
    got = run_with_toy("render", str(RECIPE), "--engine", "toy", "--format", "argv-json")
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["argv"] == [
        "toy",
        "serve",
        "--model",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--tp",
        "1",
        "--context",
        "8192",
        "--draft",
        "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
        "--draft-steps",
        "3",
    ]
    # fields the toy has no flag for are said, not rendered (max_num_seqs, ...)
    assert "serve.max_num_seqs has no toy flag and is not rendered" in got.stderr
    # --set reaches the toy's flag; a flag outside its catalog is refused with one line
    got = run_with_toy("render", str(RECIPE), "--engine", "toy", "--set", "tensor_parallel_size=2")
    assert got.returncode == 0 and "--tp 2" in got.stdout
    got = run_with_toy("render", str(RECIPE), "--engine", "toy", "--set", "enable-foo=1")
    assert got.returncode == 2 and "Traceback" not in got.stderr


def test_a_throw_away_engine_checks():
    # Llama-3.1-8B (the bundled snapshot): 32 attention heads, 8 KV heads; the EAGLE3 draft the
    # same. 32 and 8 split over TP 1, 2, 4, 8 but not 3: the toy's one step says so for both
    got = run_with_toy(
        "check", "--example", "llama3.1-8b-eagle3", "--engine", "toy", "--tp", "1,3,8",
        "--kernel", "skip", "--json",
    )  # fmt: skip
    assert got.returncode == 1, got.stderr
    doc = json.loads(got.stdout)
    assert doc["engines"] == {"toy": {"ready": True, "ready_tp": [1, 8]}}
    assert doc["engine_versions"] == {"toy": {"repo": "example/toy", "version": "v0.1.0"}}
    heads = [f for f in doc["findings"] if f["code"] == "tp.heads_indivisible"]
    assert sorted((f["engine"], f["tp"], f["evidence"]["what"]) for f in heads) == [
        ("toy", 3, "draft"),
        ("toy", 3, "target"),
    ]
    # --engine all includes the registered engine after the built-in ones
    got = run_with_toy("check", "--example", "llama3.1-8b-eagle3", "--kernel", "skip", "--json")
    assert list(json.loads(got.stdout)["engines"]) == ["vllm", "tokenspeed", "sglang", "toy"]


def test_every_engine_renders_every_method_a_recipe_may_name():
    # SpecMethod is the one list of recipe methods (the schema's enum reads it); each engine's
    # builder knows each of them (tokenspeed and SGLang spell eagle3 EAGLE3 in their
    # --speculative-algorithm choices; vLLM takes the method verbatim)
    from recipecli.engines.spec import SpecMethod
    from recipecli.recipes.schema import SCHEMA

    methods = get_args(SpecMethod)
    assert SCHEMA["properties"]["speculative"]["properties"]["method"]["enum"] == list(methods)
    # issue #27: a method the engine lacks is refused with its reason (tokenspeed's
    # --speculative-algorithm choices are EAGLE3, MTP, DFLASH, DSPARK: no EAGLE-1)
    lacks = {("tokenspeed", "eagle")}
    for name in get_args(EngineName):
        for method in methods:
            if (name, method) in lacks:
                with pytest.raises(RecipeError, match="EAGLE3, MTP, DFLASH or DSPARK"):
                    engine_spec(name).speculative_flags(method, "d", 3, {})
                continue
            flags = dict(engine_spec(name).speculative_flags(method, "d", 3, {}))
            assert flags, (name, method)
