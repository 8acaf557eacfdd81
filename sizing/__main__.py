"""`python -m sizing`, and the installed `eks-sizing` command: the sizing command line, stopped
cleanly by Ctrl-C or SIGTERM (sizing.interrupts) from its first import on."""

import sys

from sizing.interrupts import stop_cleanly_on_signals


def console() -> int:
    """The command line's entry point: install the handling of signals, then run it."""
    stop_cleanly_on_signals()
    from sizing.cli import main

    return main()


if __name__ == "__main__":
    sys.exit(console())
