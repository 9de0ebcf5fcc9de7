"""Recipe loader and schema: safe YAML, size limit, aliases refused, errors with file and line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from recipecli.errors import RecipeError
from recipecli.recipes.loader import MAX_RECIPE_BYTES, bundled_names, load_recipe
from recipecli.recipes.schema import SCHEMA, validate

REPO = Path(__file__).resolve().parents[2]
GOOD = (
    "name: t\ntarget: a/b\ndraft: c/d\nspeculative:\n  method: eagle3\n"
    "  num_speculative_tokens: 3\n"
)


def render_exit(path: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "recipecli", "render", path, "--engine", "vllm"],
        capture_output=True,
        text=True,
    )


def test_docs_schema_is_the_code_schema():
    assert json.loads((REPO / "docs" / "recipe.schema.json").read_text()) == SCHEMA


def test_bundled_recipes_validate_and_have_docs_fields():
    names = bundled_names()
    assert {
        "minimax-m3-eagle3",
        "llama3.1-8b-eagle3",
        "qwen3-30b-a3b-eagle3",
        "gpt-oss-120b-eagle3",
    } <= set(names)
    for name in names:
        r = load_recipe(name)
        assert r.bundled and r.name == name
        assert r.get("family") and r.get("notes") and r.get("title")
        assert validate(r.data) == []


def test_bundled_snapshots_cover_targets():
    from recipecli.recipes.targets import bundled_snapshot_path

    for name in bundled_names():
        r = load_recipe(name)
        targets = {r.get("target")} | {
            hw.get("target") for hw in (r.get("hardware") or {}).values() if hw.get("target")
        }
        for t in targets:
            snap = bundled_snapshot_path(t)
            assert snap is not None, t
            data = json.loads(snap.read_text())
            assert data["recipecli_snapshot"] == 1 and data["source"] == t
    amd = json.loads(bundled_snapshot_path("amd/MiniMax-M3-MXFP4").read_text())
    assert "nvidia/MiniMax-M3-NVFP4" in amd["note"] and "DERIVED" in amd["note"]
    assert amd["config"]["text_config"]["hidden_size"] == 6144


def test_snapshot_readable_by_checkpoint_sources():
    from recipecli.checkpoint import open_checkpoint
    from recipecli.recipes.targets import bundled_snapshot_path

    ck = open_checkpoint(str(bundled_snapshot_path("nvidia/MiniMax-M3-NVFP4")))
    assert ck.config["text_config"]["vocab_size"] == 200064


def test_line_numbers_recorded(tmp_path):
    p = tmp_path / "r.yaml"
    p.write_text(GOOD + "serve:\n  max_model_len: 4096\n")
    r = load_recipe(str(p))
    assert r.lines["speculative.num_speculative_tokens"] == 6
    assert r.where("serve", "max_model_len") == f"{p}:8"


@pytest.mark.parametrize(
    "text, needle, line",
    [
        ("a: &x [1]\nb: *x\n", "aliases", 2),
        (GOOD + "name: again\n", "duplicate key", 7),
        ("name: [unclosed\n", "invalid YAML", 2),
        (GOOD.replace("eagle3\n", "medusa\n", 1), "not one of", 5),  # no engine's method (#27)
        (GOOD + "servee: {}\n", "unknown field", 7),
        ("- a\n- b\n", "mapping", 1),
    ],
)
def test_bad_recipes_name_file_and_line(tmp_path, text, needle, line):
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    with pytest.raises(RecipeError) as exc:
        load_recipe(str(p))
    assert needle in exc.value.message
    assert exc.value.path == f"{p}:{line}"
    proc = render_exit(str(p))
    assert proc.returncode == 2
    assert f"bad.yaml:{line}" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_size_limit(tmp_path):
    p = tmp_path / "big.yaml"
    p.write_text(GOOD + "#" * MAX_RECIPE_BYTES)
    with pytest.raises(RecipeError, match="allowed"):
        load_recipe(str(p))
    assert render_exit(str(p)).returncode == 2


def test_python_tags_refused(tmp_path):
    p = tmp_path / "tag.yaml"
    p.write_text(GOOD + "description: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(RecipeError) as exc:
        load_recipe(str(p))
    assert exc.value.path == f"{p}:7"


def test_empty_and_non_utf8(tmp_path):
    p = tmp_path / "e.yaml"
    p.write_text("")
    assert render_exit(str(p)).returncode == 2
    p.write_bytes(b"name: \xff\n")
    with pytest.raises(RecipeError, match="UTF-8"):
        load_recipe(str(p))


def test_nul_byte_in_a_recipe_value_is_refused(tmp_path):
    # a YAML "\0" escape gives a NUL byte no argv element can carry (execve stops at NUL)
    from recipecli.errors import RecipeError
    from recipecli.recipes.loader import load_recipe

    p = tmp_path / "nul.yaml"
    p.write_text(
        'name: x\ntarget: a\ndraft: "b\\0c"\nspeculative: {method: eagle3, num_speculative_tokens: 3}\n'
    )
    with pytest.raises(RecipeError, match=r"nul.yaml:3: draft holds a NUL byte"):
        load_recipe(str(p))


def test_every_registered_engine_has_its_catalog_and_schema_sections():
    # one list of engines (recipecli.engines.ENGINES); a registry entry has every trait by
    # construction (EngineSpec's fields are required); its flag catalog ships with it, and the
    # recipe schema's per-engine sections are the registry's engines
    import recipecli.recipes.engines as E
    from recipecli.engines import ENGINES, TITLES
    from recipecli.engines.catalog import load_catalog

    assert E.ENGINES == ENGINES
    assert ENGINES == ("vllm", "tokenspeed", "sglang")  # display order of the docs and --help
    assert list(TITLES) == list(ENGINES)
    for engine in ENGINES:
        assert load_catalog(engine).engine == engine
    assert set(SCHEMA["properties"]["engines"]["properties"]) == set(ENGINES)
    assert set(SCHEMA["properties"]["unsupported"]["properties"]) == set(ENGINES)


def test_engine_titles_are_the_models_titles():
    # TITLES is readable without loading the models; each model says its own title
    from recipecli.engines import ENGINES, TITLES, engine_model

    assert {e: engine_model(e).title for e in ENGINES} == TITLES
