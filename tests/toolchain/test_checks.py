"""`make check` (what CI runs after the tests) runs the linter, the format check and the type checker."""

from __future__ import annotations

import subprocess
import tomllib

from offline.program import PROJECT_DIR


def _dry_run(*targets: str) -> list[str]:
    # -B: as if nothing were built yet; -n: print the recipes without running them.
    result = subprocess.run(["make", "-B", "-n", *targets], cwd=PROJECT_DIR, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_make_check_runs_ruff_lint_format_check_and_mypy_before_the_security_gates():
    lines = _dry_run("check")
    lint = lines.index(".venv/bin/python -m ruff check .")
    format_check = lines.index(".venv/bin/python -m ruff format --check .")
    types = lines.index(".venv/bin/python -m mypy")
    gates = next(index for index, line in enumerate(lines) if "-m security check" in line)
    assert lint < gates and format_check < gates and types < gates


def test_make_format_fixes_then_formats():
    lines = _dry_run("format")
    assert lines.index(".venv/bin/python -m ruff check --fix .") < lines.index(".venv/bin/python -m ruff format .")


def test_ci_runs_make_check_after_the_tests():
    steps = [line.strip() for line in (PROJECT_DIR / ".ci" / "run").read_text().splitlines()]
    assert steps.index("make test") < steps.index("make check")


def test_mypy_is_strict_on_sizing():
    mypy = tomllib.loads((PROJECT_DIR / "pyproject.toml").read_text())["tool"]["mypy"]
    sizing = next(o for o in mypy["overrides"] if o["module"] == ["sizing", "sizing.*"])
    strict_flags = (
        "disallow_any_generics", "disallow_subclassing_any", "disallow_untyped_calls", "disallow_untyped_defs",
        "disallow_incomplete_defs", "check_untyped_defs", "disallow_untyped_decorators", "warn_return_any",
        "no_implicit_reexport", "strict_equality", "extra_checks",
    )
    assert all(sizing.get(flag) is True for flag in strict_flags), sizing
    # --strict's global flags.
    assert mypy["warn_unused_configs"] and mypy["warn_redundant_casts"] and mypy["warn_unused_ignores"]
    assert "sizing" in mypy["files"]


def test_the_tools_are_pinned_in_the_development_requirements():
    pins = (PROJECT_DIR / "requirements-dev.txt").read_text()
    assert "\nruff==" in pins and "\nmypy==" in pins
