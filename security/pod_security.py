"""Pod Security Standards, "restricted" profile, as a check over a pod spec.

The controls are those of https://kubernetes.io/docs/concepts/security/pod-security-standards/
(the baseline profile and the restricted additions), for Linux pods. They are checked here
before anything reaches a cluster, so that a change to the test app's manifests fails the
security gates instead of being refused by Pod Security Admission at deploy time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Iterator, NamedTuple, Optional

CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")

# Baseline: capabilities a container may add; restricted narrows this to NET_BIND_SERVICE.
RESTRICTED_ADDABLE_CAPABILITIES = frozenset({"NET_BIND_SERVICE"})
RESTRICTED_VOLUME_TYPES = frozenset(
    {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}
)
ALLOWED_SECCOMP_TYPES = frozenset({"RuntimeDefault", "Localhost"})
# Baseline "Sysctls": the safe set, as of the Kubernetes 1.32 policy.
SAFE_SYSCTLS = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
        "net.ipv4.tcp_rmem",
        "net.ipv4.tcp_wmem",
    }
)
ALLOWED_SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"})
APPARMOR_ANNOTATION_PREFIX = "container.apparmor.security.beta.kubernetes.io/"


class PodSecurityFinding(NamedTuple):
    """One broken control: where (`pod` or `container <name>`), which control, and what is wrong."""

    location: str
    control: str
    detail: str

    def __str__(self) -> str:
        return f"{self.location}: {self.control}: {self.detail}"


def restricted_violations(
    pod_spec: Mapping[str, Any], annotations: Optional[Mapping[str, str]] = None
) -> list[PodSecurityFinding]:
    """Every control of the restricted profile that `pod_spec` breaks; empty when it complies.

    pod_spec: a PodSpec as the API takes it (camelCase), e.g. a Deployment's
    `spec.template.spec`. annotations: the pod's annotations, for AppArmor profiles set the
    pre-1.30 way.
    """
    findings: list[PodSecurityFinding] = []
    pod_context = _mapping(pod_spec.get("securityContext"))
    containers = list(_containers(pod_spec))
    findings += _host_namespaces(pod_spec)
    findings += _volumes(pod_spec)
    findings += _sysctls(pod_context)
    findings += _selinux("pod", pod_context)
    findings += _apparmor("pod", pod_context)
    findings += _windows_host_process("pod", pod_context)
    findings += _run_as_non_root(pod_context, containers)
    findings += _seccomp(pod_context, containers)
    if _is_root_user(pod_context):
        findings.append(PodSecurityFinding("pod", "runAsUser", "securityContext.runAsUser is 0 (root)"))
    for key, value in (annotations or {}).items():
        if key.startswith(APPARMOR_ANNOTATION_PREFIX) and value == "unconfined":
            container_name = key[len(APPARMOR_ANNOTATION_PREFIX) :]
            findings.append(PodSecurityFinding(f"container {container_name}", "AppArmor", f"annotation {key} is unconfined"))
    for name, container in containers:
        findings += _container(name, container)
    return findings


def _container(name: str, container: Mapping[str, Any]) -> list[PodSecurityFinding]:
    where = f"container {name}"
    context = _mapping(container.get("securityContext"))
    findings = []
    if context.get("privileged") is True:
        findings.append(PodSecurityFinding(where, "Privileged containers", "securityContext.privileged is true"))
    if context.get("allowPrivilegeEscalation") is not False:
        findings.append(
            PodSecurityFinding(where, "Privilege escalation", "securityContext.allowPrivilegeEscalation must be false")
        )
    if _is_root_user(context):
        findings.append(PodSecurityFinding(where, "runAsUser", "securityContext.runAsUser is 0 (root)"))
    proc_mount = context.get("procMount")
    if proc_mount not in (None, "Default"):
        findings.append(PodSecurityFinding(where, "/proc mount type", f"securityContext.procMount is {proc_mount!r}"))
    for port in _sequence(container.get("ports")):
        host_port = _mapping(port).get("hostPort")
        if host_port not in (None, 0):
            findings.append(PodSecurityFinding(where, "Host ports", f"hostPort {host_port} is set"))
    capabilities = _mapping(context.get("capabilities"))
    dropped = {str(item) for item in _sequence(capabilities.get("drop"))}
    if "ALL" not in dropped:
        findings.append(PodSecurityFinding(where, "Capabilities", "securityContext.capabilities.drop must include ALL"))
    added = sorted({str(item) for item in _sequence(capabilities.get("add"))} - RESTRICTED_ADDABLE_CAPABILITIES)
    if added:
        findings.append(
            PodSecurityFinding(where, "Capabilities", f"adds {', '.join(added)}; only NET_BIND_SERVICE may be added")
        )
    findings += _selinux(where, context)
    findings += _apparmor(where, context)
    findings += _windows_host_process(where, context)
    return findings


def _host_namespaces(pod_spec: Mapping[str, Any]) -> list[PodSecurityFinding]:
    return [
        PodSecurityFinding("pod", "Host namespaces", f"{field} is true")
        for field in ("hostNetwork", "hostPID", "hostIPC")
        if pod_spec.get(field) is True
    ]


def _volumes(pod_spec: Mapping[str, Any]) -> list[PodSecurityFinding]:
    findings = []
    for volume in _sequence(pod_spec.get("volumes")):
        volume = _mapping(volume)
        name = volume.get("name", "<unnamed>")
        for source in set(volume) - {"name"}:
            if source == "hostPath":
                findings.append(PodSecurityFinding("pod", "HostPath volumes", f"volume {name} is a hostPath"))
            elif source not in RESTRICTED_VOLUME_TYPES:
                findings.append(
                    PodSecurityFinding("pod", "Volume types", f"volume {name} has type {source}, not allowed in restricted")
                )
    return findings


def _sysctls(pod_context: Mapping[str, Any]) -> list[PodSecurityFinding]:
    return [
        PodSecurityFinding("pod", "Sysctls", f"sysctl {name} is not in the safe set")
        for name in (_mapping(item).get("name") for item in _sequence(pod_context.get("sysctls")))
        if name not in SAFE_SYSCTLS
    ]


def _selinux(where: str, context: Mapping[str, Any]) -> list[PodSecurityFinding]:
    options = _mapping(context.get("seLinuxOptions"))
    findings = []
    if options.get("type", "") not in ALLOWED_SELINUX_TYPES:
        findings.append(PodSecurityFinding(where, "SELinux", f"seLinuxOptions.type {options['type']!r} is not allowed"))
    for field in ("user", "role"):
        if options.get(field):
            findings.append(PodSecurityFinding(where, "SELinux", f"seLinuxOptions.{field} must not be set"))
    return findings


def _apparmor(where: str, context: Mapping[str, Any]) -> list[PodSecurityFinding]:
    if _mapping(context.get("appArmorProfile")).get("type") == "Unconfined":
        return [PodSecurityFinding(where, "AppArmor", "appArmorProfile.type is Unconfined")]
    return []


def _windows_host_process(where: str, context: Mapping[str, Any]) -> list[PodSecurityFinding]:
    if _mapping(context.get("windowsOptions")).get("hostProcess") is True:
        return [PodSecurityFinding(where, "HostProcess", "windowsOptions.hostProcess is true")]
    return []


def _run_as_non_root(
    pod_context: Mapping[str, Any], containers: list[tuple[str, Mapping[str, Any]]]
) -> list[PodSecurityFinding]:
    """runAsNonRoot: true at pod level (unless a container sets false) or on every container."""
    pod_value = pod_context.get("runAsNonRoot")
    findings = []
    for name, container in containers:
        value = _mapping(container.get("securityContext")).get("runAsNonRoot", pod_value)
        if value is not True:
            findings.append(
                PodSecurityFinding(
                    f"container {name}", "Running as Non-root", "runAsNonRoot must be true (pod or container)"
                )
            )
    return findings


def _seccomp(pod_context: Mapping[str, Any], containers: list[tuple[str, Mapping[str, Any]]]) -> list[PodSecurityFinding]:
    """seccompProfile.type RuntimeDefault or Localhost, at pod level or on every container."""
    pod_type = _mapping(pod_context.get("seccompProfile")).get("type")
    findings = []
    if pod_type is not None and pod_type not in ALLOWED_SECCOMP_TYPES:
        findings.append(PodSecurityFinding("pod", "Seccomp", f"seccompProfile.type is {pod_type!r}"))
    for name, container in containers:
        container_type = _mapping(_mapping(container.get("securityContext")).get("seccompProfile")).get("type")
        effective = container_type if container_type is not None else pod_type
        if effective not in ALLOWED_SECCOMP_TYPES:
            detail = (
                f"seccompProfile.type is {container_type!r}"
                if container_type is not None
                else "no seccompProfile at pod or container level (RuntimeDefault or Localhost required)"
            )
            findings.append(PodSecurityFinding(f"container {name}", "Seccomp", detail))
    return findings


def _is_root_user(context: Mapping[str, Any]) -> bool:
    return context.get("runAsUser") == 0


def _containers(pod_spec: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for field in CONTAINER_LISTS:
        for index, container in enumerate(_sequence(pod_spec.get(field))):
            container = _mapping(container)
            yield str(container.get("name") or f"{field}[{index}]"), container


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _sequence(value: Any) -> Sequence[Any]:
    return value if isinstance(value, Sequence) and not isinstance(value, str) else ()
