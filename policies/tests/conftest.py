"""The project root goes on sys.path, as the pack's __main__.py puts it there for the Pulumi CLI."""

import sys
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(PROJECT_DIR))
