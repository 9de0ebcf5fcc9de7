"""tokenspeed's own lint rules on a recipe's merged serve flags (TP alias conflicts, EAGLE top-k)."""

from __future__ import annotations

from collections.abc import Sequence

from recipecli.engines.catalog import load_catalog
from recipecli.engines.spec import FlagLayer, LintHit
from recipecli.engines.tokenspeed.pin import PIN
from recipecli.engines.tokenspeed.recipe import CITE

SERVER_ARGS = f"{CITE} runtime/utils/server_args.py"


def lint_rules(layers: Sequence[FlagLayer]) -> list[LintHit]:
    """Per hardware profile's merged flags, each verdict once per recipe place:

    * ``recipe.tokenspeed_tp_conflict`` (error): ``--attn-tp-size`` and one of its aliases
      (``--tp``, ``--tensor-parallel-size``; catalog ``alias_of``) both given: a ``ValueError``
      in ``server_args.py``;
    * ``recipe.tokenspeed_topk`` (error): ``--speculative-eagle-topk`` other than 1
      (``choices=[1]``; ``resolve_speculative_decoding``).
    """
    catalog = load_catalog(PIN.engine)
    out: list[LintHit] = []
    seen: set[str] = set()
    for flags in layers:
        present = {f: v for f, v in flags.items() if v[0] not in (False, None)}
        tp_like = [f for f in present if catalog.canonical(f) == "--attn-tp-size"]
        if "--attn-tp-size" in tp_like and len(tp_like) > 1:
            other = next(f for f in tp_like if f != "--attn-tp-size")
            where = present["--attn-tp-size"][1]
            if where not in seen:
                seen.add(where)
                out.append(
                    LintHit(
                        "recipe.tokenspeed_tp_conflict",
                        "error",
                        f"{other} is an alias of --attn-tp-size in tokenspeed; giving "
                        f"both is an error: keep one",
                        where,
                        f"{SERVER_ARGS} (--tp and --tensor-parallel-size alias --attn-tp-size; "
                        "both is a ValueError); docs/engines/tokenspeed.md#serve-flags",
                    )
                )
        topk = present.get("--speculative-eagle-topk")
        if topk is not None and topk[0] != 1 and topk[1] not in seen:
            seen.add(topk[1])
            out.append(
                LintHit(
                    "recipe.tokenspeed_topk",
                    "error",
                    f"--speculative-eagle-topk {topk[0]}: tokenspeed only allows 1",
                    topk[1],
                    f"{SERVER_ARGS} (--speculative-eagle-topk choices=[1]; "
                    "resolve_speculative_decoding); docs/engines/tokenspeed.md#speculative-flags",
                )
            )
    return out
