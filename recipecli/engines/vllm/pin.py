"""The vLLM release recipecli models (written once: every version string derives from it)."""

from __future__ import annotations

from recipecli.engines.spec import Pin

#: vLLM 0.33.0 (the PyPI wheel); transformers 5.20.2 is the release the conformance environment
#: pins beside it (vLLM 0.33.0 asks >=5.16.1,<5.21).
PIN = Pin(engine="vllm", kind="release", version="0.33.0", transformers="5.20.2")
