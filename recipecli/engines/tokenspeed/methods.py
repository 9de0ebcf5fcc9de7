"""tokenspeed's speculative methods at the pin (issue #27): its ``--speculative-algorithm``
choices and the NextN class a target's MTP draft loads.

Data: ``tokenspeed-<pin slug>-methods.json`` (``scripts/engine_methods.py``): the argparse
choices (``runtime/utils/server_args.py``), ``DRAFTER_MAPPING`` and the registered ``*NextN``
classes (the draft worker renames ``<arch>`` to ``<arch>NextN``:
``runtime/utils/hf_transformers_utils.py`` ``get_config``).
"""

from __future__ import annotations

from collections.abc import Sequence

from recipecli.engines.methods import (
    EngineMethods,
    MethodInput,
    MtpPath,
    engine_rules,
    method_codes,
    methods_data,
)
from recipecli.engines.tokenspeed.sources import src
from recipecli.engines.tokenspeed.spec import SPEC
from recipecli.findings import Finding
from recipecli.target_mtp import LAYER_KEYS

CITE = {
    "method": src(
        "utils/server_args.py", "ServerArgs.add_cli_args (--speculative-algorithm choices)"
    ),
    "mtp": src(
        "utils/hf_transformers_utils.py",
        "get_config (draft worker: <arch> -> <arch>NextN) / configs/model_config.py ModelConfig",
    ),
    "eagle1": src(
        "models/llama_eagle3.py",
        "LlamaModel.__init__ (fc input = hidden_size * num_fc_input_dim)",
        "sgl-project/sglang#21272",
    ),
    "eagle31": src(
        "models/llama_eagle3.py",
        "LlamaModel.__init__ (input_norm for norm_before_fc and fc_norm both built)",
        "vllm-project/speculators#670",
    ),
    "dflash": src("execution/drafter/dflash.py", "DFlash (target_layer_ids, mask_token_id)"),
}

_ALGO = {"eagle3": "EAGLE3", "mtp": "MTP", "dflash": "DFLASH", "dspark": "DSPARK"}


def _choices() -> list[str]:
    return list(methods_data(SPEC)["algorithms"])


def mtp_path(mi: MethodInput) -> MtpPath:
    """The draft worker's ``<arch>NextN`` rename and whether that class is registered; the layer
    count ModelConfig reads (``mtp_num_hidden_layers``, else ``num_nextn_predict_layers``)."""
    arch = str((mi.target_ck.config.get("architectures") or [""])[0])
    data = methods_data(SPEC)
    cls = arch if "NextN" in arch else arch + "NextN"
    for r in data.get("draft_renames", []):
        if r["from"] == arch and r["algorithm"] in (None, "MTP"):
            cls = r["to"]
    if "Eagle3" in cls:  # get_config: MiniMaxM2ForCausalLM -> LlamaForCausalLMEagle3
        return MtpPath(
            None,
            None,
            None,
            f"tokenspeed's draft worker renames {arch} to {cls} (hf_transformers_utils.get_config), "
            "its EAGLE3 Llama head, not an MTP class: --speculative-algorithm MTP on this target "
            "builds an EAGLE3 head from the target's checkpoint; serve an EAGLE3 draft with EAGLE3",
        )
    if cls not in data["nextn_classes"]:
        return MtpPath(
            None,
            None,
            None,
            f"tokenspeed has no {cls} class: the draft worker renames {arch or 'the target'} "
            "to it and the model registry refuses it",
        )
    key = next((k for k in LAYER_KEYS if k in mi.mtp.declared), None)
    return MtpPath(cls, key, mi.mtp.count(key) if key else None)


METHODS = EngineMethods(
    engine="tokenspeed",
    spelling={m: f"--speculative-algorithm {a}" for m, a in _ALGO.items() if a in _choices()},
    refusal={
        "eagle": "argparse: argument --speculative-algorithm: invalid choice: 'EAGLE' "
        f"(choose from {', '.join(repr(c) for c in _choices())})"
    },
    cite=CITE,
    mtp=mtp_path,
)

#: the codes these rules may report (docs/engines/codes.md names the engine for them)
CODES = method_codes(METHODS)


def rules(mi: MethodInput) -> Sequence[Finding]:
    """tokenspeed's ``method.*`` findings on ``mi`` (:func:`recipecli.engines.methods.engine_rules`)."""
    return engine_rules(METHODS, mi)
