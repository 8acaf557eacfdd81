#!/bin/sh
# Install Chromium, in which the tests load the HTML capacity report (headless, the network off),
# from the distribution's `chromium` package (Debian; Ubuntu's is a snap stub, so there install
# Chromium or Chrome yourself). Does nothing when a Chromium is on PATH already. Exits non-zero,
# saying why, where it cannot install it.
set -eu

for name in chromium chromium-browser google-chrome; do
    if command -v "$name" >/dev/null 2>&1; then
        exit 0
    fi
done
if ! command -v apt-get >/dev/null 2>&1; then
    echo "Chromium is not installed, and there is no apt-get to install Debian's chromium package with." >&2
    echo "Install Chromium or Chrome and put it on PATH as chromium, chromium-browser or google-chrome;" >&2
    echo "until then the browser tests of the HTML capacity report are skipped." >&2
    exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
    as_root=""
elif command -v sudo >/dev/null 2>&1; then
    as_root="sudo"
else
    echo "Chromium is not installed, and installing Debian's chromium package needs root (or sudo)." >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
install_package() {
    $as_root apt-get install --yes --no-install-recommends chromium >/dev/null
}
# A fresh image has no package lists yet; fetch them only when the first attempt needs them.
if ! install_package 2>/dev/null; then
    $as_root apt-get update >/dev/null
    install_package
fi
command -v chromium >/dev/null 2>&1 || { echo "the chromium package is installed but chromium is not on PATH" >&2; exit 1; }
chromium --version 2>/dev/null | head -n 1
