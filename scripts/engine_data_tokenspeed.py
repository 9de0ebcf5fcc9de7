"""tokenspeed registry extraction for scripts/build_engine_data.py (git objects + ast, no import).

Extracted mechanically at the commit:

* every ``EntryClass`` of ``python/tokenspeed/runtime/models/*.py`` (a class or a list of
  classes; ``ModelRegistry`` registers each under its ``__name__``);
* the model types ``get_config`` builds with tokenspeed's own config classes (``_CONFIG_REGISTRY``
  in ``runtime/utils/hf_transformers_utils.py``) and those classes' ``__init__`` defaults.

Read by hand and VERIFIED here (each fact names a file and a snippet that must occur in it at the
commit, else the script fails): which target classes hand the draft their aux hidden states,
which end their model's ``forward`` with ``return hidden_states, None``, which capture the final
residual (``BaseTransformerModel``) and which build their embedding replicated.
"""

from __future__ import annotations

import ast
from typing import Any

M = "python/tokenspeed/runtime/models/"

#: target architecture -> (captures aux, final residual, embed replicated, evidence file, snippet)
TARGET_FACTS: dict[str, tuple[bool, bool, bool, str, str]] = {
    "LlamaForCausalLM": (True, True, False, "base/transformer_model.py", "layers_to_capture"),
    "GptOssForCausalLM": (True, True, False, "gpt_oss.py", "BaseTransformerModel"),
    "MiniMaxM2ForCausalLM": (True, True, False, "minimax_m2.py", "BaseTransformerModel"),
    "MiniMaxM3SparseForConditionalGeneration": (
        True,
        True,
        True,
        "minimax_m3.py",
        "def resolve_embed",
    ),
    "Qwen2ForCausalLM": (False, False, False, "qwen2.py", "return hidden_states, None"),
    "Qwen3ForCausalLM": (False, False, False, "qwen3.py", "return hidden_states, None"),
    "Qwen3MoeForCausalLM": (False, False, False, "qwen3_moe.py", "return hidden_states, None"),
    "Qwen3OmniMoeForConditionalGeneration": (
        False,
        False,
        False,
        "qwen3_omni.py",
        "return hidden_states, None",
    ),
    "Qwen3ASRForConditionalGeneration": (False, False, False, "qwen3_asr.py", "class "),
    "InklingForConditionalGeneration": (
        False,
        False,
        False,
        "inkling.py",
        "return hidden_states, None",
    ),
    "DeepseekV4ForCausalLM": (False, False, False, "deepseek_v4.py", "class DeepseekV4Model"),
    "DeepseekV3ForCausalLM": (
        True,
        False,
        True,
        "deepseek_v3.py",
        "def set_eagle3_layers_to_capture",
    ),
    "GlmMoeDsaForCausalLM": (True, False, True, "glm5.py", "DeepseekV3Model"),
    "DeepseekV32ForCausalLM": (True, False, True, "deepseek_v32.py", "GlmMoeDsaForCausalLM"),
    "KimiK25ForConditionalGeneration": (
        True,
        False,
        True,
        "kimi_k25.py",
        "def set_eagle3_layers_to_capture",
    ),
    "KimiK3ForConditionalGeneration": (
        True,
        False,
        False,
        "kimi_k3.py",
        "def set_eagle3_layers_to_capture",
    ),
    "LongcatFlashForCausalLM": (
        True,
        False,
        False,
        "longcat_flash.py",
        "def set_eagle3_layers_to_capture",
    ),
    "Qwen3_5ForConditionalGeneration": (
        True,
        False,
        False,
        "qwen3_5.py",
        "class Qwen3_5ForConditionalGeneration",
    ),
    "Qwen3_5MoeForConditionalGeneration": (
        True,
        False,
        False,
        "qwen3_5.py",
        "class Qwen3_5MoeForConditionalGeneration",
    ),
    "Qwen3_5MoeForCausalLM": (True, False, False, "qwen3_5.py", "class Qwen3_5MoeForCausalLM"),
}

EAGLE3_DRAFT_MODULES = {
    "llama_eagle3.py": "LlamaForCausalLMEagle3",
    "deepseek_v3.py": "Eagle3DeepseekV2ForCausalLM",
}


def _entry_classes(source: str) -> list[str]:
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "EntryClass" for t in node.targets
        ):
            value = node.value
            items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
            return [ast.unparse(i) for i in items]
    return []


def _config_classes(tree: Any) -> dict[str, dict[str, Any]]:
    """model_type -> {class, defaults} of tokenspeed's own config classes."""
    utils = tree.read("python/tokenspeed/runtime/utils/hf_transformers_utils.py")
    mod = ast.parse(utils)
    names: list[str] = []
    for node in ast.walk(mod):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if (
                isinstance(target, ast.Name)
                and target.id == "_CONFIG_REGISTRY"
                and node.value is not None
            ):
                value = node.value
                if isinstance(value, ast.Dict):
                    names = [ast.unparse(v).split(".")[-1] for v in value.values]
                elif isinstance(value, ast.Call):
                    names = [ast.unparse(a).split(".")[-1] for a in value.args]
    fields = ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
              "num_attention_heads", "num_key_value_heads", "head_dim", "max_position_embeddings",
              "rms_norm_eps", "tie_word_embeddings", "attention_bias")  # fmt: skip
    out: dict[str, dict[str, Any]] = {}
    for path in tree.glob(r"python/tokenspeed/runtime/configs/[^/]+\.py"):
        cmod = ast.parse(tree.read(path))
        for cls in (n for n in cmod.body if isinstance(n, ast.ClassDef) and n.name in names):
            model_type = None
            defaults: dict[str, Any] = {}
            for stmt in cls.body:
                if (
                    isinstance(stmt, ast.Assign)
                    and isinstance(stmt.targets[0], ast.Name)
                    and stmt.targets[0].id == "model_type"
                ):
                    model_type = ast.literal_eval(stmt.value)
                if isinstance(stmt, ast.FunctionDef) and stmt.name == "__init__":
                    args = stmt.args.args[1:]
                    for a, dflt in zip(
                        args[len(args) - len(stmt.args.defaults) :], stmt.args.defaults, strict=True
                    ):
                        if a.arg in fields:
                            try:
                                defaults[a.arg] = ast.literal_eval(dflt)
                            except ValueError:
                                pass
                    for a, dflt in zip(stmt.args.kwonlyargs, stmt.args.kw_defaults, strict=True):
                        if a.arg in fields and dflt is not None:
                            try:
                                defaults[a.arg] = ast.literal_eval(dflt)
                            except ValueError:
                                pass
            if isinstance(model_type, str) and defaults:
                derived = (
                    {"num_key_value_heads": "num_attention_heads"}
                    if defaults.get("num_key_value_heads", 0) is None
                    else {}
                )
                if defaults.get("head_dim", 0) is None:
                    derived["head_dim"] = "hidden_size // num_attention_heads"
                out[model_type] = {
                    "class": f"tokenspeed {cls.name} ({path.split('/')[-1]})",
                    "defaults": defaults,
                    "derived": derived,
                }
    return out


def tokenspeed_registry(tree: Any) -> dict[str, Any]:
    """The registry data of lightseekorg/tokenspeed at ``tree.commit``."""
    archs: dict[str, str] = {}
    for path in tree.glob(M.replace("/", "/") + r"[^/]+\.py"):
        for name in _entry_classes(tree.read(path)):
            archs[name] = path
    drafts = {
        cls: archs[cls]
        for mod, cls in EAGLE3_DRAFT_MODULES.items()
        if archs.get(cls, "").endswith(mod)
    }
    targets: dict[str, dict[str, Any]] = {}
    for arch, (captures, final_residual, replicated, file, snippet) in TARGET_FACTS.items():
        if arch not in archs:
            raise SystemExit(
                f"tokenspeed {tree.commit}: {arch} is no longer registered; re-read the source"
            )
        text = tree.read(M + file)
        if snippet not in text:
            raise SystemExit(
                f"tokenspeed {tree.commit}: {M + file} no longer contains {snippet!r}; re-read it"
            )
        line = next(i for i, ln in enumerate(text.splitlines(), 1) if snippet in ln)
        targets[arch] = {
            "module": archs[arch],
            "captures_aux": captures,
            "final_residual": final_residual,
            "embed_replicated": replicated,
            "evidence": f"{M + file}:{line}",
        }
    return {
        "commit": tree.commit,
        "source": f"lightseekorg/tokenspeed@{tree.commit} (git), scripts/build_engine_data.py",
        "architectures": dict(sorted(archs.items())),
        "eagle3_drafts": drafts,
        "targets": targets,
        "config_classes": _config_classes(tree),
    }


def extract(source: Any, tree: Any) -> dict[str, Any]:
    """The tokenspeed data from a git directory (``build_engine_data.py tokenspeed GIT``)."""
    return tokenspeed_registry(tree)
