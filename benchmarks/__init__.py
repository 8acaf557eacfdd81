"""Benchmarks run by `make bench`; each module defines `run(argv) -> int`."""
