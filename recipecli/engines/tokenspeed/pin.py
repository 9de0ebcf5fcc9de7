"""The tokenspeed commit recipecli models (written once: every version string derives from it)."""

from __future__ import annotations

from recipecli.engines.spec import Pin

#: lightseekorg/tokenspeed at f4d8ec6e (2026-08-22; tokenspeed is not on PyPI); transformers
#: 5.12.0 is the release its python/pyproject.toml pins at that commit.
PIN = Pin(
    engine="tokenspeed",
    kind="commit",
    version="f4d8ec6e039c028c7ee71317ccfb84e56ae2b45c",
    transformers="5.12.0",
)
