"""The public EAGLE3 draft corpus (issue #24, done-when): every draft config found in the public
code index, each with its target, checked on every engine at TP 1, 2, 4 and 8.

``tests/corpus/drafts/<name>.json`` is a draft's config.json copied verbatim from its public
repository; ``<name>.source.json`` names it (``draft.url`` at a commit) and its target
(``target.file``: a fixture config already in the repository, or a public config copied into
``tests/corpus/drafts/targets/`` with its own ``.source.json``; ``stand_in`` where the exact
target's config is not public in the index and one of the same geometry stands in).

The tensors are built from the configs as full-size sparse checkpoints
(``recipecli.testing.specs``, as ``scripts/build_examples.py`` builds the bundled example): the
draft's own geometry (``draft_geometry``: a valid d2t/t2d map when its ``draft_vocab_size`` is
below its ``vocab_size``), speculators' ``layers.0`` naming for a ``transformer_layer_config``
draft; a target the builder cannot lay out (Qwen3.5's hybrid layers, Kimi-K3) is given as its
config alone, a bare-config source ``check`` reads.

Asserted on every pair: ``check`` does not crash, and each engine's verdict is explained (every
error and warning is a catalogued, documented code with a message and a source, the engine's code
for an engine's own finding;
an engine not ready at a TP has an error for it). ``EXPECTED`` lists, for ten pairs, every error
and warning code per engine, worked out by hand from the configs and the engines' code (the module
constants below name it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.fixtures import REPO_ROOT

from recipecli.check import run_check
from recipecli.checkpoint import open_checkpoint
from recipecli.codes import CATALOG
from recipecli.testing.builder import write_checkpoint
from recipecli.testing.specs import draft_geometry, draft_specs, target_specs, valid_vocab_map

CORPUS = REPO_ROOT / "tests" / "corpus" / "drafts"
NAMES = sorted(p.name[: -len(".json")] for p in CORPUS.glob("*.json") if ".source" not in p.name)
TPS = (1, 2, 4, 8)
ENGINES = ("vllm", "sglang", "tokenspeed")

# vLLM 0.33.0 vllm/transformers_utils/configs/eagle.py EAGLEConfig.__init__: with method eagle3 an
# architecture that neither starts nor ends with "Eagle3" becomes "Eagle3<arch>"; the result must
# be a key of vllm/model_executor/models/registry.py _SPECULATIVE_DECODING_MODELS
# (Eagle3LlamaForCausalLM, LlamaForCausalLMEagle3, PEagleDraftModel, ...).
# SGLang 0.5.23 srt/models/llama_eagle3.py and tokenspeed f4d8ec6e
# python/tokenspeed/runtime/models/llama_eagle3.py: EntryClass = [LlamaForCausalLMEagle3] (the
# other EAGLE3 class each registers is Eagle3DeepseekV2ForCausalLM): Eagle3LlamaForCausalLM,
# DeepseekV3ForCausalLMEagle3 and Qwen3MoEForCausalLMEagle3 resolve to no model class.
ARCH = "draft.arch_name"
# tokenspeed f4d8ec6e python/tokenspeed/runtime/models/qwen3.py and qwen3_moe.py: no
# set_eagle3_layers_to_capture and no aux hidden states returned (SGLang 0.5.23's Qwen3ForCausalLM
# and Qwen3MoeForCausalLM define set_eagle3_layers_to_capture: srt/models/qwen3.py, qwen3_moe.py).
NO_AUX = "target.no_aux_capture"

_NONE: frozenset[str] = frozenset()
#: pair -> engine -> every error and warning code (worked out by hand; see the constants above)
EXPECTED: dict[str, dict[str, frozenset[str]]] = {
    # Eagle3LlamaForCausalLM: vLLM registers it; SGLang and tokenspeed do not. The draft's
    # max_position_embeddings equals the target's (40960 / 40960 / 40960 / 40960 / 40960).
    **{
        f"angelslim-qwen3-{size}-eagle3": {
            "vllm": _NONE,
            "sglang": frozenset({ARCH}),
            "tokenspeed": frozenset({ARCH}),
        }
        for size in ("0.6b", "1.7b", "8b", "32b", "30b-a3b")
    },
    # DeepseekV3ForCausalLMEagle3 / Qwen3MoEForCausalLMEagle3 end with "Eagle3": vLLM keeps the name,
    # which no engine registers
    "specforge-deepseek-r1-eagle3": dict.fromkeys(ENGINES, frozenset({ARCH})),
    "specforge-qwen3-30b-a3b-eagle3-moe-draft": dict.fromkeys(ENGINES, frozenset({ARCH})),
    # LlamaForCausalLMEagle3 on Qwen3 targets, context lengths equal (40960, 40960, 262144)
    **{
        name: {"vllm": _NONE, "sglang": _NONE, "tokenspeed": frozenset({NO_AUX})}
        for name in (
            "specforge-qwen3-8b-eagle3",
            "specforge-qwen3-32b-eagle3",
            "specforge-qwen3-coder-480b-a35b-instruct-eagle3",
        )
    },
}


def _sidecar(name: str) -> dict:
    return json.loads((CORPUS / f"{name}.source.json").read_text(encoding="utf-8"))


def _write_target(config: dict, path: Path) -> None:
    try:
        specs = target_specs(config)
    except ValueError:  # a layout the builder does not know: the config alone
        path.mkdir(parents=True)
        (path / "config.json").write_text(json.dumps(config), encoding="utf-8")
        return
    write_checkpoint(path, config, specs)


def _write_draft(config: dict, path: Path) -> None:
    geo = draft_geometry(config)
    kw: dict = {}
    if geo["Vd"] < geo["V"]:
        kw["d2t"], kw["t2d"] = valid_vocab_map(geo["V"], geo["Vd"], seed=1)
    naming = "layers.0" if "transformer_layer_config" in config else "midlayer"
    write_checkpoint(path, config, draft_specs(config, naming=naming, **kw))


def _check(name: str, tmp: Path):
    side = _sidecar(name)
    target = json.loads((REPO_ROOT / side["target"]["file"]).read_text(encoding="utf-8"))
    draft = json.loads((CORPUS / f"{name}.json").read_text(encoding="utf-8"))
    _write_target(target, tmp / "target")
    _write_draft(draft, tmp / "draft")
    return run_check(
        open_checkpoint(str(tmp / "target")),
        open_checkpoint(str(tmp / "draft")),
        tps=TPS,
        engines=ENGINES,
    )


def test_every_draft_has_its_source_and_target():
    assert len(NAMES) >= 50
    for name in NAMES:
        side = _sidecar(name)
        assert side["draft"]["url"].startswith("https://github.com/"), name
        assert side["draft"]["commit"] in side["draft"]["url"], name
        assert (REPO_ROOT / side["target"]["file"]).is_file(), name
        assert side["tp"] == list(TPS), name
    for target in (CORPUS / "targets").glob("*.source.json"):
        assert json.loads(target.read_text(encoding="utf-8"))["url"].startswith(
            "https://github.com/"
        )
    assert set(EXPECTED) <= set(NAMES)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_check_explains_each_engine_verdict(name, tmp_path):
    res = _check(name, tmp_path)
    codes_page = (REPO_ROOT / "docs" / "engines" / "codes.md").read_text(encoding="utf-8")
    for f in res.findings:
        if f.severity == "info":
            continue
        assert f.code in CATALOG and f"`{f.code}`" in codes_page, f.code
        assert f.message.strip(), f.code
        assert f.source, f.code
        if f.engine != "any":  # an engine's own finding cites the engine's code
            assert ".py" in f.source, (f.code, f.source)
    for engine in ENGINES:
        errors = [f for f in res.findings if f.severity == "error" and f.engine in (engine, "any")]
        for tp in TPS:
            if tp not in res.ready_tps(engine):
                assert any(f.tp in (None, tp) for f in errors), (engine, tp)
    if name in EXPECTED:
        got = {
            engine: frozenset(
                f.code
                for f in res.findings
                if f.engine in (engine, "any") and f.severity in ("error", "warning")
            )
            for engine in ENGINES
        }
        assert got == EXPECTED[name]
