"""The TypeScript example and the README's snippet compile against declarations written from schema.json.

Needs the TypeScript compiler: `tsc` on the PATH, or its path in TSC (for one, `npm install --no-save
typescript` in a scratch directory gives node_modules/.bin/tsc). Without it the tests are skipped.
"""

import os
import re
import shutil
import subprocess

import pytest

from offline.program import PROJECT_DIR
from tests.package.typescript_declarations import declarations

TSC = os.environ.get("TSC") or shutil.which("tsc")
pytestmark = pytest.mark.skipif(not TSC, reason="no TypeScript compiler: put tsc on the PATH or set TSC")

# The README's snippet uses the reader's VPC.
README_VPC = "declare const vpc: { vpcId: Input<string>; publicSubnetIds: Input<string[]>; privateSubnetIds: Input<string[]> };\n"


def compile_errors(program: str, tmp_path) -> list[str]:
    assert TSC is not None
    (tmp_path / "eks-autoscaling.d.ts").write_text(declarations())
    (tmp_path / "index.ts").write_text(program)
    result = subprocess.run(
        [TSC, "--noEmit", "--strict", "--target", "es2020", "--module", "commonjs", "eks-autoscaling.d.ts", "index.ts"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )
    errors = [line for line in result.stdout.splitlines() if "error TS" in line]
    assert bool(errors) == (result.returncode != 0), result.stdout + result.stderr
    return errors


def test_the_typescript_example_compiles(tmp_path):
    assert compile_errors((PROJECT_DIR / "examples" / "typescript" / "index.ts").read_text(), tmp_path) == []


def test_the_readme_snippet_compiles(tmp_path):
    (block,) = re.findall(r"```typescript\n(.*?)```", (PROJECT_DIR / "README.md").read_text(), flags=re.DOTALL)
    assert compile_errors(README_VPC + block, tmp_path) == []


def test_a_wrong_name_or_type_does_not_compile(tmp_path):
    program = (
        'import * as e from "@pulumi/eks-autoscaling";\n'
        'new e.EksAutoscaling("a", { clusterNam: "x" });\n'
        'new e.EksAutoscaling("b", { nodeGroup: { minSize: "2" } });\n'
        'const c = new e.EksAutoscaling("c", {});\n'
        "export const wrong = c.clusterNam;\n"
    )
    errors = compile_errors(program, tmp_path)
    assert len(errors) == 3, errors
    assert "clusterNam" in errors[0] and "'string' is not assignable to type 'number'" in errors[1]
