"""vLLM's speculative methods at the pin (issue #27): which it serves and the MTP path per target.

Data: ``vllm-<pin>-methods.json`` (``scripts/engine_methods.py`` from ``vllm/config/speculative.py``):
the ``SpeculativeMethod`` Literal, ``hf_config_override``'s target -> MTP model type map and the
key each MTP model type reads ``n_predict`` from.
"""

from __future__ import annotations

from collections.abc import Sequence

from recipecli.codes import finding
from recipecli.engines.methods import (
    EngineMethods,
    MethodInput,
    MtpPath,
    engine_rules,
    method_codes,
    methods_data,
)
from recipecli.engines.vllm.sources import src
from recipecli.engines.vllm.spec import SPEC
from recipecli.findings import Finding

SPEC_FILE = "vllm/config/speculative.py"
CITE = {
    "method": src(SPEC_FILE, "SpeculativeConfig.__post_init__ (SpeculativeMethod)"),
    "mtp": src(
        SPEC_FILE,
        "SpeculativeConfig.hf_config_override / __post_init__ (n_predict)",
        "vLLM PR #12755",
    ),
    "eagle1": src(
        "vllm/model_executor/models/llama_eagle3.py",
        "LlamaModel.__init__ (fc_input_size = target_hidden_size * num_aux_hidden_states)",
        "sgl-project/sglang#21272",
    ),
    "eagle31": src(
        "vllm/model_executor/models/llama_eagle3.py",
        "Eagle3LlamaForCausalLM.combine_hidden_states (input_norm, then fc_norm per chunk)",
        "vllm-project/speculators#670",
    ),
    "dflash": src(
        "vllm/v1/worker/gpu/spec_decode/eagle/eagle3_utils.py",
        "get_eagle3_aux_layers_from_config (target_layer_ids + 1) / qwen3_dflash.py "
        "DFlashQwen3Model.__init__ (mask_token_id)",
    ),
}


def _default(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() else None


def mtp_path(mi: MethodInput) -> MtpPath:
    """``hf_config_override``: the target's ``model_type`` (else ``architectures[0]``) -> its MTP
    model type -> the architecture and the key ``n_predict`` is read from."""
    data = methods_data(SPEC)
    cfg = mi.target_ck.config
    model_type = str(cfg.get("model_type") or "")
    arch = str((cfg.get("architectures") or [""])[0])
    hit = data["mtp_targets"].get(model_type) or data["mtp_targets"].get(arch)
    if model_type in data["mtp_model_types"]:
        hit = {"mtp_type": model_type}
    if hit is None:
        return MtpPath(
            None,
            None,
            None,
            f"vLLM has no MTP model for model_type {model_type!r} ({arch}): __post_init__ raises "
            "NotImplementedError(\"Unsupported speculative method: 'mtp'\")",
        )
    layers = data["mtp_layers"].get(hit["mtp_type"], {})
    key = layers.get("key")
    n = mi.mtp.count(key) if key else None
    if n is None and key and isinstance(cfg.get(key), int):
        n = int(cfg[key])
    if hit.get("needs_layers") and not n:
        return MtpPath(
            None,
            key,
            n,
            f"vLLM turns {model_type!r} into {hit['mtp_type']} only when {key} > 0 "
            f"(hf_config_override; here {n}): __post_init__ raises NotImplementedError"
            "(\"Unsupported speculative method: 'mtp'\")",
        )
    if n is None:
        n = _default(layers.get("default"))
    arch_out = ", ".join(layers.get("architectures") or [hit["mtp_type"]])
    return MtpPath(arch_out, key, n)


def block_size_rule(mi: MethodInput) -> list[Finding]:
    """DSpark: ``num_speculative_tokens`` defaults to the draft's ``block_size`` (else
    ``dspark_block_size``); with neither, ``__post_init__`` raises "A speculative model was
    provided, but `num_speculative_tokens` was not provided"."""
    d = mi.draft
    if mi.method != "dspark" or d is None or d.block_size or mi.num_speculative_tokens:
        return []
    return [
        finding(
            "method.block_size",
            "the DSpark draft has no block_size / dspark_block_size and no "
            "--num-speculative-tokens was given: vLLM raises (num_speculative_tokens was not "
            "provided); pass the block it was trained with",
            engine="vllm",
            source=src(SPEC_FILE, "SpeculativeConfig.__post_init__ (use_dspark: block_size)"),
        )
    ]


#: the codes block_size_rule reports, by method
EXTRA_CODES = {"dspark": ("method.block_size",)}

METHODS = EngineMethods(
    engine="vllm",
    spelling={
        m: f'--speculative-config \'{{"method": "{m}"}}\''
        for m in ("eagle", "eagle3", "mtp", "dflash", "dspark")
        if m in methods_data(SPEC)["methods"]
    },
    refusal={},
    cite=CITE,
    mtp=mtp_path,
    mtp_tokens_rule=True,
    extra=block_size_rule,
    extra_codes=EXTRA_CODES,
)

#: the codes these rules may report (docs/engines/codes.md names the engine for them)
CODES = method_codes(METHODS)


def rules(mi: MethodInput) -> Sequence[Finding]:
    """vLLM's ``method.*`` findings on ``mi`` (:func:`recipecli.engines.methods.engine_rules`)."""
    return engine_rules(METHODS, mi)
