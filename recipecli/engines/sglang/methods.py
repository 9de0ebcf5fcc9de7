"""SGLang's speculative methods at the pin (issue #27): which it serves and the NextN draft per
target.

Data: ``sglang-<pin>-methods.json`` (``scripts/engine_methods.py``): ``SpeculativeAlgorithm``'s
members and the NEXTN alias (``srt/speculative/spec_info.py``, ``spec_registry.py``),
``ModelConfig._config_draft_model``'s target -> NextN class map.
"""

from __future__ import annotations

from collections.abc import Sequence

from recipecli.codes import finding
from recipecli.engines.base import engine_data
from recipecli.engines.methods import (
    EngineMethods,
    MethodInput,
    MtpPath,
    engine_rules,
    method_codes,
    methods_data,
)
from recipecli.engines.sglang.sources import src
from recipecli.engines.sglang.spec import SPEC
from recipecli.findings import Finding
from recipecli.target_mtp import LAYER_KEYS

CITE = {
    "method": src("speculative/spec_info.py", "SpeculativeAlgorithm.from_string (NEXTN -> EAGLE)"),
    "mtp": src(
        "configs/model_config.py",
        "ModelConfig._config_draft_model (target -> NextN draft class)",
    ),
    "eagle1": src(
        "models/llama_eagle3.py",
        "LlamaModel.__init__ (fc over the aux hidden states)",
        "sgl-project/sglang#21272",
    ),
    "eagle31": src(
        "models/llama_eagle3.py",
        "LlamaModel.__init__ (norm_before_fc and fc_norm both built)",
        "vllm-project/speculators#670",
    ),
    "dflash": src(
        "arg_groups/speculative_hook.py",
        "_handle_dflash / parse_dflash_draft_config (target_layer_ids, mask_token_id)",
    ),
}

#: recipecli method -> SGLang's --speculative-algorithm value
_ALGO = {
    "eagle": "EAGLE",
    "eagle3": "EAGLE3",
    "mtp": "NEXTN",
    "dflash": "DFLASH",
    "dspark": "DSPARK",
}


def _spelling() -> dict[str, str]:
    data = methods_data(SPEC)
    known = set(data["algorithms"]) | set(data["aliases"])
    return {m: f"--speculative-algorithm {a}" for m, a in _ALGO.items() if a in known}


def mtp_path(mi: MethodInput) -> MtpPath:
    """``_config_draft_model``: the target's ``architectures[0]`` -> the NextN/MTP class the draft
    worker loads (registered in the model registry), and the layer count the config declares."""
    arch = str((mi.target_ck.config.get("architectures") or [""])[0])
    data = methods_data(SPEC)
    rename = data["draft_architectures"].get(arch) or {}
    cls = rename.get("draft_class")
    if cls is None or cls not in engine_data(SPEC)["architectures"]:
        return MtpPath(
            None,
            None,
            None,
            f"SGLang has no NextN draft class for {arch or 'this target'}: "
            "ModelConfig._config_draft_model keeps the target's architecture, so the draft "
            "worker would load the whole target as its draft",
        )
    key = next((k for k in LAYER_KEYS if k in mi.mtp.declared), None)
    forced = rename.get("forced_layers")
    if forced is not None:  # _config_draft_model sets num_nextn_predict_layers itself
        return MtpPath(cls, "num_nextn_predict_layers (set by SGLang)", forced)
    n = mi.mtp.count(key) if key else None
    return MtpPath(cls, key, n, max_layers=data["max_layers"].get(cls))


def block_size_rule(mi: MethodInput) -> list[Finding]:
    """DFlash: ``_handle_dflash`` takes the verify window (``speculative_num_draft_tokens``)
    from the draft's block size (``parse_dflash_draft_config(...).resolve_block_size``) and,
    without one, defaults it to 16 with a warning."""
    d = mi.draft
    if mi.method != "dflash" or d is None or d.block_size:
        return []
    return [
        finding(
            "method.block_size",
            "the DFlash draft has no block_size: SGLang sets the verify window "
            "(speculative_num_draft_tokens) to 16 whatever the draft was trained with; pass "
            "--speculative-num-draft-tokens",
            severity="warning",
            engine="sglang",
            source=src("arg_groups/speculative_hook.py", "_handle_dflash (inferred_block_size)"),
        )
    ]


#: the codes block_size_rule reports, by method
EXTRA_CODES = {"dflash": ("method.block_size",)}

METHODS = EngineMethods(
    engine="sglang",
    spelling=_spelling(),
    refusal={},
    cite=CITE,
    mtp=mtp_path,
    mtp_max_layers=True,
    extra=block_size_rule,
    extra_codes=EXTRA_CODES,
)

#: the codes these rules may report (docs/engines/codes.md names the engine for them)
CODES = method_codes(METHODS)


def rules(mi: MethodInput) -> Sequence[Finding]:
    """SGLang's ``method.*`` findings on ``mi`` (:func:`recipecli.engines.methods.engine_rules`)."""
    return engine_rules(METHODS, mi)
