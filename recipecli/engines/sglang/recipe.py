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
ALGORITHMS: Mapping[str, str] = {"eagle3": "EAGLE3"}


def speculative_flags(method: str, draft: str, n: int, extra: Mapping[str, Any]) -> list[FlagValue]:
    """SGLang's EAGLE3 flags: a chain of ``n`` draft steps, top-k 1, ``n + 1`` draft tokens.

    SGLang ``arg_groups/speculative_hook.py`` ``_handle_eagle_family``: with
    ``--speculative-num-steps`` unset it asserts top-k and draft tokens are unset too and picks all
    three itself (``_auto_choose_speculative_params``); with steps given, top-k must be given
    (it is compared with ``> 1``); with top-k 1, draft tokens are reset to steps + 1. So all three
    are rendered, consistently (docs/engines/sglang.md). A wider tree (top-k > 1) is set with the
    engine args ``speculative-eagle-topk`` / ``speculative-num-draft-tokens``; ``extra`` is not
    rendered.

    Raises:
        RecipeError: a method with no SGLang algorithm.
    """
    return eagle_chain_flags("SGLang", ALGORITHMS, method, draft, n)
