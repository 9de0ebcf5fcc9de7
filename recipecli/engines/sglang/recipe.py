"""How a recipe is rendered for SGLang: its speculative flags."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recipecli.engines.flags import eagle_chain_flags
from recipecli.engines.sglang.pin import PIN
from recipecli.engines.spec import FlagValue

#: The citation prefix of SGLang rules in recipe findings (paths under python/sglang/srt/).
CITE = f"sgl-project/sglang {PIN.short} python/sglang/srt/"

#: recipe speculative.method -> SGLang --speculative-algorithm (``arg_groups/fields/spec.py``
#: ``speculative_algorithm``: builtins EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM, DFLASH, DSPARK, UNO).
#: ``mtp`` is NEXTN, an alias of EAGLE (``speculative/spec_info.py`` ``from_string``).
ALGORITHMS: Mapping[str, str] = {
    "eagle3": "EAGLE3",
    "eagle": "EAGLE",
    "mtp": "NEXTN",
    "dflash": "DFLASH",
    "dspark": "DSPARK",
}


def speculative_flags(method: str, draft: str, n: int, extra: Mapping[str, Any]) -> list[FlagValue]:
    """SGLang's EAGLE3 flags: a chain of ``n`` draft steps, top-k 1, ``n + 1`` draft tokens.

    SGLang ``arg_groups/speculative_hook.py`` ``_handle_eagle_family``: with
    ``--speculative-num-steps`` unset it asserts top-k and draft tokens are unset too and picks all
    three itself (``_auto_choose_speculative_params``); with steps given, top-k must be given
    (it is compared with ``> 1``); with top-k 1, draft tokens are reset to steps + 1. So all three
    are rendered, consistently (docs/engines/sglang.md). A wider tree (top-k > 1) is set with the
    engine args ``speculative-eagle-topk`` / ``speculative-num-draft-tokens``; ``extra`` is not
    rendered.

    DFlash (``_handle_dflash``): one step (SGLang overrides any other), the verify window
    ``--speculative-num-draft-tokens`` = ``n``. DSpark (``_handle_dspark``): one step, the window
    must equal gamma + 1 = ``n + 1``.

    Raises:
        RecipeError: a method with no SGLang algorithm.
    """
    if method == "dflash":
        return _block_flags("DFLASH", draft, 1, n)
    if method == "dspark":
        return _block_flags("DSPARK", draft, 1, n + 1)
    return eagle_chain_flags("SGLang", ALGORITHMS, method, draft, n)


def _block_flags(algo: str, draft: str, steps: int, tokens: int) -> list[FlagValue]:
    """A block-parallel draft's (DFlash, DSpark) flags: the algorithm, the draft, ``steps`` and
    the verify window ``tokens``."""
    return [
        ("--speculative-algorithm", algo),
        ("--speculative-draft-model-path", draft),
        ("--speculative-num-steps", steps),
        ("--speculative-num-draft-tokens", tokens),
    ]
