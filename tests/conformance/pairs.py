"""Draft/target pairs the conformance suite runs through vLLM and through ``recipecli check``.

Every fixture draft of ``tests/fixtures/configs`` is paired with the target it was made for, and
synthetic variations change exactly one thing of a base pair (the SpecForge Qwen3-30B-A3B
template, H = 2048, so a value falling back to transformers' ``LlamaConfig`` default of 4096 is
visible). Checkpoints are full size but sparse: :func:`recipecli.testing.specs.draft_specs`
computes the tensor table and :func:`recipecli.testing.builder.write_checkpoint` writes headers
plus holes (plus real ``d2t``/``t2d`` values), a few hundred KB of disk per draft.

Nothing here imports torch or vLLM: the module is used on both sides of the comparison.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recipecli.testing.builder import TensorSpec, write_checkpoint
from recipecli.testing.specs import draft_specs, norm_values, valid_vocab_map

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "configs"


def fixture(name: str) -> dict[str, Any]:
    """Parsed ``config.json`` of fixture ``name``."""
    return json.loads((FIXTURES / name / "config.json").read_text())


@dataclass
class Case:
    """One pair: target config, draft config and draft tensor table, or a post-step.

    Attributes:
        name: test id.
        target: target ``config.json``.
        draft: draft ``config.json``.
        specs: draft tensors (:class:`TensorSpec`), holes except norms and vocab maps.
        what: one line saying what the case varies.
        post: optional ``post(draft_dir, target_dir, root) -> new_draft_dir`` run after writing
            (``recipecli convert --to speculators``).
    """

    name: str
    target: dict[str, Any]
    draft: dict[str, Any]
    specs: list[TensorSpec]
    what: str
    post: Callable[[Path, Path, Path], Path] | None = field(default=None, repr=False)

    def write(self, root: Path) -> tuple[Path, Path]:
        """Write ``root/target/config.json`` and the draft checkpoint; return both dirs."""
        t = root / "target"
        t.mkdir(parents=True, exist_ok=True)
        (t / "config.json").write_text(json.dumps(self.target, indent=1))
        d = write_checkpoint(root / "draft", self.draft, self.specs)
        if self.post is not None:
            d = self.post(d, t, root)
        return t, d


def _stale_t2d():
    """A valid 151936/32000 ``t2d`` with one more id marked (32001 ids for Vd 32000)."""
    t2d = valid_vocab_map(151936, 32000)[1].copy()
    t2d[int((~t2d).nonzero()[0][0])] = True
    return t2d


def _without(case: Case, *names: str) -> Case:
    """``case`` with the draft tensors ``names`` left out of the checkpoint."""
    case.specs = [s for s in case.specs if s.name not in names]
    return case


def _vmaps(draft: dict[str, Any], target: dict[str, Any]):
    text = target.get("text_config") or target
    return valid_vocab_map(int(text["vocab_size"]), int(draft["draft_vocab_size"]))


def _specforge(name: str, draft: dict[str, Any], target: dict[str, Any], what: str, **kw) -> Case:
    """SpecForge writes midlayer.*, fc, norm, lm_head, d2t and t2d; no embed_tokens."""
    d2t, t2d = _vmaps(draft, target)
    kw.setdefault("d2t", d2t)
    kw.setdefault("t2d", t2d)
    return Case(name, target, draft, draft_specs(draft, **kw), what)


def _convert_speculators(extra: list[str]) -> Callable[[Path, Path, Path], Path]:
    def post(draft_dir: Path, target_dir: Path, root: Path) -> Path:
        out = root / "draft-speculators"
        cmd = [sys.executable, "-m", "recipecli", "convert", str(draft_dir), str(out)]
        cmd += ["--to", "speculators", "--target", str(target_dir), "--verifier", "tiny/target"]
        proc = subprocess.run(cmd + extra, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"recipecli convert failed: {proc.stderr.strip()[-500:]}")
        return out

    return post


LLAMA8B = "meta-llama__Meta-Llama-3.1-8B"
QWEN30B = "Qwen__Qwen3-30B-A3B"


def _modelopt_export(target: dict[str, Any]) -> dict[str, Any]:
    """The ModelOpt export template with its nulls filled as export_spec_ckpt_config does
    (from the base model config; eagle_config from the training defaults)."""
    cfg = fixture("nvidia-modelopt-template__LlamaForCausalLMEagle3-export")
    for k, v in list(cfg.items()):
        if v is None and k in target:
            cfg[k] = target[k]
    cfg["num_hidden_layers"] = 1
    cfg["draft_vocab_size"] = 32000
    cfg["torch_dtype"] = "bfloat16"
    cfg["head_dim"] = target["hidden_size"] // target["num_attention_heads"]
    for k in ("attention_bias", "mlp_bias"):
        cfg[k] = False
    cfg["attention_dropout"] = 0.0
    cfg["pretraining_tp"] = 1
    cfg["eagle_config"].update(
        {
            "eagle_aux_hidden_state_layer_ids": [1, 15, 28],
            "use_aux_hidden_state": True,
            "use_input_layernorm_in_first_layer": True,
            "use_last_layernorm": True,
            "use_mtp_layernorm": False,
            "parallel_draft_step": 1,
            "parallel_draft_heads_num_layers": 0,
        }
    )
    return {k: v for k, v in cfg.items() if v is not None}


def _modelopt_speculators(target: dict[str, Any]) -> dict[str, Any]:
    """ModelOpt's VLLM_EAGLE3_ONE_CKPT_CFG_TEMPLATE filled from the draft and verifier."""
    cfg = fixture("nvidia-modelopt-template__vllm-Eagle3Speculator")
    layer = cfg["transformer_layer_config"]
    for k in list(layer):
        if layer[k] is None and k in target:
            layer[k] = target[k]
    layer["num_hidden_layers"] = 1
    layer["model_type"] = "llama"
    layer["head_dim"] = target["hidden_size"] // target["num_attention_heads"]
    for k in ("attention_bias", "mlp_bias"):
        layer[k] = False
    layer["attention_dropout"] = 0.0
    layer["pretraining_tp"] = 1
    cfg["transformer_layer_config"] = {k: v for k, v in layer.items() if v is not None}
    cfg["draft_vocab_size"] = 32000
    cfg["target_hidden_size"] = target["hidden_size"]
    cfg["torch_dtype"] = "bfloat16"
    cfg["transformers_version"] = "4.55.0"
    cfg["speculators_config"]["verifier"] = {
        "architectures": target["architectures"],
        "name_or_path": "meta-llama/Llama-3.1-8B-Instruct",
    }
    return cfg


def build_cases() -> list[Case]:
    """All fixture pairs and synthetic variations (see the module docstring)."""
    cases: list[Case] = []
    llama8b = fixture(LLAMA8B)
    qwen30b = fixture(QWEN30B)

    # ---------------------------------------------------------------- fixture pairs
    for draft_fx, target_fx in (
        ("sgl-project-SpecForge-template__llama3-8B-eagle3", LLAMA8B),
        ("sgl-project-SpecForge-template__qwen3-8b-eagle3", "Qwen__Qwen3-8B"),
        ("sgl-project-SpecForge-template__qwen3-30B-A3B-eagle3", QWEN30B),
        ("sgl-project-SpecForge-template__gpt-oss-120B-eagle3", "openai__gpt-oss-120b"),
        ("sgl-project-SpecForge-template__deepseek-v3-671b-eagle3", "deepseek-ai__DeepSeek-V3"),
    ):
        d = fixture(draft_fx)
        n = draft_fx.split("__")[1]
        cases.append(
            _specforge(f"specforge-{n}", d, fixture(target_fx), f"{draft_fx} on {target_fx}")
        )
    d = fixture("sgl-project-SpecForge-template__qwen3-30B-A3B-eagle3.1")
    cases.append(
        _specforge(
            "specforge-qwen3-30B-A3B-eagle3.1",
            d,
            qwen30b,
            "SpecForge Eagle 3.1 template (fc_norm, norm_output) on Qwen3-30B-A3B",
            fc_norm=True,
        )
    )
    d = fixture("SafeAILab__EAGLE3-traineagle3-config")
    cases.append(
        _specforge(
            "safeailab-eagle3-llama3.1-8b",
            d,
            llama8b,
            "SafeAILab EAGLE3 trainer config (architectures LlamaForCausalLM) on Llama-3.1-8B",
        )
    )
    d = fixture("yuhuili__EAGLE-LLaMA3-Instruct-8B")
    cases.append(
        Case(
            "eagle1-llama3-8b-as-eagle3",
            llama8b,
            d,
            draft_specs(d, with_embed=True),
            "EAGLE-1 config (bias: false, no draft_vocab_size) with an EAGLE3-shaped table",
        )
    )
    d = _modelopt_export(llama8b)
    d2t, _ = _vmaps(d, llama8b)
    cases.append(
        Case(
            "modelopt-export-llama3.1-8b",
            llama8b,
            d,
            draft_specs(d, d2t=d2t),
            "ModelOpt LlamaForCausalLMEagle3 export (nested eagle_config ids, d2t, no t2d)",
        )
    )
    d = _modelopt_speculators(llama8b)
    d2t, _ = valid_vocab_map(128256, 32000)
    cases.append(
        Case(
            "modelopt-vllm-speculator-llama3.1-8b",
            llama8b,
            d,
            draft_specs(d, d2t=d2t),
            "ModelOpt convert_to_vllm_ckpt speculators template (midlayer.* names kept)",
        )
    )
    d = fixture("SafeAILab__EAGLE3-traineagle3-config")
    c = _specforge(
        "speculators-convert-safeailab",
        d,
        llama8b,
        "recipecli convert --to speculators of the SafeAILab draft (--norm-before-residual false)",
    )
    c.post = _convert_speculators(["--norm-before-residual", "false"])
    cases.append(c)

    # ---------------------------------------------------------------- synthetic variations
    base = fixture("sgl-project-SpecForge-template__qwen3-30B-A3B-eagle3")

    def var(name: str, what: str, mutate=None, **kw) -> Case:
        """Base pair with the draft config mutated; tensors keep the base geometry."""
        d = copy.deepcopy(base)
        if mutate:
            mutate(d)
        kw.setdefault("target_hidden", 2048)
        if "d2t" not in kw:
            kw["d2t"], kw["t2d"] = valid_vocab_map(151936, 32000)
        return Case(f"syn-{name}", qwen30b, d, draft_specs(base, **kw), what)

    def drop(key):
        return lambda d: d.pop(key)

    def setk(**kv):
        return lambda d: d.update(kv)

    cases += [
        var("base", "base pair unchanged"),
        var("missing-hidden_size", "draft config without hidden_size", drop("hidden_size")),
        var(
            "null-num_attention_heads", "num_attention_heads: null", setk(num_attention_heads=None)
        ),
        var(
            "aux-top-3",
            "3 aux ids at the top level",
            setk(eagle_aux_hidden_state_layer_ids=[1, 23, 44]),
        ),
        var(
            "aux-nested-3",
            "3 aux ids under eagle_config",
            setk(eagle_config={"eagle_aux_hidden_state_layer_ids": [1, 23, 44]}),
        ),
        var(
            "aux-top-4",
            "4 aux ids at the top level, fc [H, 4*Ht]",
            setk(eagle_aux_hidden_state_layer_ids=[1, 12, 23, 44]),
            k=4,
        ),
        var(
            "aux-nested-4",
            "4 aux ids under eagle_config, fc [H, 4*Ht]",
            setk(eagle_config={"eagle_aux_hidden_state_layer_ids": [1, 12, 23, 44]}),
            k=4,
        ),
        var(
            "aux-both-differ",
            "top-level ids [2, 24, 45] and eagle_config ids [1, 23, 44]",
            setk(
                eagle_aux_hidden_state_layer_ids=[2, 24, 45],
                eagle_config={"eagle_aux_hidden_state_layer_ids": [1, 23, 44]},
            ),
        ),
        var("no-d2t", "draft_vocab_size 32000 < V but no d2t/t2d", d2t=None, t2d=None),
        var(
            "d2t-without-draft_vocab_size",
            "no draft_vocab_size (vLLM takes Vd = V) with a 32000-row lm_head and d2t",
            drop("draft_vocab_size"),
            d2t=valid_vocab_map(151936, 32000)[0],
            t2d=None,
        ),
        var(
            "tied-no-lm_head",
            "tie_word_embeddings true and no lm_head (Vd = V, no vocab map)",
            lambda d: (d.update(tie_word_embeddings=True), d.pop("draft_vocab_size")),
            with_lm_head=False,
            d2t=None,
            t2d=None,
        ),
        # issue #24: vLLM 0.33's Eagle3LlamaForCausalLM never ties its head (it loads the
        # draft's [32000, H] lm_head), and its load_weights skips t2d: both load
        var(
            "tied-reduced-vocab",
            "tie_word_embeddings true with draft_vocab_size 32000 < V and the draft's lm_head",
            setk(tie_word_embeddings=True),
        ),
        var(
            "t2d-stale",
            "t2d marks one target id more than draft_vocab_size (d2t valid)",
            d2t=valid_vocab_map(151936, 32000)[0],
            t2d=_stale_t2d(),
        ),
        _without(
            var(
                "use_aux-false-no-fc",
                "eagle_config.use_aux_hidden_state false and no fc.weight",
                setk(eagle_config={"use_aux_hidden_state": False}),
            ),
            "fc.weight",
        ),
        var(
            "arch-LlamaForCausalLM",
            "architectures [LlamaForCausalLM]",
            setk(architectures=["LlamaForCausalLM"]),
        ),
        var(
            "arch-Eagle3LlamaForCausalLM",
            "architectures [Eagle3LlamaForCausalLM]",
            setk(architectures=["Eagle3LlamaForCausalLM"]),
        ),
        var(
            "arch-MistralForCausalLM",
            "architectures [MistralForCausalLM] (renamed Eagle3MistralForCausalLM)",
            setk(architectures=["MistralForCausalLM"]),
        ),
        var(
            "norm_before_residual-top",
            "norm_before_residual: true at the top level",
            setk(norm_before_residual=True),
        ),
        var(
            "norm_before_residual-nested",
            "norm_before_residual: true under eagle_config only",
            setk(eagle_config={"norm_before_residual": True}),
        ),
        var(
            "norm_before_fc-nested",
            "eagle_config.norm_before_fc true with input_norm [3*Ht]",
            setk(eagle_config={"norm_before_fc": True}),
            norm_before_fc=True,
        ),
        var(
            "norm_before_fc-top-no-tensor",
            "norm_before_fc: true at the top level, no input_norm tensor",
            setk(norm_before_fc=True),
        ),
        var(
            "fc_norm-no-tensors",
            "fc_norm: true but no fc_norm.* tensors",
            setk(fc_norm=True),
        ),
        var(
            "use_aux-false",
            "eagle_config.use_aux_hidden_state false, fc present",
            setk(eagle_config={"use_aux_hidden_state": False}),
        ),
        var(
            "target_hidden_size-wrong",
            "target_hidden_size 4096 declared, fc built for Ht 2048",
            setk(target_hidden_size=4096),
        ),
    ]
    qwen3 = {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"]}
    qk_norm = [
        TensorSpec(n, "BF16", (128,), norm_values(n, 128))
        for n in ("midlayer.self_attn.q_norm.weight", "midlayer.self_attn.k_norm.weight")
    ]
    c = var(
        "qwen3-draft",
        "model_type qwen3 draft (Eagle3Qwen3ForCausalLM) with q_norm/k_norm",
        setk(**qwen3),
    )
    c.specs += qk_norm
    cases.append(c)
    c = var(
        "qwen3-draft-aux-top-4",
        "model_type qwen3 draft, 4 aux ids at the top level, fc [H, 4*Ht]",
        setk(**qwen3, eagle_aux_hidden_state_layer_ids=[1, 12, 23, 44]),
        k=4,
    )
    c.specs += qk_norm
    cases.append(c)
    cases.append(
        var(
            "qwen3-draft-no-qk-norm",
            "model_type qwen3 draft without q_norm/k_norm tensors",
            setk(**qwen3),
        )
    )

    def speculators(name: str, what: str, layer: dict | None = None, k: int = 3, **top) -> Case:
        """A speculators-format draft (layers.0.* names) of the base geometry."""
        tlc = {
            key: base[key]
            for key in (
                "model_type", "hidden_size", "num_attention_heads", "num_key_value_heads",
                "head_dim", "intermediate_size", "num_hidden_layers", "vocab_size",
                "max_position_embeddings", "rms_norm_eps", "rope_theta", "torch_dtype",
                "hidden_act",
            )
        }  # fmt: skip
        tlc.update(layer or {})
        cfg: dict[str, Any] = {
            "architectures": ["Eagle3Speculator"],
            "speculators_model_type": "eagle3",
            "speculators_version": "0.1.0",
            "draft_vocab_size": 32000,
            "target_hidden_size": 2048,
            "norm_before_residual": False,
            "transformer_layer_config": tlc,
            "speculators_config": {
                "algorithm": "eagle3",
                "proposal_methods": [{"proposal_type": "greedy", "speculative_tokens": 3}],
                "default_proposal_method": "greedy",
                "verifier": {
                    "name_or_path": "Qwen/Qwen3-30B-A3B",
                    "architectures": ["Qwen3MoeForCausalLM"],
                },
            },
            "torch_dtype": "bfloat16",
        }
        cfg.update(top)
        d2t, t2d = valid_vocab_map(151936, 32000)
        specs = draft_specs(cfg, naming="layers.0", k=k, target_hidden=2048, d2t=d2t, t2d=t2d)
        return Case(f"syn-{name}", qwen30b, cfg, specs, what)

    cases.append(speculators("speculators-llama", "speculators format, layers.0.* names"))
    c = speculators(
        "speculators-qwen3",
        "speculators format, transformer_layer_config model_type qwen3, q/k norms",
        {"model_type": "qwen3"},
    )
    c.specs += [
        TensorSpec(n, "BF16", (128,), norm_values(n, 128))
        for n in ("layers.0.self_attn.q_norm.weight", "layers.0.self_attn.k_norm.weight")
    ]
    cases.append(c)
    c = speculators(
        "speculators-no-hidden_act",
        "speculators format, transformer_layer_config without hidden_act (no class defaults)",
    )
    del c.draft["transformer_layer_config"]["hidden_act"]
    cases.append(c)
    cases.append(
        speculators(
            "speculators-mistral",
            "speculators format, transformer_layer_config model_type mistral",
            {"model_type": "mistral"},
        )
    )
    cases.append(
        speculators(
            "speculators-aux-top-4-direct",
            "speculators format with 4 top-level eagle_aux_hidden_state_layer_ids, fc [H, 4*Ht]",
            k=4,
            eagle_aux_hidden_state_layer_ids=[1, 12, 23, 44],
        )
    )
    cases.append(
        speculators(
            "speculators-nbr-true",
            "speculators format, norm_before_residual true",
            norm_before_residual=True,
        )
    )
    c = var("speculators-aux-top-4", "recipecli convert --to speculators of a 4-id draft", k=4)
    c.draft["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": [0, 11, 22, 43]}
    # --force: convert's post-write check now refuses this output; published files predate it
    c.post = _convert_speculators(["--norm-before-residual", "false", "--force"])
    cases.append(c)
    c = var(
        "speculators-nbr-default",
        "recipecli convert --to speculators, norm_before_residual removed",
    )

    def strip_nbr(draft_dir: Path, target_dir: Path, root: Path) -> Path:
        out = _convert_speculators(["--norm-before-residual", "false"])(draft_dir, target_dir, root)
        cfg = json.loads((out / "config.json").read_text())
        cfg.pop("norm_before_residual", None)
        (out / "config.json").write_text(json.dumps(cfg, indent=1))
        return out

    c.post = strip_nbr
    cases.append(c)
    cases += _accounting_cases(var)
    return cases


def _accounting_cases(var: Callable[..., Case]) -> list[Case]:
    """Issue #24: pairs for the accounting's conformance (tests/conformance/test_vllm_accounting.py):
    a shipped ``input_norm`` without ``norm_before_fc``, unexpected ``.bias`` names (on a module
    vLLM builds without bias, on a stacked projection, on a module it does not build), tied and
    untied heads, a reduced vocab with and without ``t2d``."""
    H, V, Vd = 2048, 151936, 32000

    def bias(name: str, rows: int) -> TensorSpec:
        return TensorSpec(name, "BF16", (rows,))

    def extra(case: Case, *specs: TensorSpec) -> Case:
        case.specs += list(specs)
        return case

    def own_geometry(case: Case, extra: tuple[TensorSpec, ...] = (), **kw: Any) -> Case:
        """``case`` with its tensors built from its own (mutated) config."""
        case.specs = draft_specs(case.draft, target_hidden=H, **kw) + list(extra)
        return case

    d2t, t2d = valid_vocab_map(V, Vd)
    return [
        var(
            "input_norm-no-norm_before_fc",
            "input_norm.weight [3*Ht] shipped, norm_before_fc absent everywhere",
            norm_before_fc=True,
        ),
        var(
            "input_norm-norm_before_fc-false",
            "input_norm.weight [3*Ht] shipped, norm_before_fc: false at the top level",
            lambda d: d.update(norm_before_fc=False),
            norm_before_fc=True,
        ),
        extra(var("fc-bias", "fc.bias [H] shipped (fc has no bias)"), bias("fc.bias", H)),
        extra(
            var("o_proj-bias", "midlayer.self_attn.o_proj.bias [H], attention_bias false"),
            bias("midlayer.self_attn.o_proj.bias", H),
        ),
        extra(
            var("q_proj-bias", "midlayer.self_attn.q_proj.bias [nh*hd] (stacked into qkv_proj)"),
            bias("midlayer.self_attn.q_proj.bias", 4096),
        ),
        extra(
            var("norm-bias", "norm.bias [H]: an RMSNorm has no bias"),
            bias("norm.bias", H),
        ),
        extra(
            var("stray-bias", "foo.bias [H]: a .bias on a module vLLM does not build"),
            bias("foo.bias", H),
        ),
        extra(
            var("stray-weight", "foo.weight [H]: a name vLLM has no module for"),
            bias("foo.weight", H),
        ),
        var(
            "tied-embed-full-vocab",
            "tie_word_embeddings true, Vd = V, embed_tokens [V, H] and no lm_head",
            lambda d: (d.update(tie_word_embeddings=True), d.pop("draft_vocab_size")),
            with_embed=True,
            with_lm_head=False,
            d2t=None,
            t2d=None,
        ),
        own_geometry(
            var(
                "untied-full-vocab",
                "no draft_vocab_size (Vd = V), own lm_head [V, H], no vocab map",
                lambda d: (d.update(tie_word_embeddings=False), d.pop("draft_vocab_size")),
            ),
        ),
        own_geometry(
            var(
                "attention_bias-true",
                "attention_bias true, q/k/v/o biases shipped",
                lambda d: d.update(attention_bias=True),
            ),
            d2t=d2t,
            t2d=t2d,
            extra=(bias("midlayer.self_attn.o_proj.bias", H),),
        ),
        own_geometry(
            var(
                "attention_bias-true-no-o_proj-bias",
                "attention_bias true, q/k/v biases shipped, no o_proj.bias",
                lambda d: d.update(attention_bias=True),
            ),
            d2t=d2t,
            t2d=t2d,
        ),
        extra(
            var(
                "mlp_bias-true",
                "mlp_bias true, gate/up/down biases shipped",
                lambda d: d.update(mlp_bias=True),
            ),
            *(bias(f"midlayer.mlp.{n}_proj.bias", 12288) for n in ("gate", "up")),
            bias("midlayer.mlp.down_proj.bias", H),
        ),
        extra(
            var("gate_proj-bias", "midlayer.mlp.gate_proj.bias, mlp_bias false (stacked)"),
            bias("midlayer.mlp.gate_proj.bias", 12288),
        ),
        var(
            "untied-embed-reduced-vocab",
            "tie_word_embeddings false, embed_tokens [V, H], lm_head [Vd, H], d2t and t2d",
            lambda d: d.update(tie_word_embeddings=False),
            with_embed=True,
        ),
        var("d2t-no-t2d", "draft_vocab_size 32000 < V, d2t without t2d", d2t=d2t, t2d=None),
        var("t2d-no-d2t", "draft_vocab_size 32000 < V, t2d without d2t", d2t=None, t2d=t2d),
    ]


CASES = {c.name: c for c in build_cases()}
