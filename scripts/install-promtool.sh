#!/bin/sh
# Install promtool, which the tests of the alert rules run (`promtool check rules`, `promtool test
# rules`), from the distribution's `prometheus` package (Debian, Ubuntu). Does nothing when promtool
# is on PATH already. Exits non-zero, saying why, where it cannot install it.
set -eu

if command -v promtool >/dev/null 2>&1; then
    exit 0
fi
# shellcheck source=scripts/lib/debian-package.sh
. "$(dirname "$0")/lib/debian-package.sh"
install_debian_package prometheus promtool "the tests of the alert rules" \
    "Install promtool (https://prometheus.io/download/, or your package manager's prometheus) and put it on PATH"
command -v promtool >/dev/null 2>&1 || { echo "the prometheus package is installed but promtool is not on PATH" >&2; exit 1; }
promtool --version 2>&1 | head -n 1
