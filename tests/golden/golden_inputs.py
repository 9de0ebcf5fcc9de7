"""Inputs of the golden-output corpus, written into the run's work directory.

Everything a case reads is built here, under the work directory ``W`` (the cases run with
``W`` as their working directory and name these inputs by relative path):

* ``fx/t-<key>``: full-size sparse target checkpoints built from the repository's fixture
  configs (``tests/fixtures/configs``) with :func:`recipecli.testing.specs.target_specs`;
  ``fx/d-<key>``: one-layer EAGLE3 drafts from the fixture draft configs
  (:func:`recipecli.testing.specs.draft_specs`, vocabulary map of
  :func:`~recipecli.testing.specs.valid_vocab_map` with seed 1); ``fx/cfg-<key>``: a directory
  holding only a fixture ``config.json`` (the ModelOpt templates, whose nulls no builder fills).
* ``tiny/<variant>/{target,draft}``: tiny pairs (target Llama H 64, nh 4, nkv 2, hd 16, I 128,
  V 640, L 8; draft format B, Vd 128, ``d2t`` keeping target ids ``5*i``), each variant changing
  one thing (:data:`TINY_VARIANTS`).
* ``snap/``: copies of the bundled target/example snapshots; ``bench/``: bench JSON inputs of
  ``report`` (the bundled results, ``docs/examples/report``, and derived runs);
  ``recipes/``: hand-written recipes (good and broken) for ``lint``, ``render`` and ``diff``.

The builders come from the tree under test (``recipecli.testing``); :func:`input_manifest`
fingerprints what was built, and the corpus records it as a case, so a builder change shows up as
its own difference rather than as unexplained output changes.
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

#: Fixture targets: key -> fixture directory name.
FIXTURE_TARGETS: dict[str, str] = {
    "llama8b": "meta-llama__Meta-Llama-3.1-8B",
    "llama70b": "meta-llama__Meta-Llama-3.1-70B",
    "qwen3-8b": "Qwen__Qwen3-8B",
    "qwen3-30b": "Qwen__Qwen3-30B-A3B",
    "qwen3-vl": "Qwen__Qwen3-VL-30B-A3B-Instruct",
    "dsv3": "deepseek-ai__DeepSeek-V3",
    "gptoss": "openai__gpt-oss-120b",
    "m3": "MiniMaxAI__MiniMax-M3",
    "m3-nvfp4": "nvidia__MiniMax-M3-NVFP4",
}

#: Fixture drafts: key -> (fixture directory name, target vocabulary V for the vocab map,
#: extra draft_specs keywords).
FIXTURE_DRAFTS: dict[str, tuple[str, int, dict[str, Any]]] = {
    "traineagle3": ("SafeAILab__EAGLE3-traineagle3-config", 128256, {}),
    "sf-llama3-8b": ("sgl-project-SpecForge-template__llama3-8B-eagle3", 128256, {}),
    "sf-qwen3-8b": ("sgl-project-SpecForge-template__qwen3-8b-eagle3", 151936, {}),
    "sf-qwen3-30b": ("sgl-project-SpecForge-template__qwen3-30B-A3B-eagle3", 151936, {}),
    "sf-qwen3-30b-3.1": (
        "sgl-project-SpecForge-template__qwen3-30B-A3B-eagle3.1",
        151936,
        {"fc_norm": True},
    ),
    "sf-gptoss": ("sgl-project-SpecForge-template__gpt-oss-120B-eagle3", 201088, {}),
    "sf-dsv3": ("sgl-project-SpecForge-template__deepseek-v3-671b-eagle3", 129280, {}),
    "eagle1-llama3-8b": ("yuhuili__EAGLE-LLaMA3-Instruct-8B", 128256, {"k": 2}),  # fc [H, 2H]
}

#: Fixture configs that no builder can fill (template nulls): written as config-only dirs.
CONFIG_ONLY: dict[str, str] = {
    "modelopt-export": "nvidia-modelopt-template__LlamaForCausalLMEagle3-export",
    "modelopt-speculator": "nvidia-modelopt-template__vllm-Eagle3Speculator",
}

#: A MiniMax-M3 EAGLE3 draft config (format B, fc_norm, explicit aux ids), written by hand.
M3_DRAFT: dict[str, Any] = {
    "architectures": ["LlamaForCausalLMEagle3"],
    "model_type": "llama",
    "hidden_size": 6144,
    "intermediate_size": 16384,
    "num_attention_heads": 48,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "num_hidden_layers": 1,
    "vocab_size": 200064,
    "rms_norm_eps": 1e-6,
    "max_position_embeddings": 1048576,
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
    "fc_norm": True,
    "norm_output": True,
    "eagle_aux_hidden_state_layer_ids": [2, 30, 57],
}

#: (target key, draft key) pairs checked with the full option matrix.
FIXTURE_PAIRS: tuple[tuple[str, str], ...] = (
    ("llama8b", "traineagle3"),
    ("llama8b", "sf-llama3-8b"),
    ("llama8b", "eagle1-llama3-8b"),
    ("llama70b", "sf-llama3-8b"),
    ("qwen3-8b", "sf-qwen3-8b"),
    ("qwen3-30b", "sf-qwen3-30b"),
    ("qwen3-30b", "sf-qwen3-30b-3.1"),
    ("qwen3-vl", "sf-qwen3-30b"),
    ("gptoss", "sf-gptoss"),
    ("dsv3", "sf-dsv3"),
    ("m3-nvfp4", "m3"),
    ("m3", "m3"),
)

# tiny geometry (field notation): H, nh, nkv, hd, I, V, Vd, L, max_position_embeddings
H, NH, NKV, HD, INTER, V, VD, L, MAXPOS = 64, 4, 2, 16, 128, 640, 128, 8, 2048


#: A draft tensor: safetensors dtype, shape, values (None: a hole of the sparse file).
TensorTuple = tuple[str, tuple[int, ...], Any]


@dataclass
class Tiny:
    """A tiny target/draft pair: configs and the draft's tensors (name -> (dtype, shape, value))."""

    target: dict[str, Any]
    draft: dict[str, Any]
    tensors: dict[str, TensorTuple] = field(default_factory=dict)
    target_prefix: str = "model."


def tiny_target(**extra: Any) -> dict[str, Any]:
    """The tiny Llama target config.json (module docstring), ``extra`` keys added."""
    cfg: dict[str, Any] = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": H,
        "num_attention_heads": NH,
        "num_key_value_heads": NKV,
        "head_dim": HD,
        "intermediate_size": INTER,
        "num_hidden_layers": L,
        "vocab_size": V,
        "max_position_embeddings": MAXPOS,
        "rms_norm_eps": 1e-5,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }
    cfg.update(extra)
    return cfg


def tiny_draft_b(**extra: Any) -> dict[str, Any]:
    """The tiny format-B (SpecForge ``LlamaForCausalLMEagle3``) draft config.json."""
    cfg = tiny_target(architectures=["LlamaForCausalLMEagle3"], num_hidden_layers=1)
    cfg["draft_vocab_size"] = VD
    cfg.update(extra)
    return cfg


def stride_map(v: int, vd: int) -> tuple[np.ndarray, np.ndarray]:
    """``(d2t, t2d)`` keeping target ids ``s*i`` (``s = v // vd``): int64 [vd] offsets
    ``(s-1)*i`` and bool [v] with ``t2d[s*i]`` True."""
    s = v // vd
    ids = s * np.arange(vd, dtype=np.int64)
    t2d = np.zeros(v, dtype=bool)
    t2d[ids] = True
    return ids - np.arange(vd, dtype=np.int64), t2d


def _tiny_base(
    draft: dict[str, Any],
    *,
    naming: Literal["midlayer", "layers.0"] = "midlayer",
    maps: bool = True,
    **kw: Any,
) -> Tiny:
    """A :class:`Tiny` of ``draft`` (tensors of ``draft_specs``, the stride map of its own V and
    Vd unless ``maps`` is false) with the tiny target; ``kw`` goes to ``draft_specs``."""
    from recipecli.testing.specs import draft_specs

    layer = draft.get("transformer_layer_config") or draft
    v = int(layer.get("vocab_size") or V)
    vd = int(draft.get("draft_vocab_size") or v)
    d2t, t2d = stride_map(v, vd) if maps else (None, None)
    specs = draft_specs(draft, naming=naming, d2t=d2t, t2d=t2d, **kw)
    return Tiny(tiny_target(), draft, {s.name: (s.dtype, s.shape, s.value) for s in specs})


def _speculators() -> Tiny:
    layer = {k: v for k, v in tiny_target().items() if k not in ("architectures",)}
    layer.update(num_hidden_layers=1, hidden_act="silu")
    draft = {
        "architectures": ["Eagle3Speculator"],
        "speculators_model_type": "eagle3",
        "draft_vocab_size": VD,
        "target_hidden_size": None,
        "norm_before_residual": False,
        "transformer_layer_config": layer,
        "speculators_config": {"verifier": {"name_or_path": "tiny/target"}},
        "torch_dtype": "bfloat16",
    }
    return _tiny_base(draft, naming="layers.0", with_embed=True)


def _b(**extra: Any) -> Tiny:
    return _tiny_base(tiny_draft_b(**extra))


def _edit(
    tiny: Tiny, *, drop: tuple[str, ...] = (), put: dict[str, TensorTuple] | None = None
) -> Tiny:
    """``tiny`` without the tensors ``drop`` and with ``put`` (name -> (dtype, shape, value))."""
    for name in drop:
        del tiny.tensors[name]
    tiny.tensors.update(put or {})
    return tiny


def _target(tiny: Tiny, config: dict[str, Any]) -> Tiny:
    tiny.target = config
    return tiny


def _wrapped_target() -> dict[str, Any]:
    text = tiny_target()
    text.pop("architectures")
    text["model_type"] = "qwen3_vl_moe_text"
    return {
        "architectures": ["Qwen3VLMoeForConditionalGeneration"],
        "model_type": "qwen3_vl_moe",
        "text_config": text,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }


_IDS = 5 * np.arange(VD, dtype=np.int64)
_Q = "midlayer.self_attn.q_proj.weight"

#: Tiny pair variants: name -> builder (each changes one thing of the base pair ``base-b``).
TINY_VARIANTS: dict[str, Callable[[], Tiny]] = {
    "base-b": lambda: _b(),
    "fmt-a": lambda: _b(architectures=["LlamaForCausalLM"]),
    "fmt-c": lambda: _b(
        eagle_config={"use_last_layernorm": True, "eagle_aux_hidden_state_layer_ids": [1, 3, 5]}
    ),
    "fmt-d": _speculators,
    "fmt-f": lambda: _b(architectures=["Eagle3LlamaForCausalLM"]),
    "fmt-nemo": lambda: _b(architectures=["LlamaEagle3DraftModel"]),
    "fmt-nebius": lambda: _tiny_base(
        tiny_target(num_hidden_layers=1, truncated_vocab_size=VD), maps=False
    ),
    "not-eagle": lambda: _tiny_base(
        tiny_target(architectures=["MistralForCausalLM"], num_hidden_layers=2), maps=False
    ),
    "no-d2t": lambda: _edit(_b(), drop=("d2t",)),
    "no-t2d": lambda: _edit(_b(), drop=("t2d",)),
    "no-maps": lambda: _edit(_b(), drop=("d2t", "t2d")),
    "d2t-identity": lambda: _edit(_b(), put={"d2t": ("I64", (VD,), np.zeros(VD, dtype=np.int64))}),
    "d2t-absolute": lambda: _edit(_b(), put={"d2t": ("I64", (VD,), _IDS)}),
    "d2t-range": lambda: _edit(_b(), put={"d2t": ("I64", (VD,), _IDS * 3)}),
    "d2t-i32": lambda: _edit(_b(), put={"d2t": ("I32", (VD,), _IDS - np.arange(VD))}),
    "t2d-all": lambda: _edit(_b(), put={"t2d": ("BOOL", (V,), np.ones(V, dtype=bool))}),
    "no-lm-head": lambda: _edit(_b(), drop=("lm_head.weight",)),
    "no-norm": lambda: _edit(_b(), drop=("norm.weight",)),
    "no-fc": lambda: _edit(_b(), drop=("fc.weight",)),
    "fc-shape": lambda: _edit(_b(), put={"fc.weight": ("BF16", (H, 2 * H), None)}),
    "q-shape": lambda: _edit(_b(), put={_Q: ("BF16", (NH * HD, H), None)}),
    "extra-tensor": lambda: _edit(_b(), put={"midlayer.extra.weight": ("BF16", (H,), None)}),
    "heads6": lambda: _b(num_attention_heads=6),
    "kv-heads1": lambda: _b(num_key_value_heads=1),
    "aux-top": lambda: _b(eagle_aux_hidden_state_layer_ids=[1, 3, 5]),
    "aux-nested": lambda: _b(eagle_config={"eagle_aux_hidden_state_layer_ids": [1, 3, 5]}),
    "aux-four": lambda: _b(eagle_aux_hidden_state_layer_ids=[1, 2, 3, 5]),
    "aux-range": lambda: _b(eagle_aux_hidden_state_layer_ids=[1, 3, 9]),
    "maxpos-short": lambda: _b(max_position_embeddings=512),
    "hidden-32": lambda: _b(hidden_size=32, head_dim=8),
    "hidden-32-ths": lambda: _tiny_base(
        tiny_draft_b(hidden_size=32, head_dim=8, target_hidden_size=H), with_embed=True
    ),
    "f16-draft": lambda: _b(torch_dtype="float16"),
    "vocab-1280": lambda: _b(vocab_size=1280),
    "vd-absent": lambda: _tiny_base(
        {k: v for k, v in tiny_draft_b().items() if k != "draft_vocab_size"}, maps=False
    ),
    "fc-norm": lambda: _tiny_base(tiny_draft_b(fc_norm=True, norm_output=True), fc_norm=True),
    "norm-before-fc": lambda: _tiny_base(
        tiny_draft_b(eagle_config={"norm_before_fc": True}), norm_before_fc=True
    ),
    "bias": lambda: _b(attention_bias=True),
    "draft-2layers": lambda: _b(num_hidden_layers=2),
    "tied-target": lambda: _target(_b(), tiny_target(tie_word_embeddings=True)),
    "target-qwen3": lambda: _target(
        _b(), tiny_target(architectures=["Qwen3ForCausalLM"], model_type="qwen3")
    ),
    "target-wrapped": lambda: _target(_b(), _wrapped_target()),
    "target-l4": lambda: _target(_b(), tiny_target(num_hidden_layers=4)),
    "target-maxpos-8k": lambda: _target(_b(), tiny_target(max_position_embeddings=8192)),
}


def _write_tiny(root: Path, tiny: Tiny) -> None:
    """Write ``tiny`` as ``root/target`` (embedding, final norm, head unless tied: all ``check``
    reads) and ``root/draft``."""
    from recipecli.checkpoint.textconfig import resolve_text_config
    from recipecli.testing.builder import TensorSpec, write_checkpoint

    text = resolve_text_config(tiny.target).config
    prefix = resolve_text_config(tiny.target).tensor_prefix or "model."
    h, v = int(text["hidden_size"]), int(text["vocab_size"])
    target = [
        TensorSpec(f"{prefix}embed_tokens.weight", "BF16", (v, h)),
        TensorSpec(f"{prefix}norm.weight", "BF16", (h,), np.ones(h, dtype=np.float32)),
    ]
    if not tiny.target.get("tie_word_embeddings"):
        target.append(TensorSpec("lm_head.weight", "BF16", (v, h)))
    write_checkpoint(root / "target", tiny.target, target)
    draft = [TensorSpec(n, dt, shape, val) for n, (dt, shape, val) in tiny.tensors.items()]
    write_checkpoint(root / "draft", tiny.draft, draft)


def _fixture(root: Path, name: str) -> dict[str, Any]:
    config: dict[str, Any] = json.loads(
        (root / "tests" / "fixtures" / "configs" / name / "config.json").read_text()
    )
    return config


def _write_fixtures(work: Path, root: Path) -> None:
    """``fx/t-*`` full-size targets, ``fx/d-*`` drafts and ``fx/cfg-*`` config-only dirs."""
    from recipecli.testing.builder import write_checkpoint
    from recipecli.testing.specs import draft_specs, target_specs, valid_vocab_map

    for key, name in FIXTURE_TARGETS.items():
        cfg = _fixture(root, name)
        write_checkpoint(work / "fx" / f"t-{key}", cfg, target_specs(cfg))
    drafts = {k: (_fixture(root, n), v, kw) for k, (n, v, kw) in FIXTURE_DRAFTS.items()}
    drafts["m3"] = (copy.deepcopy(M3_DRAFT), 200064, {"fc_norm": True, "with_lm_head": False})
    for key, (cfg, v, kw) in drafts.items():
        vd = cfg.get("draft_vocab_size") or v
        if vd < v:
            d2t, t2d = valid_vocab_map(v, vd, seed=1)
            kw = {"d2t": d2t, "t2d": t2d, **kw}
        write_checkpoint(work / "fx" / f"d-{key}", cfg, draft_specs(cfg, **kw))
    for key, name in CONFIG_ONLY.items():
        (work / "fx" / f"cfg-{key}").mkdir(parents=True)
        shutil.copyfile(
            root / "tests" / "fixtures" / "configs" / name / "config.json",
            work / "fx" / f"cfg-{key}" / "config.json",
        )


def _write_snapshots(work: Path, root: Path) -> None:
    """``snap/``: the bundled target and example snapshots of the tree under test."""
    (work / "snap").mkdir()
    data = root / "recipecli" / "data"
    for path in sorted([*(data / "targets").glob("*.json"), *(data / "examples").glob("*.json")]):
        shutil.copyfile(path, work / "snap" / path.name)


def _bench_variant(doc: dict[str, Any], scale: float, **set_: Any) -> dict[str, Any]:
    """``doc`` with throughputs multiplied and latencies divided by ``scale``, ``set_`` applied."""
    out = dict(doc)
    for key in ("request_throughput", "output_throughput", "total_token_throughput"):
        out[key] = round(float(doc[key]) * scale, 6)
    for key in ("mean_ttft_ms", "mean_tpot_ms", "duration"):
        out[key] = round(float(doc[key]) / scale, 6)
    out.update(set_)
    return out


def _write_bench(work: Path, root: Path) -> None:
    """``bench/``: the bundled results and derived runs (repeats, failures, other workloads)."""
    bench = work / "bench"
    shutil.copytree(root / "recipecli" / "data" / "recipes" / "results", bench / "bundled")
    shutil.copytree(root / "docs" / "examples" / "report", bench / "examples")
    src = bench / "bundled" / "minimax-m3-eagle3"
    base = json.loads((src / "baseline.json").read_text())
    cand = json.loads((src / "candidate.json").read_text())
    runs = {
        "base-2": _bench_variant(base, 1.012),
        "base-3": _bench_variant(base, 0.991),
        "cand-2": _bench_variant(cand, 1.004),
        "cand-3": _bench_variant(cand, 0.987),
        "cand-failed": _bench_variant(cand, 1.0, completed=630, failed=10),
        "cand-workload": _bench_variant(cand, 1.0, num_prompts=320, max_concurrency=32),
        "cand-zero": _bench_variant(cand, 1.0, duration=0),
        "cand-nospec": {k: v for k, v in cand.items() if not str(k).startswith("spec_decode")},
    }
    for name, doc in runs.items():
        (bench / f"{name}.json").write_text(json.dumps(doc, indent=2))
    (bench / "broken.json").write_text("{not json")
    ev = json.loads((src / "candidate_lm_eval_gsm8k.json").read_text())
    ev_b = copy.deepcopy(ev)
    ev_b["results"]["gsm8k"]["exact_match,strict-match"] = 0.921
    ev_b["results"]["gsm8k"]["exact_match,flexible-extract"] = 0.925
    (bench / "eval-base.json").write_text(json.dumps(ev_b, indent=2))


def build_inputs(work: Path, root: Path) -> None:
    """Write every input of the corpus under ``work`` (module docstring), from the tree ``root``
    (its fixture configs, bundled data and ``recipecli.testing`` builders).

    Raises:
        OSError, ValueError: a fixture or a builder is missing or refuses.
    """
    (work / "out").mkdir()
    _write_fixtures(work, root)
    for name, make in TINY_VARIANTS.items():
        _write_tiny(work / "tiny" / name, make())
    _write_snapshots(work, root)
    _write_bench(work, root)
    from golden_recipes import write_recipes

    write_recipes(work / "recipes")


def _fingerprint(path: Path) -> str:
    """Size and sha256 of a small file; of a large one (a sparse checkpoint), size and the
    sha256 of its safetensors header only."""
    size = path.stat().st_size
    if size <= 1 << 20:
        return f"{size} {hashlib.sha256(path.read_bytes()).hexdigest()[:16]}"
    with path.open("rb") as fh:
        n = int.from_bytes(fh.read(8), "little")
        head = fh.read(min(n, 1 << 28))
    return f"{size} header {hashlib.sha256(head).hexdigest()[:16]}"


def input_manifest(work: Path, tops: tuple[str, ...]) -> Iterator[str]:
    """One line ``<relative path> <fingerprint>`` per file under the directories ``tops`` of
    ``work``, in sorted order."""
    for top in tops:
        for path in sorted((work / top).rglob("*")):
            if path.is_file():
                yield f"{path.relative_to(work).as_posix()} {_fingerprint(path)}"
