"""Extract the speculative methods each pinned engine accepts, from the engines' own sources.

Writes ``recipecli/engines/<engine>/data/<engine>-<pin slug>-methods.json`` (issue #27), read by
``recipecli/engines/<engine>/methods.py`` at run time (no engine import, no torch). Every value is
parsed with :mod:`ast` from the engine's code at its pin; a construct that moved fails the script
with one line (re-read the source), never a silent empty list.

Usage (sources as for ``scripts/build_engine_data.py``: a wheel, a site-packages folder of the
pinned environment, or a git directory at the pinned commit)::

    python scripts/engine_methods.py vllm ~/.cache/recipecli/vllm-<pin>-*/lib/python3.11/site-packages
    python scripts/engine_methods.py sglang ~/.cache/recipecli/sglang-<pin>-*/lib/python3.11/site-packages
    python scripts/engine_methods.py tokenspeed /work/.mirror/lightseekorg+tokenspeed/repo \
        --commit <pinned commit>

What is read, per engine:

- vLLM ``vllm/config/speculative.py``: the ``SpeculativeMethod`` Literal (flattened), the
  ``MTPModelTypes`` Literal, ``SpeculativeConfig.hf_config_override`` (target model type -> MTP
  model type, the key its layer count ``n_predict`` is read from, the MTP architecture) and
  ``SpeculativeConfig.__post_init__`` (the method auto-detection from the draft's repo name and
  architectures; the ``num_speculative_tokens % n_predict`` rule).
- SGLang ``sglang/srt/speculative/spec_info.py`` ``SpeculativeAlgorithm`` (members) and
  ``spec_registry._RESERVED_ALIASES`` (NEXTN), ``sglang/srt/configs/model_config.py``
  ``ModelConfig._config_draft_model`` (target architecture -> its NextN/MTP draft class) and
  ``arg_groups/speculative_hook.py`` ``_handle_eagle_family`` (targets whose checkpoint carries
  the NextN draft, the draft path defaulting to the model path).
- tokenspeed ``python/tokenspeed/runtime/utils/server_args.py`` (``--speculative-algorithm``
  choices), ``runtime/execution/drafter/__init__.py`` (``DRAFTER_MAPPING``),
  ``runtime/utils/hf_transformers_utils.py`` (the draft architecture rename: ``<arch>NextN``) and
  the ``EntryClass`` names of ``runtime/models/*.py`` that are NextN classes.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pins  # noqa: E402  (scripts/pins.py: the paths derive from each engine's pin)
from build_engine_data import Tree  # noqa: E402  (wheel, folder or git directory)

ROOT = pins.ROOT

VLLM_SPEC = "vllm/config/speculative.py"
SGL_SPEC_INFO = "sglang/srt/speculative/spec_info.py"
SGL_REGISTRY = "sglang/srt/speculative/spec_registry.py"
SGL_MODEL_CONFIG = "sglang/srt/configs/model_config.py"
SGL_HOOK = "sglang/srt/arg_groups/speculative_hook.py"
TS = "python/tokenspeed/runtime/"
TS_SERVER_ARGS = TS + "utils/server_args.py"
TS_DRAFTERS = TS + "execution/drafter/__init__.py"
TS_HF_UTILS = TS + "utils/hf_transformers_utils.py"


def methods_path(engine: str) -> Path:
    """Where this script writes the engine's methods data (named from its pin)."""
    return pins.engine_dir(engine) / f"{engine}-{pins.pin(engine).slug}-methods.json"


def _fail(what: str) -> SystemExit:
    return SystemExit(f"{what}: moved or changed at this version; re-read the source")


def _function(mod: ast.Module, cls: str | None, name: str) -> ast.FunctionDef:
    """The function ``name`` (a method of ``cls`` when given) in ``mod``."""
    scope: list[ast.stmt] = mod.body
    if cls is not None:
        found = [n for n in mod.body if isinstance(n, ast.ClassDef) and n.name == cls]
        if not found:
            raise _fail(f"class {cls}")
        scope = found[0].body
    for n in scope:
        if isinstance(n, ast.FunctionDef) and n.name == name:
            return n
    raise _fail(f"{cls + '.' if cls else ''}{name}")


def _strings(node: ast.AST) -> list[str]:
    """Every string constant under ``node``, in source order."""
    out = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant)]
    return [s for s in out if isinstance(s, str)]


def _module_strings(mod: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "literal"`` assignments (architecture-name constants)."""
    out: dict[str, str] = {}
    for n in mod.body:
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            if isinstance(n.value, ast.Constant) and isinstance(n.value.value, str):
                out[n.targets[0].id] = n.value.value
    return out


# --------------------------------------------------------------------------- vLLM


def _literal_args(mod: ast.Module, name: str, seen: dict[str, list[str]]) -> list[str]:
    """The values of the module-level ``name = Literal[...]``, nested Literal aliases expanded."""
    if name in seen:
        return seen[name]
    for n in mod.body:
        if (
            isinstance(n, ast.Assign)
            and isinstance(n.targets[0], ast.Name)
            and n.targets[0].id == name
            and isinstance(n.value, ast.Subscript)
        ):
            elts = n.value.slice.elts if isinstance(n.value.slice, ast.Tuple) else [n.value.slice]
            out: list[str] = []
            for e in elts:
                if isinstance(e, ast.Constant) and isinstance(e.value, str):
                    out.append(e.value)
                elif isinstance(e, ast.Name):
                    out.extend(_literal_args(mod, e.id, seen))
            seen[name] = out
            return out
    raise _fail(f"{VLLM_SPEC} {name}")


def _assigned_model_type(body: list[ast.stmt]) -> str | None:
    """``hf_config.model_type = "<x>"`` directly in ``body``."""
    for s in body:
        if (
            isinstance(s, ast.Assign)
            and ast.unparse(s.targets[0]) == "hf_config.model_type"
            and isinstance(s.value, ast.Constant)
        ):
            return str(s.value.value)
    return None


def _getattr_key(v: ast.expr) -> dict[str, Any]:
    """``getattr(<config>, "<key>", <default>)`` / ``<config>.<key>`` / a constant expression."""
    if isinstance(v, ast.Call) and ast.unparse(v.func) == "getattr":
        key = v.args[1].value if isinstance(v.args[1], ast.Constant) else None
        default = ast.unparse(v.args[2]) if len(v.args) > 2 else None
        return {"config": ast.unparse(v.args[0]), "key": key, "default": default}
    if isinstance(v, ast.Attribute):
        return {"config": ast.unparse(v.value), "key": v.attr, "default": None}
    return {"config": None, "key": None, "default": ast.unparse(v)}


def _n_predict(body: list[ast.stmt]) -> dict[str, Any] | None:
    """Where ``body`` reads the MTP layer count: ``n_predict = ...`` or the ``"n_predict"`` value
    of an ``update({...})`` that is not the local name."""
    for s in body:
        if isinstance(s, ast.Assign) and ast.unparse(s.targets[0]) == "n_predict":
            return _getattr_key(s.value)
    for n in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(n, ast.Dict):
            for k, v in zip(n.keys, n.values, strict=True):
                if isinstance(k, ast.Constant) and k.value == "n_predict":
                    if not isinstance(v, ast.Name):
                        return _getattr_key(v)
    return None


def _architectures(body: list[ast.stmt]) -> list[str]:
    """The ``"architectures": [...]`` string values set in ``body``."""
    out: list[str] = []
    for n in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(n, ast.Dict):
            for k, v in zip(n.keys, n.values, strict=True):
                if isinstance(k, ast.Constant) and k.value == "architectures":
                    out.extend(_strings(v))
    return out


def _compared(test: ast.expr) -> list[tuple[str, str]]:
    """(``model_type`` | ``architecture``, value) for each ``<x>.model_type == / in`` and
    ``architectures[0]`` / ``initial_architecture`` / ``in architectures`` comparison of ``test``."""
    out: list[tuple[str, str]] = []
    for c in ast.walk(test):
        if not isinstance(c, ast.Compare):
            continue
        left, right = ast.unparse(c.left), ast.unparse(c.comparators[0])
        if left.endswith("model_type"):
            out += [("model_type", v) for v in _strings(c.comparators[0])]
        elif "architecture" in left:
            out += [("architecture", v) for v in _strings(c.comparators[0])]
        elif "architectures" in right and isinstance(c.left, ast.Constant):
            out.append(("architecture", str(c.left.value)))
    return out


def _vllm_mtp_types(fn: ast.FunctionDef) -> dict[str, Any]:
    """``hf_config_override``: the target model types and architectures it turns into an MTP
    model type, and per MTP model type the key its ``n_predict`` (layer count) is read from and
    the MTP architecture(s)."""
    targets: dict[str, dict[str, str]] = {}
    layers: dict[str, dict[str, Any]] = {}
    for n in ast.walk(fn):
        if not isinstance(n, ast.If):
            continue
        matched = _compared(n.test)
        dst = _assigned_model_type(n.body)
        if dst is None:
            own = [v for by, v in matched if by == "model_type" and v.endswith("mtp")]
            dst = own[0] if own else None
        if dst is None:
            continue
        needs = "num_nextn_predict_layers > 0" in ast.unparse(n.test)
        for by, value in matched:
            if value != dst:
                entry: dict[str, object] = {"by": by, "mtp_type": dst}
                targets.setdefault(value, {**entry, "needs_layers": True} if needs else entry)
        np_ = _n_predict(n.body)
        if np_ is not None and dst not in layers:
            layers[dst] = {**np_, "architectures": _architectures(n.body)}
    return {
        "mtp_targets": dict(sorted(targets.items())),
        "mtp_layers": dict(sorted(layers.items())),
    }


def _vllm_detection(fn: ast.FunctionDef, consts: dict[str, str]) -> list[dict[str, Any]]:
    """The auto-detection chain of ``__post_init__`` (``elif "eagle-" in ...model.lower()``):
    in order, the substrings of the draft's name and the draft architectures that set a method."""
    out: list[dict[str, Any]] = []
    for n in ast.walk(fn):
        if not (
            isinstance(n, ast.If) and "draft_model_config.model.lower()" in ast.unparse(n.test)
        ):
            continue
        node: ast.stmt | None = n
        while isinstance(node, ast.If):
            method = None
            for s in node.body:
                if isinstance(s, ast.Assign) and ast.unparse(s.targets[0]) == "self.method":
                    method = ast.literal_eval(s.value)
            if method is not None:
                subs: list[str] = []
                archs: list[str] = []
                for c in ast.walk(node.test):
                    if isinstance(c, ast.Compare) and isinstance(c.ops[0], ast.In):
                        right = ast.unparse(c.comparators[0])
                        left = c.left
                        val = left.value if isinstance(left, ast.Constant) else None
                        if isinstance(left, ast.Name):
                            val = consts.get(left.id)
                        if val is None:
                            continue
                        (subs if right.endswith(".model.lower()") else archs).append(val)
                out.append({"method": method, "name_contains": subs, "architectures": archs})
            node = node.orelse[0] if len(node.orelse) == 1 else None
        return out
    raise _fail(f"{VLLM_SPEC} SpeculativeConfig.__post_init__ auto-detection")


def extract_vllm(tree: Tree) -> dict[str, Any]:
    """The vLLM methods data (see the module docstring)."""
    src = tree.read(VLLM_SPEC)
    mod = ast.parse(src)
    seen: dict[str, list[str]] = {}
    methods = _literal_args(mod, "SpeculativeMethod", seen)
    mtp_types = _literal_args(mod, "MTPModelTypes", seen)
    post = _function(mod, "SpeculativeConfig", "__post_init__")
    post_src = ast.unparse(post)
    for snippet in ("self.num_speculative_tokens % n_predict != 0", "self.method = 'mtp'"):
        if snippet not in post_src:
            raise _fail(f"{VLLM_SPEC} __post_init__ {snippet!r}")
    return {
        "engine": "vllm",
        "version": _dist_version(tree, "vllm"),
        "source": f"{VLLM_SPEC} (ast), scripts/engine_methods.py",
        "methods": list(dict.fromkeys(methods)),
        "mtp_model_types": mtp_types,
        "mtp_alias": "mtp",
        **_vllm_mtp_types(_function(mod, "SpeculativeConfig", "hf_config_override")),
        "detection": _vllm_detection(post, _module_strings(mod)),
        "n_predict_rule": "num_speculative_tokens > n_predict and % n_predict != 0: ValueError",
    }


# --------------------------------------------------------------------------- SGLang


def _enum_members(mod: ast.Module, cls: str) -> list[str]:
    for n in mod.body:
        if isinstance(n, ast.ClassDef) and n.name == cls:
            return [
                t.id
                for s in n.body
                if isinstance(s, ast.Assign)
                for t in s.targets
                if isinstance(t, ast.Name)
            ]
    raise _fail(f"class {cls}")


def _frozenset_value(mod: ast.Module, name: str) -> list[str]:
    for n in mod.body:
        if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == name:
            return sorted(_strings(n.value))
    raise _fail(name)


def _draft_rename(body: list[ast.stmt]) -> tuple[str | None, int | None]:
    """The NextN/MTP class ``body`` renames the draft's architecture to (nested branches too:
    the one that is not a DSpark class) and the ``num_nextn_predict_layers`` it forces."""
    cls, forced = None, None
    for s in ast.walk(ast.Module(body=body, type_ignores=[])):
        if not isinstance(s, ast.Assign):
            continue
        target = ast.unparse(s.targets[0])
        if "architectures" in target:
            dst = _strings(s.value)
            if len(dst) == 1 and "DSpark" not in dst[0] and cls is None:
                cls = dst[0]
        elif target.endswith("num_nextn_predict_layers") and isinstance(s.value, ast.Constant):
            forced = int(str(s.value.value))
    return cls, forced


def _sglang_draft_archs(fn: ast.FunctionDef) -> dict[str, dict[str, Any]]:
    """``if is_draft_model and ...architectures[0] == X / in [...]: architectures[0] = Y``:
    X -> {"draft_class": Y, "forced_layers": the num_nextn_predict_layers it sets, or None}."""
    out: dict[str, dict[str, Any]] = {}
    for n in ast.walk(fn):
        if not (isinstance(n, ast.If) and "is_draft_model" in ast.unparse(n.test)):
            continue
        test = ast.unparse(n.test)
        if "architectures[0]" not in test or "speculative_algorithm" in test:
            continue
        cls, forced = _draft_rename(n.body)
        if cls is not None:
            for src in _strings(n.test):
                out.setdefault(src, {"draft_class": cls, "forced_layers": forced})
    return dict(sorted(out.items()))


SGL_NEXTN_LOADER = "sglang/srt/models/deepseek_common/deepseek_weight_loader.py"


def _sglang_max_layers(tree: Tree) -> dict[str, int]:
    """DeepSeek NextN (``deepseek_nextn.py``, its loader's ``_initialize_nextn_conf``): ``assert
    num_nextn_layers == 1``."""
    src = tree.read(SGL_NEXTN_LOADER)
    m = re.search(r"assert num_nextn_layers == (\d+)", src)
    if m is None or "is_nextn=True" not in tree.read("sglang/srt/models/deepseek_nextn.py"):
        raise _fail(f"{SGL_NEXTN_LOADER} _initialize_nextn_conf")
    return {"DeepseekV3ForCausalLMNextN": int(m.group(1))}


def _sglang_bundled(fn: ast.FunctionDef) -> list[str]:
    """``_handle_eagle_family``: ``if model_arch in [...]`` whose body defaults the draft path to
    the model path (the target checkpoint carries its NextN layer)."""
    for n in ast.walk(fn):
        if isinstance(n, ast.If) and ast.unparse(n.test).startswith("model_arch in"):
            if "speculative_draft_model_path=cfg.model_path" in ast.unparse(n):
                return sorted(_strings(n.test))
    raise _fail(f"{SGL_HOOK} _handle_eagle_family bundled NextN targets")


def extract_sglang(tree: Tree) -> dict[str, Any]:
    """The SGLang methods data (see the module docstring)."""
    info = ast.parse(tree.read(SGL_SPEC_INFO))
    members = [m for m in _enum_members(info, "SpeculativeAlgorithm") if m != "NONE"]
    aliases = _frozenset_value(ast.parse(tree.read(SGL_REGISTRY)), "_RESERVED_ALIASES")
    if "return cls.EAGLE" not in ast.unparse(
        _function(info, "SpeculativeAlgorithm", "from_string")
    ):
        raise _fail(f"{SGL_SPEC_INFO} from_string alias -> EAGLE")
    mc = ast.parse(tree.read(SGL_MODEL_CONFIG))
    hook = ast.parse(tree.read(SGL_HOOK))
    return {
        "engine": "sglang",
        "version": _dist_version(tree, "sglang"),
        "source": f"{SGL_SPEC_INFO}, {SGL_MODEL_CONFIG}, {SGL_HOOK} (ast), scripts/engine_methods.py",
        "algorithms": members,
        "aliases": {a: "EAGLE" for a in aliases},
        "draft_architectures": _sglang_draft_archs(
            _function(mc, "ModelConfig", "_config_draft_model")
        ),
        "max_layers": _sglang_max_layers(tree),
        "bundled_nextn_targets": _sglang_bundled(_function(hook, None, "_handle_eagle_family")),
    }


# --------------------------------------------------------------------------- tokenspeed


def _ts_choices(tree: Tree) -> list[str]:
    mod = ast.parse(tree.read(TS_SERVER_ARGS))
    for n in ast.walk(mod):
        if (
            isinstance(n, ast.Call)
            and n.args
            and _strings(n.args[0]) == ["--speculative-algorithm"]
        ):
            for kw in n.keywords:
                if kw.arg == "choices":
                    return list(ast.literal_eval(kw.value))
    raise _fail(f"{TS_SERVER_ARGS} --speculative-algorithm choices")


def _ts_drafters(tree: Tree) -> dict[str, str]:
    mod = ast.parse(tree.read(TS_DRAFTERS))
    for n in ast.walk(mod):
        if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "DRAFTER_MAPPING":
            if isinstance(n.value, ast.Dict):
                return {
                    ast.literal_eval(k): ast.unparse(v)
                    for k, v in zip(n.value.keys, n.value.values, strict=True)
                    if k is not None
                }
    raise _fail(f"{TS_DRAFTERS} DRAFTER_MAPPING")


def _ts_nextn_classes(tree: Tree) -> list[str]:
    """``EntryClass`` names of ``runtime/models/*.py`` ending in ``NextN``."""
    out: set[str] = set()
    for name in tree.glob(re.escape(TS + "models/") + r"[^/]+\.py"):
        for n in ast.parse(tree.read(name)).body:
            if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "EntryClass":
                out.update(
                    x for x in re.findall(r"\w+", ast.unparse(n.value)) if x.endswith("NextN")
                )
    return sorted(out)


def _ts_draft_renames(hf: str) -> list[dict[str, str | None]]:
    """``get_config``'s draft-worker renames before the ``<arch>NextN`` default: each branch
    ``config.architectures[0] == "X"`` (with ``speculative_algorithm == "A"`` when it has one)
    that assigns ``config.architectures[0] = "Y"`` -> ``{"from": X, "to": Y, "algorithm": A}``."""
    out: list[dict[str, str | None]] = []
    for n in ast.walk(_function(ast.parse(hf), None, "get_config")):
        if not (
            isinstance(n, ast.If) and '"NextN" not in' in ast.unparse(n.test).replace("'", '"')
        ):
            continue
        branch: ast.stmt | None = n.body[0] if n.body else None
        while isinstance(branch, ast.If):
            test = ast.unparse(branch.test).replace("'", '"')
            src = re.search(r'config\.architectures\[0\] == "(\w+)"', test)
            algo = re.search(r'speculative_algorithm == "(\w+)"', test)
            dst = [
                b.value.value
                for b in branch.body
                if isinstance(b, ast.Assign) and isinstance(b.value, ast.Constant)
            ]
            if src and dst:
                out.append({"from": src.group(1), "to": str(dst[0]),
                            "algorithm": algo.group(1) if algo else None})  # fmt: skip
            branch = branch.orelse[0] if len(branch.orelse) == 1 else None
    if not out:
        raise _fail(f"{TS_HF_UTILS} get_config draft-worker renames")
    return out


def extract_tokenspeed(tree: Tree) -> dict[str, Any]:
    """The tokenspeed methods data (see the module docstring)."""
    hf = tree.read(TS_HF_UTILS)
    if 'config.architectures[0] += "NextN"' not in hf:
        raise _fail(f"{TS_HF_UTILS} the draft worker's <arch>NextN rename")
    args = tree.read(TS_SERVER_ARGS)
    base = re.search(
        r"self\.speculative_algorithm in \(([^)]*)\)\s*and self\.speculative_draft_model_path is None",
        args,
    )
    if base is None:
        raise _fail(f"{TS_SERVER_ARGS} resolve_speculative_decoding draft path default")
    return {
        "engine": "tokenspeed",
        "commit": tree.commit,
        "source": f"{TS_SERVER_ARGS}, {TS_DRAFTERS}, {TS_HF_UTILS} (git), scripts/engine_methods.py",
        "algorithms": _ts_choices(tree),
        "drafters": _ts_drafters(tree),
        "draft_path_defaults_to_target": re.findall(r'"([A-Z0-9_]+)"', base.group(1)),
        "nextn_rename": "<target architecture>NextN (unless it names NextN/Eagle/DFlash/DSpark)",
        "nextn_classes": _ts_nextn_classes(tree),
        "draft_renames": _ts_draft_renames(hf),
    }


# --------------------------------------------------------------------------- main


def _dist_version(tree: Tree, package: str) -> str:
    """The package version: a wheel's METADATA, else the ``<package>-<v>.dist-info`` folder."""
    if tree.path.is_dir():
        for p in sorted(tree.path.glob(f"{package}-*.dist-info")):
            return p.name[len(package) + 1 : -len(".dist-info")]
    for name in tree.names():
        if name.endswith(".dist-info/METADATA") and name.startswith(package + "-"):
            m = re.search(r"^Version: (\S+)", tree.read(name), re.M)
            if m:
                return m.group(1)
    raise SystemExit(f"{package}: no version found in {tree.path}")


EXTRACT = {"vllm": extract_vllm, "sglang": extract_sglang, "tokenspeed": extract_tokenspeed}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("engine", choices=sorted(EXTRACT))
    ap.add_argument("source", type=Path, help="wheel, site-packages folder or git directory")
    ap.add_argument("--commit", default=None, help="git commit (a git directory's source)")
    ap.add_argument("--check", action="store_true", help="compare with the committed file")
    args = ap.parse_args(argv)
    data = EXTRACT[args.engine](Tree(args.source, args.commit))
    pins.check_version(args.engine, str(data.get("version") or data.get("commit")))
    path = methods_path(args.engine)
    text = json.dumps(data, indent=1) + "\n"
    if args.check:
        same = path.is_file() and path.read_text() == text
        print(f"{path.relative_to(ROOT)}: {'same' if same else 'DIFFERS'}", file=sys.stderr)
        return 0 if same else 1
    path.write_text(text)
    print(f"wrote {path.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
