#!/usr/bin/env bash
# Make sure a Java 17+ runtime is available for pyspark (pyspark 4.x needs Java 17 or newer).
#
# Quick and idempotent: when `java` (from $JAVA_HOME/bin if set, else from PATH) already
# reports version 17 or newer, it prints that and exits. Otherwise it looks for a Java 17+
# already installed under /usr/lib/jvm, and only then installs one with apt-get
# (`apt-get update` first; the first of openjdk-17/21/25-jre-headless the archive has).
# Needs root (or sudo) for apt-get; on other systems it says what to install and fails.
#
# Prints, as its last line, `JAVA_HOME=<dir>` for the runtime to use, so a caller may do
#   export "$(scripts/ensure-java.sh | tail -n 1)"
# Set ASSAY_SKIP_JAVA=1 to skip the check entirely (e.g. Java provided some other way).
set -euo pipefail

MIN_MAJOR=${ASSAY_MIN_JAVA:-17}

if [ "${ASSAY_SKIP_JAVA:-}" = "1" ]; then
    echo "ensure-java: skipped (ASSAY_SKIP_JAVA=1)" >&2
    exit 0
fi

# The major version of the java binary $1 (0 when it is missing or unreadable).
java_major() {
    local bin=$1 line version
    [ -x "$bin" ] || command -v "$bin" >/dev/null 2>&1 || { echo 0; return; }
    line=$("$bin" -version 2>&1 | grep -m1 -Ei 'version "' || true)
    version=$(printf '%s' "$line" | sed -E 's/.*version "([^"]*)".*/\1/')
    case "$version" in
        1.*) version=${version#1.}; echo "${version%%.*}" ;;          # 1.8.0_392 -> 8
        [0-9]*) version=${version%%[.+-]*}; echo "${version:-0}" ;;    # 17.0.15 -> 17
        *) echo 0 ;;
    esac
}

# JAVA_HOME of a java binary (resolving the /usr/bin/java alternatives link).
home_of() {
    local real
    real=$(readlink -f "$(command -v "$1")")
    dirname "$(dirname "$real")"
}

report() {  # $1: java binary, $2: how it was had (found, installed ...)
    echo "ensure-java: ${2:-found} Java $(java_major "$1") at $(home_of "$1")" >&2
    echo "JAVA_HOME=$(home_of "$1")"
}

# 1. The java pyspark will use: $JAVA_HOME/bin/java when JAVA_HOME is set, else PATH.
if [ -n "${JAVA_HOME:-}" ]; then candidate="$JAVA_HOME/bin/java"; else candidate=java; fi
if [ "$(java_major "$candidate")" -ge "$MIN_MAJOR" ]; then
    report "$candidate"
    exit 0
fi
if [ -n "${JAVA_HOME:-}" ]; then
    echo "ensure-java: JAVA_HOME=$JAVA_HOME has no Java $MIN_MAJOR+; looking elsewhere" >&2
fi

# 2. An installed JVM that is new enough but not the default (e.g. several JDKs side by side).
for bin in /usr/lib/jvm/*/bin/java; do
    [ -x "$bin" ] || continue
    if [ "$(java_major "$bin")" -ge "$MIN_MAJOR" ]; then
        echo "ensure-java: using $bin; export the JAVA_HOME below so pyspark finds it" >&2
        report "$bin"
        exit 0
    fi
done

# 3. Install one with apt-get.
if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-java: Java $MIN_MAJOR+ is required by pyspark and apt-get is not available;" \
         "install a Java $MIN_MAJOR+ runtime (e.g. Temurin, or your package manager's openjdk-17)" \
         "and set JAVA_HOME." >&2
    exit 1
fi
# shellcheck source=scripts/apt-root.sh
source "$(dirname "$0")/apt-root.sh"
apt_root ensure-java "openjdk-17-jre-headless"
echo "ensure-java: installing a Java $MIN_MAJOR+ runtime with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
package=""
for major in 17 21 25; do
    [ "$major" -ge "$MIN_MAJOR" ] || continue
    name="openjdk-$major-jre-headless"
    if apt-cache show "$name" >/dev/null 2>&1; then package=$name; break; fi
done
if [ -z "$package" ]; then
    echo "ensure-java: no openjdk-17/21/25-jre-headless package in the apt sources" >&2
    exit 1
fi
# Debian's JRE post-install scripts expect this man directory on slim images.
"${SUDO[@]}" mkdir -p /usr/share/man/man1
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "$package" >&2

for bin in java /usr/lib/jvm/*/bin/java; do
    if [ "$(java_major "$bin")" -ge "$MIN_MAJOR" ]; then
        report "$bin" "installed $package:"
        exit 0
    fi
done
echo "ensure-java: installed $package but found no Java $MIN_MAJOR+ afterwards" >&2
exit 1
