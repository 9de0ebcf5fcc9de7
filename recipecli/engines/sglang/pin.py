"""The SGLang release recipecli models (written once: every version string derives from it)."""

from __future__ import annotations

from recipecli.engines.spec import Pin

#: SGLang 0.5.23 (the PyPI wheel); transformers 5.19.0 is the release its METADATA pins.
PIN = Pin(engine="sglang", kind="release", version="0.5.23", transformers="5.19.0")
