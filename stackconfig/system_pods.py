"""The pods the system node group must hold, and whether its instance types can.

The requests come from where they are set: the Karpenter controller's from the Helm values the
program passes (`KARPENTER_CONTROLLER_RESOURCES`), the monitoring pods' from theirs
(`stackconfig.monitoring`), the replica counts from the `addons` config, the rest from the charts'
and EKS add-ons' defaults, which the program does not override.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sizing.karpenter.allocatable import allocatable
from sizing.karpenter.catalog import catalog_by_name, load_catalog
from sizing.kube.quantities import cpu_millicores, memory_mib
from sizing.kube.resources import Resources
from sizing.kube.workloads import DEFAULT_DAEMON_SETS
from stackconfig.monitoring import monitoring_pods

# Passed to the karpenter chart as controller.resources; requests equal limits (Guaranteed QoS),
# as Karpenter's documentation recommends for the controller.
KARPENTER_CONTROLLER_RESOURCES = {
    "requests": {"cpu": "1", "memory": "1Gi"},
    "limits": {"cpu": "1", "memory": "1Gi"},
}
# metrics-server chart 3.13.1, values.yaml `resources.requests`.
METRICS_SERVER_REQUESTS = {"cpu": "100m", "memory": "200Mi"}
# aws-load-balancer-controller chart 3.5.0 ships `resources: {}`: no requests, one pod slot.
LOAD_BALANCER_CONTROLLER_REQUESTS: Mapping[str, str] = {}
# The EKS coredns add-on: two replicas of 100m cpu / 70Mi memory each.
COREDNS_REPLICAS = 2
COREDNS_REQUESTS = {"cpu": "100m", "memory": "70Mi"}
# AMI type -> the architecture (kubernetes.io/arch) of the instances it boots.
AMI_ARCHITECTURES = {"AL2023_x86_64_STANDARD": "amd64", "AL2023_ARM_64_STANDARD": "arm64"}


@dataclass(frozen=True)
class SystemPod:
    name: str
    replicas: int
    requests: Resources


def system_pods(addons: Any, monitoring: Any) -> tuple[SystemPod, ...]:
    """The Deployments on the system nodes, with their replica counts from the `addons` config,
    and those of `monitoring` when it is on."""
    monitoring_deployments = tuple(
        SystemPod(name, replicas, _pod_requests(containers, name))
        for name, replicas, containers in monitoring_pods(monitoring)
    )
    return (
        SystemPod(
            "karpenter", addons.karpenter.replicas, _requests(KARPENTER_CONTROLLER_RESOURCES["requests"], "karpenter")
        ),
        SystemPod(
            "metrics-server", addons.metrics_server.replicas, _requests(METRICS_SERVER_REQUESTS, "metrics-server")
        ),
        SystemPod(
            "aws-load-balancer-controller",
            addons.load_balancer_controller.replicas,
            _requests(LOAD_BALANCER_CONTROLLER_REQUESTS, "aws-load-balancer-controller"),
        ),
        SystemPod("coredns", COREDNS_REPLICAS, _requests(COREDNS_REQUESTS, "coredns")),
        *monitoring_deployments,
    )


def daemon_set_requests() -> Resources:
    """What the EKS DaemonSets take on every node."""
    total = Resources()
    for daemon_set in DEFAULT_DAEMON_SETS:
        total += Resources(daemon_set.cpu_millicores, daemon_set.memory_mib, 1)
    return total


def check_instance_types_known(names: Sequence[str]) -> None:
    known = catalog_by_name(load_catalog())
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(
            f"{', '.join(repr(name) for name in unknown)} not in the bundled instance-type catalog "
            f"({len(known)} types, such as m5.large, m6i.large, m7g.large); "
            "`python -m sizing catalog` lists them"
        )


def check_architecture(names: Sequence[str], ami_type: str) -> None:
    known = catalog_by_name(load_catalog())
    wanted = AMI_ARCHITECTURES[ami_type]
    wrong = [f"{name} ({known[name].arch})" for name in names if name in known and known[name].arch != wanted]
    if wrong:
        other_ami, other_arch = next((ami, arch) for ami, arch in AMI_ARCHITECTURES.items() if arch != wanted)
        raise ValueError(
            f"instanceTypes {', '.join(wrong)} cannot boot amiType {ami_type}, an {wanted} AMI; list {wanted} types only, "
            f"or set nodeGroup.amiType to {other_ami} for {other_arch} types"
        )


def check_system_nodes_hold_their_pods(node_group: Any, addons: Any, monitoring: Any) -> None:
    """One node of the smallest listed type must hold each system pod next to the DaemonSets (the
    controllers spread one replica per node), and `minSize` such nodes must hold them all."""
    known = catalog_by_name(load_catalog())
    types = [known[name] for name in node_group.instance_types if name in known]
    if not types:
        return
    smallest = min(types, key=lambda instance: (allocatable(instance).cpu, allocatable(instance).memory))
    room = allocatable(smallest) - daemon_set_requests()
    pods = system_pods(addons, monitoring)
    # Every pod must fit one node: the largest by cpu may not be the largest by memory.
    too_large = next((pod for pod in pods if not pod.requests.fits_in(room)), None)
    # Monitoring is the one part of the system pods a stack can leave out or shrink.
    or_monitoring = (
        ", or lower monitoring.prometheus.cpuRequest / memoryRequest (or set monitoring.enabled: false)"
        if monitoring.enabled
        else ""
    )
    if too_large is not None:
        raise ValueError(
            f"nodeGroup.instanceTypes: {smallest.name} leaves {_show(room)} for pods after the kubelet's "
            f"reservations and the EKS DaemonSets, less than one {too_large.name} replica requests "
            f"({_show(too_large.requests)}); list types with at least {_show(too_large.requests + daemon_set_requests())} "
            f"allocatable, such as m5.large{or_monitoring}"
        )
    total = Resources()
    for pod in pods:
        total += pod.requests.scaled(pod.replicas)
    capacity = room.scaled(node_group.min_size)
    if not total.fits_in(capacity):
        raise ValueError(
            f"nodeGroup: {node_group.min_size} node(s) of {smallest.name} (nodeGroup.minSize, smallest of "
            f"nodeGroup.instanceTypes) leave {_show(capacity)} for pods, less than the system pods request "
            f"({_show(total)}: {', '.join(f'{pod.name} x{pod.replicas}' for pod in pods)}); "
            f"raise nodeGroup.minSize or list larger instance types{or_monitoring}"
        )


def _requests(requests: Mapping[str, str], where: str) -> Resources:
    return Resources(
        cpu_millicores(requests["cpu"], where) if "cpu" in requests else 0,
        memory_mib(requests["memory"], where) if "memory" in requests else 0,
        1,
    )


def _pod_requests(containers: Sequence[Mapping[str, str]], where: str) -> Resources:
    """One pod of several containers: their requests summed, one pod slot."""
    total = Resources()
    for container in containers:
        total += _requests(container, where)
    return Resources(total.cpu, total.memory, 1)


def _show(resources: Resources) -> str:
    return f"{resources.cpu}m cpu, {resources.memory} MiB memory, {resources.pods} pod slot(s)"
