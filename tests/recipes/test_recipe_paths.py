"""Every path in a recipe resolves relative to the recipe file, not the current directory
(issue #28 item 8): ``target``, ``draft`` and ``target_config`` (top level and in a hardware
profile); a path given on the command line (``--set draft=``, ``--target-config``) stays
relative to the current directory; a repo id stays a repo id.

The layout is built by hand under tmp_path: ``proj/recipe.yaml`` beside ``proj/draft/`` and
``proj/target.json``; commands run from ``tmp_path`` and from ``tmp_path/elsewhere``, so the
expected paths (``./proj/draft``, ``../proj/draft``) are worked out from that layout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from recipecli.recipes.loader import load_recipe, recipe_local_path

REPO = Path(__file__).resolve().parents[2]
TARGET_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "vocab_size": 128,
    "rope_theta": 10000.0,
}


def _project(tmp_path: Path, **extra) -> Path:
    proj = tmp_path / "proj"
    (proj / "draft").mkdir(parents=True)
    (proj / "draft" / "config.json").write_text("{}")
    (proj / "target.json").write_text(json.dumps(TARGET_CONFIG))
    (tmp_path / "elsewhere").mkdir()
    recipe = {
        "name": "paths",
        "target": "org/target-model",
        "draft": "./draft",
        "target_config": "target.json",
        "speculative": {"method": "eagle3", "num_speculative_tokens": 2},
        "serve": {"port": 9000},
        **extra,
    }
    path = proj / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe, sort_keys=False))
    return path


def _render(cwd: Path, recipe: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HOME=str(cwd / "hf"), NO_COLOR="1")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "recipecli",
            "render",
            recipe,
            "--engine",
            "vllm",
            "--format",
            "argv-json",
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


def _spec_model(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stderr
    argv = json.loads(proc.stdout)["argv"]
    return str(json.loads(argv[argv.index("--speculative-config") + 1])["model"])


@pytest.mark.parametrize(
    ("where", "recipe", "draft"),
    [
        (".", "proj/recipe.yaml", "./proj/draft"),
        ("elsewhere", "../proj/recipe.yaml", "../proj/draft"),
    ],
)
def test_draft_path_is_relative_to_the_recipe_file(tmp_path, where, recipe, draft):
    _project(tmp_path)
    cwd = (tmp_path / where).resolve()
    model = _spec_model(_render(cwd, recipe))
    assert model == draft
    assert (cwd / model / "config.json").is_file()  # the rendered command runs where it is


def test_a_recipe_in_the_current_directory_keeps_its_paths_as_written(tmp_path):
    _project(tmp_path)
    assert _spec_model(_render(tmp_path / "proj", "recipe.yaml")) == "./draft"


def test_set_draft_stays_relative_to_the_current_directory(tmp_path):
    _project(tmp_path)
    (tmp_path / "elsewhere" / "mine").mkdir()
    proc = _render(tmp_path / "elsewhere", "../proj/recipe.yaml", "--set", "draft=./mine")
    assert _spec_model(proc) == "./mine"


def test_target_config_is_read_beside_the_recipe_from_another_directory(tmp_path):
    # text_overrides need the target's config: only proj/target.json (beside the recipe) has it;
    # from tmp_path/elsewhere, a CWD-relative target.json does not exist
    _project(tmp_path, text_overrides={"rope_theta": 20000.0}, text_overrides_known_keys=[])
    proc = _render(tmp_path / "elsewhere", "../proj/recipe.yaml")
    assert proc.returncode == 0, proc.stderr
    argv = json.loads(proc.stdout)["argv"]
    # a flat Llama config: vLLM takes the text overrides flat in --hf-overrides
    assert json.loads(argv[argv.index("--hf-overrides") + 1]) == {"rope_theta": 20000.0}


def test_profile_paths_resolve_too(tmp_path, monkeypatch):
    path = _project(tmp_path, hardware={"h": {"vendor": "nvidia", "draft": "draft"}})
    monkeypatch.chdir(tmp_path / "elsewhere")
    recipe = load_recipe(os.path.relpath(path))
    assert recipe.get("draft") == "../proj/draft"
    assert recipe.get("hardware")["h"]["draft"] == "../proj/draft"  # exists beside the recipe
    assert recipe.get("target") == "org/target-model"  # a repo id: nothing of that name there
    assert recipe.get("target_config") == "../proj/target.json"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("org/name", "org/name"),  # no such path beside the recipe: a repo id
        ("/abs/path", "/abs/path"),
        ("~/models/x", "~/models/x"),
        ("./missing", "./r/missing"),  # an explicit relative path, even if it does not exist
        ("../up", "./up"),
    ],
)
def test_recipe_local_path_by_hand(tmp_path, monkeypatch, value, expected):
    (tmp_path / "r").mkdir()
    monkeypatch.chdir(tmp_path)
    assert recipe_local_path(value, Path("r")) == expected
