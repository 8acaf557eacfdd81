"""The test workload's objects: YAML defaults, parameters from the config, Pod Security Standards."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from policies.eks_autoscaling_rules import OPEN_TO_INTERNET_ANNOTATION
from stackconfig.app import AppConfig
from stackobjects.app import (
    MANIFEST_DIR,
    MANIFEST_FILES,
    alb_tags_annotation,
    app_objects,
    load_manifest,
)

# The values the files hold for what only the deployment knows.
REFERENCE_NODEPOOL = "test-app"
REFERENCE_VPC_CIDR = "10.0.0.0/16"
REFERENCE_TAGS = {"eks-autoscaling:cluster": "karpenter-test"}

# Pod Security Standards, https://kubernetes.io/docs/concepts/security/pod-security-standards/
BASELINE_CAPABILITIES = {
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}  # fmt: skip
RESTRICTED_VOLUME_TYPES = {
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret",
}  # fmt: skip
SAFE_SYSCTLS = {
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}  # fmt: skip
SELINUX_TYPES = {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
SECCOMP_ALLOWED = {"RuntimeDefault", "Localhost"}


def restricted_violations(pod_spec: dict) -> list[str]:
    """Every control of the `restricted` profile (which includes `baseline`) that `pod_spec` breaks."""
    problems = []
    pod_context = pod_spec.get("securityContext", {})
    for flag in ("hostNetwork", "hostPID", "hostIPC"):
        if pod_spec.get(flag):
            problems.append(f"host namespaces: {flag}")
    for volume in pod_spec.get("volumes", []):
        kinds = set(volume) - {"name"}
        if not kinds <= RESTRICTED_VOLUME_TYPES:
            problems.append(f"volume types: {volume['name']} uses {sorted(kinds - RESTRICTED_VOLUME_TYPES)}")
    for sysctl in pod_context.get("sysctls", []):
        if sysctl["name"] not in SAFE_SYSCTLS:
            problems.append(f"sysctls: {sysctl['name']}")
    containers = [
        container
        for field in ("initContainers", "containers", "ephemeralContainers")
        for container in pod_spec.get(field, [])
    ]
    contexts = [("pod", pod_context)] + [(c["name"], c.get("securityContext", {})) for c in containers]
    for context_owner, context in contexts:
        selinux = context.get("seLinuxOptions", {})
        if selinux.get("type", "") not in SELINUX_TYPES or selinux.get("user") or selinux.get("role"):
            problems.append(f"SELinux: {context_owner}")
        if context.get("appArmorProfile", {}).get("type") == "Unconfined":
            problems.append(f"AppArmor: {context_owner}")
        if context.get("seccompProfile", {}).get("type") == "Unconfined":
            problems.append(f"seccomp: {context_owner} is Unconfined")
        if context.get("runAsUser") == 0:
            problems.append(f"running as non-root user: {context_owner} sets runAsUser 0")
        if context.get("runAsNonRoot") is False:
            problems.append(f"running as non-root: {context_owner} sets runAsNonRoot false")
        if context.get("windowsOptions", {}).get("hostProcess"):
            problems.append(f"HostProcess: {context_owner}")
    for container in containers:
        name, context = container["name"], container.get("securityContext", {})
        if context.get("privileged"):
            problems.append(f"privileged: {name}")
        if context.get("procMount", "Default") != "Default":
            problems.append(f"/proc mount: {name}")
        if any(port.get("hostPort") for port in container.get("ports", [])):
            problems.append(f"host ports: {name}")
        if context.get("allowPrivilegeEscalation") is not False:
            problems.append(f"privilege escalation: {name} does not set allowPrivilegeEscalation false")
        if not (context.get("runAsNonRoot") or pod_context.get("runAsNonRoot")):
            problems.append(f"running as non-root: {name} does not set runAsNonRoot true")
        seccomp = context.get("seccompProfile", pod_context.get("seccompProfile", {})).get("type")
        if seccomp not in SECCOMP_ALLOWED:
            problems.append(f"seccomp: {name} has {seccomp}")
        capabilities = context.get("capabilities", {})
        if "ALL" not in capabilities.get("drop", []):
            problems.append(f"capabilities: {name} does not drop ALL")
        added = set(capabilities.get("add", []))
        if added - {"NET_BIND_SERVICE"}:
            problems.append(f"capabilities: {name} adds {sorted(added - {'NET_BIND_SERVICE'})}")
        if added - BASELINE_CAPABILITIES:
            problems.append(f"capabilities (baseline): {name} adds {sorted(added - BASELINE_CAPABILITIES)}")
    return problems


def _objects(app: AppConfig = AppConfig(), **overrides) -> dict[str, dict]:
    arguments: dict[str, Any] = {
        "nodepool_name": REFERENCE_NODEPOOL,
        "vpc_cidr": REFERENCE_VPC_CIDR,
        "tags": REFERENCE_TAGS,
    }
    arguments.update(overrides)
    return {obj["kind"]: obj for obj in app_objects(app, **arguments)}


def _pod_spec(objects: dict[str, dict]) -> dict:
    return objects["Deployment"]["spec"]["template"]["spec"]


CUSTOM = AppConfig.model_validate_json(
    """{
      "namespace": "load", "name": "httpbin", "image": "registry.example:5000/httpbin:2.25.0",
      "cpuRequest": "250m", "cpuLimit": "500m", "memoryRequest": "100Mi", "memoryLimit": "200Mi",
      "hpa": {"minReplicas": 2, "maxReplicas": 20, "targetCpuUtilizationPercent": 70,
              "scaleDown": {"stabilizationWindowSeconds": 120, "percent": 50, "periodSeconds": 30}},
      "maxSurgePercent": 25, "healthCheckPath": "/get",
      "ingress": {"scheme": "internal", "tags": {"team": "platform", "project": "override"}}
    }"""
)


def test_default_config_reproduces_the_manifest_files():
    built = app_objects(AppConfig(), nodepool_name=REFERENCE_NODEPOOL, vpc_cidr=REFERENCE_VPC_CIDR, tags=REFERENCE_TAGS)
    assert built == [load_manifest(MANIFEST_DIR / filename) for filename in MANIFEST_FILES]


def test_objects_come_in_creation_order():
    kinds = [obj["kind"] for obj in app_objects(AppConfig(), nodepool_name="p", vpc_cidr="10.0.0.0/16", tags={})]
    assert kinds == [
        "Namespace", "NetworkPolicy", "PodDisruptionBudget", "Deployment",
        "Service", "HorizontalPodAutoscaler", "Ingress",
    ]  # fmt: skip


def test_building_twice_gives_equal_independent_objects():
    first, second = _objects(), _objects()
    assert first == second
    first["Deployment"]["spec"]["template"]["spec"]["containers"][0]["image"] = "changed:1"
    assert second == _objects()


def test_deployment_meets_pod_security_restricted():
    assert restricted_violations(_pod_spec(_objects())) == []
    assert restricted_violations(_pod_spec(_objects(CUSTOM))) == []


@pytest.mark.parametrize(
    "path, value, control",
    [
        (("hostNetwork",), True, "host namespaces"),
        (("securityContext", "runAsUser"), 0, "running as non-root user"),
        (("securityContext", "seccompProfile", "type"), "Unconfined", "seccomp"),
        (("securityContext", "sysctls"), [{"name": "kernel.msgmax", "value": "1"}], "sysctls"),
        (("volumes",), [{"name": "host", "hostPath": {"path": "/"}}], "volume types"),
        (("containers", 0, "securityContext", "allowPrivilegeEscalation"), True, "privilege escalation"),
        (("containers", 0, "securityContext", "privileged"), True, "privileged"),
        (("containers", 0, "securityContext", "runAsNonRoot"), False, "running as non-root"),
        (("containers", 0, "securityContext", "capabilities", "drop"), ["NET_RAW"], "capabilities"),
        (("containers", 0, "securityContext", "capabilities", "add"), ["SYS_ADMIN"], "capabilities"),
        (("containers", 0, "securityContext", "procMount"), "Unmasked", "/proc mount"),
        (("containers", 0, "securityContext", "seLinuxOptions"), {"user": "root"}, "SELinux"),
        (("containers", 0, "securityContext", "appArmorProfile"), {"type": "Unconfined"}, "AppArmor"),
        (("containers", 0, "ports", 0, "hostPort"), 8080, "host ports"),
    ],
)
def test_restricted_checker_catches_each_control(path, value, control):
    pod_spec = copy.deepcopy(_pod_spec(_objects()))
    target = pod_spec
    for step in path[:-1]:
        target = target.setdefault(step, {}) if isinstance(step, str) else target[step]
    target[path[-1]] = value
    assert any(problem.startswith(control) for problem in restricted_violations(pod_spec))


def test_deployment_hardening_beyond_restricted():
    pod = _pod_spec(_objects())
    (container,) = pod["containers"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["securityContext"]["runAsUser"] == 65532
    assert pod["securityContext"]["runAsGroup"] == 65532
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert {"readinessProbe", "livenessProbe"} <= set(container)


def test_namespace_enforces_restricted():
    labels = _objects()["Namespace"]["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
    assert labels["pod-security.kubernetes.io/enforce-version"] == "v1.35"


def test_deployment_leaves_replicas_to_the_hpa_and_surges_a_full_set():
    deployment = _objects()["Deployment"]
    assert "replicas" not in deployment["spec"]
    assert deployment["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": "100%", "maxUnavailable": 0},
    }


def test_reference_workload_values():
    objects = _objects()
    (container,) = _pod_spec(objects)["containers"]
    assert container["image"].startswith("ghcr.io/mccutchen/go-httpbin:")
    version = tuple(int(part) for part in container["image"].rsplit(":", 1)[1].split("."))
    assert version >= (2, 19, 0), "go-httpbin runs as non-root from 2.19.0"
    assert container["ports"] == [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]
    assert container["resources"] == {
        "requests": {"cpu": "100m", "memory": "64Mi"},
        "limits": {"cpu": "200m", "memory": "128Mi"},
    }
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/status/200", "port": "http"}
    assert _pod_spec(objects)["nodeSelector"] == {"karpenter.sh/nodepool": "test-app"}


def test_hpa_reference_numbers():
    spec = _objects()["HorizontalPodAutoscaler"]["spec"]
    assert spec["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "test-app"}
    assert (spec["minReplicas"], spec["maxReplicas"]) == (1, 10)
    assert spec["metrics"] == [
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}
    ]
    assert spec["behavior"] == {
        "scaleDown": {
            "stabilizationWindowSeconds": 60,
            "policies": [{"type": "Percent", "value": 30, "periodSeconds": 60}],
        }
    }


def test_service_ingress_and_selectors_agree():
    objects = _objects()
    pod_labels = objects["Deployment"]["spec"]["template"]["metadata"]["labels"]
    service = objects["Service"]
    assert service["spec"]["type"] == "ClusterIP"
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert objects["Deployment"]["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    assert objects["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    assert objects["NetworkPolicy"]["spec"]["podSelector"]["matchLabels"].items() <= pod_labels.items()
    (service_port,) = service["spec"]["ports"]
    assert service_port["name"] == "http" and service_port["targetPort"] == "http"
    ingress = objects["Ingress"]
    assert ingress["spec"]["ingressClassName"] == "alb"
    (rule,) = ingress["spec"]["rules"]
    (path,) = rule["http"]["paths"]
    assert path["backend"]["service"] == {"name": service["metadata"]["name"], "port": {"name": "http"}}
    assert ingress["metadata"]["annotations"] == {
        "alb.ingress.kubernetes.io/scheme": "internet-facing",
        "alb.ingress.kubernetes.io/inbound-cidrs": "0.0.0.0/0",
        "alb.ingress.kubernetes.io/target-type": "ip",
        "alb.ingress.kubernetes.io/healthcheck-path": "/status/200",
        "alb.ingress.kubernetes.io/tags": "eks-autoscaling:cluster=karpenter-test",
    }


def test_the_alb_admits_the_listed_blocks_and_says_when_it_is_open_by_choice():
    limited = AppConfig.model_validate_json('{"ingress": {"inboundCidrs": ["198.51.100.7/32", "203.0.113.0/24"]}}')
    annotations = _objects(app=limited)["Ingress"]["metadata"]["annotations"]
    assert annotations["alb.ingress.kubernetes.io/inbound-cidrs"] == "198.51.100.7/32,203.0.113.0/24"
    assert "eks-autoscaling/app.ingress.acknowledgeOpenToInternet" not in annotations
    assert not limited.ingress.open_to_internet
    open_by_choice = AppConfig.model_validate_json('{"ingress": {"acknowledgeOpenToInternet": true}}')
    annotations = _objects(app=open_by_choice)["Ingress"]["metadata"]["annotations"]
    assert annotations["eks-autoscaling/app.ingress.acknowledgeOpenToInternet"] == "true"
    # The policy pack reads the same annotation.
    assert OPEN_TO_INTERNET_ANNOTATION in annotations


def test_disruption_budget_never_blocks_a_drain():
    spec = _objects()["PodDisruptionBudget"]["spec"]
    assert spec["maxUnavailable"] == 1 and "minAvailable" not in spec
    assert spec["unhealthyPodEvictionPolicy"] == "AlwaysAllow"


def test_network_policy_admits_the_vpc_on_8080_and_dns_out():
    spec = _objects(vpc_cidr="10.20.0.0/16")["NetworkPolicy"]["spec"]
    assert spec["policyTypes"] == ["Ingress", "Egress"]
    assert spec["ingress"] == [
        {"from": [{"ipBlock": {"cidr": "10.20.0.0/16"}}], "ports": [{"protocol": "TCP", "port": 8080}]}
    ]
    assert spec["egress"] == [{"ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]}]


def test_every_setting_of_the_config_reaches_the_objects():
    objects = _objects(CUSTOM, nodepool_name="spot-pool", tags={"project": "eks-autoscaling", "owner": "me"})
    for kind, obj in objects.items():
        if kind == "Namespace":
            assert obj["metadata"]["name"] == "load"
        else:
            assert obj["metadata"]["namespace"] == "load"
            assert obj["metadata"]["name"] == "httpbin"
            assert obj["metadata"]["labels"]["app.kubernetes.io/name"] == "httpbin"
    pod = _pod_spec(objects)
    (container,) = pod["containers"]
    assert container["image"] == "registry.example:5000/httpbin:2.25.0"
    assert container["resources"] == {
        "requests": {"cpu": "250m", "memory": "100Mi"},
        "limits": {"cpu": "500m", "memory": "200Mi"},
    }
    assert container["readinessProbe"]["httpGet"]["path"] == "/get"
    assert container["livenessProbe"]["httpGet"]["path"] == "/get"
    assert pod["nodeSelector"] == {"karpenter.sh/nodepool": "spot-pool"}
    assert objects["Deployment"]["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": "25%", "maxUnavailable": 0}
    assert objects["Deployment"]["spec"]["template"]["metadata"]["labels"] == {"app.kubernetes.io/name": "httpbin"}
    hpa = objects["HorizontalPodAutoscaler"]["spec"]
    assert hpa["scaleTargetRef"]["name"] == "httpbin"
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (2, 20)
    assert hpa["metrics"][0]["resource"]["target"]["averageUtilization"] == 70
    assert hpa["behavior"]["scaleDown"] == {
        "stabilizationWindowSeconds": 120,
        "policies": [{"type": "Percent", "value": 50, "periodSeconds": 30}],
    }
    annotations = objects["Ingress"]["metadata"]["annotations"]
    assert annotations["alb.ingress.kubernetes.io/scheme"] == "internal"
    assert annotations["alb.ingress.kubernetes.io/healthcheck-path"] == "/get"
    # The app's own tags win over the stack's; keys are sorted so the annotation never churns.
    assert annotations["alb.ingress.kubernetes.io/tags"] == "owner=me,project=override,team=platform"
    assert objects["Ingress"]["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"] == "httpbin"


def test_no_tags_means_no_tags_annotation():
    annotations = _objects(tags={})["Ingress"]["metadata"]["annotations"]
    assert "alb.ingress.kubernetes.io/tags" not in annotations
    assert annotations["alb.ingress.kubernetes.io/target-type"] == "ip"


def test_alb_tags_annotation_rejects_what_the_format_cannot_carry():
    assert alb_tags_annotation({"b": "2", "a": "1"}) == "a=1,b=2"
    with pytest.raises(ValueError, match="contains ',' or '='"):
        alb_tags_annotation({"team": "a,b"})
    with pytest.raises(ValueError, match="contains ',' or '='"):
        _objects(tags={"k=x": "v"})


@pytest.mark.parametrize("cidr", ["10.0.0.0/33", "10.0.0.1/16", "vpc", ""])
def test_bad_vpc_cidr_is_refused(cidr):
    with pytest.raises(ValueError, match="vpc_cidr"):
        _objects(vpc_cidr=cidr)


def test_empty_nodepool_name_is_refused():
    with pytest.raises(ValueError, match="nodepool_name"):
        _objects(nodepool_name="")
