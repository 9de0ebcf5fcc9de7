#!/usr/bin/env bash
# Run the SGLang conformance suite (tests/conformance_sglang) inside the pinned SGLang (recipecli/engines/sglang/pin.py)
# environment, building that environment first when it is missing or its pins changed.
#
#   bash scripts/conformance/run_sglang_conformance.sh [PYTEST ARGS...]
#
# The suite's bench checks parse `vllm bench serve` commands with the pinned vLLM's own parser, in
# the vLLM conformance env: this script builds (or reuses) that one too and hands its python to
# the suite as RECIPECLI_CONFORMANCE_VLLM_PYTHON. The report (sglang_conformance_report.json)
# goes to ${RECIPECLI_CONFORMANCE_REPORT:-$OUT or build/conformance}.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
venv="$(bash scripts/conformance/build_sglang_env.sh | tail -n 1)"
vllm_venv="$(bash scripts/conformance/build_vllm_env.sh | tail -n 1)"
export RECIPECLI_CONFORMANCE_SGLANG_ENV=1 HF_HUB_OFFLINE=1
export RECIPECLI_CONFORMANCE_VLLM_PYTHON="$vllm_venv/bin/python"
export RECIPECLI_CONFORMANCE_REPORT="${RECIPECLI_CONFORMANCE_REPORT:-${OUT:-$PWD/build/conformance}}"
start=$SECONDS
"$venv/bin/python" -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning -W ignore::UserWarning \
    -m conformance_sglang tests/conformance_sglang "$@"
echo "conformance (SGLang): suite ran in $((SECONDS - start)) s; report in $RECIPECLI_CONFORMANCE_REPORT"
