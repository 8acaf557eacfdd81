# shellcheck shell=sh
# Installs one of Debian's packages for a tool the tests need (sourced by scripts/install-*.sh).
# install_debian_package PACKAGE WHAT SKIPPED HINT: PACKAGE is the package, WHAT names the tool in
# messages, SKIPPED says which tests are skipped without it, HINT how to install it by hand. Exits
# non-zero, saying why, where it cannot install it (no apt-get, or neither root nor sudo).
install_debian_package() {
    package=$1 what=$2 skipped=$3 hint=$4
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "$what is not installed, and there is no apt-get to install Debian's $package package with." >&2
        echo "$hint;" >&2
        echo "until then $skipped are skipped." >&2
        exit 1
    fi
    if [ "$(id -u)" -eq 0 ]; then
        as_root=""
    elif command -v sudo >/dev/null 2>&1; then
        as_root="sudo"
    else
        echo "$what is not installed, and installing Debian's $package package needs root (or sudo)." >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    # A fresh image has no package lists yet; fetch them only when the first attempt needs them.
    # A package's service is not started: policy-rc.d or the lack of an init system keeps it off.
    if ! $as_root apt-get install --yes --no-install-recommends "$package" >/dev/null 2>&1; then
        $as_root apt-get update >/dev/null
        $as_root apt-get install --yes --no-install-recommends "$package" >/dev/null
    fi
}
