"""The component package needs Python 3.11 or later on the machine of the program that adds it; an
older Python stops `pulumi package add` at once, with a message that says so."""

import ast
import subprocess
import sys

from packaging.markers import Marker

from offline.program import PROJECT_DIR

PROVIDER = PROJECT_DIR / "provider"
GUARD = PROVIDER / "python-version-guard"
NEEDS = "needs Python 3.11 or later"


def _requirement_lines() -> list[str]:
    lines = (PROVIDER / "requirements.txt").read_text().splitlines()
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]


def _pip_dry_run(directory):
    """pip as `pulumi package add` runs it (in the directory of requirements.txt), installing nothing."""
    return subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "-r", "requirements.txt"],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_guard_comes_before_the_pinned_requirements_on_an_older_python_only():
    guard, *rest = _requirement_lines()
    path, _, marker = guard.partition(" ; ")
    assert path == "./python-version-guard" and (PROVIDER / path).is_dir()
    assert rest == ["-r ../requirements.txt"]
    for version, applies in (("3.8", True), ("3.10", True), ("3.11", False), ("3.13", False)):
        assert Marker(marker).evaluate({"python_version": version}) is applies, version


def test_pip_stops_at_the_guard_with_its_message(tmp_path):
    # The guard as an older Python would see it (its marker true), before a pin no index has.
    (tmp_path / "requirements.txt").write_text(f"{GUARD} ; python_version >= '3'\nnumpy==0.0.1\n")
    result = _pip_dry_run(tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"the eks-autoscaling component package {NEEDS}" in output
    assert "PULUMI_PYTHON_CMD" in output and "provider/venv" in output
    assert "numpy" not in output


def test_on_this_python_pip_skips_the_guard():
    result = _pip_dry_run(PROVIDER)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "markers 'python_version < \"3.11\"' don't match your environment" in result.stdout + result.stderr


def test_the_guard_and_the_entry_point_parse_as_old_python():
    # Both run on the Python they refuse; 3.6 is the oldest a Pulumi language host looks for.
    for path in (GUARD / "python_version_guard.py", PROVIDER / "__main__.py"):
        ast.parse(path.read_text(), feature_version=(3, 6))


def test_the_entry_point_refuses_an_older_python_before_any_import():
    program = (
        "import sys, runpy\n"
        "sys.version_info = (3, 10, 12, 'final', 0)\n"
        f"runpy.run_path({str(PROVIDER / '__main__.py')!r}, run_name='__main__')\n"
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert f"component package {NEEDS}, and this is Python 3.10" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_docs_say_it():
    text = (PROJECT_DIR / "docs" / "component.md").read_text()
    assert "## Requirements" in text and "Python 3.11 or later" in text and "PULUMI_PYTHON_CMD" in text
