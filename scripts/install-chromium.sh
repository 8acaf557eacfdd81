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
# shellcheck source=scripts/lib/debian-package.sh
. "$(dirname "$0")/lib/debian-package.sh"
install_debian_package chromium Chromium "the browser tests of the HTML capacity report" \
    "Install Chromium or Chrome and put it on PATH as chromium, chromium-browser or google-chrome"
command -v chromium >/dev/null 2>&1 || { echo "the chromium package is installed but chromium is not on PATH" >&2; exit 1; }
chromium --version 2>/dev/null | head -n 1
