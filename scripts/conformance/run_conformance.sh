#!/usr/bin/env bash
# Run the conformance suite (tests/conformance) inside the pinned vLLM CPU environment (recipecli/engines/vllm/pin.py),
# building that environment first when it is missing or its pins changed.
#
#   bash scripts/conformance/run_conformance.sh [PYTEST ARGS...]
#
# The report (conformance_report.json, draft_disagreements.md) goes to
# ${RECIPECLI_CONFORMANCE_REPORT:-$OUT or build/conformance}.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
venv="$(bash scripts/conformance/build_vllm_env.sh | tail -n 1)"
export RECIPECLI_CONFORMANCE_ENV=1 VLLM_TARGET_DEVICE=cpu HF_HUB_OFFLINE=1
export RECIPECLI_CONFORMANCE_REPORT="${RECIPECLI_CONFORMANCE_REPORT:-${OUT:-$PWD/build/conformance}}"
start=$SECONDS
"$venv/bin/python" -m pytest -q -p no:cacheprovider -m conformance tests/conformance "$@"
echo "conformance: suite ran in $((SECONDS - start)) s; report in $RECIPECLI_CONFORMANCE_REPORT"
