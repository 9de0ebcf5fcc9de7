"""Tiny target/draft checkpoint pairs for `recipecli check` tests.

A :class:`Pair` holds a target config, a draft config and the draft's tensor specs; a test mutates
exactly one thing (a config key, one tensor, the ``d2t``/``t2d`` values), writes the pair with
:func:`recipecli.testing.builder.write_checkpoint` and runs the checker on it.

Base geometry (the field's notation: H, nh, nkv, hd, I, V, Vd, L), small enough that files are a few KB:

* target: Llama, H = 64, nh = 4, nkv = 2, I = 128, V = 640, L = 8, max_position_embeddings 2048.
* draft (format B, SpecForge ``LlamaForCausalLMEagle3``): H = Ht = 64, nh = 4, nkv = 2, hd = 16,
  I = 128, V = 640, Vd = 128, one layer, no aux ids (k = 3), ``lm_head``, ``d2t`` and ``t2d``,
  no ``embed_tokens`` (borrowed from the target since H equals the target's).

Shapes of the base draft, by hand from vLLM v0.33.0 llama_eagle3.py Eagle3LlamaForCausalLM: q [nh*hd, 2H] = [64, 128]; k/v
[nkv*hd, 2H] = [32, 128]; o [H, nh*hd] = [64, 64]; gate/up [I, H] = [128, 64]; down [64, 128];
fc [H, k*Ht] = [64, 192]; lm_head [Vd, H] = [128, 64]; d2t [128] I64; t2d [640] BOOL.

Vocabulary map (:func:`stride_map`): the draft keeps target ids ``s*i`` with ``s = V // Vd``
(5 for the base), so ``d2t[i] = s*i - i = (s-1)*i`` and ``t2d[s*i]`` is True — easy to reason
about by hand.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from recipecli.check import CheckResult, run_check
from recipecli.checkpoint import open_checkpoint
from recipecli.findings import Finding
from recipecli.testing.builder import TensorSpec, write_checkpoint
from recipecli.testing.specs import draft_specs

# base geometry
H, NH, NKV, HD, INTER, V, VD, L = 64, 4, 2, 16, 128, 640, 128, 8
MAXPOS = 2048


def stride_map(V: int, Vd: int) -> tuple[np.ndarray, np.ndarray]:
    """Valid offsets map keeping target ids ``s*i`` (``s = V // Vd``), docs/check.md#vocabulary-maps.

    Returns:
        ``(d2t, t2d)``: int64 [Vd] offsets ``(s-1)*i`` and bool [V] with ``t2d[s*i]`` True.
    """
    s = V // Vd
    ids = s * np.arange(Vd, dtype=np.int64)
    t2d = np.zeros(V, dtype=bool)
    t2d[ids] = True
    return ids - np.arange(Vd, dtype=np.int64), t2d


def target_config(
    *, H: int = H, nh: int = NH, nkv: int = NKV, V: int = V, L: int = L, **extra: Any
) -> dict[str, Any]:
    """A tiny Llama target config.json."""
    cfg: dict[str, Any] = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": H,
        "num_attention_heads": nh,
        "num_key_value_heads": nkv,
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


def draft_config_b(
    *, H: int = H, nh: int = NH, nkv: int = NKV, hd: int = HD, V: int = V, Vd: int | None = VD
) -> dict[str, Any]:
    """A tiny format-B (SpecForge) draft config.json; ``Vd=None`` leaves out draft_vocab_size."""
    cfg: dict[str, Any] = {
        "architectures": ["LlamaForCausalLMEagle3"],
        "model_type": "llama",
        "hidden_size": H,
        "num_attention_heads": nh,
        "num_key_value_heads": nkv,
        "head_dim": hd,
        "intermediate_size": INTER,
        "num_hidden_layers": 1,
        "vocab_size": V,
        "max_position_embeddings": MAXPOS,
        "rms_norm_eps": 1e-5,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }
    if Vd is not None:
        cfg["draft_vocab_size"] = Vd
    return cfg


def draft_config_d(*, Vd: int = VD, **top: Any) -> dict[str, Any]:
    """A tiny format-D (speculators) draft config.json; ``top`` adds/overrides top-level keys."""
    cfg: dict[str, Any] = {
        "architectures": ["Eagle3Speculator"],
        "speculators_model_type": "eagle3",
        "draft_vocab_size": Vd,
        "target_hidden_size": None,
        "norm_before_residual": False,
        "transformer_layer_config": {
            "model_type": "llama",
            "hidden_act": "silu",
            "hidden_size": H,
            "num_attention_heads": NH,
            "num_key_value_heads": NKV,
            "head_dim": HD,
            "intermediate_size": INTER,
            "num_hidden_layers": 1,
            "vocab_size": V,
            "max_position_embeddings": MAXPOS,
            "rms_norm_eps": 1e-5,
            "torch_dtype": "bfloat16",
        },
        "speculators_config": {"verifier": {"name_or_path": "tiny/target"}},
        "torch_dtype": "bfloat16",
    }
    cfg.update(top)
    return cfg


@dataclass
class Pair:
    """A target/draft pair to mutate and write.

    Attributes:
        target: target config.json.
        draft: draft config.json.
        tensors: draft tensors by name (insertion order = file order).
        target_tensors: target tensors; None means :func:`minimal_target_specs` of ``target``
            (embedding, final norm, head: all `check` reads; L comes from the config).
    """

    target: dict[str, Any]
    draft: dict[str, Any]
    tensors: dict[str, TensorSpec]
    target_tensors: list[TensorSpec] | None = None
    written: tuple[Path, Path] | None = field(default=None, repr=False)

    def copy(self) -> Pair:
        return Pair(
            copy.deepcopy(self.target),
            copy.deepcopy(self.draft),
            dict(self.tensors),
            None if self.target_tensors is None else list(self.target_tensors),
        )

    # ---- mutations
    def drop(self, *names: str) -> Pair:
        for n in names:
            del self.tensors[n]
        return self

    def put(self, name: str, dtype: str, shape: tuple[int, ...], value: Any = None) -> Pair:
        """Add or replace one draft tensor (a hole unless ``value`` is given)."""
        self.tensors[name] = TensorSpec(name, dtype, tuple(shape), value)
        return self

    def reshape(self, name: str, shape: tuple[int, ...]) -> Pair:
        old = self.tensors[name]
        self.tensors[name] = TensorSpec(name, old.dtype, tuple(shape))
        return self

    def set_d2t(self, values: Any, dtype: str = "I64") -> Pair:
        arr = np.asarray(values)
        return self.put("d2t", dtype, arr.shape, arr)

    def set_t2d(self, values: Any, dtype: str = "BOOL") -> Pair:
        arr = np.asarray(values)
        return self.put("t2d", dtype, arr.shape, arr)

    # ---- running
    def write(self, root: Path) -> tuple[Path, Path]:
        specs = (
            self.target_tensors
            if self.target_tensors is not None
            else minimal_target_specs(self.target)
        )
        t = write_checkpoint(root / "target", self.target, specs)
        d = write_checkpoint(root / "draft", self.draft, list(self.tensors.values()))
        self.written = (t, d)
        return t, d

    def run(self, root: Path, **kw: Any) -> CheckResult:
        """Write under ``root`` and run :func:`run_check` (default tps 1, 2, 4)."""
        t, d = self.write(root)
        kw.setdefault("tps", (1, 2, 4))
        return run_check(open_checkpoint(str(t)), open_checkpoint(str(d)), **kw)


def _specs_dict(specs: list[TensorSpec]) -> dict[str, TensorSpec]:
    return {s.name: s for s in specs}


def base_pair(*, Vd: int = VD) -> Pair:
    """The valid base pair (format B draft, module docstring)."""
    dcfg = draft_config_b(Vd=Vd)
    d2t, t2d = stride_map(V, Vd)
    specs = draft_specs(dcfg, d2t=d2t, t2d=t2d)
    return Pair(target_config(), dcfg, _specs_dict(specs))


def base_pair_d(**top: Any) -> Pair:
    """A valid format-D (speculators, ``layers.0.*`` naming) pair."""
    dcfg = draft_config_d(**top)
    d2t, t2d = stride_map(V, VD)
    specs = draft_specs(dcfg, naming="layers.0", d2t=d2t, t2d=t2d, with_embed=True)
    return Pair(target_config(), dcfg, _specs_dict(specs))


def minimal_target_specs(cfg: dict[str, Any], prefix: str = "model.") -> list[TensorSpec]:
    """Only what `check` reads from a target: embed_tokens [V, H], final norm [H], lm_head [V, H]."""
    h, v = cfg["hidden_size"], cfg["vocab_size"]
    return [
        TensorSpec(f"{prefix}embed_tokens.weight", "BF16", (v, h)),
        TensorSpec(f"{prefix}norm.weight", "BF16", (h,), np.ones(h, dtype=np.float32)),
        TensorSpec("lm_head.weight", "BF16", (v, h)),
    ]


def codes(res: CheckResult) -> set[str]:
    return {f.code for f in res.findings}


def find(
    res: CheckResult, code: str, *, engine: str | None = None, tp: int | None = None
) -> list[Finding]:
    """Findings with ``code`` (and ``engine`` / ``tp`` when given)."""
    return [
        f
        for f in res.findings
        if f.code == code and (engine is None or f.engine == engine) and (tp is None or f.tp == tp)
    ]


def one(
    res: CheckResult, code: str, *, engine: str | None = None, tp: int | None = None
) -> Finding:
    """The single finding with ``code`` (/engine/tp); fails the test otherwise."""
    got = find(res, code, engine=engine, tp=tp)
    assert len(got) == 1, (code, engine, tp, [f.to_dict() for f in res.findings])
    return got[0]


def errors(res: CheckResult) -> list[Finding]:
    return [f for f in res.findings if f.severity == "error"]
