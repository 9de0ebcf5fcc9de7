"""How a recipe is rendered for tokenspeed: its speculative flags."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recipecli.engines.flags import eagle_chain_flags
from recipecli.engines.spec import FlagValue
from recipecli.engines.tokenspeed.pin import PIN
from recipecli.errors import RecipeError

#: The citation prefix of tokenspeed rules in recipe findings (``tokenspeed f4d8ec6e``).
CITE = f"tokenspeed {PIN.short}"

#: recipe speculative.method -> tokenspeed --speculative-algorithm
#: (python/tokenspeed/runtime/utils/server_args.py: choices EAGLE3, MTP, DFLASH, DSPARK).
ALGORITHMS: Mapping[str, str] = {
    "eagle3": "EAGLE3",
    "mtp": "MTP",
    "dflash": "DFLASH",
    "dspark": "DSPARK",
}


def speculative_flags(method: str, draft: str, n: int, extra: Mapping[str, Any]) -> list[FlagValue]:
    """tokenspeed's EAGLE3 flags: a chain of ``n`` draft steps, top-k 1, ``n + 1`` draft tokens.

    tokenspeed ``runtime/utils/server_args.py``: ``--speculative-eagle-topk`` has
    ``choices=[1]``; ``--speculative-num-draft-tokens`` defaults to ``num_steps + 1`` in
    ``resolve_config_aliases`` (docs/engines/tokenspeed.md#speculative-flags). ``extra`` is not
    rendered (tokenspeed has no speculative JSON mapping).

    DFlash and DSpark (``ServerArgs.resolve_config_aliases``, the ``--speculative-config``
    mapping of ``num_speculative_tokens``): DFlash ``n`` draft tokens over ``n - 1`` steps,
    DSpark on the target's checkpoint ``n`` steps and ``n + 1`` tokens;
    ``resolve_speculative_decoding`` refuses steps other than tokens - 1 for both.

    Raises:
        RecipeError: a method with no tokenspeed algorithm (EAGLE-1: its argparse choices are
            EAGLE3, MTP, DFLASH, DSPARK).
    """
    if method == "eagle":
        raise RecipeError(
            "speculative.method 'eagle' (EAGLE-1) has no tokenspeed algorithm: "
            "--speculative-algorithm takes EAGLE3, MTP, DFLASH or DSPARK"
        )
    if method == "dflash":
        return _block_flags("DFLASH", draft, max(n - 1, 0), n)
    if method == "dspark":
        return _block_flags("DSPARK", draft, n, n + 1)
    return eagle_chain_flags("tokenspeed", ALGORITHMS, method, draft, n)


def _block_flags(algo: str, draft: str, steps: int, tokens: int) -> list[FlagValue]:
    """A block-parallel draft's (DFlash, DSpark) flags: the algorithm, the draft, ``steps`` and
    the verify window ``tokens``."""
    return [
        ("--speculative-algorithm", algo),
        ("--speculative-draft-model-path", draft),
        ("--speculative-num-steps", steps),
        ("--speculative-num-draft-tokens", tokens),
    ]
