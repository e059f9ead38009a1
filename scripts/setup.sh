#!/usr/bin/env bash
# Create the virtual environment and install assay, every plugin under plugins/ (editable)
# and the test and dev dependencies (the gates of `make check`). Called by `make setup` (and so
# by `make run` / `make test` / `make check`).
#
# Prints one line per step with its elapsed seconds (a dot every few seconds while a long
# install runs). pip's own output goes to $VENV/setup.log; on a failure its tail is shown.
# torch is installed first, pinned, as its own step: an unpinned `pip install torch` (or a
# package that depends on torch, installed first) pulls a multi-GB CUDA build.
#   TORCH_VERSION=2.13.0      the torch release to install (default)
#   TORCH_INDEX_URL=URL       an extra index for it, e.g. https://download.pytorch.org/whl/cpu
#   ASSAY_SKIP_JAVA=1         skip the Java check (Java provided some other way)
#   ASSAY_SKIP_LATEX=1        skip the LaTeX check (pdflatex provided some other way)
#   ASSAY_SKIP_CHROMIUM=1     skip the Chromium check (a browser provided some other way)
#   CMAKE_ARGS=...            the flags of llama-cpp-python's build of llama.cpp (a test dependency of
#                             assay-transformers, compiled from source in step 8); default $LLAMA_CPP_CMAKE_ARGS below:
#                             CPU only, portable (not -march=native: pip caches the wheel), without the multimodal
#                             library (mtmd/llava) and OpenMP, no examples, tests, tools or server binaries
set -euo pipefail
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
TORCH_VERSION=${TORCH_VERSION:-2.13.0}
LLAMA_CPP_CMAKE_ARGS="-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF -DGGML_CUDA=OFF -DGGML_METAL=OFF \
-DGGML_VULKAN=OFF -DGGML_BLAS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF \
-DLLAMA_BUILD_SERVER=OFF"
cd "$(dirname "$0")/.."

STEPS=9
STEP=0
STARTED=$SECONDS
LOG="$VENV/setup.log"
TICKER=""
LOG_MARK=0  # the log's line count when the current pip run started

begin() {  # $1: what this step does
    STEP=$((STEP + 1))
    STEP_STARTED=$SECONDS
    printf 'setup: [%d/%d] %s ...' "$STEP" "$STEPS" "$1"
}

finish() {  # $1: the outcome, printed after the step's "..."
    stop_ticker
    echo " $1 ($((SECONDS - STEP_STARTED)) s)"
}

start_ticker() {  # a dot every 5 s and the elapsed seconds every 30 s: never minutes of silence
    (
        n=0
        while sleep 5 >/dev/null 2>&1; do
            n=$((n + 5))
            if [ $((n % 30)) -eq 0 ]; then printf ' %d s ' "$n"; else printf '.'; fi
        done
    ) &
    TICKER=$!
}

stop_ticker() {
    if [ -n "$TICKER" ]; then
        kill "$TICKER" 2>/dev/null || true
        wait "$TICKER" 2>/dev/null || true
        TICKER=""
    fi
}
trap stop_ticker EXIT

fail() {  # $1: what failed; shows the tail of the log
    stop_ticker
    echo " FAILED ($((SECONDS - STEP_STARTED)) s)"
    echo "setup: $1; its last lines in $LOG:" >&2
    tail -n +"$((LOG_MARK + 1))" "$LOG" | tail -n 40 | sed 's/^/    /' >&2
    echo "setup: the whole log is in $LOG" >&2
    exit 1
}

# Runs pip with its output appended to the log. Warnings from this run are echoed afterwards
# (except pip's notes about configured index folders that lack a package, which are harmless).
pip_install() {
    LOG_MARK=$(wc -l <"$LOG")
    start_ticker
    "$VENV/bin/python" -m pip install --disable-pip-version-check --progress-bar off "$@" >>"$LOG" 2>&1 \
        || fail "pip install $* failed"
    stop_ticker
    PIP_WARNINGS=$(tail -n +"$((LOG_MARK + 1))" "$LOG" | grep -E '^(WARNING|DEPRECATION):|[A-Za-z]Warning: ' \
        | sed 's/^ *//' | grep -v 'is ignored: it is neither a file nor a directory' || true)
}

show_warnings() {
    if [ -n "${PIP_WARNINGS:-}" ]; then
        printf '%s\n' "$PIP_WARNINGS" | sed 's/^/    pip: /'
    fi
}

# 1. The virtual environment.
begin "virtual environment $VENV"
if [ -x "$VENV/bin/python" ]; then
    : >"$LOG"
    finish "exists"
else
    "$PYTHON" -m venv "$VENV"
    : >"$LOG"
    finish "created with $("$VENV/bin/python" -V 2>&1)"
fi

# 2. The editable installs (step 7, without build isolation) and the tests' own `pip install`
# of the plugin template build with this setuptools: 77 or newer reads `license = "SPDX"`.
# pip 25 or newer: older resolvers (the 23.x a fresh venv ships) do not see that a plugin's
# dependency on another plugin (assay-segmentation -> assay-uncertainty) is one of the
# editable installs of the same command when those carry extras (`-e plugins/x[test]`).
begin "pip, setuptools"
pip_install "pip>=25.0" "setuptools>=77"
finish "$("$VENV/bin/python" -c 'import importlib.metadata as m; print("pip", m.version("pip"), "+ setuptools", m.version("setuptools"))')"
show_warnings

# A step that runs scripts/ensure-NAME.sh: its last stderr line is the outcome; on failure
# its output goes to the log and setup stops.
ensure_step() {  # $1: step title, $2: NAME of scripts/ensure-NAME.sh
    begin "$1"
    start_ticker
    local out
    if out=$(bash "scripts/ensure-$2.sh" 2>&1 >/dev/null); then
        finish "$(printf '%s\n' "$out" | tail -n 1 | sed "s/^ensure-$2: //")"
    else
        LOG_MARK=$(wc -l <"$LOG")
        printf '%s\n' "$out" >>"$LOG"
        fail "scripts/ensure-$2.sh failed"
    fi
}

# 3. Spark (issue 5): pyspark 4.x needs a Java 17+ runtime; install one when missing.
ensure_step "Java 17+ for Spark" java

# 4. LaTeX (issue 14): the tests compile the standalone LaTeX tables; install pdflatex when missing.
ensure_step "LaTeX for the table tests" latex

# 5. Chromium (issue 26): the report's browser tests drive Debian's chromium; install it when missing.
ensure_step "Chromium for the report's browser tests" chromium

# 5b. cmake and a C++ compiler: llama-cpp-python (a test dependency, step 8) is a source package on PyPI.
ensure_step "cmake and a C++ compiler for llama-cpp-python" cxx

# 6. torch, pinned, before anything that depends on it (torchmetrics).
torch_installed() {
    "$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("torch"))' 2>/dev/null || true
}
begin "torch $TORCH_VERSION"
have=$(torch_installed)
if [ "${have%%+*}" = "$TORCH_VERSION" ]; then
    finish "found $have"
else
    torch_args=("torch==$TORCH_VERSION")
    [ -n "${TORCH_INDEX_URL:-}" ] && torch_args+=(--extra-index-url "$TORCH_INDEX_URL")
    pip_install "${torch_args[@]}"
    finish "installed $(torch_installed)"
    show_warnings
fi

# 7. assay, every plugin (editable) and what the tests use (step 8 adds the peers installed without
# their dependencies).

args=(-e ".[test,plot,spark,dask,dev,fast]")
for plugin in plugins/*/; do
    [ -f "$plugin/pyproject.toml" ] && args+=(-e "$plugin[test]")
done

plugins=$(for p in plugins/*/pyproject.toml; do basename "$(dirname "$p")"; done)
begin "assay and $(printf '%s\n' "$plugins" | wc -l) plugins (editable, with the test and dev extras)"
# The torch pin again, so that no dependency's requirement replaces the build installed above.
# No build isolation: every pyproject builds with setuptools (tests/test_packaging.py checks),
# installed in step 2, and an isolated build environment per package costs minutes.
# llama-cpp-python (assay-transformers' test extra) compiles llama.cpp here, with $CMAKE_ARGS (header); pip caches
# the wheel, so only the first setup on a machine pays for it. Its build needs build isolation (scikit-build-core),
# which --no-build-isolation would take away: it is installed first, on its own.
CMAKE_ARGS="${CMAKE_ARGS:-$LLAMA_CPP_CMAKE_ARGS}" pip_install "llama-cpp-python[server]==0.3.36"
pip_install --no-build-isolation "${args[@]}" "torch==$TORCH_VERSION"
finish "done"
show_warnings
# 8. The peer libraries the differential tests run live, WITHOUT their dependencies: each plugin's
# test-peers-no-deps.txt pins them (torch-uncertainty, lm-polygraph). Their full dependency trees
# (Lightning, vLLM, OpenAI clients ...) are not needed for the modules the tests load, and an
# unpinned resolve of them would replace the torch installed in step 6.
peer_files=(plugins/*/test-peers-no-deps.txt)
if [ -e "${peer_files[0]}" ]; then
    begin "peer libraries for the differential tests (--no-deps)"
    peer_args=()
    for f in "${peer_files[@]}"; do peer_args+=(-r "$f"); done
    pip_install --no-deps "${peer_args[@]}"
    finish "$(cat "${peer_files[@]}" | grep -v '^ *#' | grep -v '^ *$' | paste -sd ' ')"
    show_warnings
fi
echo "setup: ready in $((SECONDS - STARTED)) s: $VENV has assay and $(printf '%s\n' "$plugins" | paste -sd ' ') (pip's log: $LOG)"
