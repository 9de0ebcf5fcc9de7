"""How a recipe is rendered for tokenspeed: its speculative flags."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recipecli.engines.flags import eagle_chain_flags
from recipecli.engines.spec import FlagValue
from recipecli.engines.tokenspeed.pin import PIN

#: The citation prefix of tokenspeed rules in recipe findings (``tokenspeed f4d8ec6e``).
CITE = f"tokenspeed {PIN.short}"

#: recipe speculative.method -> tokenspeed --speculative-algorithm
#: (python/tokenspeed/runtime/utils/server_args.py: choices EAGLE3, MTP, DFLASH, DSPARK).
ALGORITHMS: Mapping[str, str] = {"eagle3": "EAGLE3"}


def speculative_flags(method: str, draft: str, n: int, extra: Mapping[str, Any]) -> list[FlagValue]:
    """tokenspeed's EAGLE3 flags: a chain of ``n`` draft steps, top-k 1, ``n + 1`` draft tokens.

    tokenspeed ``runtime/utils/server_args.py``: ``--speculative-eagle-topk`` has
    ``choices=[1]``; ``--speculative-num-draft-tokens`` defaults to ``num_steps + 1`` in
    ``resolve_config_aliases`` (docs/engines/tokenspeed.md#speculative-flags). ``extra`` is not
    rendered (tokenspeed has no speculative JSON mapping).

    Raises:
        RecipeError: a method with no tokenspeed algorithm.
    """
    return eagle_chain_flags("tokenspeed", ALGORITHMS, method, draft, n)
