"""`python -m sizing`, and the installed `eks-sizing` command: the sizing command line, stopped
cleanly by Ctrl-C or SIGTERM (sizing.interrupts) from its first import on."""

import sys
from pathlib import Path

from sizing.interrupts import stop_cleanly_on_signals


def console() -> int:
    """The command line's entry point: install the handling of signals, then run it."""
    stop_cleanly_on_signals()
    from sizing.cli import main

    # The installed script's help names it as it was typed; `python -m sizing` names the module.
    invoked_as = Path(sys.argv[0]).name
    return main(prog="eks-sizing" if invoked_as == "eks-sizing" else "python -m sizing")


if __name__ == "__main__":
    sys.exit(console())
