"""SGLang registry extraction for scripts/build_engine_data.py (wheel + ast, no import).

Extracted mechanically from the wheel (``sglang/srt/...``, ``python/sglang/srt/...`` in the
repository):

* every ``EntryClass`` of ``models/*.py`` (a class or a list of classes; ``ModelRegistry``
  registers each under its ``__name__``);
* for every registered class, whether it has ``set_eagle3_layers_to_capture`` (the method the
  target must have, ``attention_backend_setup.py`` ``configure_aux_hidden_state_capture``),
  following base classes through ``from sglang.srt.models.X import Y`` imports, and which rule
  that method applies to the draft's ids (``+1``; ``+1`` only when the first id is 1; as-is when
  the largest id is the layer count; ``+1`` on the default too; delegation to an inner model);
* the draft architecture renames of ``ModelConfig._config_draft_model``.

Read by hand and VERIFIED here (each fact names a file and a snippet that must occur in it, else
the script fails): how the common target families capture (which hidden-state indices can be
captured, and what an id outside them does).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

W = "sglang/srt/"  # prefix inside the wheel
R = "python/sglang/srt/"  # prefix inside the repository (citations)
M = W + "models/"

#: capture mechanisms read by hand: name -> (final index L capturable, an id that is not
#: captured, evidence file, snippet)
CAPTURE_FACTS: dict[str, tuple[bool, str, str, str]] = {
    # LlamaModel.forward: capture_output=... if i in self.layers_to_capture, i in 0..L-1
    "layer_loop": (False, "dropped", "models/llama.py", "if i in self.layers_to_capture"),
    # GptOssModel.forward: final_norm(..., capture=... if self.end_layer in self.layers_to_capture)
    "layer_loop_final": (True, "dropped", "models/gpt_oss.py", "self.end_layer in self.layers_to_capture"),
    # DeepseekV2Model.forward: AuxHiddenStatePacker(len(...)).finalize() raises on a short count
    "packed": (False, "raises_forward", "models/deepseek_v2.py", "AuxHiddenStatePacker(len(self.layers_to_capture))"),
    # Qwen2MoeModel.set_eagle3_layers_to_capture: setattr(self.layers[layer_id], ...) -> IndexError
    "layer_flags": (False, "raises_startup", "models/qwen2_moe.py", 'setattr(self.layers[layer_id], "_is_layer_to_capture", True)'),
}  # fmt: skip

#: target architecture -> capture mechanism (read by hand; the rule is extracted)
TARGET_CAPTURE: dict[str, str] = {
    "LlamaForCausalLM": "layer_loop",
    "Qwen2ForCausalLM": "layer_loop",
    "Qwen3ForCausalLM": "layer_loop",
    "MiniMaxM2ForCausalLM": "layer_loop",
    "Glm4MoeForCausalLM": "layer_loop",
    "GptOssForCausalLM": "layer_loop_final",
    "DeepseekV3ForCausalLM": "packed",
    "DeepseekV2ForCausalLM": "packed",
    "Qwen2MoeForCausalLM": "layer_flags",
    "Qwen3MoeForCausalLM": "layer_flags",
}

EAGLE3_DRAFT_MODULES = {
    "llama_eagle3.py": "LlamaForCausalLMEagle3",
    "kimi_k25_eagle3.py": "Eagle3DeepseekV2ForCausalLM",
}


@dataclass
class _Class:
    module: str
    name: str
    bases: list[str]
    methods: dict[str, ast.FunctionDef] = field(default_factory=dict)


def _entry_classes(mod: ast.Module) -> list[str]:
    for node in mod.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "EntryClass" for t in node.targets
        ):
            value = node.value
            items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
            return [ast.unparse(i) for i in items]
    return []


class _Index:
    """Classes of ``models/*.py`` and the names each module imports from sibling modules."""

    def __init__(self, tree: Any) -> None:
        self.classes: dict[str, dict[str, _Class]] = {}
        self.imports: dict[str, dict[str, tuple[str, str]]] = {}
        self.entries: dict[str, str] = {}
        for path in tree.glob(M + r"[^/]+\.py"):
            mod = ast.parse(tree.read(path))
            name = path[len(M) : -3]
            self.classes[name] = {}
            self.imports[name] = {}
            for node in mod.body:
                if isinstance(node, ast.ClassDef):
                    c = _Class(name, node.name, [ast.unparse(b) for b in node.bases])
                    for stmt in node.body:
                        if isinstance(stmt, ast.FunctionDef):
                            c.methods[stmt.name] = stmt
                    self.classes[name][node.name] = c
                elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "sglang.srt.models."
                ):
                    src = node.module.split(".")[-1]
                    for a in node.names:
                        self.imports[name][a.asname or a.name] = (src, a.name)
            for cls in _entry_classes(mod):
                self.entries[cls] = path

    def resolve(self, module: str, name: str, *, skip: _Class | None = None) -> _Class | None:
        """The class ``name`` means in ``module`` (its own, else an import)."""
        own = self.classes.get(module, {}).get(name)
        if own is not None and own is not skip:
            return own
        if name in self.imports.get(module, {}):
            src, real = self.imports[module][name]
            return self.resolve(src, real)
        return None

    def find_method(self, c: _Class, method: str, depth: int = 0) -> _Class | None:
        """The class of ``c``'s MRO (depth-first, models package only) that defines ``method``."""
        if method in c.methods:
            return c
        if depth > 20:
            return None
        for base in c.bases:
            b = self.resolve(c.module, base.split(".")[-1], skip=c if base == c.name else None)
            if b is not None:
                found = self.find_method(b, method, depth + 1)
                if found is not None:
                    return found
        return None


def _rule(fn: ast.FunctionDef) -> str:
    """How ``set_eagle3_layers_to_capture`` turns the draft's ids into capture indices."""
    text = ast.unparse(fn)
    if "layer_ids[0] == 1" in text:
        return "plus1_if_first_is_1"
    if "max(layer_ids) == num_layers" in text:
        return "as_is_if_max_is_L"
    if "layer_ids = [2, num_layers // 2, num_layers - 3]" in text and "val + 1" in text:
        return "plus1_default_too"
    if "val + 1 for val in layer_ids" in text:
        return "plus1"
    if ".set_eagle3_layers_to_capture(layer_ids)" in text:
        return "delegates"
    return "other"


def _draft_renames(tree: Any) -> dict[str, str]:
    """``ModelConfig._config_draft_model``: draft architecture -> the name it is looked up as,
    for every ``if ... architectures[0] == "X"`` / ``in [...]`` whose body assigns a string."""
    mod = ast.parse(tree.read(W + "configs/model_config.py"))
    fn = next(
        n
        for n in ast.walk(mod)
        if isinstance(n, ast.FunctionDef) and n.name == "_config_draft_model"
    )
    out: dict[str, str] = {}
    for node in ast.walk(fn):
        if not isinstance(node, ast.If):
            continue
        names = [
            c.value
            for c in ast.walk(node.test)
            if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value[:1].isupper()
        ]
        if "architectures[0]" not in ast.unparse(node.test):
            continue
        for stmt in node.body:
            if (
                isinstance(stmt, ast.Assign)
                and "architectures[0]" in ast.unparse(stmt.targets[0])
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            ):
                for n in names:
                    out[n] = stmt.value.value
                break
    return dict(sorted(out.items()))


def sglang_registry(tree: Any, version: str) -> dict[str, Any]:
    """The registry data of the SGLang wheel at ``version``."""
    idx = _Index(tree)
    archs = {a: R + p[len(W) :] for a, p in sorted(idx.entries.items())}
    drafts = {
        cls: archs[cls]
        for mod, cls in EAGLE3_DRAFT_MODULES.items()
        if archs.get(cls, "").endswith(mod)
    }
    if len(drafts) != len(EAGLE3_DRAFT_MODULES):
        raise SystemExit(f"sglang {version}: EAGLE3 draft classes moved; re-read the source")
    targets: dict[str, dict[str, Any]] = {}
    for arch, path in sorted(idx.entries.items()):
        module = path[len(M) : -3]
        c = idx.resolve(module, arch)
        if c is None:
            continue
        owner = idx.find_method(c, "set_eagle3_layers_to_capture")
        entry: dict[str, Any] = {"module": archs[arch], "captures_aux": owner is not None}
        if owner is None:
            entry["evidence"] = (
                f"{archs[arch]} {arch}: no set_eagle3_layers_to_capture (class or bases)"
            )
        else:
            fn = owner.methods["set_eagle3_layers_to_capture"]
            entry["rule"] = _rule(fn)
            entry["evidence"] = f"{R}models/{owner.module}.py:{fn.lineno} {owner.name}"
        targets[arch] = entry
    for arch, mech in TARGET_CAPTURE.items():
        final, oob, file, snippet = CAPTURE_FACTS[mech]
        text = tree.read(W + file)
        if arch not in targets or not targets[arch]["captures_aux"]:
            raise SystemExit(f"sglang {version}: {arch} no longer captures aux; re-read it")
        if snippet not in text:
            raise SystemExit(f"sglang {version}: {file} no longer contains {snippet!r}; re-read it")
        line = next(i for i, ln in enumerate(text.splitlines(), 1) if snippet in ln)
        targets[arch].update(
            capture=mech, final_index=final, not_captured=oob, capture_evidence=f"{R}{file}:{line}"
        )
    return {
        "package": "sglang",
        "version": version,
        "source": f"sglang {version} wheel (PyPI), scripts/build_engine_data.py sglang",
        "architectures": archs,
        "eagle3_drafts": drafts,
        "draft_renames": _draft_renames(tree),
        "targets": targets,
    }


def extract(source: Any, tree: Any) -> dict[str, Any]:
    """The SGLang data from a wheel or folder (``build_engine_data.py sglang SOURCE``)."""
    import re

    version = re.search(r"sglang-([0-9][^-]*)-", source.name)
    return sglang_registry(tree, version.group(1) if version else "unknown")
