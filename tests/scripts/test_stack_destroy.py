"""`make destroy` (scripts/stack.sh destroy): Karpenter's nodes go before `pulumi destroy`, also
after a failed `up`, with fake `pulumi`, `kubectl` and `aws` that log every call in one file."""

from __future__ import annotations

import json
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from offline.program import PROJECT_DIR
from stackconfig.load import parse_stack_config

SCRIPT = PROJECT_DIR / "scripts" / "stack.sh"
TEARDOWN = PROJECT_DIR / "scripts" / "lib" / "teardown.sh"
# What stack.sh and scripts/lib/*.sh call; nothing else is on PATH but the fakes.
SYSTEM_TOOLS = ("awk", "cat", "date", "dirname", "grep", "mkdir", "mktemp", "rm", "sed", "sleep", "tr", "wc")
DESTROYED = "pulumi destroy --yes --stack dev"
KUBECONFIG = json.dumps({"apiVersion": "v1", "clusters": [{"name": "c", "cluster": {"server": "https://x"}}]})


def _executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


@pytest.fixture
def fakes(tmp_path) -> Path:
    directory = tmp_path / "fakes"
    directory.mkdir()
    return directory


@pytest.fixture
def env(tmp_path, fakes):
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in SYSTEM_TOOLS:
        (tools / name).symlink_to(shutil.which(name))
    home = tmp_path / "home"
    home.mkdir()
    return {
        "PATH": f"{fakes}:{tools}",
        "HOME": str(home),
        "LC_ALL": "C",
        "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "secret",
        "PULUMI_CONFIG_PASSPHRASE": "pass",
        "PULUMI_BACKEND_URL": f"file://{tmp_path / 'state'}",
        "DESTROY_POLL_SECONDS": "0",
        "DESTROY_LOG_GROUP_WAIT": "0",
        "YES": "1",
    }


VPC_ID = "vpc-0123456789abcdef0"


def fake_pulumi(fakes: Path, *, outputs: bool = True, config: dict[str, str] | None = None) -> None:
    """Answers `stack output`, `config get` (unset keys fail, as with the real CLI) and succeeds
    at everything else."""
    config = {"aws:region": "ap-northeast-1", **(config or {})}
    config_cases = "\n".join(f"    '{key}') echo '{value}'; exit 0 ;;" for key, value in config.items())
    _executable(
        fakes / "pulumi",
        f"""#!/bin/sh
echo "pulumi $*" >> "{fakes}/calls"
if [ "$1 $2" = "stack output" ]; then
    [ {int(outputs)} -eq 1 ] || {{ echo "error: current stack does not have output property '$3'" >&2; exit 255; }}
    case "$3" in
        clusterName) echo karpenter-test ;;
        vpcId) echo {VPC_ID} ;;
        kubeconfig) echo '{KUBECONFIG}' ;;
        *) exit 255 ;;
    esac
    exit 0
fi
if [ "$1 $2" = "config get" ]; then
    [ "$3" = "--path" ] && shift
    case "$3" in
{config_cases}
    esac
    echo "error: configuration key '$3' not found for stack 'dev'" >&2; exit 255
fi
exit 0
""",
    )


def fake_kubectl(fakes: Path, claims: list[list[str]], *, reachable: bool = True) -> None:
    """Each `get nodeclaims` answers with the next list of `claims` (the last one for ever)."""
    rounds = fakes / "claims"
    rounds.write_text("\n".join(" ".join(names) or "-" for names in claims) + "\n")
    _executable(
        fakes / "kubectl",
        f"""#!/bin/sh
echo "kubectl $*" >> "{fakes}/calls"
case "$*" in
    *"get namespace kube-system"*) [ {int(reachable)} -eq 1 ] || {{ echo "Unable to connect to the server" >&2; exit 1; }} ;;
    *"get nodeclaims.karpenter.sh -o name"*)
        line=$(sed -n 1p "{rounds}")
        [ "$(wc -l < "{rounds}")" -gt 1 ] && sed -i 1d "{rounds}"
        [ "$line" = "-" ] || for name in $line; do echo "nodeclaim.karpenter.sh/$name"; done ;;
esac
exit 0
""",
    )


def fake_aws(fakes: Path, *, cluster_exists: bool = False, log_group_comes_back: bool = False) -> None:
    """log_group_comes_back: the control-plane log group is there at the first look after the
    destroy (EKS created it again), gone after its deletion."""
    group = fakes / "log-group"
    if log_group_comes_back:
        group.write_text("/aws/eks/karpenter-test/cluster\n")
    _executable(
        fakes / "aws",
        f"""#!/bin/sh
if [ -n "${{AWS_ACCESS_KEY_ID:-}}" ] && [ "$AWS_ACCESS_KEY_ID" != AKIAEXAMPLE ]; then
    echo "aws $* [as $AWS_ACCESS_KEY_ID]" >> "{fakes}/calls"
else
    echo "aws $*" >> "{fakes}/calls"
fi
case "$*" in
    *"eks update-kubeconfig"*)
        [ {int(cluster_exists)} -eq 1 ] || {{ echo "No cluster found" >&2; exit 254; }}
        while [ "$#" -gt 0 ]; do [ "$1" = "--kubeconfig" ] && echo '{KUBECONFIG}' > "$2"; shift; done ;;
    *"sts assume-role"*) printf 'ASIAROLE\tsecret\ttoken\n' ;;
    *"logs describe-log-groups"*) [ -f "{group}" ] && cat "{group}" ;;
    *"logs delete-log-group"*) rm -f "{group}" ;;
esac
exit 0
""",
    )


def destroy_asked(env, answer: str | None, timeout=30):
    """The destroy on a terminal, answering its question with `answer` (None: no answer)."""
    import os
    import pty

    main, terminal = pty.openpty()
    try:
        if answer is not None:
            os.write(main, f"{answer}\n".encode())
        return subprocess.run(
            [str(SCRIPT), "destroy", "dev"], stdin=terminal, capture_output=True, text=True, env=env, timeout=timeout
        )
    finally:
        os.close(main)
        os.close(terminal)


def calls(fakes: Path) -> list[str]:
    path = fakes / "calls"
    return path.read_text().splitlines() if path.exists() else []


def destroy(env, timeout=30):
    return subprocess.run([str(SCRIPT), "destroy", "dev"], capture_output=True, text=True, env=env, timeout=timeout)


def test_the_nodepools_go_and_their_nodeclaims_are_awaited_before_the_stack(env, fakes):
    fake_pulumi(fakes)
    fake_kubectl(fakes, [["test-app-a1", "test-app-b2"], ["test-app-b2"], []])
    fake_aws(fakes)
    result = destroy(env)
    assert result.returncode == 0, result.stderr
    log = calls(fakes)
    deployments = next(i for i, line in enumerate(log) if "delete deployments" in line)
    assert log[deployments].endswith("delete deployments --all --namespace test-app --wait=false --ignore-not-found")
    assert log[deployments].startswith("kubectl --kubeconfig ")
    nodepools = next(
        i for i, line in enumerate(log) if line.endswith("delete nodepools.karpenter.sh --all --wait=false")
    )
    waits = [i for i, line in enumerate(log) if "get nodeclaims.karpenter.sh -o name" in line]
    assert deployments < nodepools < waits[0]
    assert len(waits) == 3
    assert waits[-1] < log.index(DESTROYED)
    assert "waiting for 2 NodeClaim(s) to terminate" in result.stdout and "test-app-a1 test-app-b2" in result.stdout
    assert "waiting for 1 NodeClaim(s)" in result.stdout
    assert "Karpenter's nodes are gone." in result.stdout
    # The kubeconfig came from the stack's output, into a file that is gone afterwards.
    assert "pulumi stack output kubeconfig --show-secrets --stack dev" in log
    used = re.search(r"--kubeconfig (\S+)", log[deployments]).group(1)
    assert not Path(used).exists()


def test_nodeclaims_that_outlive_the_wait_stop_the_destroy(env, fakes):
    fake_pulumi(fakes)
    fake_kubectl(fakes, [["test-app-a1"]])
    fake_aws(fakes)
    result = destroy({**env, "DESTROY_NODECLAIM_TIMEOUT": "2", "DESTROY_POLL_SECONDS": "1"})
    assert result.returncode == 1
    assert "after 2s, 1 NodeClaim(s) of cluster 'karpenter-test' are still there: test-app-a1" in result.stderr
    for hint in (
        "kubectl get nodeclaims -o wide",
        "logs deploy/karpenter",
        "kubectl get pdb -A",
        "do-not-disrupt",
        "DESTROY_NODECLAIM_TIMEOUT",
        "make kubeconfig STACK=dev",
        "docs/teardown.md",
    ):
        assert hint in result.stderr, hint
    # The seconds waited depend on the machine's load; the progress line's shape does not.
    assert re.search(r"waiting for 1 NodeClaim\(s\) to terminate \([0-2]s of 2s\)", result.stdout)
    assert not any(line.startswith("pulumi destroy") for line in calls(fakes))


def test_an_unreachable_cluster_names_what_to_check_and_the_destroy_goes_on(env, fakes):
    fake_pulumi(fakes)
    fake_kubectl(fakes, [["never-asked"]], reachable=False)
    fake_aws(fakes)
    result = destroy(env)
    assert result.returncode == 0, result.stderr
    assert "cannot reach the API server of cluster 'karpenter-test'" in result.stdout
    assert_leftover_checks(result.stdout, "karpenter-test", "ap-northeast-1")
    # The stack's outputs name its VPC.
    assert network_interfaces_by_vpc(result.stdout).startswith(
        f'aws ec2 describe-network-interfaces --region ap-northeast-1 --filters "Name=vpc-id,Values={VPC_ID}"'
    )
    log = calls(fakes)
    assert not any("delete" in line for line in log if line.startswith("kubectl"))
    assert DESTROYED in log


def test_after_a_failed_up_the_cluster_is_found_by_its_configured_name(env, fakes):
    fake_pulumi(
        fakes, outputs=False, config={"eks-autoscaling:clusterName": "blue", "eks-autoscaling:app.namespace": "shop"}
    )
    fake_kubectl(fakes, [["blue-x"], []])
    fake_aws(fakes, cluster_exists=True)
    result = destroy(env)
    assert result.returncode == 0, result.stderr
    assert "stack 'dev' has no outputs" in result.stdout
    log = calls(fakes)
    assert any(
        line.startswith("aws eks update-kubeconfig --name blue --region ap-northeast-1 --kubeconfig ") for line in log
    )
    assert any("delete deployments --all --namespace shop" in line for line in log)
    assert any("delete nodepools.karpenter.sh --all" in line for line in log)
    assert "Karpenter's nodes are gone." in result.stdout
    assert DESTROYED in log


def test_after_a_failed_up_the_aws_cli_signs_in_as_the_stack_does(env, fakes):
    role = "arn:aws:iam::111122223333:role/deployer"
    fake_pulumi(fakes, outputs=False, config={"aws:profile": "team-admin", "aws:assumeRoles[0].roleArn": role})
    fake_kubectl(fakes, [[]])
    fake_aws(fakes, cluster_exists=True)
    result = destroy(env)
    assert result.returncode == 0, result.stderr
    (update,) = [line for line in calls(fakes) if line.startswith("aws eks update-kubeconfig")]
    assert update.startswith(
        f"aws eks update-kubeconfig --name karpenter-test --region ap-northeast-1 --profile team-admin --role-arn {role} --kubeconfig "
    )
    assert "Karpenter's nodes are gone." in result.stdout


def test_the_leftover_checks_name_the_stacks_profile(env, fakes):
    fake_pulumi(fakes, outputs=False, config={"aws:profile": "team-admin"})
    fake_kubectl(fakes, [["never-asked"]])
    fake_aws(fakes, cluster_exists=False)
    result = destroy(env)
    assert result.returncode == 0, result.stderr
    assert "aws ec2 describe-instances --region ap-northeast-1 --profile team-admin --filters" in result.stdout
    assert "aws iam list-instance-profiles --profile team-admin --path-prefix" in result.stdout
    assert DESTROYED in calls(fakes)


def test_after_a_failed_up_without_a_cluster_the_destroy_goes_on(env, fakes):
    fake_pulumi(fakes, outputs=False)
    fake_kubectl(fakes, [["never-asked"]])
    fake_aws(fakes, cluster_exists=False)
    result = destroy(env)
    assert result.returncode == 0, result.stderr
    assert "stack 'dev' has no outputs" in result.stdout
    # No clusterName in the stack file: the default name.
    assert_leftover_checks(result.stdout, "karpenter-test", "ap-northeast-1")
    # No outputs, so no VPC id: the command finds the VPC by the stack's tag.
    assert (
        '"Name=vpc-id,Values=$(aws ec2 describe-vpcs --region ap-northeast-1 --filters '
        "Name=tag:eks-autoscaling:cluster,Values=karpenter-test --query 'Vpcs[].VpcId' --output text)\""
        in network_interfaces_by_vpc(result.stdout)
    )
    assert DESTROYED in calls(fakes)


def test_without_kubectl_the_destroy_says_what_to_check(env, fakes):
    fake_pulumi(fakes)
    fake_aws(fakes)
    result = destroy(env)
    assert result.returncode == 0, result.stderr
    assert "no kubectl on PATH" in result.stdout
    assert_leftover_checks(result.stdout, "karpenter-test", "ap-northeast-1")
    assert DESTROYED in calls(fakes)


def test_a_cluster_without_karpenter_needs_no_wait(env, fakes):
    fake_pulumi(fakes)
    fake_kubectl(fakes, [["never-asked"]])
    kubectl = fakes / "kubectl"
    kubectl.write_text(
        kubectl.read_text().replace(
            'case "$*" in', 'case "$*" in\n    *"get crd nodeclaims.karpenter.sh"*) exit 1 ;;', 1
        )
    )
    fake_aws(fakes)
    result = destroy(env)
    assert result.returncode == 0, result.stderr
    assert "no Karpenter resources" in result.stdout
    assert not any("nodepools" in line or "get nodeclaims" in line for line in calls(fakes))
    assert DESTROYED in calls(fakes)


def test_the_wait_must_be_whole_seconds(env, fakes):
    fake_pulumi(fakes)
    fake_kubectl(fakes, [[]])
    fake_aws(fakes)
    result = destroy({**env, "DESTROY_NODECLAIM_TIMEOUT": "10m"})
    assert result.returncode == 2
    assert "DESTROY_NODECLAIM_TIMEOUT" in result.stderr and "'10m'" in result.stderr
    assert not any(line.startswith("pulumi destroy") for line in calls(fakes))


def test_the_scripts_defaults_are_the_configurations():
    defaults = parse_stack_config({"aws:region": "ap-northeast-1"})
    text = TEARDOWN.read_text()
    assert f"DEFAULT_CLUSTER_NAME={defaults.cluster_name}\n" in text
    assert f"DEFAULT_APP_NAMESPACE={defaults.app.namespace}\n" in text


def assert_leftover_checks(stdout: str, cluster: str, region: str) -> None:
    assert (
        f'aws ec2 describe-instances --region {region} --filters "Name=tag:eks:eks-cluster-name,Values={cluster}"'
        in stdout
    )
    assert '"Name=tag-key,Values=karpenter.sh/nodepool"' in stdout
    assert f'--filters "Name=tag:karpenter.sh/discovery,Values={cluster}"' in stdout
    assert f'--path-prefix "/karpenter/{region}/{cluster}/"' in stdout
    assert f'"Key=eks-autoscaling:cluster,Values={cluster}"' in stdout
    # The network interfaces that would keep the VPC, by tag and with the command that deletes them.
    assert (
        f'aws ec2 describe-network-interfaces --region {region} --filters "Name=tag:cluster.k8s.amazonaws.com/name,Values={cluster}"'
        in stdout
    )
    assert f"aws ec2 delete-network-interface --region {region} --network-interface-id <eni id>" in stdout
    assert "Continuing with pulumi destroy." in stdout


def network_interfaces_by_vpc(stdout: str) -> str:
    (line,) = [line for line in stdout.splitlines() if '--filters "Name=vpc-id,Values=' in line]
    return line.strip()


# --- it asks first ---------------------------------------------------------------------------


def test_without_a_terminal_and_without_yes_nothing_is_deleted(env, fakes):
    fake_pulumi(fakes)
    fake_kubectl(fakes, [["test-app-a1"]])
    fake_aws(fakes)
    del env["YES"]
    result = destroy(env)
    assert result.returncode == 2
    assert "asks first, and there is no terminal to ask on" in result.stderr
    assert "YES=1 make destroy STACK=dev" in result.stderr
    # The credentials check and the stack's selection, then nothing.
    assert calls(fakes) == ["aws sts get-caller-identity", "pulumi stack select dev"]


def test_a_wrong_answer_deletes_nothing(env, fakes):
    fake_pulumi(fakes)
    fake_kubectl(fakes, [["test-app-a1"]])
    fake_aws(fakes)
    del env["YES"]
    result = destroy_asked(env, "yes")
    assert result.returncode == 1
    assert "Type the stack's name (dev) to destroy it:" in result.stdout
    assert "Nothing has been deleted yet." in result.stdout and "Nothing was deleted." in result.stdout
    assert not any(line.startswith(("kubectl", "pulumi destroy")) for line in calls(fakes))


def test_the_stacks_name_as_the_answer_destroys_it_in_order(env, fakes):
    fake_pulumi(fakes)
    fake_kubectl(fakes, [["test-app-a1"], []])
    fake_aws(fakes)
    del env["YES"]
    result = destroy_asked(env, "dev")
    assert result.returncode == 0, result.stderr
    log = calls(fakes)
    nodepools = next(i for i, line in enumerate(log) if "delete nodepools.karpenter.sh" in line)
    # The question comes before the first deletion, and pulumi destroy does not ask again.
    assert nodepools < log.index(DESTROYED)
    assert result.stdout.index("Type the stack's name") < result.stdout.index("Deleting the Deployments")


@pytest.mark.parametrize(
    "consent",
    [{"YES": "1"}, {"PULUMI_ARGS": "--yes"}, {"PULUMI_ARGS": "--skip-preview -y"}],
    ids=["YES=1", "PULUMI_ARGS=--yes", "PULUMI_ARGS=-y"],
)
def test_yes_given_beforehand_needs_no_terminal(env, fakes, consent):
    fake_pulumi(fakes)
    fake_kubectl(fakes, [[]])
    fake_aws(fakes)
    del env["YES"]
    result = destroy({**env, **consent})
    assert result.returncode == 0, result.stderr
    assert any(line.startswith(DESTROYED) for line in calls(fakes))


def test_the_yes_option_of_the_script(env, fakes):
    fake_pulumi(fakes)
    fake_kubectl(fakes, [[]])
    fake_aws(fakes)
    del env["YES"]
    result = subprocess.run(
        [str(SCRIPT), "--yes", "destroy", "dev"], capture_output=True, text=True, env=env, timeout=30
    )
    assert result.returncode == 0, result.stderr
    assert DESTROYED in calls(fakes)


# --- the log group EKS creates again ----------------------------------------------------------


def test_a_log_group_eks_creates_again_after_the_destroy_is_deleted(env, fakes):
    fake_pulumi(fakes)
    fake_kubectl(fakes, [[]])
    fake_aws(fakes, log_group_comes_back=True)
    result = destroy({**env, "DESTROY_LOG_GROUP_WAIT": "1", "DESTROY_POLL_SECONDS": "1"})
    assert result.returncode == 0, result.stderr
    log = calls(fakes)
    look = next(i for i, line in enumerate(log) if "logs describe-log-groups" in line)
    assert log.index(DESTROYED) < look
    assert log[look].startswith(
        "aws --region ap-northeast-1 logs describe-log-groups --log-group-name-prefix /aws/eks/karpenter-test/cluster"
    )
    assert "aws --region ap-northeast-1 logs delete-log-group --log-group-name /aws/eks/karpenter-test/cluster" in log
    assert "Deleted the log group /aws/eks/karpenter-test/cluster, which EKS had created again" in result.stdout
    # It keeps looking for the wait, once the group is gone too.
    assert sum("logs describe-log-groups" in line for line in log) >= 2


def test_the_log_group_is_looked_for_as_the_stacks_role(env, fakes):
    role = "arn:aws:iam::111122223333:role/deployer"
    fake_pulumi(fakes, config={"aws:profile": "team-admin", "aws:assumeRoles[0].roleArn": role})
    fake_kubectl(fakes, [[]])
    fake_aws(fakes, log_group_comes_back=True)
    result = destroy(env)
    assert result.returncode == 0, result.stderr
    log = calls(fakes)
    assume = next(line for line in log if "sts assume-role" in line)
    assert assume.startswith(f"aws --profile team-admin sts assume-role --role-arn {role} ")
    deletion = next(line for line in log if "logs delete-log-group" in line)
    assert deletion.endswith("[as ASIAROLE]") and "--profile" not in deletion


def test_a_destroy_that_stops_leaves_the_log_group_alone(env, fakes):
    fake_pulumi(fakes)
    fake_kubectl(fakes, [["test-app-a1"]])
    fake_aws(fakes, log_group_comes_back=True)
    result = destroy({**env, "DESTROY_NODECLAIM_TIMEOUT": "0"})
    assert result.returncode == 1
    assert not any("logs " in line for line in calls(fakes))


def test_without_control_plane_logs_no_log_group_is_touched(env, fakes):
    fake_pulumi(fakes, config={"eks-autoscaling:cluster.logTypes": "[]"})
    fake_kubectl(fakes, [[]])
    fake_aws(fakes, log_group_comes_back=True)
    result = destroy(env)
    assert result.returncode == 0, result.stderr
    assert not any("logs " in line for line in calls(fakes))
