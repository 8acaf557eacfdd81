"""Kubernetes resource quantities ("100m", "0.5", "128Mi", "1Gi", "500M") as integers.

cpu becomes millicores, memory and ephemeral storage MiB, all rounded up: a request of
"0.1m" cpu still needs a whole millicore, and "500M" (500,000,000 bytes) of
memory needs 477 MiB, not 476.8.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from sizing.errors import SizingInputError

QuantityValue = str | int | float

_BINARY_SUFFIXES = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL_SUFFIXES = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_QUANTITY = re.compile(
    r"^(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:(?P<exponent>[eE][+-]?[0-9]+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$"
)
_BYTES_PER_MIB = 2**20
CPU_FORMS = "a Kubernetes cpu quantity such as 100m, 0.5 or 2"
MEMORY_FORMS = "a Kubernetes memory quantity such as 128Mi, 1Gi, 500M or a number of bytes"
STORAGE_FORMS = "a Kubernetes storage quantity such as 512Mi, 20Gi, 100G or a number of bytes"


def parse_quantity(value: QuantityValue, where: str, allowed: str) -> Fraction:
    """The exact value of a Kubernetes quantity in its base unit (cores or bytes).

    where: the object and field named in the error message; allowed: the forms
    accepted, for the same message.
    """
    if isinstance(value, bool):
        raise SizingInputError(f"{where} must be {allowed}, got {value!r}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SizingInputError(f"{where} must be {allowed}, got {value!r}")
        # str() keeps the decimal the author wrote (0.1 stays 1/10, not a binary fraction).
        value = repr(value)
    if not isinstance(value, str):
        raise SizingInputError(f"{where} must be {allowed}, got {value!r}")
    match = _QUANTITY.match(value.strip())
    if not match:
        raise SizingInputError(f"{where} must be {allowed}, got {value!r}")
    number = Fraction(match.group("number"))
    if match.group("exponent"):
        return number * Fraction(10) ** int(match.group("exponent")[1:])
    suffix = match.group("suffix") or ""
    if suffix in _BINARY_SUFFIXES:
        return number * _BINARY_SUFFIXES[suffix]
    return number * _DECIMAL_SUFFIXES[suffix]


def cpu_millicores(value: QuantityValue, where: str) -> int:
    """A cpu quantity in millicores, rounded up ("100m" -> 100, 0.5 -> 500, 1 -> 1000)."""
    return math.ceil(parse_quantity(value, where, CPU_FORMS) * 1000)


def memory_mib(value: QuantityValue, where: str) -> int:
    """A memory quantity in MiB, rounded up ("1Gi" -> 1024, "500M" -> 477, 1048576 -> 1)."""
    return math.ceil(parse_quantity(value, where, MEMORY_FORMS) / _BYTES_PER_MIB)


def storage_mib(value: QuantityValue, where: str) -> int:
    """An ephemeral-storage quantity in MiB, rounded up ("20Gi" -> 20480, "1G" -> 954)."""
    return math.ceil(parse_quantity(value, where, STORAGE_FORMS) / _BYTES_PER_MIB)


def storage_bytes(value: QuantityValue, where: str) -> int:
    """A storage quantity in bytes, rounded up ("20Gi" -> 21474836480, "100G" -> 100000000000)."""
    return math.ceil(parse_quantity(value, where, STORAGE_FORMS))


def format_cpu(millicores: int) -> str:
    """Millicores as a Kubernetes quantity: whole cores without a suffix, else "250m"."""
    if millicores % 1000 == 0:
        return str(millicores // 1000)
    return f"{millicores}m"


def format_memory(mib: int) -> str:
    """MiB as a Kubernetes quantity: "96Gi" when whole GiB, else "1536Mi"."""
    if mib % 1024 == 0:
        return f"{mib // 1024}Gi"
    return f"{mib}Mi"
