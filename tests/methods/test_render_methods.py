"""Each engine's speculative flags for every recipe method (issue #27), worked out from the
engines' code at their pins (cited per case), not from the builders."""

from __future__ import annotations

import pytest

from recipecli.engines import engine_spec
from recipecli.errors import RecipeError


@pytest.mark.parametrize("method", ["eagle", "eagle3", "mtp", "dflash", "dspark"])
def test_vllm_takes_the_method_verbatim(method: str):
    # vllm/config/speculative.py SpeculativeMethod: eagle, eagle3, mtp, dflash, dspark are members
    ((flag, cfg),) = engine_spec("vllm").speculative_flags(method, "org/d", 3, {})
    assert flag == "--speculative-config" and cfg["method"] == method


def test_vllm_mtp_without_a_draft_names_no_model():
    # SpeculativeConfig.__post_init__: method mtp with model None uses the target's checkpoint
    ((_, cfg),) = engine_spec("vllm").speculative_flags("mtp", "", 2, {})
    assert cfg == {"method": "mtp", "num_speculative_tokens": 2}


@pytest.mark.parametrize(
    ("method", "algo", "steps", "tokens"),
    [
        ("eagle", "EAGLE", 3, 4),  # SpeculativeAlgorithm.EAGLE, a chain: steps + 1 tokens
        ("mtp", "NEXTN", 3, 4),  # spec_registry._RESERVED_ALIASES NEXTN -> EAGLE
        ("dflash", "DFLASH", 1, 3),  # _handle_dflash: num_steps 1, tokens = the block
        ("dspark", "DSPARK", 1, 4),  # _handle_dspark: tokens must equal gamma + 1
    ],
)
def test_sglang_algorithms(method: str, algo: str, steps: int, tokens: int):
    flags = dict(engine_spec("sglang").speculative_flags(method, "org/d", 3, {}))
    assert flags["--speculative-algorithm"] == algo
    assert flags["--speculative-num-steps"] == steps
    assert flags["--speculative-num-draft-tokens"] == tokens


@pytest.mark.parametrize(
    ("method", "algo", "steps", "tokens"),
    [
        ("mtp", "MTP", 3, 4),
        # server_args.py resolve_config_aliases: DFLASH tokens = n, steps = n - 1; DSPARK on the
        # target n steps, n + 1 tokens; resolve_speculative_decoding: steps == tokens - 1
        ("dflash", "DFLASH", 2, 3),
        ("dspark", "DSPARK", 3, 4),
    ],
)
def test_tokenspeed_algorithms(method: str, algo: str, steps: int, tokens: int):
    flags = dict(engine_spec("tokenspeed").speculative_flags(method, "org/d", 3, {}))
    assert flags["--speculative-algorithm"] == algo
    assert (flags["--speculative-num-steps"], flags["--speculative-num-draft-tokens"]) == (
        steps,
        tokens,
    )
    assert steps == tokens - 1


def test_tokenspeed_refuses_eagle1_with_its_choices():
    # server_args.py: --speculative-algorithm choices=["EAGLE3", "MTP", "DFLASH", "DSPARK"]
    with pytest.raises(RecipeError, match="EAGLE3, MTP, DFLASH or DSPARK"):
        engine_spec("tokenspeed").speculative_flags("eagle", "org/d", 3, {})
