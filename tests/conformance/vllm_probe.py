"""What vLLM 0.33.0 itself does with an EAGLE3 draft/target pair: resolved values and verdict.

Runs ONLY inside the conformance environment (``scripts/conformance/build_vllm_env.sh``): it
imports vLLM, transformers and torch. It never reads weights: the draft model is built on the
meta device and its real ``load_weights`` is fed meta tensors of the checkpoint's header shapes.

Steps, in vLLM's own order (vllm-project/vllm v0.33.0):

1. ``EngineArgs(model=TARGET, speculative_config={"method": "eagle3", "model": DRAFT, ...})
   .create_engine_config()`` (``vllm/engine/arg_utils.py``): builds the target ``ModelConfig``,
   then ``SpeculativeConfig.__post_init__`` (``vllm/config/speculative.py``) builds the draft's
   ``ModelConfig`` (``SpeculatorsConfig`` for speculators-format drafts, else transformers' class
   wrapped by ``EAGLEConfig``, ``vllm/transformers_utils/configs/eagle.py``, which renames the
   architecture), raises the draft's ``max_position_embeddings`` and inspects the draft class in
   the model registry. An exception here is verdict ``raises`` at stage ``config``.
2. The registry resolves the draft architecture to a class (``ModelRegistry.resolve_model_cls``,
   ``vllm/model_executor/models/registry.py``); the class is built under the meta device with the
   engine config current (``Eagle3LlamaForCausalLM.__init__``,
   ``vllm/model_executor/models/llama_eagle3.py``). Exception: ``raises`` at stage ``build``.
3. ``load_weights`` runs on ``(name, meta tensor)`` pairs from the safetensors headers (shape
   checks in the weight loaders are real). Exception: ``raises`` at stage ``load``. Parameters
   left unloaded are ``missing``; ``embed_tokens``/``lm_head`` the checkpoint lacks are shared
   from the target by the proposer (``_maybe_share_embeddings``/``_maybe_share_lm_head``,
   ``vllm/v1/spec_decode/llm_base_proposer.py``) and so are not missing (``embed_tokens`` only
   when the widths match). ``DefaultModelLoader.load_weights`` only checks for unloaded weights
   when ``model.load_weights`` returns a set, which ``Eagle3LlamaForCausalLM.load_weights`` does
   not: missing weights load silently (verdict ``loads_missing``).
4. Aux layers captured from the target, by the model runner a GPU would use
   (``VllmConfig.use_v2_model_runner``, ``vllm/config/vllm.py``: V2 unless
   ``_get_v2_model_runner_unsupported_features`` lists something): V2 reads
   ``get_eagle3_aux_layers_from_config`` (``vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py``),
   V1 ``GPUModelRunner._get_eagle3_aux_layers_from_config`` (``vllm/v1/worker/gpu_model_runner.py``;
   it also reads ``eagle_config.eagle_aux_hidden_state_layer_ids``, V2 does not); without ids, the
   target class's ``get_eagle3_default_aux_hidden_state_layers``
   (``vllm/model_executor/models/interfaces.py``). Both runners' answers are reported.

:func:`probe_pair` returns a plain JSON-able dict (see its docstring) so other code can compare it
with recipecli's engine model.
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
import traceback
from pathlib import Path
from types import SimpleNamespace
from typing import Any

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")

#: safetensors dtype -> torch dtype name
_DTYPES = {
    "F16": "float16",
    "BF16": "bfloat16",
    "F32": "float32",
    "F64": "float64",
    "I64": "int64",
    "I32": "int32",
    "I16": "int16",
    "I8": "int8",
    "U8": "uint8",
    "BOOL": "bool",
    "F8_E4M3": "float8_e4m3fn",
    "F8_E5M2": "float8_e5m2",
}

_STATE: dict[str, Any] = {}


def read_headers(draft_dir: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """Tensor table ``name -> {"dtype", "shape"}`` from every ``*.safetensors`` header in a dir.

    Raises:
        FileNotFoundError: the directory holds no safetensors file.
    """
    files = sorted(Path(draft_dir).glob("*.safetensors"))
    if not files:
        raise FileNotFoundError(f"no *.safetensors in {draft_dir}")
    table: dict[str, dict[str, Any]] = {}
    for f in files:
        with open(f, "rb") as fh:
            (n,) = struct.unpack("<Q", fh.read(8))
            header = json.loads(fh.read(n))
        for name, entry in header.items():
            if name != "__metadata__":
                table[name] = {"dtype": entry["dtype"], "shape": list(entry["shape"])}
    return table


def _init_distributed(vllm_config: Any) -> None:
    """World size 1 (gloo) tensor/pipeline-parallel groups, once per process."""
    if _STATE.get("dist"):
        return
    from vllm.config import set_current_vllm_config
    from vllm.distributed.parallel_state import (
        init_distributed_environment,
        initialize_model_parallel,
    )

    with set_current_vllm_config(vllm_config):
        init_distributed_environment(
            world_size=1,
            rank=0,
            local_rank=0,
            distributed_init_method=f"file://{tempfile.mktemp(prefix='vllm-probe-')}",
            backend="gloo",
        )
        initialize_model_parallel(1, 1)
    _STATE["dist"] = True


def _error(stage: str, exc: BaseException) -> dict[str, Any]:
    """``{stage, type, message, text, where}`` of an exception vLLM raised; ``where`` is the
    raising frame (``file:line function: source``), the message when vLLM gave none."""
    msg = str(exc).strip()
    where = ""
    if exc.__traceback__ is not None:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{frame.filename.split('site-packages/')[-1]}:{frame.lineno} {frame.name}: {frame.line}"
    message = " ".join(ln.strip() for ln in msg.splitlines()[:2])[:500] if msg else where
    return {
        "stage": stage,
        "type": type(exc).__name__,
        "message": message,
        "text": msg[:2000],
        "where": where,
    }


def _residual_norm_before(layer: Any) -> bool | None:
    fn = getattr(layer, "_residual_norm", None)
    name = getattr(fn, "__name__", None) or getattr(getattr(fn, "__func__", None), "__name__", "")
    if not name:
        return None
    return name == "_norm_before_residual"


def probe_pair(
    target_dir: str | os.PathLike[str],
    draft_dir: str | os.PathLike[str],
    *,
    max_model_len: int = 4096,
    num_speculative_tokens: int = 3,
) -> dict[str, Any]:
    """Run vLLM 0.33.0's own draft resolution, draft model and ``load_weights`` on a pair.

    Args:
        target_dir: directory with the target's ``config.json`` (weights are never read).
        draft_dir: directory with the draft's ``config.json`` and ``*.safetensors`` (only the
            headers are read).
        max_model_len: serving length passed to the engine (the draft's
            ``max_position_embeddings`` is raised to it).
        num_speculative_tokens: k of ``--speculative-config``.

    Returns:
        A plain dict: ``verdict`` (``loads`` | ``raises`` | ``loads_missing`` (parameters left
        unloaded) | ``loads_mismatch`` (loads, but trained tensors were dropped, norm flags not honoured or
        the fc width does not match the captured states, see :func:`_ignored`) | ``not_probed``), ``dropped``
        (checkpoint tensors vLLM's loader skipped), ``ignored`` (one line per thing loaded
        past), ``error`` (``{stage, type, message, text, where}`` or None),
        ``missing`` (unloaded draft parameters, vLLM names), ``shared`` (parameters the
        proposer takes from the target), ``resolved`` (draft: ``H``, ``Ht``, ``V``, ``Vd``,
        ``k``, ``fc_in``, ``nh``, ``nkv``, ``hd``, ``I``, ``layers``, ``eps``,
        ``max_position_embeddings``, ``use_aux``, ``norm_before_fc``, ``fc_norm``,
        ``norm_output``, ``norm_before_residual``, ``architecture``, ``registered``,
        ``model_class``, ``config_class``, ``aux_layers``, ``aux_layers_origin``; target:
        ``target_architecture``, ``target_class``, ``target_supports_eagle3``, ``target_L``,
        ``target_H``, ``target_V``) and ``params`` (vLLM parameter name -> shape).
        Values vLLM never reached (an earlier step raised) are absent.
    """
    import torch
    from vllm.config import set_current_vllm_config
    from vllm.engine.arg_utils import EngineArgs
    from vllm.model_executor.models import utils as model_utils
    from vllm.model_executor.models.interfaces import supports_eagle3
    from vllm.model_executor.models.registry import ModelRegistry

    out: dict[str, Any] = {
        "target": str(target_dir),
        "draft": str(draft_dir),
        "vllm_version": _vllm_version(),
        "verdict": None,
        "error": None,
        "missing": [],
        "shared": [],
        "dropped": [],
        "ignored": [],
        "resolved": {},
        "params": {},
    }
    res = out["resolved"]

    # ---- step 1: engine config (target ModelConfig, SpeculativeConfig, draft ModelConfig)
    try:
        args = EngineArgs(
            model=str(target_dir),
            speculative_config={
                "method": "eagle3",
                "model": str(draft_dir),
                "num_speculative_tokens": num_speculative_tokens,
            },
            max_model_len=max_model_len,
            skip_tokenizer_init=True,
            load_format="dummy",
        )
        vc = args.create_engine_config()
    except Exception as exc:  # vLLM's own verdict
        err = _error("config", exc)
        out["error"] = err
        if "failed to be inspected" in err["text"] and str(target_dir) in err["text"]:
            out["verdict"] = "not_probed"  # the target's model module cannot import on CPU
        else:
            out["verdict"] = "raises"
        return out

    tcfg = vc.model_config
    res["target_architecture"] = tcfg.architecture
    res["target_L"] = tcfg.get_total_num_hidden_layers()
    res["target_H"] = tcfg.get_hidden_size()
    res["target_V"] = tcfg.get_vocab_size()
    target_cls = ModelRegistry._try_load_model_cls(tcfg.architecture)
    res["target_class"] = f"{target_cls.__module__}.{target_cls.__name__}" if target_cls else None
    res["target_supports_eagle3"] = bool(target_cls and supports_eagle3(target_cls))

    spec = vc.speculative_config
    dmc = spec.draft_model_config
    hf = dmc.hf_config
    res["config_class"] = type(hf).__name__
    res["architecture"] = dmc.architectures[0] if dmc.architectures else None
    res["registered"] = res["architecture"] in ModelRegistry.get_supported_archs()
    res["max_position_embeddings"] = getattr(hf, "max_position_embeddings", None)

    # ---- which GPU model runner serves it, and the aux layers the target captures
    # (VllmConfig.use_v2_model_runner: V2 unless a feature it lacks is asked for; on this CPU
    # machine it answers V1 only because Triton is absent, so the GPU answer is computed here)
    from vllm.v1.worker.gpu.spec_decode.eagle.eagle3_utils import (
        get_eagle3_aux_layers_from_config as aux_ids_v2,
    )
    from vllm.v1.worker.gpu_model_runner import GPUModelRunner

    unsupported = vc._get_v2_model_runner_unsupported_features()
    env_v2 = os.environ.get("VLLM_USE_V2_MODEL_RUNNER")
    runner = "v1" if unsupported or env_v2 == "0" else "v2"
    res["runner"] = runner
    ids_v1 = GPUModelRunner._get_eagle3_aux_layers_from_config(
        SimpleNamespace(speculative_config=spec)
    )
    ids_v2 = aux_ids_v2(spec)
    default = None
    if target_cls is not None and hasattr(target_cls, "get_eagle3_default_aux_hidden_state_layers"):
        holder = SimpleNamespace(model=SimpleNamespace(layers=[None] * res["target_L"]))
        default = list(target_cls.get_eagle3_default_aux_hidden_state_layers(holder))
    res["aux_layers_v1"] = list(ids_v1) if ids_v1 else default
    res["aux_layers_v2"] = list(ids_v2) if ids_v2 else default
    ids = ids_v2 if runner == "v2" else ids_v1
    res["aux_layers"] = list(ids) if ids else default
    res["aux_layers_origin"] = "draft config" if ids else "target default"

    # ---- step 2: build the draft model on the meta device
    _init_distributed(vc)
    try:
        model_cls, arch = ModelRegistry.resolve_model_cls(dmc.architectures, model_config=dmc)
        res["model_class"] = f"{model_cls.__module__}.{model_cls.__name__}"
        with set_current_vllm_config(vc), torch.device("meta"):
            model = model_cls(vllm_config=vc, prefix="")
    except Exception as exc:
        out["error"] = _error("build", exc)
        out["verdict"] = "raises"
        return out

    inner = getattr(model, "model", model)
    cfg = getattr(model, "config", hf)
    res["H"] = getattr(cfg, "hidden_size", None)
    res["V"] = getattr(cfg, "vocab_size", None)
    res["Vd"] = getattr(cfg, "draft_vocab_size", None)
    res["layers"] = getattr(cfg, "num_hidden_layers", None)
    res["eps"] = getattr(cfg, "rms_norm_eps", None)
    res["use_aux"] = getattr(inner, "use_aux_hidden_state", None)
    # llama_eagle3 stores k as num_aux_hidden_states, qwen3_eagle3 as num_aux_layers
    res["k"] = getattr(inner, "num_aux_hidden_states", None) or getattr(
        inner, "num_aux_layers", None
    )
    res["fc_in"] = getattr(inner, "fc_input_size", None)
    if res["k"] and res["fc_in"]:
        res["Ht"] = res["fc_in"] // res["k"]
    res["norm_before_fc"] = getattr(inner, "norm_before_fc", None)
    res["fc_norm"] = getattr(inner, "fc_norm", None) is not None
    res["norm_output"] = getattr(inner, "norm_output", None)
    layers = getattr(inner, "layers", None) or []
    if len(layers):
        layer0 = layers[0]
        res["norm_before_residual"] = _residual_norm_before(layer0)
        attn = getattr(layer0, "self_attn", None)
        res["nh"] = getattr(attn, "total_num_heads", None)
        res["nkv"] = getattr(attn, "total_num_kv_heads", None)
        res["hd"] = getattr(attn, "head_dim", None)
        down = getattr(getattr(layer0, "mlp", None), "down_proj", None)
        if down is not None and hasattr(down, "weight"):
            res["I"] = int(down.weight.shape[1])
    out["params"] = {n: list(p.shape) for n, p in model.named_parameters()}
    # the parameter names again under a key run_pairs keeps (it drops "params")
    out["built"] = sorted(out["params"])

    # ---- step 3: load_weights on meta tensors of the header shapes
    table = read_headers(draft_dir)
    weights = [
        (name, torch.empty(e["shape"], dtype=getattr(torch, _DTYPES[e["dtype"]]), device="meta"))
        for name, e in table.items()
    ]
    loaded: set[str] = set()
    dropped: list[str] = []
    Loader, Mapper = model_utils.AutoWeightsLoader, model_utils.WeightsMapper
    orig_load, orig_map, orig_ignore = (
        Loader.load_weights,
        Mapper._map_name_with_shard,
        Loader._can_ignore_unexpected,
    )

    def recording_load(self, *a, **kw):
        got = orig_load(self, *a, **kw)
        if got:
            loaded.update(got)
        return got

    def recording_map(self, key):
        got = orig_map(self, key)
        if got is None:
            dropped.append(key)
        return got

    def recording_ignore(self, qualname):
        got = orig_ignore(self, qualname)
        if got:
            dropped.append(qualname)
        return got

    Loader.load_weights, Mapper._map_name_with_shard = recording_load, recording_map
    Loader._can_ignore_unexpected = recording_ignore
    stacked = _record_stacked_bias_skips(model, dropped)
    try:
        with set_current_vllm_config(vc):
            returned = model.load_weights(iter(weights))
        if isinstance(returned, set):
            loaded.update(returned)
    except Exception as exc:
        out["error"] = _error("load", exc)
        out["verdict"] = "raises"
        return out
    finally:
        Loader.load_weights, Mapper._map_name_with_shard = orig_load, orig_map
        Loader._can_ignore_unexpected = orig_ignore
        for cls, orig in stacked.items():
            cls.load_weights = orig
    # Eagle3LlamaForCausalLM.load_weights skips every name containing "t2d" before mapping
    out["dropped"] = sorted(set(dropped) | {n for n in table if "t2d" in n})

    # embed_tokens/lm_head the checkpoint lacks come from the target: V2
    # (vllm/v1/worker/gpu/spec_decode/eagle/utils.py maybe_share_target_embed, _should_share)
    # shares whenever the draft has none; V1 (_maybe_share_embeddings) only at equal widths.
    shared = []
    if not getattr(model, "has_own_embed_tokens", False):
        emb = [n for n in out["params"] if "embed_tokens" in n]
        if emb and (runner == "v2" or out["params"][emb[0]][-1] == res["target_H"]):
            shared += emb
    if not getattr(model, "has_own_lm_head", False):
        shared += [n for n in out["params"] if n.startswith("lm_head")]
    out["shared"] = sorted(shared)
    out["missing"] = sorted(set(out["params"]) - loaded - set(shared))
    out["ignored"] = _ignored(draft_dir, res, out["dropped"])
    raw = json.loads((Path(draft_dir) / "config.json").read_text())
    nested = raw.get("eagle_config") if isinstance(raw.get("eagle_config"), dict) else {}
    declared_nested = nested.get("eagle_aux_hidden_state_layer_ids")
    res["aux_ids_nested_read"] = (
        None if not declared_nested else list(declared_nested) == res.get("aux_layers")
    )
    if out["missing"]:
        out["verdict"] = "loads_missing"
    elif out["ignored"]:
        out["verdict"] = "loads_mismatch"
    else:
        out["verdict"] = "loads"
    return out


def _record_stacked_bias_skips(model: Any, dropped: list[str]) -> dict[Any, Any]:
    """Make the stacked linears' own ``load_weights`` (``MergedColumnParallelLinear``,
    ``QKVParallelLinear``, ``vllm/model_executor/layers/linear.py``) record a ``bias`` they pass
    over (``if param is None and name == "bias": continue``: a checkpoint bias for a layer built
    without one) in ``dropped``, as ``<the layer's name in model>.bias``
    (``AutoWeightsLoader._load_module`` hands those layers their weights, so
    ``_can_ignore_unexpected`` never sees the name).
    Returns ``{class: original load_weights}`` to restore."""
    from vllm.model_executor.layers.linear import MergedColumnParallelLinear, QKVParallelLinear

    names = {id(m): n for n, m in model.named_modules()}
    saved: dict[Any, Any] = {}
    for cls in (MergedColumnParallelLinear, QKVParallelLinear):
        orig = cls.__dict__["load_weights"]
        saved[cls] = orig

        def load(self: Any, weights: Any, _orig: Any = orig) -> Any:
            def tap() -> Any:
                for name, w in weights:
                    if name == "bias" and getattr(self, "bias", self) is None:
                        dropped.append(f"{names.get(id(self), self.prefix)}.bias")
                    yield name, w

            return _orig(self, tap())

        cls.load_weights = load
    return saved


def _ignored(
    draft_dir: str | os.PathLike[str], res: dict[str, Any], dropped: list[str]
) -> list[str]:
    """What vLLM loaded past: trained tensors it dropped (``t2d`` is not one: vLLM never needs
    it), norm flags under ``eagle_config`` it does not honour, an ``fc`` sized for another number
    of hidden states than the runner captures (the first forward fails on the concat width).

    Compares the draft's own ``config.json`` with what vLLM resolved above; the keys vLLM reads
    are those of ``llama_eagle3.LlamaModel.__init__``/``LlamaDecoderLayer.__init__`` (top-level
    attributes, plus ``eagle_config.norm_before_fc``/``use_aux_hidden_state``) and of the
    runner's aux-id lookup.
    """
    raw = json.loads((Path(draft_dir) / "config.json").read_text())
    nested = raw.get("eagle_config") if isinstance(raw.get("eagle_config"), dict) else {}
    notes = [f"tensor {n} dropped" for n in dropped if "t2d" not in n]
    captured = res.get("aux_layers")
    if res.get("use_aux") and res.get("k") and captured is not None and len(captured) != res["k"]:
        notes.append(
            f"fc takes {res['k']} hidden states, the runner captures {len(captured)} ({captured})"
        )
    for flag in ("norm_before_residual", "fc_norm", "norm_output", "norm_before_fc"):
        if flag in nested and flag not in raw and flag in res:
            if bool(nested[flag]) != bool(res[flag]):
                notes.append(f"eagle_config.{flag}={nested[flag]} not honoured ({res[flag]})")
    return notes


def _vllm_version() -> str:
    from importlib.metadata import version

    return version("vllm")


if __name__ == "__main__":  # python vllm_probe.py TARGET DRAFT
    import sys

    print(json.dumps(probe_pair(sys.argv[1], sys.argv[2]), indent=1, default=str))
