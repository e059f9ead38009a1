#!/usr/bin/env bash
# Make sure Debian's Chromium is available for the browser tests of `assay report`
# (plugins/assay-report/tests: Playwright for Python drives /usr/bin/chromium; Playwright's own
# `playwright install` is never run, as it downloads a browser build).
#
# Quick and idempotent: when the browser ($ASSAY_CHROMIUM, else /usr/bin/chromium) runs and
# prints its version, it says so and exits. Otherwise it installs Debian's chromium and
# chromium-driver with apt-get (`apt-get update` first; about 1 minute and 300 MB). Needs root
# (or sudo) for apt-get; on other systems it says what to install and fails.
# Set ASSAY_SKIP_CHROMIUM=1 to skip the check (a browser provided some other way, named by
# ASSAY_CHROMIUM for the tests).
set -euo pipefail
BROWSER=${ASSAY_CHROMIUM:-/usr/bin/chromium}

if [ "${ASSAY_SKIP_CHROMIUM:-}" = "1" ]; then
    echo "ensure-chromium: skipped (ASSAY_SKIP_CHROMIUM=1)" >&2
    exit 0
fi

version() {  # the browser's version line, empty when it is missing or does not start
    [ -x "$BROWSER" ] || return 0
    "$BROWSER" --headless --no-sandbox --version 2>/dev/null | head -n 1 || true
}

have=$(version)
if [ -n "$have" ]; then
    echo "ensure-chromium: found $have at $BROWSER" >&2
    exit 0
fi
if [ "$BROWSER" != /usr/bin/chromium ]; then
    echo "ensure-chromium: ASSAY_CHROMIUM=$BROWSER does not start; unset it to install Debian's chromium" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-chromium: Chromium is required by the report's browser tests and apt-get is not available;" \
         "install Chromium and set ASSAY_CHROMIUM to its binary." >&2
    exit 1
fi
# shellcheck source=scripts/apt-root.sh
source "$(dirname "$0")/apt-root.sh"
apt_root ensure-chromium "chromium chromium-driver"
echo "ensure-chromium: installing chromium and chromium-driver with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends chromium chromium-driver >&2
have=$(version)
if [ -n "$have" ]; then
    echo "ensure-chromium: installed $have at $BROWSER" >&2
    exit 0
fi
echo "ensure-chromium: installed chromium but $BROWSER does not start" >&2
exit 1
