"""lint never says ok about overrides it could not check (issue #28, item 4).

lint reads no network: an override key is checked against the target's bundled snapshot
(recipecli/data/targets/) or a local ``target_config``. Without either, the keys are not
checked, and ``render`` (which reads the config from the HF cache or the Hub) would be the first
to refuse a misspelled key: lint then warns ``recipe.override_unchecked`` and names what to add.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml
from helpers.fixtures import load_fixture_config

from recipecli.recipes.lint import lint_recipe

UNBUNDLED = "someone/llama-finetune"  # no snapshot of it ships (recipecli/data/targets/)
BASE = {
    "name": "t",
    "target": UNBUNDLED,
    "draft": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
    "speculative": {"method": "eagle3", "num_speculative_tokens": 3},
    "serve": {"tensor_parallel_size": 1},
}
TYPO = {"rope_thetaa": 500000.0}  # LlamaConfig has rope_theta, not rope_thetaa


def line_of(path: str, key: str) -> int:
    """The line of the first ``key:`` in the recipe file (the YAML safe_dump wrote)."""
    lines = Path(path).read_text().splitlines()
    return next(i for i, t in enumerate(lines, 1) if t.strip().startswith(f"{key}:"))


def write(tmp_path: Path, **extra) -> str:
    p = tmp_path / "r.yaml"
    p.write_text(yaml.safe_dump({**BASE, **extra}, sort_keys=False))
    return str(p)


def unchecked(findings):
    return [f for f in findings if f.code == "recipe.override_unchecked"]


def test_unbundled_target_without_target_config_warns(tmp_path):
    findings = lint_recipe(write(tmp_path, text_overrides=TYPO))
    (w,) = unchecked(findings)
    assert w.severity == "warning" and w.engine == "any"
    assert "rope_thetaa" in w.message and repr(UNBUNDLED) in w.message
    assert "target_config: PATH" in w.message
    # the warning points at the override: the line of text_overrides
    path = str(tmp_path / "r.yaml")
    assert w.source.startswith(f"{path}:{line_of(path, 'text_overrides')};")
    assert [f for f in findings if f.severity == "error"] == []


def test_a_local_target_config_checks_the_keys(tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(load_fixture_config("meta-llama__Meta-Llama-3.1-8B")))
    findings = lint_recipe(write(tmp_path, text_overrides=TYPO, target_config="config.json"))
    assert unchecked(findings) == []
    assert [(f.code, f.severity) for f in findings if f.severity == "error"] == [
        ("recipe.override_unknown_key", "error")
    ]


def test_a_target_config_that_is_not_there_warns_at_its_line(tmp_path):
    path = write(tmp_path, text_overrides=TYPO, target_config="nope/config.json")
    (w,) = unchecked(lint_recipe(path))
    assert "'nope/config.json'" in w.message and "not a local file" in w.message
    assert w.source.startswith(f"{path}:{line_of(path, 'target_config')};")


def test_an_unreadable_target_config_says_why(tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    findings = lint_recipe(write(tmp_path, text_overrides=TYPO, target_config="config.json"))
    (w,) = unchecked(findings)
    assert "could not be read" in w.message


def test_a_profile_target_config_is_named_at_the_profile(tmp_path):
    hw = {"h200": {"vendor": "nvidia", "target_config": "missing.json"}}
    path = write(tmp_path, text_overrides=TYPO, hardware=hw)
    # rendered without --hardware the recipe has no target_config (the snapshot message, at the
    # override); on h200 the profile's target_config is missing (at the profile's line)
    plain, profile = unchecked(lint_recipe(path))
    assert plain.source.startswith(f"{path}:{line_of(path, 'text_overrides')};")
    assert "'missing.json'" in profile.message
    assert profile.source.startswith(f"{path}:{line_of(path, 'target_config')};")


def test_nothing_to_check_nothing_to_warn(tmp_path):
    assert unchecked(lint_recipe(write(tmp_path))) == []  # no overrides


def test_a_bundled_target_is_checked(tmp_path):
    path = write(tmp_path, text_overrides=TYPO, target="meta-llama/Llama-3.1-8B-Instruct")
    findings = lint_recipe(path)
    assert unchecked(findings) == []
    assert "recipe.override_unknown_key" in {f.code for f in findings}


def test_the_command_does_not_say_ok(tmp_path):
    path = write(tmp_path, text_overrides=TYPO)
    lint = [sys.executable, "-m", "recipecli", "lint", path]
    proc = subprocess.run(lint, capture_output=True, text=True)
    assert proc.returncode == 0
    assert "ok" not in proc.stdout.split()  # no "r.yaml: ok"
    assert ": warning: recipe.override_unchecked: " in proc.stdout
    strict = subprocess.run([*lint, "--strict"], capture_output=True, text=True)
    assert strict.returncode == 1
