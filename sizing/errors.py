"""Errors raised on bad input to the sizing library."""


class SizingInputError(ValueError):
    """Input that cannot be planned or solved.

    The message names the offending field or object and what is allowed; the
    command line prints it as one line on stderr and exits non-zero.
    """
