"""SGLang (issue #31): the config classes SGLang registers for model types (``_CONFIG_REGISTRY``).

``get_config`` (``srt/utils/hf_transformers/config.py``) builds a model type found in
``_CONFIG_REGISTRY`` (``srt/utils/hf_transformers/common.py``) with SGLang's class, and every entry
is also passed to ``AutoConfig.register``. The registry is the dict comprehension
``{cls.model_type: cls for cls in [AfmoeConfig, ...]}`` over classes of ``sglang.srt.configs``,
then ``_CONFIG_REGISTRY["kimi_k2"] = _KimiK2ConfigAlias`` and the like: aliases that subclass a
transformers class (``from transformers import DeepseekV3Config as _HFDeepseekV3Config``) to change
only ``model_type``.

Read with :mod:`ast`: per model type, the class, where it is defined, the transformers class
whose defaults apply (the class itself when imported from transformers, or its one transformers
base when the subclass sets no ``__init__`` / ``__post_init__`` and no geometry field), and the
line. ``.update(...)`` over a runtime tuple and ``getattr(transformers, ...)`` entries are left
out (their class is only known at run time). Called by ``engine_data_sglang.sglang_registry``.
"""

from __future__ import annotations

import ast
from typing import Any

W = "sglang/srt/"
COMMON = W + "utils/hf_transformers/common.py"
#: a subclass that sets one of these keeps no transformers defaults for the geometry
GEOMETRY_FIELDS = frozenset(
    ("hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim", "intermediate_size",
     "num_hidden_layers", "rms_norm_eps", "vocab_size", "max_position_embeddings")
)  # fmt: skip
BASE_CONFIGS = ("PretrainedConfig", "PreTrainedConfig")


def transformers_imports(mod: ast.Module) -> dict[str, str]:
    """local name -> class name of every ``from transformers[...] import X [as Y]`` in ``mod``."""
    out: dict[str, str] = {}
    for n in ast.walk(mod):
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("transformers"):
            for a in n.names:
                out[a.asname or a.name] = a.name
    return out


def class_model_type(cls: ast.ClassDef) -> str | None:
    """The literal ``model_type = "..."`` in ``cls``'s body, else None."""
    for s in cls.body:
        if isinstance(s, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "model_type" for t in s.targets
        ):
            v = s.value
            return v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else None
    return None


def class_base(cls: ast.ClassDef, imports: dict[str, str]) -> tuple[str | None, str]:
    """(transformers class whose defaults apply, why) for ``cls``: its one base when that is a
    transformers model config (``imports``: local name -> transformers class) and ``cls`` sets
    no ``__init__`` / ``__post_init__`` and no geometry field; else (None, why)."""
    names = [ast.unparse(b) for b in cls.bases]
    if len(names) != 1 or names[0] not in imports or imports[names[0]] in BASE_CONFIGS:
        return None, f"{cls.name} bases {names}: not a transformers model config"
    own = {
        t.id
        for s in cls.body
        if isinstance(s, (ast.Assign, ast.AnnAssign))
        for t in (s.targets if isinstance(s, ast.Assign) else [s.target])
        if isinstance(t, ast.Name)
    }
    fns = {s.name for s in cls.body if isinstance(s, ast.FunctionDef)}
    base = imports[names[0]]
    if own & GEOMETRY_FIELDS or fns & {"__init__", "__post_init__"}:
        return None, f"{cls.name} subclasses transformers {base} and sets its own defaults"
    return base, f"{cls.name} subclasses transformers {base} (model_type only)"


def _config_modules(tree: Any) -> dict[str, tuple[str, ast.ClassDef, dict[str, str]]]:
    """class name -> (path, class node, transformers imports) over ``sglang/srt/configs/``."""
    out: dict[str, tuple[str, ast.ClassDef, dict[str, str]]] = {}
    for path in tree.glob(W + r"configs/.+\.py"):
        mod = ast.parse(tree.read(path))
        imports = transformers_imports(mod)
        for n in mod.body:
            if isinstance(n, ast.ClassDef):
                out.setdefault(n.name, (path, n, imports))
    return out


def _listed(mod: ast.Module) -> list[tuple[str, int]]:
    """(class name, line) of the classes in ``_CONFIG_REGISTRY``'s dict comprehension."""
    for n in mod.body:
        if (
            isinstance(n, ast.AnnAssign)
            and ast.unparse(n.target) == "_CONFIG_REGISTRY"
            and isinstance(n.value, ast.DictComp)
        ):
            it = n.value.generators[0].iter
            if isinstance(it, ast.List):
                return [(ast.unparse(e), e.lineno) for e in it.elts]
    raise SystemExit(f"{COMMON}: _CONFIG_REGISTRY is no longer a dict comprehension; re-read it")


def _assigned(mod: ast.Module) -> list[tuple[str, str, int]]:
    """(model_type, class name, line) of ``_CONFIG_REGISTRY["k"] = Cls`` anywhere in ``mod``."""
    out = []
    for n in ast.walk(mod):
        if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Subscript):
            t = n.targets[0]
            key = t.slice
            if (
                ast.unparse(t.value) == "_CONFIG_REGISTRY"
                and isinstance(key, ast.Constant)
                and isinstance(n.value, ast.Name)
            ):
                out.append((str(key.value), n.value.id, n.lineno))
    return out


def _transformers_classes() -> dict[str, str]:
    """transformers class name -> its model type, at the transformers version SGLang's model
    pins (recipecli/data/transformers/, read from the classes by extract_transformers_fields.py)."""
    from recipecli.engines.base import transformers_defaults
    from recipecli.engines.sglang.sources import TRANSFORMERS

    models = transformers_defaults(TRANSFORMERS)["models"]
    return {e["class"]: mt for mt, e in sorted(models.items(), reverse=True)}


def config_registry(tree: Any) -> dict[str, dict[str, Any]]:
    """model_type -> {class, module, transformers_class, transformers_model_type, why, evidence}
    of SGLang's ``_CONFIG_REGISTRY`` in the wheel ``tree``; a model type assigned in more than one
    branch (``mellum``: transformers' own class or an alias, by transformers version) is recorded
    with no transformers defaults."""
    transformers_classes = _transformers_classes()
    mod = ast.parse(tree.read(COMMON))
    imports = transformers_imports(mod)
    local = {n.name: n for n in ast.walk(mod) if isinstance(n, ast.ClassDef)}
    classes = _config_modules(tree)
    out: dict[str, dict[str, Any]] = {}

    def add(model_type: str, cls: str, where: str, base: str | None, why: str, line: int) -> None:
        out[model_type] = {
            "class": cls,
            "module": where,
            "transformers_class": base,
            "transformers_model_type": transformers_classes.get(base) if base else None,
            "why": why,
            "evidence": f"python/{COMMON}:{line} _CONFIG_REGISTRY",
        }

    for name, line in _listed(mod):
        if name not in classes:
            continue
        path, node, cimports = classes[name]
        model_type = class_model_type(node)
        if model_type:
            add(model_type, name, f"python/{path}", *class_base(node, cimports), line)
    assigned = _assigned(mod)
    keys = [k for k, _, _ in assigned]
    for model_type, name, line in assigned:
        if keys.count(model_type) > 1:
            why = (
                f"{model_type!r} is assigned in {keys.count(model_type)} branches: run time decides"
            )
            add(model_type, name, f"python/{COMMON}", None, why, line)
        elif name in local:
            add(model_type, name, f"python/{COMMON}", *class_base(local[name], imports), line)
        elif name in imports:
            cls = imports[name]
            add(model_type, cls, "transformers", cls, f"{cls} is transformers' own class", line)
    return dict(sorted(out.items()))
