"""Every ``--hf-overrides`` recipecli renders changes the TEXT config exactly as asked, when
vLLM 0.33.0 resolves it on the target's real ``config.json``.

vLLM's steps, as ``ModelConfig.__post_init__`` (vllm/config/model.py) runs them: split the
overrides into flat values (``hf_overrides_kw``, applied by ``config.update`` inside
``vllm.transformers_utils.config.get_config``) and dict values (applied after loading by
``ModelConfig._apply_dict_overrides``: a nested config is updated key by key, anything else is
set on the top-level config), then ``get_hf_text_config``. A flat key on a ``text_config``
wrapper lands on the wrapper, where the text model never reads it.

Sources covered: recipe ``text_overrides``, ``--set hf-overrides=`` (flat and nested),
``--set text_overrides.KEY=``, an engine arg ``hf-overrides`` in a recipe; targets: the MiniMax-M3
wrappers (NVFP4 and MXFP4 snapshots), the Qwen3-VL wrapper, and flat Llama, Qwen3-MoE and
gpt-oss. "Asked" is written out by hand per case. A render recipecli refuses (exit 2, one line)
counts as caught before vLLM; known recipecli bugs run as ``xfail(strict=True)``
(``known_disagreements.json``, section ``hf_overrides``).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import REPORT

pytestmark = pytest.mark.conformance

REPO = Path(__file__).resolve().parents[2]
TARGETS = REPO / "recipecli" / "data" / "targets"
FIXTURES = REPO / "tests" / "fixtures" / "configs"
RECIPES = REPO / "recipecli" / "data" / "recipes"
KNOWN: dict[str, str] = json.loads(
    (Path(__file__).with_name("known_disagreements.json")).read_text()
)["hf_overrides"]

M3_ASKED = {"use_index_cache": True, "index_topk_freq": 4}
M3_ASKED_8 = {"use_index_cache": True, "index_topk_freq": 8}
QWEN_VL = "Qwen__Qwen3-VL-30B-A3B-Instruct"

#: (id, recipe, render args, what the recipe/user asked of the TEXT config, target config source)
CASES: list[tuple[str, str, list[str], dict[str, Any], str]] = [
    (
        "m3-b200-recipe",
        "minimax-m3-eagle3",
        ["--hardware", "b200"],
        M3_ASKED,
        "snap:nvidia__MiniMax-M3-NVFP4",
    ),
    (
        "m3-mi355x-recipe",
        "minimax-m3-eagle3",
        ["--hardware", "mi355x"],
        M3_ASKED,
        "snap:amd__MiniMax-M3-MXFP4",
    ),
    (
        "m3-set-flat",
        "minimax-m3-eagle3",
        ["--set", 'hf-overrides={"index_topk_freq": 8}'],
        M3_ASKED_8,
        "snap:nvidia__MiniMax-M3-NVFP4",
    ),
    (
        "m3-set-nested",
        "minimax-m3-eagle3",
        ["--set", 'hf-overrides={"text_config": {"index_topk_freq": 8}}'],
        M3_ASKED_8,
        "snap:nvidia__MiniMax-M3-NVFP4",
    ),
    (
        "m3-set-text_overrides",
        "minimax-m3-eagle3",
        ["--set", "text_overrides.index_topk_freq=8"],
        M3_ASKED_8,
        "snap:nvidia__MiniMax-M3-NVFP4",
    ),
    (
        "m3-engine-arg-flat",
        "engine-arg-flat",
        [],
        {"index_topk_freq": 4},
        "snap:nvidia__MiniMax-M3-NVFP4",
    ),
    (
        "qwen3-vl-set-flat",
        "qwen3-30b-a3b-eagle3",
        [
            "--set",
            "target=Qwen/Qwen3-VL-30B-A3B-Instruct",
            "--target-config",
            str(FIXTURES / QWEN_VL),
        ]
        + ["--set", 'hf-overrides={"max_position_embeddings": 131072}'],
        {"max_position_embeddings": 131072},
        f"fixture:{QWEN_VL}",
    ),
    (
        "qwen3-vl-set-text_overrides",
        "qwen3-30b-a3b-eagle3",
        [
            "--set",
            "target=Qwen/Qwen3-VL-30B-A3B-Instruct",
            "--target-config",
            str(FIXTURES / QWEN_VL),
        ]
        + ["--set", "text_overrides.max_position_embeddings=131072"],
        {"max_position_embeddings": 131072},
        f"fixture:{QWEN_VL}",
    ),
    (
        "llama-set-flat",
        "llama3.1-8b-eagle3",
        ["--set", 'hf-overrides={"max_position_embeddings": 65536}'],
        {"max_position_embeddings": 65536},
        "snap:meta-llama__Llama-3.1-8B-Instruct",
    ),
    (
        "llama-set-text_overrides",
        "llama3.1-8b-eagle3",
        ["--set", "text_overrides.max_position_embeddings=65536"],
        {"max_position_embeddings": 65536},
        "snap:meta-llama__Llama-3.1-8B-Instruct",
    ),
    (
        "qwen3-moe-set-flat",
        "qwen3-30b-a3b-eagle3",
        ["--set", 'hf-overrides={"max_position_embeddings": 65536}'],
        {"max_position_embeddings": 65536},
        "snap:Qwen__Qwen3-30B-A3B",
    ),
    (
        "gpt-oss-set-flat",
        "gpt-oss-120b-eagle3",
        ["--set", 'hf-overrides={"sliding_window": 256}'],
        {"sliding_window": 256},
        "snap:openai__gpt-oss-120b",
    ),
]


def _target_dir(source: str, tmp: Path) -> Path:
    kind, name = source.split(":", 1)
    if kind == "fixture":
        return FIXTURES / name
    config = json.loads((TARGETS / f"{name}.json").read_text())["config"]
    d = tmp / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.json").write_text(json.dumps(config))
    return d


def _recipe_path(name: str, tmp: Path) -> str:
    if name != "engine-arg-flat":
        return name
    # an existing command ported as an engine arg: a flat override, no text_overrides
    r = yaml.safe_load((RECIPES / "minimax-m3-eagle3.yaml").read_text())
    r = copy.deepcopy(r)
    r.pop("text_overrides", None)
    r.pop("text_overrides_known_keys", None)
    r.pop("results", None)
    r["engines"]["vllm"]["args"]["hf-overrides"] = {"index_topk_freq": 4}
    path = tmp / "engine-arg-flat.yaml"
    path.write_text(yaml.safe_dump(r))
    return str(path)


def vllm_text_config(target: Path, overrides: dict[str, Any] | None) -> dict[str, Any]:
    """The text config vLLM resolves for ``target`` with ``--hf-overrides overrides``."""
    from vllm.config.model import ModelConfig
    from vllm.transformers_utils.config import get_config, get_hf_text_config

    flat = {k: v for k, v in (overrides or {}).items() if not isinstance(v, dict)}
    nested = {k: v for k, v in (overrides or {}).items() if isinstance(v, dict)}
    config = get_config(str(target), trust_remote_code=False, hf_overrides_kw=flat)
    if nested:
        # _apply_dict_overrides/_update_nested use nothing of the instance but each other
        ModelConfig._apply_dict_overrides(object.__new__(ModelConfig), config, nested)
    return get_hf_text_config(config).to_dict()


def _ids():
    for case in CASES:
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN[case[0]])] if case[0] in KNOWN else []
        yield pytest.param(*case, id=case[0], marks=marks)


@pytest.mark.parametrize(("cid", "recipe", "args", "asked", "source"), list(_ids()))
def test_overrides_reach_text_config(
    cid: str, recipe: str, args: list[str], asked: dict[str, Any], source: str, tmp_path: Path
) -> None:
    cmd = [sys.executable, "-m", "recipecli", "render", _recipe_path(recipe, tmp_path)]
    cmd += ["--engine", "vllm", "--format", "argv-json", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    if proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1:
        REPORT["hf_overrides"].append(
            {
                "id": cid,
                "asked": asked,
                "text_config": f"refused by recipecli: {proc.stderr.strip()}",
            }
        )
        return  # caught before it reaches vLLM
    assert proc.returncode == 0, proc.stderr
    argv = json.loads(proc.stdout)["argv"]
    assert "--hf-overrides" in argv, f"{cid}: no --hf-overrides rendered for {asked}: {argv}"
    rendered = json.loads(argv[argv.index("--hf-overrides") + 1])
    target = _target_dir(source, tmp_path)
    base = vllm_text_config(target, None)
    got = vllm_text_config(target, rendered)
    changed = {k: got.get(k) for k in set(got) | set(base) if got.get(k) != base.get(k)}
    REPORT["hf_overrides"].append(
        {
            "id": cid,
            "rendered": rendered,
            "asked": asked,
            "text_config": {k: got.get(k) for k in asked},
        }
    )
    wrong = {k: (got.get(k), v) for k, v in asked.items() if got.get(k) != v}
    assert not wrong, f"{cid}: rendered {rendered}; text config holds/asked: {wrong}"
    extra = {k: v for k, v in changed.items() if k not in asked}
    assert not extra, f"{cid}: rendered {rendered} also changed {extra} on the text config"


def test_recipe_text_overrides_are_rendered() -> None:
    """Each recipe with text_overrides renders --hf-overrides for vLLM (its own lookup)."""
    for path in sorted(RECIPES.glob("*.yaml")):
        r = yaml.safe_load(path.read_text())
        if not r.get("text_overrides"):
            continue
        cmd = [sys.executable, "-m", "recipecli", "render", r["name"], "--engine", "vllm"]
        proc = subprocess.run(
            cmd + ["--format", "argv-json"], capture_output=True, text=True, cwd=REPO
        )
        assert proc.returncode == 0 and "--hf-overrides" in json.loads(proc.stdout)["argv"], r[
            "name"
        ]


def test_vllm_drops_a_flat_key_on_a_wrapper(tmp_path: Path) -> None:
    """The failure mode the test above guards against, shown on vLLM itself: on the MiniMax-M3
    wrapper a flat key is set on the wrapper (get_config's config.update), never on text_config;
    nested under text_config it reaches the text model (_apply_dict_overrides)."""
    target = _target_dir("snap:nvidia__MiniMax-M3-NVFP4", tmp_path)
    base = vllm_text_config(target, None)
    assert "index_topk_freq" not in base  # not in the public config.json (read by hand)
    assert vllm_text_config(target, {"index_topk_freq": 8}).get("index_topk_freq") is None
    nested = vllm_text_config(target, {"text_config": {"index_topk_freq": 8}})
    assert nested["index_topk_freq"] == 8
