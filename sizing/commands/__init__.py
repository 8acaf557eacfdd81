"""Sub-commands of `python -m sizing`; each module defines `register(subparsers)`."""
