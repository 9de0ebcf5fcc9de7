"""Every ``--json-model-override-args`` recipecli renders for SGLang, applied by SGLang 0.5.23's
own config loading to the target AND the draft, lands where recipecli says it lands; the
placements recipecli refuses fail in SGLang the way its SGLang engine model says.

SGLang's steps: ``ModelConfig.from_server_args`` (configs/model_config.py) builds the target's
and the draft's ``ModelConfig`` with the same ``json_model_override_args``; ``ModelConfig``
passes the parsed JSON to ``get_config`` (utils/hf_transformers/config.py ``model_override_args``),
then takes ``get_hf_text_config`` (utils/hf_transformers/common.py). :func:`sglang_config` runs
those two functions (``ModelConfig`` itself needs the weights' quantization and platform checks).

Cases: the flat targets of the bundled recipes (their bundled snapshot configs) with the SpecForge
draft fixture made for each family, a key asked through ``--set text_overrides.KEY=``; the
wrapped MiniMax-M3 recipe (refused: recipecli renders nothing, exit 2, one line) and its
``--force`` render, and the Qwen3-VL wrapper fixture. "Asked" is written out by hand per case.
Known recipecli bugs run as ``xfail(strict=True)`` (``known_disagreements.json``, section
``overrides``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sgl_report import FIXTURES, REPO, REPORT, TARGETS, known

pytestmark = pytest.mark.conformance_sglang

SPECFORGE = "sgl-project-SpecForge-template__"
QWEN_VL = "Qwen__Qwen3-VL-30B-A3B-Instruct"


def sglang_config(model_dir: Path, overrides: dict[str, Any] | None) -> tuple[Any, Any]:
    """(top-level config, text config) SGLang builds for ``model_dir`` with ``overrides``."""
    from sglang.srt.utils.hf_transformers import get_config, get_hf_text_config

    config = get_config(str(model_dir), trust_remote_code=False, model_override_args=overrides)
    return config, get_hf_text_config(config)


def _dir(source: str, tmp: Path) -> Path:
    kind, name = source.split(":", 1)
    if kind == "fixture":
        return FIXTURES / name
    d = tmp / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.json").write_text(
        json.dumps(json.loads((TARGETS / f"{name}.json").read_text())["config"])
    )
    return d


def render(recipe: str, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "recipecli", "render", recipe, "--engine", "sglang"]
    return subprocess.run(
        cmd + ["--format", "argv-json", *args], capture_output=True, text=True, cwd=REPO
    )


def _overrides(argv: list[str]) -> dict[str, Any]:
    assert "--json-model-override-args" in argv, argv
    return json.loads(argv[argv.index("--json-model-override-args") + 1])


#: (id, recipe, render args, asked of the TEXT config, target source, draft source)
FLAT: list[tuple[str, str, list[str], dict[str, Any], str, str]] = [
    (
        "gpt-oss-text_overrides",
        "gpt-oss-120b-eagle3",
        ["--set", "text_overrides.sliding_window=256"],
        {"sliding_window": 256},
        "snap:openai__gpt-oss-120b",
        f"fixture:{SPECFORGE}gpt-oss-120B-eagle3",
    ),
    (
        "llama-text_overrides-force",
        "llama3.1-8b-eagle3",
        ["--force", "--set", "text_overrides.max_position_embeddings=65536"],
        {"max_position_embeddings": 65536},
        "snap:meta-llama__Llama-3.1-8B-Instruct",
        f"fixture:{SPECFORGE}llama3-8B-eagle3",
    ),
    (
        "qwen3-moe-text_overrides-force",
        "qwen3-30b-a3b-eagle3",
        ["--force", "--set", "text_overrides.max_position_embeddings=65536"],
        {"max_position_embeddings": 65536},
        "snap:Qwen__Qwen3-30B-A3B",
        f"fixture:{SPECFORGE}qwen3-30B-A3B-eagle3",
    ),
]


def _flat_ids():
    for case in FLAT:
        yield pytest.param(*case, id=case[0], marks=known("overrides", case[0]))


@pytest.mark.parametrize(("cid", "recipe", "args", "asked", "target", "draft"), list(_flat_ids()))
def test_flat_target_override_reaches_target_and_draft(
    cid: str, recipe: str, args: list[str], asked: dict, target: str, draft: str, tmp_path: Path
) -> None:
    """On a plain target the flat JSON reaches the target's text config, and the draft's too
    (same JSON, model_config.py from_server_args; recipecli warns when the draft reads the key)."""
    proc = render(recipe, *args)
    assert proc.returncode == 0, proc.stderr
    rendered = _overrides(json.loads(proc.stdout)["argv"])
    assert rendered == asked, (
        f"{cid}: rendered {rendered}, asked {asked} (flat, as SGLang reads it)"
    )
    if "max_position_embeddings" in asked:  # a key the Llama draft reads: recipecli warns
        assert "draft config too" in proc.stderr, f"{cid}: no warning for the draft: {proc.stderr}"
    out = {}
    for role, source in (("target", target), ("draft", draft)):
        d = _dir(source, tmp_path)
        _, base = sglang_config(d, None)
        top, text = sglang_config(d, rendered)
        wrong = {
            k: (getattr(text, k, None), v) for k, v in asked.items() if getattr(text, k, None) != v
        }
        assert not wrong, f"{cid} {role}: SGLang's text config holds / asked: {wrong}"
        changed = {
            k for k, v in text.to_dict().items() if base.to_dict().get(k) != v and k not in asked
        }
        assert not changed, f"{cid} {role}: {rendered} also changed {changed}"
        out[role] = {k: getattr(text, k) for k in asked}
    REPORT["overrides"].append(
        {"id": cid, "rendered": rendered, "outcome": f"target and draft text configs hold {out}"}
    )


M3_ASKED = {"use_index_cache": True, "index_topk_freq": 4}  # the recipe's text_overrides, by hand


def _forced_m3() -> dict[str, Any]:
    """The minimax-m3 recipe: refused for SGLang (exit 2, one line); its --force render."""
    proc = render("minimax-m3-eagle3")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and not proc.stdout.strip(), proc.stderr
    assert "cannot be placed for SGLang" in lines[0], lines[0]
    forced = render("minimax-m3-eagle3", "--force")
    assert forced.returncode == 0, forced.stderr
    rendered = _overrides(json.loads(forced.stdout)["argv"])
    assert rendered == {"text_config": M3_ASKED}, rendered
    return rendered


def _section_text() -> str:
    from recipecli.engines import engine_model

    return {s.anchor: s for s in engine_model("sglang").sections}["json-model-override-args"].text


def test_forced_nested_override_breaks_the_flat_draft() -> None:
    """recipecli refuses the MiniMax-M3 SGLang render; the nested form it renders with --force
    makes the flat EAGLE3 draft's get_hf_text_config raise AssertionError (get_config sets a
    text_config dict on it), as the engine model's json-model-override-args section says."""
    text = _section_text()
    assert "AssertionError" in text and "get_hf_text_config" in text
    rendered = _forced_m3()
    for draft in ("llama3-8B-eagle3", "gpt-oss-120B-eagle3", "qwen3-30B-A3B-eagle3"):
        with pytest.raises(AssertionError):
            sglang_config(FIXTURES / f"{SPECFORGE}{draft}", rendered)
    REPORT["overrides"].append(
        {
            "id": "minimax-m3-force-nested-draft",
            "rendered": rendered,
            "outcome": "refused by recipecli; --force: every flat draft fails get_hf_text_config "
            "with AssertionError, as the engine model says",
        }
    )


#: the nested form on each wrapped target, as read in SGLang 0.5.23: Qwen3-VL's text_config is a
#: PretrainedConfig sub-config (transformers' Qwen3VLConfig), so get_config (utils/hf_transformers/
#: config.py) merges the dict into it; MiniMax-M3's MiniMaxM3VLConfig (configs/minimax_vl.py) holds
#: text_config as a plain dict under transformers 5.19.0, so get_config setattr's the override dict
#: in its place and get_hf_text_config (utils/hf_transformers/common.py) asserts num_attention_heads
NESTED_CASES = [
    ("minimax-m3-nested-target", "snap:nvidia__MiniMax-M3-NVFP4", M3_ASKED, "MiniMax-M3", False),
    (
        "qwen3-vl-nested-target",
        f"fixture:{QWEN_VL}",
        {"max_position_embeddings": 131072},
        "Qwen3-VL",
        True,
    ),
]


def _nested_ids():
    for cid, target, asked, name, merged in NESTED_CASES:
        yield pytest.param(cid, target, asked, name, merged, id=cid, marks=known("overrides", cid))


@pytest.mark.parametrize(("cid", "target", "asked", "name", "merged"), list(_nested_ids()))
def test_nested_override_on_a_wrapped_target(
    cid: str, target: str, asked: dict[str, Any], name: str, merged: bool, tmp_path: Path
) -> None:
    """The engine model's json-model-override-args section names each wrapper and what the nested
    {"text_config": {...}} form does to it: merged into Qwen3-VL's text model, and replacing
    MiniMax-M3's whole text config (AssertionError in get_hf_text_config on the target too)."""
    text = _section_text()
    assert name in text and "nested" in text
    rendered = {"text_config": asked}
    try:
        _, text_config = sglang_config(_dir(target, tmp_path), rendered)
        got: Any = {k: getattr(text_config, k, None) for k in asked}
    except AssertionError:
        got = "AssertionError in get_hf_text_config"
    REPORT["overrides"].append(
        {"id": cid, "rendered": rendered, "outcome": f"target text config: {got}"}
    )
    want = asked if merged else "AssertionError in get_hf_text_config"
    assert got == want, f"{cid}: SGLang's target text config {got!r}, expected {want!r}"


@pytest.mark.parametrize(
    ("cid", "target"),
    [("minimax-m3-flat", "snap:nvidia__MiniMax-M3-NVFP4"), ("qwen3-vl-flat", f"fixture:{QWEN_VL}")],
)
def test_flat_key_on_a_wrapper_misses_the_text_model(cid: str, target: str, tmp_path: Path) -> None:
    """The other half of recipecli's refusal, on SGLang itself: the flat form is set on the
    wrapper (get_config's setattr), and the text config SGLang serves from never sees it."""
    d = _dir(target, tmp_path)
    top, text = sglang_config(d, {"index_topk_freq": 8})
    assert getattr(top, "index_topk_freq", None) == 8
    assert getattr(text, "index_topk_freq", None) is None
    assert text is not top
    REPORT["overrides"].append(
        {"id": cid, "rendered": {"index_topk_freq": 8}, "outcome": "lands on the wrapper only"}
    )


def test_qwen3_vl_target_is_refused() -> None:
    """A text override for a Qwen3-VL target (qwen3_vl wrapper) has no SGLang placement either."""
    proc = render(
        "qwen3-30b-a3b-eagle3",
        "--force",
        "--set",
        "target=Qwen/Qwen3-VL-30B-A3B-Instruct",
        "--target-config",
        str(FIXTURES / QWEN_VL),
        "--set",
        "text_overrides.max_position_embeddings=131072",
    )
    assert "no --json-model-override-args placement works" in proc.stderr, proc.stderr
    REPORT["overrides"].append(
        {
            "id": "qwen3-vl-text_overrides",
            "rendered": None,
            "outcome": proc.stderr.strip().splitlines()[-1][:200],
        }
    )
