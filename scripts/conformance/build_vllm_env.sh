#!/usr/bin/env bash
# Build (or reuse) the pinned vLLM environment (its version: recipecli/engines/vllm/pin.py) its conformance suite runs in; prints the
# venv path as its last line. See build_env.sh (where it lives, what it installs, how it fails).
exec bash "$(dirname "${BASH_SOURCE[0]}")/build_env.sh" vllm
