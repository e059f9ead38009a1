#!/usr/bin/env bash
# Make sure cmake and a C++17 compiler are available: llama-cpp-python (assay-transformers'
# test extra, the server behind the black-box log-probability tests) is published on PyPI as a
# source package only, and pip compiles llama.cpp with them in step 7 of scripts/setup.sh.
#
# Quick and idempotent: when cmake and g++ (or c++) are found, it says so and exits. Otherwise it
# installs cmake and g++ with apt-get (`apt-get update` first). Needs root (or sudo) for apt-get;
# on other systems it says what to install and fails.
# Set ASSAY_SKIP_CXX=1 to skip the check (a compiler provided some other way).
set -euo pipefail

if [ "${ASSAY_SKIP_CXX:-}" = "1" ]; then
    echo "ensure-cxx: skipped (ASSAY_SKIP_CXX=1)" >&2
    exit 0
fi

have_all() {
    command -v cmake >/dev/null 2>&1 || return 1
    command -v g++ >/dev/null 2>&1 || command -v c++ >/dev/null 2>&1 || return 1
}

describe() {
    echo "$(cmake --version | head -n 1), $( (g++ --version 2>/dev/null || c++ --version) | head -n 1)"
}

if have_all; then
    echo "ensure-cxx: found $(describe)" >&2
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-cxx: cmake and a C++17 compiler are required to build llama-cpp-python (a test dependency)" \
         "and apt-get is not available; install cmake and g++ (or clang++)." >&2
    exit 1
fi
# shellcheck source=scripts/apt-root.sh
source "$(dirname "$0")/apt-root.sh"
apt_root ensure-cxx "cmake g++"
echo "ensure-cxx: installing cmake and g++ with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends cmake g++ make >&2
if have_all; then
    echo "ensure-cxx: installed $(describe)" >&2
    exit 0
fi
echo "ensure-cxx: installed cmake and g++ but one of them is still missing" >&2
exit 1
