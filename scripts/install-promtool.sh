#!/bin/sh
# Install promtool, which the tests of the alert rules run (`promtool check rules`, `promtool test
# rules`), from the distribution's `prometheus` package (Debian, Ubuntu). Does nothing when promtool
# is on PATH already. Exits non-zero, saying why, where it cannot install it.
set -eu

if command -v promtool >/dev/null 2>&1; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "promtool is not installed, and there is no apt-get to install Debian's prometheus package with." >&2
    echo "Install promtool (https://prometheus.io/download/, or your package manager's prometheus) and put it on PATH;" >&2
    echo "until then the tests of the alert rules are skipped." >&2
    exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
    as_root=""
elif command -v sudo >/dev/null 2>&1; then
    as_root="sudo"
else
    echo "promtool is not installed, and installing Debian's prometheus package needs root (or sudo)." >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
install_package() {
    # The server is not started: policy-rc.d or the lack of an init system keeps it off in
    # containers, and only promtool is used.
    $as_root apt-get install --yes --no-install-recommends prometheus >/dev/null
}
# A fresh image has no package lists yet; fetch them only when the first attempt needs them.
if ! install_package 2>/dev/null; then
    $as_root apt-get update >/dev/null
    install_package
fi
command -v promtool >/dev/null 2>&1 || { echo "the prometheus package is installed but promtool is not on PATH" >&2; exit 1; }
promtool --version 2>&1 | head -n 1
