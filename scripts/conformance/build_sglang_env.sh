#!/usr/bin/env bash
# Build (or reuse) the pinned SGLang 0.5.23 environment the conformance suite runs in.
#
#   bash scripts/conformance/build_sglang_env.sh        # prints the venv path as its last line
#
# The venv lives outside the repository, at
#   ${RECIPECLI_CONFORMANCE_VENV:-${XDG_CACHE_HOME:-~/.cache}/recipecli/sglang-0.5.23-<hash>}
# where <hash> covers the pins file and the Python version, and is reused while it matches.
# Every package comes from requirements-sglang-0.5.23.txt with --no-deps (nothing is resolved,
# so pip never pulls another torch). A new build needs the package index once (about 2.6 GB of
# wheels, most of them the CUDA libraries torch 2.14.1 links: no GPU is needed to import it);
# when it cannot be reached this exits 2 with one line. recipecli itself is
# (re)installed editable from this checkout on every call, so a reused venv always tests the
# tree it is called from.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
pins="$here/requirements-sglang-0.5.23.txt"
py="${RECIPECLI_CONFORMANCE_PYTHON:-python3.11}"

# pip notes every empty local index folder of this machine's pip config; drop those lines.
quiet() { sed '/is ignored: it is neither a file nor a directory/d' >&2; }

fail() {
    echo "build_sglang_env: $*" >&2
    exit 2
}

command -v "$py" >/dev/null 2>&1 ||
    fail "no '$py' on PATH (the pins are for Python 3.11); set RECIPECLI_CONFORMANCE_PYTHON to one"
[ -f "$pins" ] || fail "pins file $pins is missing"

hash="$({ cat "$pins"; "$py" -c 'import sys; print(sys.version_info[:2])'; } | sha256sum | cut -c1-12)"
venv="${RECIPECLI_CONFORMANCE_VENV:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/recipecli/sglang-0.5.23-$hash}"
stamp="$venv/.recipecli-conformance-pins"

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ]; then
    echo "build_sglang_env: reusing $venv (pins $hash)" >&2
else
    start=$SECONDS
    # One quick look at the index first, so an unreachable one is one line, not pip's retries.
    "$py" -m pip index versions sglang --timeout 20 --retries 1 >/dev/null 2>&1 ||
        fail "cannot reach the package index (pip index versions sglang failed); the first build needs it — retry with network, or set RECIPECLI_CONFORMANCE_VENV to an env built elsewhere"
    echo "build_sglang_env: building $venv (pins $hash)" >&2
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    # A half-built venv never survives: the stamp is written last, anything else is removed.
    trap 'rm -rf "$venv"' ERR INT TERM
    "$py" -m venv "$venv"
    "$venv/bin/python" -m pip install --disable-pip-version-check -q --no-deps -r "$pins" 2>&1 |
        quiet || fail "pip install -r $(basename "$pins") failed (see pip's message above)"
    "$venv/bin/python" -W ignore -c 'import sglang.srt.server_args, sglang.srt.configs.model_config, torch, torchvision, transformers' ||
        fail "the built env cannot import sglang.srt.server_args or its config code (see above)"
    trap - ERR INT TERM
    echo "$hash" >"$stamp"
    echo "build_sglang_env: built in $((SECONDS - start)) s" >&2
fi

"$venv/bin/python" -m pip install --disable-pip-version-check -q --no-deps --no-build-isolation \
    -e "$repo" 2>&1 | quiet || fail "installing recipecli from $repo into $venv failed (see above)"
echo "$venv"
