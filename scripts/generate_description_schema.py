"""Write the JSON Schema of the workload description, docs/schemas/workload-description.schema.json.

Usage: python scripts/generate_description_schema.py [--check]

The schema is generated from the pydantic models that validate a description
(sizing/planning/description_model.py), so editors check a file by the same rules
as `python -m sizing plan`. With --check, nothing is written: the exit status is 1
when the checked-in schema differs from the models.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from sizing.interrupts import stop_cleanly_on_signals  # noqa: E402

if __name__ == "__main__":
    stop_cleanly_on_signals()

from sizing.planning.description_model import json_schema  # noqa: E402

SCHEMA_FILE = REPO_ROOT / "docs" / "schemas" / "workload-description.schema.json"


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the schema file is current")
    args = parser.parse_args(argv)
    text = schema_text()
    relative = SCHEMA_FILE.relative_to(REPO_ROOT)
    if args.check:
        current = SCHEMA_FILE.read_text(encoding="utf-8") if SCHEMA_FILE.is_file() else ""
        if current != text:
            print(f"{relative} is out of date; run `make schemas`", file=sys.stderr)
            return 1
        return 0
    SCHEMA_FILE.parent.mkdir(parents=True, exist_ok=True)
    SCHEMA_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {relative}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
