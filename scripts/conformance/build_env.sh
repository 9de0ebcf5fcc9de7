#!/usr/bin/env bash
# Build (or reuse) the pinned environment one conformance suite runs in.
#
#   bash scripts/conformance/build_env.sh vllm|sglang    # prints the venv path as its last line
#
# (build_vllm_env.sh and build_sglang_env.sh call this.) The venv lives outside the repository, at
#   ${RECIPECLI_CONFORMANCE_VENV (vllm) | RECIPECLI_CONFORMANCE_SGLANG_VENV (sglang)
#     :-${XDG_CACHE_HOME:-~/.cache}/recipecli/<engine>-<version>-<hash>}
# where <hash> covers the pins file and the Python version, and is reused while it matches.
# Every package comes from requirements-<engine>-<version>.txt (named from the pin) with --no-deps (nothing is
# resolved, so pip never pulls another torch). A new build needs the package index once (vLLM:
# about 1 GB of wheels; SGLang: about 2.6 GB, most of them the CUDA libraries its torch 2.14.1
# links — no GPU is needed to import it); when it cannot be reached this exits 2 with one line.
# recipecli itself is (re)installed editable from this checkout on every call, so a reused venv
# always tests the tree it is called from.
set -euo pipefail

engine="${1:-}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
py="${RECIPECLI_CONFORMANCE_PYTHON:-python3.11}"
case "$engine" in
vllm)
    venv_var=RECIPECLI_CONFORMANCE_VENV
    probe='import vllm.entrypoints.cli.main, torch, transformers'
    probe_what="vllm.entrypoints.cli.main"
    ;;
sglang)
    venv_var=RECIPECLI_CONFORMANCE_SGLANG_VENV
    probe='import sglang.srt.server_args, sglang.srt.configs.model_config, torch, torchvision, transformers'
    probe_what="sglang.srt.server_args or its config code"
    ;;
*)
    echo "build_env: expected vllm or sglang, got '${engine}'" >&2
    exit 2
    ;;
esac
me="build_${engine}_env"
# The version is the engine's pin (recipecli/engines/<engine>/pin.py), written once.
version="$("$py" "$repo/scripts/pins.py" version "$engine")"
pins="$here/$("$py" "$repo/scripts/pins.py" requirements "$engine")"

# pip notes every empty local index folder of this machine's pip config; drop those lines.
quiet() { sed '/is ignored: it is neither a file nor a directory/d' >&2; }

fail() {
    echo "$me: $*" >&2
    exit 2
}

command -v "$py" >/dev/null 2>&1 ||
    fail "no '$py' on PATH (the pins are for Python 3.11); set RECIPECLI_CONFORMANCE_PYTHON to one"
[ -f "$pins" ] || fail "pins file $pins is missing"

hash="$({ cat "$pins"; "$py" -c 'import sys; print(sys.version_info[:2])'; } | sha256sum | cut -c1-12)"
venv="${!venv_var:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/recipecli/$engine-$version-$hash}"
stamp="$venv/.recipecli-conformance-pins"

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ]; then
    echo "$me: reusing $venv (pins $hash)" >&2
else
    start=$SECONDS
    # One quick look at the index first, so an unreachable one is one line, not pip's retries.
    "$py" -m pip index versions "$engine" --timeout 20 --retries 1 >/dev/null 2>&1 ||
        fail "cannot reach the package index (pip index versions $engine failed); the first build needs it — retry with network, or set $venv_var to an env built elsewhere"
    echo "$me: building $venv (pins $hash)" >&2
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    # A half-built venv never survives: the stamp is written last, anything else is removed.
    trap 'rm -rf "$venv"' ERR INT TERM
    "$py" -m venv "$venv"
    "$venv/bin/python" -m pip install --disable-pip-version-check -q --no-deps -r "$pins" 2>&1 |
        quiet || fail "pip install -r $(basename "$pins") failed (see pip's message above)"
    "$venv/bin/python" -W ignore -c "$probe" ||
        fail "the built env cannot import $probe_what (see above)"
    trap - ERR INT TERM
    echo "$hash" >"$stamp"
    echo "$me: built in $((SECONDS - start)) s" >&2
fi

"$venv/bin/python" -m pip install --disable-pip-version-check -q --no-deps --no-build-isolation \
    -e "$repo" 2>&1 | quiet || fail "installing recipecli from $repo into $venv failed (see above)"
echo "$venv"
