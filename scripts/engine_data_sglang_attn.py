"""SGLang (issue #25): the TP group each EAGLE3 target's attention splits its heads over.

Under DP attention SGLang splits the TP group into DP attention groups of ``attn_tp_size`` =
TP / DP ranks (``runtime_context.py`` ``derive_attn_tp_size``). Some targets' attention asserts
its heads against that size (``Qwen3MoeAttention.__init__``: ``attn_tp_size =
get_parallel().attn_tp_size`` ... ``assert self.total_num_heads % attn_tp_size == 0``), others
against the whole TP group (``LlamaAttention.__init__``: ``tp_size = get_parallel().tp_size``).

Read with :mod:`ast` from the module of each target's decoder (``self.model``, else a wrapper's
``self.language_model``), else the
target's own module, then the sibling modules those import from: every class ``__init__`` with
an ``assert <heads> % <size> == 0`` on ``total_num_heads`` / ``num_heads``, and where ``<size>``
comes from (``attn_tp_size`` or ``tp_size``). ``group`` is ``attn_tp`` or ``tp`` when all such
classes found agree, else None with the reason. Called by ``engine_data_sglang.sglang_layouts``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from typing import Any

R = "python/sglang/srt/models/"

#: ``assert self.total_num_heads % attn_tp_size == 0`` and the like
HEADS_ASSERT = re.compile(r"(?:self\.)?(?:total_num_heads|num_heads) % (\w+) == 0")


def _size_origin(fn: ast.FunctionDef, name: str) -> str | None:
    """``attn_tp`` / ``tp`` for the divisor ``name`` of a heads assert in ``fn``: the name
    itself, or what ``name = ...`` assigns in ``fn`` (``get_parallel().attn_tp_size``)."""
    exprs = [name]
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and any(ast.unparse(t) == name for t in n.targets):
            exprs.append(ast.unparse(n.value))
    text = " ".join(exprs)
    if "attn_tp_size" in text:
        return "attn_tp"
    if "tp_size" in text:
        return "tp"
    return None


def module_groups(classes: dict[str, Any], module: str) -> dict[str, str | None]:
    """``Class.__init__`` -> its heads assert's group, for each class of ``module`` with one."""
    out: dict[str, str | None] = {}
    for cname, c in classes.get(module, {}).items():
        fn = c.methods.get("__init__")
        if fn is None:
            continue
        for n in ast.walk(fn):
            if isinstance(n, ast.Assert) and (m := HEADS_ASSERT.fullmatch(ast.unparse(n.test))):
                out[f"{R}{module}.py:{n.lineno} {cname}.__init__"] = _size_origin(fn, m.group(1))
                break
    return out


def _modules(idx: Any, first: str) -> Iterable[str]:
    """``first``, then the sibling modules it imports names from (sorted)."""
    yield first
    yield from sorted({src for src, _ in idx.imports.get(first, {}).values()} - {first})


def attention_group(idx: Any, module: str) -> dict[str, Any]:
    """The group of the heads asserts in ``module`` (else in the modules it imports from)."""
    for mod in _modules(idx, module):
        found = module_groups(idx.classes, mod)
        if not found:
            continue
        groups = set(found.values())
        group = groups.pop() if len(groups) == 1 else None
        reason = {} if group else {"reason": f"the heads asserts disagree: {sorted(found)}"}
        return {"group": group, "evidence": sorted(found), **reason}
    return {"group": None, "evidence": [], "reason": f"no heads assert in {module} or its imports"}


def _local_import(c: Any) -> str | None:
    """The module a ``self.model`` / ``self.language_model = X(...)`` of ``c.__init__`` builds
    from, when ``X`` is imported inside ``__init__`` (``from sglang.srt.models.X import Y``)."""
    fn = c.methods.get("__init__")
    if fn is None:
        return None
    local = {
        a.asname or a.name: (n.module or "").split(".")[-1]
        for n in ast.walk(fn)
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("sglang.srt.models.")
        for a in n.names
    }
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call):
            target, f = ast.unparse(n.targets[0]), n.value.func
            if target in ("self.model", "self.language_model") and isinstance(f, ast.Name):
                if f.id in local:
                    return local[f.id]
    return None


def attention_groups(
    idx: Any, targets: dict[str, dict[str, Any]], decoder: Callable[..., Any]
) -> dict[str, dict[str, Any]]:
    """Per aux-capturing target architecture: ``{group, evidence[, reason]}``; ``decoder`` is
    ``engine_data_sglang._decoder`` (the class ``self.model = ...`` builds, or with an attribute
    name ``self.language_model = ...``, a multimodal wrapper's text model)."""
    out: dict[str, dict[str, Any]] = {}
    for arch, e in targets.items():
        if not e["captures_aux"]:
            continue
        module = e["module"][len(R) : -3]
        c = idx.resolve(module, arch)
        dec = (decoder(idx, c) or decoder(idx, c, "self.language_model")) if c else None
        inner = dec.module if dec is not None else (_local_import(c) if c else None)
        out[arch] = attention_group(idx, inner or module)
    return out
