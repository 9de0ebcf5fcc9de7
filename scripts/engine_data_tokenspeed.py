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
import re
from typing import Any

from engine_data_sglang import GuardedFn, walk_guarded  # scripts/ is on sys.path (the builder's)
from engine_data_sglang_configs import class_base, class_model_type, transformers_imports

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


def _init_defaults(fn: ast.FunctionDef, fields: tuple[str, ...]) -> dict[str, Any]:
    """The literal defaults of ``fn``'s parameters named in ``fields`` (positional after self,
    then keyword-only); a default that is not a literal is left out."""
    out: dict[str, Any] = {}
    args = fn.args.args[1:]
    positional = zip(args[len(args) - len(fn.args.defaults) :], fn.args.defaults, strict=True)
    keyword = zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True)
    for a, dflt in [*positional, *keyword]:
        if a.arg in fields and dflt is not None:
            try:
                out[a.arg] = ast.literal_eval(dflt)
            except ValueError:
                pass
    return out


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
                    defaults.update(_init_defaults(stmt, fields))
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


HF_UTILS = "python/tokenspeed/runtime/utils/hf_transformers_utils.py"


def _config_registry(tree: Any) -> dict[str, dict[str, Any]]:
    """model_type -> {class, module, transformers_class, transformers_model_type, why, evidence}
    of every class in ``_CONFIG_REGISTRY`` (``hf_transformers_utils.py``: ``get_config`` builds
    these and registers them with ``AutoConfig``), classes read from ``runtime/configs/``; the
    transformers defaults apply to a class that subclasses a transformers class and changes only
    ``model_type`` (``KimiK2Config(DeepseekV3Config)``). Issue #31."""
    from recipecli.engines.base import transformers_defaults
    from recipecli.engines.tokenspeed.sources import TRANSFORMERS

    models = transformers_defaults(TRANSFORMERS)["models"]
    by_class = {e["class"]: mt for mt, e in sorted(models.items(), reverse=True)}
    mod = ast.parse(tree.read(HF_UTILS))
    listed: list[tuple[str, int]] = []
    for node in ast.walk(mod):
        if isinstance(node, ast.AnnAssign) and ast.unparse(node.target) == "_CONFIG_REGISTRY":
            if isinstance(node.value, ast.Dict):
                listed = [(ast.unparse(v), v.lineno) for v in node.value.values]
    if not listed:
        raise SystemExit(f"tokenspeed {tree.commit}: {HF_UTILS} _CONFIG_REGISTRY moved; re-read it")
    found: dict[str, tuple[str, ast.ClassDef, dict[str, str]]] = {}
    for path in tree.glob(r"python/tokenspeed/runtime/configs/[^/]+\.py"):
        cmod = ast.parse(tree.read(path))
        imports = transformers_imports(cmod)
        for n in cmod.body:
            if isinstance(n, ast.ClassDef):
                found.setdefault(n.name, (path, n, imports))
    out: dict[str, dict[str, Any]] = {}
    for name, line in listed:
        if name not in found:
            continue
        path, cls, imports = found[name]
        model_type = class_model_type(cls)
        if not model_type:
            continue
        base, why = class_base(cls, imports)
        out[model_type] = {
            "class": name,
            "module": path,
            "transformers_class": base,
            "transformers_model_type": by_class.get(base) if base else None,
            "why": why,
            "evidence": f"{HF_UTILS}:{line} _CONFIG_REGISTRY",
        }
    return dict(sorted(out.items()))


# --------------------------------------------------------------------------- layouts (issue #25)

SERVER_ARGS = "python/tokenspeed/runtime/utils/server_args.py"
DRAFTERS = "python/tokenspeed/runtime/execution/drafter/"
#: layout axis -> the names in a condition or a field name that mean it (tokenspeed has one DP:
#: ``data_parallel_size`` is the attention DP size, ServerArgs.resolve_parallelism)
TS_AXES: dict[str, str] = {
    "pp": r"pipeline|\bpp_",
    "dp_attention": r"data_parallel_size|\battn_dp\b|has_attn_dp|attn\.dp_size|\bdp_size\b",
    "ep": r"\bep_size\b|has_ep\b|expert_parallel",
    "pd": r"disaggregation_mode",
}
SPEC = re.compile(r"speculative|draft|MTP|EAGLE|DSPARK|DFLASH|DSpark", re.I)


def _server_args(tree: Any) -> ast.ClassDef:
    mod = ast.parse(tree.read(SERVER_ARGS))
    return next(n for n in mod.body if isinstance(n, ast.ClassDef) and n.name == "ServerArgs")


def _axes(tree: Any, cls: ast.ClassDef) -> dict[str, dict[str, Any]]:
    """Per axis: the ServerArgs fields and the ``add_cli_args`` flags that set it (a flag's
    ``choices`` too); an axis with neither is not a layout tokenspeed can be asked for."""
    fields = [s.target.id for s in cls.body if isinstance(s, ast.AnnAssign)
              and isinstance(s.target, ast.Name)]  # fmt: skip
    flags: dict[str, list[Any]] = {}
    for n in ast.walk(cls):
        if isinstance(n, ast.Call) and ast.unparse(n.func) == "parser.add_argument" and n.args:
            names = [
                a.value for a in n.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
            ]
            choices = next((k.value for k in n.keywords if k.arg == "choices"), None)
            for name in names:
                flags[name] = ast.literal_eval(choices) if isinstance(choices, ast.List) else []
    out: dict[str, dict[str, Any]] = {}
    for axis, rx in TS_AXES.items():
        fs = [f for f in fields if re.search(rx, f)]
        fl = {f: c for f, c in flags.items() if re.search(rx, f.lstrip("-").replace("-", "_"))}
        out[axis] = {"fields": fs, "flags": fl, "supported": bool(fs or fl)}
    out["pp"]["evidence"] = f"{SERVER_ARGS} ServerArgs fields and add_cli_args flags"
    return out


def _refusals(tree: Any, cls: ast.ClassDef) -> list[dict[str, Any]]:
    """Every raise/assert of ServerArgs' methods and of the drafter classes whose guards or test
    name a layout axis; ``speculative`` when it concerns speculative decoding."""
    fns = [(GuardedFn(SERVER_ARGS, f), "ServerArgs.") for f in cls.body
           if isinstance(f, ast.FunctionDef)]  # fmt: skip
    for path in tree.glob(DRAFTERS + r"[^/]+\.py"):
        mod = ast.parse(tree.read(path))
        fns += [(GuardedFn(path, f), "") for f in mod.body if isinstance(f, ast.FunctionDef)]
        fns += [(GuardedFn(path, f), c.name + ".") for c in mod.body if isinstance(c, ast.ClassDef)
                for f in c.body if isinstance(f, ast.FunctionDef)]  # fmt: skip
    out = []
    for fn, owner in fns:
        walk_guarded(fn, fn.node.body, [])
        for r in fn.raises:
            cond = " ".join(ast.unparse(t) for t, _ in r.guards)
            cond += " " + (ast.unparse(r.test) if r.test is not None else "")
            axes = [a for a, rx in TS_AXES.items() if re.search(rx, cond)]
            m = r.message
            text = m.value if isinstance(m, ast.Constant) else (ast.unparse(m) if m else None)
            if not axes:
                continue
            out.append({
                "file": fn.file, "function": owner + fn.node.name, "line": r.line,
                "exception": r.exception,
                "guards": [ast.unparse(t) if ok else f"not ({ast.unparse(t)})" for t, ok in r.guards],
                "assert": ast.unparse(r.test) if r.test is not None else None,
                "message": text, "axes": axes,
                "speculative": bool(SPEC.search(fn.file + cond + str(text))),
            })  # fmt: skip
    return out


def _drafters(tree: Any) -> dict[str, str]:
    """``get_drafter_impl``'s ``DRAFTER_MAPPING``: speculative algorithm -> drafter class."""
    mod = ast.parse(tree.read(DRAFTERS + "__init__.py"))
    for n in ast.walk(mod):
        if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "DRAFTER_MAPPING":
            if isinstance(n.value, ast.Dict):
                return {
                    ast.literal_eval(k): ast.unparse(v)
                    for k, v in zip(n.value.keys, n.value.values, strict=True)
                    if k is not None
                }
    raise SystemExit(f"tokenspeed {tree.commit}: DRAFTER_MAPPING moved; re-read the source")


def _eagle_dp(tree: Any, refusals: list[dict[str, Any]]) -> dict[str, Any]:
    """What the EAGLE3 drafter (``Eagle``) does with attention DP: ``self.dp_size`` read from
    the draft runner's mapping and the branches on it (``dp_size > 1``: each DP rank's token
    counts for the collectives)."""
    path = DRAFTERS + "eagle.py"
    mod = ast.parse(tree.read(path))
    reads = [n.lineno for n in ast.walk(mod) if isinstance(n, ast.Assign)
             and ast.unparse(n.targets[0]) == "self.dp_size"]  # fmt: skip
    branches = [f"{path}:{n.lineno} {ast.unparse(n.test)}" for n in ast.walk(mod)
                if isinstance(n, ast.If) and "self.dp_size" in ast.unparse(n.test)]  # fmt: skip
    return {
        "reads_dp_size": f"{path}:{reads[0]}" if reads else None,
        "branches": branches,
        "refusals": [r["line"] for r in refusals if r["file"] == path],
    }


def _dp_is_attention(tree: Any) -> str | None:
    """``attn_dp_size = self.data_parallel_size`` in ``ServerArgs.resolve_parallelism``."""
    for i, line in enumerate(tree.read(SERVER_ARGS).splitlines(), 1):
        if line.strip() == "attn_dp_size = self.data_parallel_size":
            return f"{SERVER_ARGS}:{i}"
    return None


def tokenspeed_layouts(tree: Any) -> dict[str, Any]:
    """The ``layouts`` key (issue #25): the layout axes tokenspeed's ServerArgs and CLI have,
    the layout refusals of ServerArgs and the drafters, the drafter per algorithm and what the
    EAGLE3 drafter does with attention DP. Without a PP axis no target captures aux hidden
    states over pipeline stages: ``aux_over_pp`` is None with that reason."""
    cls = _server_args(tree)
    refusals = _refusals(tree, cls)
    axes = _axes(tree, cls)
    return {
        "axes": axes,
        "dp_is_attention_dp": _dp_is_attention(tree),
        "drafters": _drafters(tree),
        "eagle_drafter_dp": _eagle_dp(tree, refusals),
        "refusals": refusals,
        "aux_over_pp": None,
        "aux_over_pp_reason": (
            "no pipeline-parallel field or flag in ServerArgs: every target runs all its layers "
            "on each rank"
            if not axes["pp"]["supported"]
            else "pipeline parallelism present: re-read the model classes"
        ),
    }


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
        "layouts": tokenspeed_layouts(tree),
        "config_registry": _config_registry(tree),
    }


def extract(source: Any, tree: Any) -> dict[str, Any]:
    """The tokenspeed data from a git directory (``build_engine_data.py tokenspeed GIT``)."""
    return tokenspeed_registry(tree)
