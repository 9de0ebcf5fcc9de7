"""recipecli: check, render and document EAGLE3 speculative decoding for vLLM and tokenspeed."""

__version__ = "0.1.0"
