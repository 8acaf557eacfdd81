"""`python -m benchmarks [NAME ...]`: run all benchmarks, or the named ones."""

import importlib
import sys

BENCHMARKS = ("solver", "solver_families", "planner", "scale", "way_down", "trace_shapes", "program")
# Run when named only: they take minutes.
BY_NAME_ONLY = ("ceilings",)


def main(argv):
    # Names first, then options with their values (`trace_shapes --case dlrm-wide --pods 20000`).
    first_option = next((k for k, arg in enumerate(argv) if arg.startswith("-")), len(argv))
    names = list(argv[:first_option]) or list(BENCHMARKS)
    options = list(argv[first_option:])
    status = 0
    for name in names:
        if name not in BENCHMARKS + BY_NAME_ONLY:
            known = ", ".join(BENCHMARKS + BY_NAME_ONLY)
            print(f"error: unknown benchmark {name!r}; known: {known}", file=sys.stderr)
            return 2
        print(f"== {name}", flush=True)
        status |= importlib.import_module(f"benchmarks.{name}").run(options)
    return status


sys.exit(main(sys.argv[1:]))
