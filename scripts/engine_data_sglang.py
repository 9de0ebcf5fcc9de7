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
* the draft architecture renames of ``ModelConfig._config_draft_model``;
* ``layouts`` (issue #25): the speculative start-up refusals of ``arg_groups/*.py`` and
  ``server_args.py`` that depend on the layout (:func:`layout_refusals`), the algorithm each
  ``handle_server_args`` branch dispatches, the PP stage ``EAGLEWorkerV2`` builds the draft on,
  and per aux-capturing target what it does with aux hidden states under PP (:func:`_pp_capture`).

Read by hand and VERIFIED here (each fact names a file and a snippet that must occur in it, else
the script fails): how the common target families capture (which hidden-state indices can be
captured, and what an id outside them does).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from engine_data_sglang_attn import attention_groups  # the attention TP group per target
from engine_data_sglang_configs import config_registry  # _CONFIG_REGISTRY (issue #31)

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
    attrs: dict[str, ast.expr] = field(default_factory=dict)  # class-level ``X = expr``


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
                        elif isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
                            c.attrs[stmt.targets[0].id] = stmt.value
                    self.classes[name][node.name] = c
                elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "sglang.srt.models."
                ):
                    src = (node.module or "").split(".")[-1]
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


# --------------------------------------------------------------------------- layouts (issue #25)

#: layout axis -> the names in a condition that mean it (server_args fields, runtime_context
#: helpers, the PP speculative env switch)
LAYOUT_AXES: dict[str, str] = {
    "pp": r"\bpp_size\b|SGLANG_ENABLE_PP_SPEC",
    "dp": r"\bdp_size\b",
    "dp_attention": r"enable_dp_attention|attn_dp_enabled_of|\battn_dp_size\b",
    "ep": r"\bep_size\b|\bmoe_a2a_backend\b",
    "pd": r"\bdisaggregation_mode\b",
}
#: a refusal concerns speculative decoding when its condition or message names it
SPEC_TERMS = re.compile(r"speculative|SPEC|\bMTP\b")
#: the start-up validation the layouts go through (resolution hooks and check_server_args)
VALIDATION = (W + r"arg_groups/[^/]+\.py", W + r"server_args\.py")
SPEC_INFO = W + "speculative/spec_info.py"
#: the algorithm field, as the hooks read it (resolving_view / resolved_view / the record)
ALGO_FIELD = re.compile(r"^(cfg|view|server_args|self)\.speculative_algorithm(\.upper\(\))?$")


@dataclass
class GuardedRaise:
    """A ``raise X(msg)`` / ``assert test, msg`` and the ``if`` guards above it."""

    line: int
    guards: list[tuple[ast.expr, bool]]  # (test, taken): taken False = the else branch
    test: ast.expr | None  # an assert's test (the refusal fires when it is false)
    exception: str
    message: ast.expr | None


@dataclass
class GuardedFn:
    """A function's guarded raises and its plain ``name(...)`` calls (with their guards)."""

    file: str
    node: ast.FunctionDef
    raises: list[GuardedRaise] = field(default_factory=list)
    calls: list[tuple[str, int, list[tuple[ast.expr, bool]]]] = field(default_factory=list)


def walk_guarded(fn: GuardedFn, stmts: list[ast.stmt], guards: list[tuple[ast.expr, bool]]) -> None:
    """Collect ``fn``'s raises, asserts and plain calls with the ``if`` guards above each."""
    for s in stmts:
        if isinstance(s, ast.If):
            walk_guarded(fn, s.body, [*guards, (s.test, True)])
            walk_guarded(fn, s.orelse, [*guards, (s.test, False)])
        elif isinstance(s, (ast.For, ast.While, ast.With, ast.Try)):
            for part in ("body", "orelse", "finalbody"):
                walk_guarded(fn, getattr(s, part, []) or [], guards)
            for h in getattr(s, "handlers", []):
                walk_guarded(fn, h.body, guards)
        elif isinstance(s, ast.Raise) and isinstance(s.exc, ast.Call):
            msg = s.exc.args[0] if s.exc.args else None
            fn.raises.append(GuardedRaise(s.lineno, guards, None, ast.unparse(s.exc.func), msg))
        elif isinstance(s, ast.Assert):
            fn.raises.append(GuardedRaise(s.lineno, guards, s.test, "AssertionError", s.msg))
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            if isinstance(s.value.func, ast.Name):
                fn.calls.append((s.value.func.id, s.lineno, guards))


def _algo_value(e: ast.expr, algo: str) -> bool | None:
    """``e`` with ``speculative_algorithm`` = ``algo``: True, False, or None (other terms)."""
    if isinstance(e, ast.BoolOp):
        vals = [_algo_value(v, algo) for v in e.values]
        stop = isinstance(e.op, ast.Or)
        if stop in vals:
            return stop
        return (not stop) if all(v is not None for v in vals) else None
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        v = _algo_value(e.operand, algo)
        return None if v is None else not v
    if isinstance(e, ast.Compare) and len(e.ops) == 1 and ALGO_FIELD.match(ast.unparse(e.left)):
        try:
            other = ast.literal_eval(e.comparators[0])
        except ValueError:
            return None
        op = e.ops[0]
        if isinstance(op, (ast.In, ast.NotIn)):
            return bool((algo in other) == isinstance(op, ast.In))
        if isinstance(op, (ast.Eq, ast.Is)):
            return bool(algo == other)
        if isinstance(op, (ast.NotEq, ast.IsNot)):
            return bool(algo != other)
    return None


def _fires_for(guards: list[tuple[ast.expr, bool]], test: ast.expr | None, algo: str) -> bool:
    """False when a refusal cannot fire for ``algo`` (its guards or assert test decide so)."""
    if any(_algo_value(t, algo) not in (None, taken) for t, taken in guards):
        return False
    return test is None or _algo_value(test, algo) is not True


def _algorithms(tree: Any) -> tuple[list[str], dict[str, list[str]]]:
    """The ``SpeculativeAlgorithm`` members (but NONE) and, per ``_handle_*``, the algorithms
    ``handle_server_args``'s if/elif chain hands to it (``is_X()`` read from its ``return``)."""
    mod = ast.parse(tree.read(SPEC_INFO))
    cls = next(
        n for n in mod.body if isinstance(n, ast.ClassDef) and n.name == "SpeculativeAlgorithm"
    )
    members = [
        t.id
        for s in cls.body
        if isinstance(s, ast.Assign)
        for t in s.targets
        if isinstance(t, ast.Name) and t.id.isupper() and t.id != "NONE"
    ]
    preds = {
        s.name: {a.attr for a in ast.walk(s) if isinstance(a, ast.Attribute) and a.attr in members}
        for s in cls.body
        if isinstance(s, ast.FunctionDef) and s.name.startswith("is_")
    }
    handle = next(
        s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "handle_server_args"
    )
    chain = next(s for s in handle.body if isinstance(s, ast.If))
    dispatch: dict[str, list[str]] = {}
    for algo in members:
        node: ast.stmt | None = chain
        while isinstance(node, ast.If):
            called = {
                c.func.attr
                for c in ast.walk(node.test)
                if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
            }
            if any(algo in preds.get(p, set()) for p in called):
                handler = ast.unparse(node.body[0]).split("(")[0]
                dispatch.setdefault(handler, []).append(algo)
                break
            node = node.orelse[0] if node.orelse else None
    return members, dispatch


def _functions(tree: Any) -> dict[str, GuardedFn]:
    """Every function of the validation files, by name (module level and methods)."""
    out: dict[str, GuardedFn] = {}
    for pattern in VALIDATION:
        for path in tree.glob(pattern):
            for node in ast.walk(ast.parse(tree.read(path))):
                if isinstance(node, ast.FunctionDef):
                    fn = GuardedFn(R + path[len(W) :], node)
                    walk_guarded(fn, node.body, [])
                    out.setdefault(node.name, fn)
    return out


def _refusal(
    fn: GuardedFn,
    r: GuardedRaise,
    caller: tuple[GuardedFn, int, list[tuple[ast.expr, bool]]] | None,
    members: list[str],
    dispatch: dict[str, list[str]],
) -> dict[str, Any] | None:
    """The record of one raise/assert, or None when it names no layout axis or is not about
    speculative decoding."""
    guards = [*(caller[2] if caller else []), *r.guards]
    cond = " ".join(
        ast.unparse(t) for t in [*(g for g, _ in guards), *([r.test] if r.test else [])]
    )
    axes = [a for a, rx in LAYOUT_AXES.items() if re.search(rx, cond)]
    # a literal message as is, an f-string (or other expression) as its source
    m = r.message
    message = m.value if isinstance(m, ast.Constant) else (ast.unparse(m) if m else None)
    handled = fn.node.name in dispatch
    if not axes or not (handled or SPEC_TERMS.search(cond + str(message))):
        return None
    algos = [a for a in dispatch.get(fn.node.name, members) if _fires_for(guards, r.test, a)]
    if not algos:  # fires only without a speculative algorithm
        return None
    return {
        "file": fn.file,
        "function": fn.node.name,
        "line": r.line,
        "called_from": f"{caller[0].file}:{caller[1]} {caller[0].node.name}" if caller else None,
        "exception": r.exception,
        "guards": [ast.unparse(t) if ok else f"not ({ast.unparse(t)})" for t, ok in guards],
        "assert": ast.unparse(r.test) if r.test is not None else None,
        "message": message,
        "axes": axes,
        "algorithms": algos,
    }


def layout_refusals(tree: Any) -> dict[str, Any]:
    """Every raise/assert of the validation files whose guards or test name a layout axis
    (:data:`LAYOUT_AXES`) and that concerns speculative decoding (a ``_handle_*`` hook, or
    :data:`SPEC_TERMS` in its condition or message): file, function, line, exception, guards (a
    function called from exactly one guarded site gets that guard first: ``called_from``), the
    assert's test, the message (an f-string as source) and ``algorithms``, those it can fire
    for with ``speculative_algorithm`` substituted and every other term left open."""
    members, dispatch = _algorithms(tree)
    fns = _functions(tree)
    sites: dict[str, list[tuple[GuardedFn, int, list[tuple[ast.expr, bool]]]]] = {}
    for f in fns.values():
        for name, line, guards in f.calls:
            if name in fns and name != f.node.name:
                sites.setdefault(name, []).append((f, line, guards))
    refusals = []
    for name, f in sorted(fns.items(), key=lambda kv: (kv[1].file, kv[1].node.lineno)):
        one = sites.get(name, [])
        caller = one[0] if len(one) == 1 and one[0][2] else None
        refusals += [x for r in f.raises if (x := _refusal(f, r, caller, members, dispatch))]
    return {"algorithms": members, "dispatch": dispatch, "refusals": refusals}


#: the test (on self.pp_group or get_parallel().pp_group) before what only the last PP stage does
NOT_LAST = re.compile(r"not (self|get_parallel\(\))\.pp_group\.is_last_rank")


def _last_rank_gate(fn: ast.FunctionDef) -> bool:
    """``if not self.pp_group.is_last_rank: return`` at the top level of ``fn``."""
    return any(
        isinstance(s, ast.If)
        and NOT_LAST.fullmatch(ast.unparse(s.test))
        and isinstance(s.body[0], ast.Return)
        for s in fn.body
    )


def _class_attr(idx: _Index, c: _Class, name: str, depth: int = 0) -> _Class | None:
    """The class a class-level ``name = X`` of ``c``'s MRO names."""
    if name in c.attrs:
        v = c.attrs[name]
        return idx.resolve(c.module, v.id) if isinstance(v, ast.Name) else None
    for base in c.bases if depth < 20 else []:
        b = idx.resolve(c.module, base.split(".")[-1], skip=c if base == c.name else None)
        found = _class_attr(idx, b, name, depth + 1) if b else None
        if found is not None:
            return found
    return None


def _built(idx: _Index, c: _Class, init: _Class, call: ast.Call) -> _Class | None:
    """The class ``call`` (in ``init.__init__``) builds: ``X(...)``; ``self._init_model(...)``
    (a method returning ``X(...)``); ``self.body_cls(...)`` (a class attribute); a parameter
    of ``__init__`` whose default is a class (``language_model_cls=Qwen3LLMModel``)."""
    f = call.func
    if isinstance(f, ast.Attribute) and ast.unparse(f.value) == "self":
        owner = idx.find_method(c, f.attr)
        if owner is None:
            return _class_attr(idx, c, f.attr)
        ret = next((r for r in ast.walk(owner.methods[f.attr]) if isinstance(r, ast.Return)), None)
        if ret is not None and isinstance(ret.value, ast.Call):
            return _built(idx, c, owner, ret.value)
        return None
    if not isinstance(f, ast.Name):
        return None
    fn = init.methods.get("__init__")
    a = fn.args if fn else ast.arguments([], [], None, [], [], None, [])
    params = [*a.posonlyargs, *a.args]
    defaults = {p.arg: d for p, d in zip(params[::-1], a.defaults[::-1], strict=False)}
    defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d})
    if f.id in {p.arg for p in [*params, *a.kwonlyargs]}:  # a parameter: its default
        d = defaults.get(f.id)
        return idx.resolve(init.module, d.id) if isinstance(d, ast.Name) else None
    return idx.resolve(init.module, f.id)


def _decoder(idx: _Index, c: _Class, attr: str = "self.model") -> _Class | None:
    """The class ``self.model = ...(...)`` builds in the nearest ``__init__`` of ``c``'s MRO."""
    owner = idx.find_method(c, "__init__")
    if owner is None:
        return None
    for s in ast.walk(owner.methods["__init__"]):
        if isinstance(s, ast.Assign) and isinstance(s.value, ast.Call):
            if ast.unparse(s.targets[0]) == attr:
                return _built(idx, c, owner, s.value)
    return None


def _non_last_branch(fn: ast.FunctionDef) -> tuple[ast.If, ast.Return] | None:
    """The ``if not self.pp_group.is_last_rank:`` branch of a decoder's ``forward`` and its
    ``return`` (what a stage that is not the last hands the next stage)."""
    for n in ast.walk(fn):
        if isinstance(n, ast.If) and NOT_LAST.fullmatch(ast.unparse(n.test)):
            body = ast.Module(n.body, [])
            ret = next((r for r in ast.walk(body) if isinstance(r, ast.Return)), None)
            if ret is not None and ret.value is not None:
                return n, ret
    return None


def _relay(idx: _Index, dec: _Class | None) -> dict[str, Any]:
    """What the decoder's ``forward`` returns on a PP stage that is not the last."""
    fwd = idx.find_method(dec, "forward") if dec else None
    if dec is None or fwd is None:
        return {"decoder": None, "relays_aux": None, "relay_evidence": "decoder not resolved"}
    branch = _non_last_branch(fwd.methods["forward"])
    name = f"{dec.module}.{dec.name}"
    if branch is None:
        where = f"{R}models/{fwd.module}.py {fwd.name}.forward: no 'if not ...pp_group.is_last_rank' return"
        return {"decoder": name, "relays_aux": None, "relay_evidence": where}
    node, ret = branch
    return {
        "decoder": name,
        "non_last_stage_returns": ast.unparse(ret),
        "relays_aux": any("aux" in ast.unparse(b) for b in node.body),
        "relay_evidence": f"{R}models/{fwd.module}.py:{ret.lineno} {fwd.name}.forward",
    }


def _pp_capture(idx: _Index, c: _Class | None, depth: int = 0) -> dict[str, Any]:
    """What an EAGLE3 target class does with aux hidden states under PP: the stages its
    ``set_eagle3_layers_to_capture`` sets capture on (``last`` behind ``if not
    self.pp_group.is_last_rank: return``, else ``all``) and whether a non-last stage's
    ``forward`` return carries them; a delegating wrapper reports its inner model's."""
    owner = idx.find_method(c, "set_eagle3_layers_to_capture") if c else None
    if c is None or owner is None:
        return {"capture_stages": None, "reason": "no set_eagle3_layers_to_capture"}
    fn = owner.methods["set_eagle3_layers_to_capture"]
    where = f"{R}models/{owner.module}.py:{fn.lineno} {owner.name}"
    if _rule(fn) == "delegates":
        inner = next(
            (d for a in ("self.language_model", "self.model") if (d := _decoder(idx, c, a))),
            None,
        )
        if inner is None or depth > 3:
            return {
                "capture_stages": None,
                "gate_evidence": where,
                "reason": "delegates to an inner model not resolved statically",
            }
        got = _pp_capture(idx, inner, depth + 1)
        return {**got, "delegates_to": f"{inner.module}.{inner.name}", "gate_evidence": where}
    stages = "last" if _last_rank_gate(fn) else "all"
    return {"capture_stages": stages, "gate_evidence": where, **_relay(idx, _decoder(idx, c))}


def _draft_stage(tree: Any) -> dict[str, Any]:
    """Which PP stage builds the EAGLE draft worker (``EAGLEWorkerV2.__init__``)."""
    path, attr = W + "speculative/eagle_worker_v2.py", "self._hosts_draft"
    for n in ast.walk(ast.parse(tree.read(path))):
        if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == attr:
            value = ast.unparse(n.value)
            stage = "last" if value.endswith("pp_group.is_last_rank") else None
            return {"stage": stage, "value": value, "evidence": f"{R}{path[len(W) :]}:{n.lineno}"}
    return {"stage": None, "value": None, "evidence": f"{attr} not assigned in {path}"}


def sglang_layouts(tree: Any, idx: _Index, targets: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The ``layouts`` key: refusals, dispatch, draft stage and per-target PP capture."""
    return {
        **layout_refusals(tree),
        "draft_stage": _draft_stage(tree),
        "attention_tp": attention_groups(idx, targets, _decoder),
        "targets": {
            arch: _pp_capture(idx, idx.resolve(e["module"][len(R + "models/") : -3], arch))
            for arch, e in targets.items()
            if e["captures_aux"]
        },
    }


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
        "layouts": sglang_layouts(tree, idx, targets),
        "config_registry": config_registry(tree),
    }


def extract(source: Any, tree: Any) -> dict[str, Any]:
    """The SGLang data from a wheel or folder (``build_engine_data.py sglang SOURCE``)."""
    version = re.search(r"sglang-([0-9][^-]*)-", source.name)
    return sglang_registry(tree, version.group(1) if version else "unknown")
