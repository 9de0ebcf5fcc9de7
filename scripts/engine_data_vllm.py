#!/usr/bin/env python3
"""vLLM registry extraction for scripts/build_engine_data.py (ast only, no vLLM import).

What it does
- Reads the dict literals _TEXT_GENERATION_MODELS, _MULTIMODAL_MODELS and
  _SPECULATIVE_DECODING_MODELS from vllm/model_executor/models/registry.py
  (module names without a "vllm." prefix live under vllm.model_executor.models,
  see registry.py _resolve_module_name).
- For every target class, resolves its base classes through `from X import Y [as Z]`,
  `import X as Y` and module-level `Name = Other` aliases (both branches of
  `if TYPE_CHECKING: ... else: ...` are scanned; the runtime value wins; platform
  switches `current_platform.is_cuda()/is_rocm()/...` are evaluated for a CUDA host),
  recursively across modules, and reports supports_eagle3 = True when
  interfaces.SupportsEagle3 is reached in the MRO.
- evidence: "file:line" of the class (in the chain) that lists SupportsEagle3 as a
  base, or of the target class itself when the answer is False.
- Also records, for information, whether the class (or an ancestor) defines
  set_aux_hidden_state_layers / get_eagle3_default_aux_hidden_state_layers and
  whether the target's class body was found at all ("unresolved" list).

- config_registry (issue #31): vllm/transformers_utils/config.py _CONFIG_REGISTRY (model_type ->
  the config class get_config builds), each class's module from configs/__init__.py
  _CLASS_TO_MODULE, and the transformers model type whose defaults apply when the class is a
  transformers class or a subclass that sets no defaults of its own.

Limits (static analysis): classes created by factories/`type()` calls or bases that
are call expressions are not followed; those show up under "unresolved_bases".
No vLLM/torch import is done.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(".")  # set by vllm_registry()
INTERFACES_MOD = "vllm.model_executor.models.interfaces"
EAGLE3_NAME = "SupportsEagle3"
AUX_METHODS = ("set_aux_hidden_state_layers", "get_eagle3_default_aux_hidden_state_layers")


def resolve_module_name(rel: str) -> str:
    return rel if rel.startswith("vllm.") else f"vllm.model_executor.models.{rel}"


def module_path(mod: str) -> Path | None:
    p = ROOT / (mod.replace(".", "/") + ".py")
    if p.is_file():
        return p
    p = ROOT / mod.replace(".", "/") / "__init__.py"
    return p if p.is_file() else None


@cache
def parse(mod: str):
    p = module_path(mod)
    if p is None:
        return None
    return p, ast.parse(p.read_text(), filename=str(p))


def abs_module(cur_mod: str, is_pkg: bool, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    parts = cur_mod.split(".")
    base = parts if is_pkg else parts[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


@cache
def module_symbols(mod: str):
    """name -> ('class', node) | ('import', module, attr) | ('module', module) | ('alias', expr)."""
    parsed = parse(mod)
    if parsed is None:
        return {}
    path, tree = parsed
    is_pkg = path.name == "__init__.py"
    syms: dict[str, tuple] = {}

    def visit(stmts, runtime: bool = True):
        for n in stmts:
            if isinstance(n, ast.ClassDef):
                syms[n.name] = ("class", n)
            elif isinstance(n, ast.ImportFrom):
                src = abs_module(mod, is_pkg, n.level, n.module)
                for a in n.names:
                    if a.name == "*":
                        continue
                    syms[a.asname or a.name] = ("import", src, a.name)
            elif isinstance(n, ast.Import):
                for a in n.names:
                    if a.asname:
                        syms[a.asname] = ("module", a.name)
                    else:
                        syms[a.name.split(".")[0]] = ("module", a.name.split(".")[0])
            elif isinstance(n, ast.Assign) and len(n.targets) == 1:
                t = n.targets[0]
                if isinstance(t, ast.Name) and isinstance(n.value, (ast.Name, ast.Attribute)):
                    if runtime or t.id not in syms:
                        syms[t.id] = ("alias", n.value)
            elif isinstance(n, ast.If):
                verdict = eval_test(n.test)
                if verdict is True:
                    visit(n.body)
                elif verdict is False:
                    visit(n.body, runtime=False)
                    visit(n.orelse)
                else:  # unknown condition: both, the `if` branch wins
                    visit(n.orelse)
                    visit(n.body)
            elif isinstance(n, ast.Try):
                visit(n.body)
                for h in n.handlers:
                    visit(h.body, runtime=False)

    visit(tree.body)
    return syms


PLATFORM_TRUE = {"is_cuda", "is_cuda_alike"}  # assume an NVIDIA CUDA host


def eval_test(t: ast.expr):
    """Evaluate an `if` test at runtime on a CUDA host: True/False/None (unknown)."""
    if isinstance(t, ast.Name) and t.id == "TYPE_CHECKING":
        return False
    if isinstance(t, ast.Call) and isinstance(t.func, ast.Attribute):
        if isinstance(t.func.value, ast.Name) and t.func.value.id == "current_platform":
            return t.func.attr in PLATFORM_TRUE
    if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
        v = eval_test(t.operand)
        return None if v is None else not v
    if isinstance(t, ast.BoolOp):
        vals = [eval_test(v) for v in t.values]
        if isinstance(t.op, ast.Or):
            if any(v is True for v in vals):
                return True
            return False if all(v is False for v in vals) else None
        if any(v is False for v in vals):
            return False
        return True if all(v is True for v in vals) else None
    return None


def resolve_name(mod: str, name: str, depth: int = 0):
    """Return ('class', mod, node) or ('module', mod) or None."""
    if depth > 30:
        return None
    sym = module_symbols(mod).get(name)
    if sym is None and name in ("object", "Protocol", "Generic"):
        return ("external", "builtins", name)
    if sym is None:
        # a submodule of a package imported as `from pkg import sub`
        sub = f"{mod}.{name}"
        if module_path(sub):
            return ("module", sub)
        return None
    kind = sym[0]
    if kind == "class":
        return ("class", mod, sym[1])
    if kind == "import":
        src, attr = sym[1], sym[2]
        if module_path(f"{src}.{attr}"):
            return ("module", f"{src}.{attr}")
        if module_path(src) is None:
            return ("external", src, attr)
        return resolve_name(src, attr, depth + 1)
    if kind == "module":
        return ("module", sym[1])
    if kind == "alias":
        return resolve_expr(mod, sym[1], depth + 1)
    return None


def resolve_expr(mod: str, expr: ast.expr, depth: int = 0):
    if isinstance(expr, ast.Name):
        return resolve_name(mod, expr.id, depth)
    if isinstance(expr, ast.Attribute):
        base = resolve_expr(mod, expr.value, depth)
        if base and base[0] == "module":
            if module_path(base[1]) is None:
                return ("external", base[1], expr.attr)
            return resolve_name(base[1], expr.attr, depth + 1)
        if base and base[0] == "external":
            return ("external", f"{base[1]}.{base[2]}", expr.attr)
        return None
    if isinstance(expr, ast.Subscript):  # Generic[...]
        return resolve_expr(mod, expr.value, depth)
    return None


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


@cache
def analyse_class(mod: str, cls_name: str):
    """Returns dict(found, eagle3_evidence, aux_methods, unresolved_bases)."""
    r = resolve_name(mod, cls_name)
    if not r or r[0] != "class":
        return {"found": False, "eagle3": None, "aux": [], "unresolved": [cls_name]}
    _, cmod, node = r
    path = parse(cmod)[0]
    evidence = None
    aux = [
        f"{rel(path)}:{f.lineno}:{f.name}"
        for f in node.body
        if isinstance(f, ast.FunctionDef) and f.name in AUX_METHODS
    ]
    unresolved = []
    for b in node.bases:
        br = resolve_expr(cmod, b)
        if br and br[0] == "class" and br[2].name == EAGLE3_NAME and br[1] == INTERFACES_MOD:
            evidence = evidence or f"{rel(path)}:{node.lineno}"
            continue
        if br and br[0] == "class":
            sub = analyse_class(br[1], br[2].name)
            if sub["eagle3"] and not evidence:
                evidence = sub["eagle3"]
            aux += sub["aux"]
            unresolved += sub["unresolved"]
        elif br and br[0] == "external":
            pass  # torch / transformers / typing bases
        else:
            unresolved.append(f"{rel(path)}:{node.lineno}:{ast.unparse(b)}")
    return {
        "found": True,
        "eagle3": evidence,
        "aux": aux,
        "unresolved": unresolved,
        "where": f"{rel(path)}:{node.lineno}",
        "mod": cmod,
    }


#: the class attribute Model Runner V2 reads on the target's inner decoder before it runs EAGLE3
#: with pipeline parallelism (vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py
#: verify_supports_aux_hidden_states_over_pp; default False on interfaces.EagleModelMixin)
PP_ATTR = "supports_aux_hidden_states_over_pp"
#: the attributes _inner_decoder follows: model.get_language_model() / model.language_model, then
#: its ``.model``
DECODER_ATTR = "model"
LANGUAGE_MODEL_ATTRS = ("language_model",)


def _class_node(mod: str, cls_name: str):
    r = resolve_name(mod, cls_name)
    return (r[1], r[2]) if r and r[0] == "class" else None


def _base_classes(mod: str, node: ast.ClassDef):
    for b in node.bases:
        br = resolve_expr(mod, b)
        if br and br[0] == "class":
            yield br[1], br[2]


def class_attr(mod: str, node: ast.ClassDef, name: str, depth: int = 0):
    """(value, "file:line") of a literal class attribute ``name`` found first along the bases
    (depth first, in base order, as Python's MRO does for single-branch chains), else None."""
    if depth > 30:
        return None
    path = parse(mod)[0]
    for stmt in node.body:
        target = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, value = stmt.target, stmt.value
        if isinstance(target, ast.Name) and target.id == name:
            try:
                return ast.literal_eval(value), f"{rel(path)}:{stmt.lineno}"
            except ValueError:
                return None
    for bmod, bnode in _base_classes(mod, node):
        found = class_attr(bmod, bnode, name, depth + 1)
        if found is not None:
            return found
    return None


def _find_member(mod: str, node: ast.ClassDef, name: str, depth: int = 0):
    """(module, statement) of the first definition of ``name`` (a method, or a class attribute
    assignment) along the class and its bases."""
    if depth > 30:
        return None
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
            return mod, stmt
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in stmt.targets
        ):
            return mod, stmt
    for bmod, bnode in _base_classes(mod, node):
        found = _find_member(bmod, bnode, name, depth + 1)
        if found is not None:
            return found
    return None


def _called_class(mod: str, node: ast.ClassDef, func: ast.expr, where: str):
    """The class a call of ``func`` (inside a method of the class ``node``, defined in module
    ``where``) builds: ``LlamaModel(...)``, ``self.model_cls(...)`` (a class attribute, looked up
    from ``node`` so a subclass's override wins), ``self._init_model(...)`` (a method whose
    ``return`` builds it)."""
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "self"
    ):
        member = _find_member(mod, node, func.attr)
        if member is None:
            return None
        mmod, stmt = member
        if isinstance(stmt, ast.Assign):
            r = resolve_expr(mmod, stmt.value)
            return (r[1], r[2]) if r and r[0] == "class" else None
        for ret in ast.walk(stmt):
            if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Call):
                r = resolve_expr(mmod, ret.value.func)
                if r and r[0] == "class":
                    return r[1], r[2]
        return None
    r = resolve_expr(where, func)
    return (r[1], r[2]) if r and r[0] == "class" else None


def _inits(mod: str, node: ast.ClassDef, depth: int = 0):
    """Every ``__init__`` along the class and its bases, nearest first: (module, function)."""
    if depth > 30:
        return
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "__init__":
            yield mod, stmt
    for bmod, bnode in _base_classes(mod, node):
        yield from _inits(bmod, bnode, depth + 1)


def _self_assign(mod: str, node: ast.ClassDef, attr: str):
    """The class that the nearest ``__init__`` assigning ``self.<attr>`` with a call builds
    (``self.model = LlamaModel(...)``; an ``__init__`` that only calls ``super().__init__`` passes
    to its base's); ``("call", text)`` when the call builds no class found statically; None when
    no ``__init__`` assigns it."""
    for where, fn in _inits(mod, node):
        for stmt in ast.walk(fn):
            if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)):
                continue
            for t in stmt.targets:
                if (
                    isinstance(t, ast.Attribute)
                    and t.attr == attr
                    and isinstance(t.value, ast.Name)
                    and t.value.id == "self"
                ):
                    found = _called_class(mod, node, stmt.value.func, where)
                    return found if found is not None else ("call", ast.unparse(stmt.value.func))
    return None


def aux_over_pp(mod: str, cls_name: str, depth: int = 0) -> dict[str, Any]:
    """Whether Model Runner V2 runs EAGLE3 with PP on this target: the inner decoder's
    ``supports_aux_hidden_states_over_pp`` (``{"aux_over_pp": bool | None, "decoder": ...,
    "evidence": ...}``; None when the decoder is built at run time, e.g. a multimodal target's
    ``language_model`` from the HF config)."""
    found = _class_node(mod, cls_name)
    if found is None:
        return {"aux_over_pp": None, "decoder": None, "evidence": f"class {cls_name} not found"}
    cmod, node = found
    for attr in LANGUAGE_MODEL_ATTRS:
        lm = _self_assign(cmod, node, attr)
        if lm is not None and lm[0] != "call" and depth < 3:
            inner = aux_over_pp(lm[0], lm[1].name, depth + 1)
            return {**inner, "decoder": f"{attr}: {inner['decoder']}"}
        if lm is not None:
            return {"aux_over_pp": None, "decoder": f"{attr}: {_shown(lm)}", "evidence": "run time"}
    dec = _self_assign(cmod, node, DECODER_ATTR)
    if dec is None or dec[0] == "call":
        shown = _shown(dec) if dec else None
        return {"aux_over_pp": None, "decoder": shown, "evidence": "decoder not resolved"}
    value = class_attr(dec[0], dec[1], PP_ATTR)
    return {
        "aux_over_pp": bool(value[0]) if value else False,
        "decoder": f"{dec[0]}.{dec[1].name}",
        "evidence": value[1] if value else "EagleModelMixin default (False)",
    }


def _shown(found) -> str:
    return found[1] if found[0] == "call" else f"{found[0]}.{found[1].name}"


def registry_dicts():
    tree = ast.parse((ROOT / "vllm/model_executor/models/registry.py").read_text())
    out = {}
    for n in tree.body:
        t = n.targets[0] if isinstance(n, ast.Assign) else getattr(n, "target", None)
        if isinstance(t, ast.Name) and t.id in (
            "_TEXT_GENERATION_MODELS",
            "_MULTIMODAL_MODELS",
            "_SPECULATIVE_DECODING_MODELS",
        ):
            out[t.id] = {
                k.value: (v.elts[0].value, v.elts[1].value, k.lineno)
                for k, v in zip(n.value.keys, n.value.values, strict=False)
            }
    return out


# --------------------------------------------------------------------------- config registry (#31)

CONFIG_PY = "vllm/transformers_utils/config.py"
CONFIGS_INIT = "vllm/transformers_utils/configs/__init__.py"
#: the geometry fields a subclass must leave alone for its transformers base's defaults to apply
GEOMETRY_FIELDS = frozenset(
    ("hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim", "intermediate_size",
     "num_hidden_layers", "rms_norm_eps", "vocab_size", "max_position_embeddings")
)  # fmt: skip


def _registry_pairs(node: ast.Call) -> list[tuple[str, str, int]]:
    """(model_type, class name, line) of ``LazyConfigDict(kimi_k2="DeepseekV3Config", ...,
    **{"unlimited-ocr": ...})``."""
    out = []
    for kw in node.keywords:
        if kw.arg is not None:
            out.append((kw.arg, ast.literal_eval(kw.value), kw.lineno))
        elif isinstance(kw.value, ast.Dict):
            out += [(ast.literal_eval(k), ast.literal_eval(v), k.lineno)
                    for k, v in zip(kw.value.keys, kw.value.values, strict=True) if k]  # fmt: skip
    return out


def _transformers_base(mod: str, name: str) -> tuple[str | None, str]:
    """(transformers class whose defaults apply, why) for vLLM's config class ``name`` in ``mod``:
    its one base when imported from transformers (not ``PreTrainedConfig``) and the class sets no
    ``__init__`` / ``__post_init__`` and no geometry field of its own."""
    sym = module_symbols(mod).get(name)
    if not sym or sym[0] != "class":
        return None, f"class {name} not found in {mod}"
    node = sym[1]
    bases = [module_symbols(mod).get(ast.unparse(b)) for b in node.bases]
    if len(bases) != 1 or not bases[0] or bases[0][0] != "import":
        return None, f"{name} bases: {[ast.unparse(b) for b in node.bases]}"
    _, src_mod, attr = bases[0]
    if not src_mod.startswith("transformers") or attr in ("PreTrainedConfig", "PretrainedConfig"):
        return None, f"{name} derives from {src_mod}.{attr}, not a transformers model config"
    own = {t.id for s in node.body if isinstance(s, (ast.Assign, ast.AnnAssign))
           for t in (s.targets if isinstance(s, ast.Assign) else [s.target])
           if isinstance(t, ast.Name)}  # fmt: skip
    fns = {s.name for s in node.body if isinstance(s, ast.FunctionDef)}
    if own & GEOMETRY_FIELDS or fns & {"__init__", "__post_init__"}:
        return None, f"{name} subclasses {attr} and sets its own defaults"
    return attr, f"{name} subclasses transformers {attr} (model_type only)"


def config_registry(transformers_classes: dict[str, str]) -> dict[str, dict[str, Any]]:
    """model_type -> the config class vLLM's ``get_config`` builds for it (``_CONFIG_REGISTRY``
    in ``vllm/transformers_utils/config.py``, class modules from ``configs/__init__.py``
    ``_CLASS_TO_MODULE``): ``class``, ``module``, ``transformers_class`` and
    ``transformers_model_type`` (whose transformers defaults apply, else None), ``evidence``.
    ``transformers_classes`` maps a transformers class name to its model type."""
    tree = ast.parse((ROOT / CONFIG_PY).read_text())
    call = next(n.value for n in tree.body if isinstance(n, ast.AnnAssign)
                and ast.unparse(n.target) == "_CONFIG_REGISTRY"
                and isinstance(n.value, ast.Call))  # fmt: skip
    assert isinstance(call, ast.Call)
    init = ast.parse((ROOT / CONFIGS_INIT).read_text())
    to_module: dict[str, str] = next(ast.literal_eval(n.value) for n in init.body
                                     if isinstance(n, ast.AnnAssign) and n.value is not None
                                     and ast.unparse(n.target) == "_CLASS_TO_MODULE")  # fmt: skip
    out: dict[str, dict[str, Any]] = {}
    for model_type, cls, line in _registry_pairs(call):
        module = to_module.get(cls, "")
        base: str | None
        if module == "transformers":
            base, why = cls, f"{cls} is transformers' own class"
        else:
            base, why = _transformers_base(module, cls)
        out[model_type] = {
            "class": cls,
            "module": module,
            "transformers_class": base,
            "transformers_model_type": transformers_classes.get(base) if base else None,
            "why": why,
            "evidence": f"{CONFIG_PY}:{line} _CONFIG_REGISTRY",
        }
    return dict(sorted(out.items()))


def _transformers_classes() -> dict[str, str]:
    """transformers class name -> its model type, at the transformers version vLLM's model pins
    (recipecli/data/transformers/, read from the classes by extract_transformers_fields.py)."""
    from recipecli.engines.base import transformers_defaults
    from recipecli.engines.vllm.sources import TRANSFORMERS

    models = transformers_defaults(TRANSFORMERS)["models"]
    return {e["class"]: mt for mt, e in sorted(models.items(), reverse=True)}


def vllm_registry(root: Path, version: str) -> dict:
    """The registry data of an unpacked vLLM wheel at ``root`` (see the module docstring)."""
    global ROOT
    ROOT = root
    parse.cache_clear()
    module_symbols.cache_clear()
    analyse_class.cache_clear()
    regs = registry_dicts()
    eagle3_drafts = {}
    for arch, (m, c, _line) in regs["_SPECULATIVE_DECODING_MODELS"].items():
        if "eagle3" in m or "Eagle3" in arch or "Eagle3" in c or "peagle" in arch.lower():
            eagle3_drafts[arch] = [resolve_module_name(m), c]
    targets = {}
    for table in ("_TEXT_GENERATION_MODELS", "_MULTIMODAL_MODELS"):
        for arch, (m, c, _line) in regs[table].items():
            mod = resolve_module_name(m)
            a = analyse_class(mod, c)
            targets[arch] = {
                "module": mod,
                "class": c,
                "supports_eagle3": bool(a["eagle3"]),
                "evidence": a["eagle3"] or a.get("where") or f"class {c} not found in {mod}",
            }
            if a["eagle3"]:
                pp = aux_over_pp(mod, c)
                targets[arch]["aux_over_pp"] = pp["aux_over_pp"]
                targets[arch]["decoder"] = pp["decoder"]
                targets[arch]["aux_over_pp_evidence"] = pp["evidence"]
    return {
        "version": version,
        "source": f"vllm {version} wheel (PyPI), static ast scan by scripts/build_engine_data.py",
        "eagle3_drafts": eagle3_drafts,
        "targets": dict(sorted(targets.items())),
        "config_registry": config_registry(_transformers_classes()),
    }


def extract(source: Path, tree: Any) -> dict:
    """The vLLM data from a wheel (``build_engine_data.py vllm WHEEL``): unpacked, then read."""
    import re
    import tempfile
    import zipfile

    version = re.search(r"vllm-([0-9][^-]*)-", source.name)
    with tempfile.TemporaryDirectory() as tmp:
        zipfile.ZipFile(source).extractall(tmp)
        return vllm_registry(Path(tmp), version.group(1) if version else "unknown")
