#!/usr/bin/env bash
# Make sure pdflatex and the LaTeX packages of assay's standalone tables are available
# (geometry, booktabs, graphicx, xcolor with colortbl): the tests compile the tables that
# `assay table --format latex` writes, ValUES' colour-coded table included.
#
# Quick and idempotent: when pdflatex and every package are found (kpsewhich), it says so
# and exits. Otherwise it installs texlive-latex-base and texlive-latex-recommended with
# apt-get (`apt-get update` first; about 25 s and 200 MB). Needs root (or sudo) for apt-get;
# on other systems it says what to install and fails.
# Set ASSAY_SKIP_LATEX=1 to skip the check (LaTeX provided some other way).
set -euo pipefail
PACKAGES=(geometry.sty booktabs.sty graphicx.sty xcolor.sty colortbl.sty)

if [ "${ASSAY_SKIP_LATEX:-}" = "1" ]; then
    echo "ensure-latex: skipped (ASSAY_SKIP_LATEX=1)" >&2
    exit 0
fi

have_all() {
    command -v pdflatex >/dev/null 2>&1 || return 1
    for sty in "${PACKAGES[@]}"; do
        [ -n "$(kpsewhich "$sty" 2>/dev/null)" ] || return 1
    done
}

if have_all; then
    echo "ensure-latex: found $(pdflatex --version | head -n 1)" >&2
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-latex: pdflatex with ${PACKAGES[*]} is required by the tests and apt-get is not available;" \
         "install a TeX distribution (TeX Live: the latex-base and latex-recommended collections)." >&2
    exit 1
fi
# shellcheck source=scripts/apt-root.sh
source "$(dirname "$0")/apt-root.sh"
apt_root ensure-latex "texlive-latex-base texlive-latex-recommended"
echo "ensure-latex: installing texlive-latex-base and texlive-latex-recommended with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends texlive-latex-base texlive-latex-recommended >&2
if have_all; then
    echo "ensure-latex: installed $(pdflatex --version | head -n 1)" >&2
    exit 0
fi
echo "ensure-latex: installed TeX Live but pdflatex or one of ${PACKAGES[*]} is still missing" >&2
exit 1
