"""Pod Security Standards "restricted": each control fails on a pod that breaks it, and the
test app's pod passes."""

from __future__ import annotations

import copy

import pytest
import yaml

from security.pod_security import restricted_violations
from stackobjects.app import MANIFEST_DIR

RESTRICTED_POD = {
    "automountServiceAccountToken": False,
    "securityContext": {
        "runAsNonRoot": True,
        "runAsUser": 65532,
        "runAsGroup": 65532,
        "seccompProfile": {"type": "RuntimeDefault"},
    },
    "initContainers": [
        {
            "name": "init",
            "image": "busybox:1.37",
            "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
        }
    ],
    "containers": [
        {
            "name": "app",
            "image": "ghcr.io/mccutchen/go-httpbin:2.25.0",
            "ports": [{"containerPort": 8080}],
            "securityContext": {
                "allowPrivilegeEscalation": False,
                "readOnlyRootFilesystem": True,
                "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]},
            },
        }
    ],
    "volumes": [{"name": "tmp", "emptyDir": {}}, {"name": "config", "configMap": {"name": "app"}}],
}


def _with(change) -> dict:
    pod = copy.deepcopy(RESTRICTED_POD)
    change(pod)
    return pod


def _app(pod) -> dict:
    return pod["containers"][0]


def _controls(findings) -> set[str]:
    return {finding.control for finding in findings}


def test_a_restricted_pod_passes():
    assert restricted_violations(RESTRICTED_POD) == []


BROKEN_PODS = {
    "root user on the container": (lambda p: _app(p)["securityContext"].update(runAsUser=0), "runAsUser"),
    "root user on the pod": (lambda p: p["securityContext"].update(runAsUser=0), "runAsUser"),
    "runAsNonRoot false on a container": (
        lambda p: _app(p)["securityContext"].update(runAsNonRoot=False),
        "Running as Non-root",
    ),
    "runAsNonRoot nowhere": (lambda p: p["securityContext"].pop("runAsNonRoot"), "Running as Non-root"),
    "privileged container": (lambda p: _app(p)["securityContext"].update(privileged=True), "Privileged containers"),
    "privilege escalation not refused": (
        lambda p: _app(p)["securityContext"].pop("allowPrivilegeEscalation"),
        "Privilege escalation",
    ),
    "no seccomp profile": (lambda p: p["securityContext"].pop("seccompProfile"), "Seccomp"),
    "unconfined seccomp on a container": (
        lambda p: _app(p)["securityContext"].update(seccompProfile={"type": "Unconfined"}),
        "Seccomp",
    ),
    "capabilities not dropped": (lambda p: _app(p)["securityContext"]["capabilities"].pop("drop"), "Capabilities"),
    "capability added": (
        lambda p: _app(p)["securityContext"]["capabilities"].update(add=["SYS_ADMIN"]),
        "Capabilities",
    ),
    "host network": (lambda p: p.update(hostNetwork=True), "Host namespaces"),
    "host PID": (lambda p: p.update(hostPID=True), "Host namespaces"),
    "hostPath volume": (lambda p: p["volumes"].append({"name": "host", "hostPath": {"path": "/"}}), "HostPath volumes"),
    "nfs volume": (
        lambda p: p["volumes"].append({"name": "share", "nfs": {"server": "nfs", "path": "/"}}),
        "Volume types",
    ),
    "host port": (lambda p: _app(p)["ports"][0].update(hostPort=8080), "Host ports"),
    "unmasked /proc": (lambda p: _app(p)["securityContext"].update(procMount="Unmasked"), "/proc mount type"),
    "custom SELinux type": (
        lambda p: p["securityContext"].update(seLinuxOptions={"type": "spc_t"}),
        "SELinux",
    ),
    "SELinux user": (
        lambda p: _app(p)["securityContext"].update(seLinuxOptions={"user": "system_u"}),
        "SELinux",
    ),
    "unconfined AppArmor profile": (
        lambda p: _app(p)["securityContext"].update(appArmorProfile={"type": "Unconfined"}),
        "AppArmor",
    ),
    "unsafe sysctl": (
        lambda p: p["securityContext"].update(sysctls=[{"name": "kernel.msgmax", "value": "65536"}]),
        "Sysctls",
    ),
    "Windows HostProcess": (
        lambda p: p["securityContext"].update(windowsOptions={"hostProcess": True}),
        "HostProcess",
    ),
    "root init container": (
        lambda p: p["initContainers"][0]["securityContext"].update(runAsUser=0),
        "runAsUser",
    ),
    "init container keeps its capabilities": (
        lambda p: p["initContainers"][0]["securityContext"].pop("capabilities"),
        "Capabilities",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN_PODS))
def test_each_broken_control_is_found(case):
    change, control = BROKEN_PODS[case]
    findings = restricted_violations(_with(change))
    assert control in _controls(findings), findings


def test_findings_name_the_container_and_the_field():
    pod = _with(lambda p: _app(p)["securityContext"].update(runAsUser=0, privileged=True))
    messages = [str(finding) for finding in restricted_violations(pod)]
    assert "container app: runAsUser: securityContext.runAsUser is 0 (root)" in messages
    assert "container app: Privileged containers: securityContext.privileged is true" in messages


def test_a_pod_level_seccomp_profile_covers_every_container():
    pod = _with(lambda p: None)
    assert all(
        "seccompProfile" not in container["securityContext"] for container in pod["containers"] + pod["initContainers"]
    )
    assert "Seccomp" not in _controls(restricted_violations(pod))


def test_safe_sysctls_and_localhost_seccomp_are_allowed():
    pod = _with(
        lambda p: p["securityContext"].update(
            sysctls=[{"name": "net.ipv4.ip_unprivileged_port_start", "value": "0"}],
            seccompProfile={"type": "Localhost", "localhostProfile": "profiles/app.json"},
        )
    )
    assert restricted_violations(pod) == []


def test_an_unconfined_apparmor_annotation_is_found():
    annotations = {"container.apparmor.security.beta.kubernetes.io/app": "unconfined"}
    assert "AppArmor" in _controls(restricted_violations(RESTRICTED_POD, annotations))
    assert (
        restricted_violations(RESTRICTED_POD, {"container.apparmor.security.beta.kubernetes.io/app": "runtime/default"})
        == []
    )


def test_the_test_app_manifest_is_restricted():
    deployment = yaml.safe_load((MANIFEST_DIR / "30-deployment.yaml").read_text())
    template = deployment["spec"]["template"]
    assert restricted_violations(template["spec"], template["metadata"].get("annotations")) == []
