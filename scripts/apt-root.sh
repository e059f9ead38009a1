# Sourced by scripts/ensure-*.sh: sets SUDO=() when root, SUDO=(sudo) when sudo exists, else
# prints "$1: ... needs root; run: apt-get install $2" and exits 1.
apt_root() {  # $1: the script's name, $2: the packages to name in the message
    SUDO=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            SUDO=(sudo)
        else
            echo "$1: installing needs root; run: apt-get install $2" >&2
            exit 1
        fi
    fi
}
