"""Flag builders several engines share (light: no engine model is imported)."""

from __future__ import annotations

from collections.abc import Mapping

from recipecli.engines.spec import FlagValue
from recipecli.errors import RecipeError


def eagle_chain_flags(
    title: str, algorithms: Mapping[str, str], method: str, draft: str, n: int
) -> list[FlagValue]:
    """The ``--speculative-*`` flags of an engine that takes EAGLE settings as separate flags
    (tokenspeed, SGLang): a chain of ``n`` draft steps, top-k 1, ``n + 1`` draft tokens.

    Args:
        title: the engine's display name (for the error).
        algorithms: recipe ``speculative.method`` -> the engine's ``--speculative-algorithm``.
        method: the recipe's method.
        draft: the draft checkpoint (repo id or path).
        n: draft steps (``num_speculative_tokens``), >= 1.

    Raises:
        RecipeError: a method with no algorithm on this engine.
    """
    algo = algorithms.get(method)
    if algo is None:
        raise RecipeError(
            f"speculative.method {method!r} has no {title} algorithm "
            f"(known: {', '.join(algorithms)})"
        )
    return [
        ("--speculative-algorithm", algo),
        ("--speculative-draft-model-path", draft),
        ("--speculative-num-steps", n),
        ("--speculative-eagle-topk", 1),
        ("--speculative-num-draft-tokens", n + 1),
    ]
