"""How a recipe is rendered for vLLM: its speculative flag and the citations of its serve traits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recipecli.engines.spec import FlagValue
from recipecli.engines.vllm.pin import PIN

#: The citation prefix of vLLM rules in recipe findings (``vllm v0.33.0``).
CITE = f"vllm {PIN.ref}"


def speculative_flags(method: str, draft: str, n: int, extra: Mapping[str, Any]) -> list[FlagValue]:
    """vLLM's ``--speculative-config`` JSON mapping for a recipe's ``speculative:`` section.

    vLLM (``vllm/config/speculative.py``): the mapping always names ``method``
    (``SpeculativeConfig.__post_init__`` guesses it from the draft path otherwise), never
    ``tensor_parallel_size`` (``SpeculativeConfig._verify_args`` rejects it); extra keys (e.g.
    ``draft_tensor_parallel_size``, ``attention_backend``) follow in recipe order. vLLM takes the
    method verbatim (``SpeculativeConfig.method``: ``eagle``, ``eagle3``, ``mtp``, ``dflash`` and
    ``dspark`` are all in its ``SpeculativeMethod`` Literal). For ``mtp`` (and ``dspark``
    without a draft) no ``model`` is written: ``__post_init__`` uses the target's checkpoint.

    Args:
        method: the recipe's ``speculative.method`` (``eagle3``).
        draft: the draft checkpoint (repo id or path).
        n: ``num_speculative_tokens`` (draft steps per verify), >= 1.
        extra: further ``speculative_config`` keys from the recipe.

    Returns:
        ``[("--speculative-config", {...})]``.
    """
    config: dict[str, Any] = {"method": method, "model": draft, "num_speculative_tokens": n}
    if not draft and method in ("mtp", "dspark"):
        del config["model"]
    config.update(extra)
    return [("--speculative-config", config)]
