"""Ephemeral storage as Karpenter models it: a node's storage is its EC2NodeClass's root volume, less
kube-reserved storage and the kubelet's `nodefs.available` eviction threshold, and pods that request
`ephemeral-storage` are packed by it, in the simulation and in the optimal fleet, by both doors.

Upstream cases: aws/karpenter-provider-aws v1.14.1 `pkg/providers/instancetype/suite_test.go`
(the "Ephemeral Storage" and "Overhead" contexts, and "should not launch instances w/ instance
storage for ephemeral storage resource requests when exceeding blockDeviceMapping").
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import replace

import pytest

from sizing import cli
from sizing.errors import SizingInputError
from sizing.karpenter.allocatable import (
    BlockDeviceMapping,
    KubeletConfig,
    ReservedResources,
    allocatable,
    block_device_storage,
    capacity,
    eviction_storage_mib,
    node_overhead,
)
from sizing.karpenter.catalog import catalog_by_name, load_catalog
from sizing.kube.manifests import pod_resource_requests
from sizing.kube.objects import read_objects
from sizing.kube.workloads import Workload
from sizing.planning.description import plan_input_from_document
from sizing.planning.fleet import build_problem
from sizing.planning.objects import plan_input_from_objects
from sizing.planning.planner import NodePoolSpec, PlanInput, plan_capacity
from tests.sizing.node_pools import node_class_yaml, node_pool_yaml

GIB = 2**30
MIB = 2**20
M5_XLARGE = catalog_by_name(load_catalog())["m5.xlarge"]
SNAPSHOT_ONLY = None  # an ebs block with a snapshotID and no volumeSize


# -- where a node's storage comes from -------------------------------------------------------------


@pytest.mark.parametrize(
    "family, mappings, expected",
    [
        # "should default to EBS defaults when volumeSize is not defined in blockDeviceMappings for custom AMIs"
        ("Custom", (BlockDeviceMapping("/dev/xvda", SNAPSHOT_ONLY),), 20 * GIB),
        # "... for AL2 Root volume"
        ("AL2", (BlockDeviceMapping("/dev/xvda", SNAPSHOT_ONLY),), 20 * GIB),
        # "... for AL2023 Root volume"
        ("AL2023", (BlockDeviceMapping("/dev/xvda", SNAPSHOT_ONLY),), 20 * GIB),
        # "... for Bottlerocket Root volume" (its pods' storage is the data volume /dev/xvdb)
        ("Bottlerocket", (BlockDeviceMapping("/dev/xvdb", SNAPSHOT_ONLY),), 20 * GIB),
    ],
    ids=["custom", "al2", "al2023", "bottlerocket"],
)
def test_upstream_ephemeral_storage_defaults(family, mappings, expected):
    assert block_device_storage(family, mappings) == expected


def test_the_root_volume_and_the_family_device_decide_the_size():
    # `ephemeralStorage` in pkg/providers/instancetype/types.go, branch by branch.
    assert block_device_storage("AL2023") == 20 * GIB
    assert block_device_storage("Windows2022") == 50 * GIB
    assert block_device_storage("Bottlerocket") == 20 * GIB
    assert block_device_storage("AL2023", (BlockDeviceMapping("/dev/xvda", 100 * GIB, True),)) == 100 * GIB
    # The root volume wins over the family's device, wherever it is listed.
    both = (BlockDeviceMapping("/dev/xvda", 30 * GIB), BlockDeviceMapping("/dev/xvdz", 80 * GIB, True))
    assert block_device_storage("AL2023", both) == 80 * GIB
    # Without a root volume, the family's device: Bottlerocket's 4Gi OS volume is not where pods write.
    assert block_device_storage("Bottlerocket", (BlockDeviceMapping("/dev/xvda", 4 * GIB),)) == 20 * GIB
    assert block_device_storage("Bottlerocket", (BlockDeviceMapping("/dev/xvdb", 60 * GIB),)) == 60 * GIB
    # Custom: the last mapping's size.
    custom = (BlockDeviceMapping("/dev/xvda", 8 * GIB), BlockDeviceMapping("/dev/xvdb", 40 * GIB))
    assert block_device_storage("Custom", custom) == 40 * GIB
    # A family Karpenter does not know falls back to AL2's rules.
    assert block_device_storage(None, (BlockDeviceMapping("/dev/xvda", 30 * GIB),)) == 30 * GIB


# -- kube-reserved, system-reserved and the eviction threshold ---------------------------------------


def test_upstream_overhead_defaults():
    # "Kube Reserved Resources: should use defaults when no kubelet is specified": 1Gi;
    # "should take the default eviction threshold when none is specified": about 2Gi (10 % of 20Gi);
    # "System Reserved Resources: should use defaults when no kubelet is specified": 0.
    overhead = node_overhead(M5_XLARGE, KubeletConfig())
    assert overhead.ephemeral_storage == 1024 + 2048
    assert capacity(M5_XLARGE).ephemeral_storage == 20 * 1024
    assert allocatable(M5_XLARGE).ephemeral_storage == 17 * 1024


def test_upstream_reserved_overrides():
    # "should override kube reserved when specified": kubeReserved ephemeral-storage 2Gi, systemReserved 1Gi.
    kubelet = KubeletConfig(
        kube_reserved=ReservedResources(cpu=2000, memory=10240, ephemeral_storage=2048),
        system_reserved=ReservedResources(cpu=1000, memory=20480, ephemeral_storage=1024),
    )
    assert node_overhead(M5_XLARGE, kubelet).ephemeral_storage == 2048 + 1024 + 2048
    # "should override system reserved cpus when specified": systemReserved ephemeral-storage 10Gi.
    ten = KubeletConfig(system_reserved=ReservedResources(ephemeral_storage=10240))
    assert allocatable(M5_XLARGE, ten).ephemeral_storage == 20480 - 1024 - 10240 - 2048


@pytest.mark.parametrize(
    "kubelet, expected_mib",
    [
        (KubeletConfig(), 2048),  # the default: 10 % of the node's storage
        (KubeletConfig(eviction_hard_nodefs_percent=5), 1024),  # a percentage of capacity
        (KubeletConfig(eviction_hard_nodefs_percent=100), 0),  # 100 % disables the threshold
        (KubeletConfig(eviction_hard_nodefs_mib=500), 500),  # a quantity
    ],
    ids=["default", "percentage", "disabled", "quantity"],
)
def test_eviction_threshold_follows_compute_eviction_signal(kubelet, expected_mib):
    # The storage counterpart of "should override eviction threshold when specified as a percentage value",
    # "... as a quantity" and "should consider the eviction threshold disabled when specified as 100%".
    assert eviction_storage_mib(20 * GIB, kubelet) == expected_mib


def test_the_threshold_rounds_up_to_a_whole_mib():
    # ceil(100G x 10 %) = 10,000,000,000 bytes = 9536.7 MiB: the plan reserves 9537.
    assert eviction_storage_mib(100 * 10**9) == 9537
    assert capacity(M5_XLARGE, storage_bytes=100 * 10**9).ephemeral_storage == 95367


def test_reservations_above_the_volume_leave_no_storage_but_keep_the_node():
    kubelet = KubeletConfig(system_reserved=ReservedResources(ephemeral_storage=30 * 1024))
    room = allocatable(M5_XLARGE, kubelet)
    assert room.ephemeral_storage == 0 and room.cpu > 0


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"eviction_hard_nodefs_percent": 120}, "eviction_hard_nodefs_percent"),
        ({"eviction_hard_nodefs_mib": -1}, "eviction_hard_nodefs_mib"),
        ({"eviction_hard_nodefs_percent": 5, "eviction_hard_nodefs_mib": 5}, "both set"),
        ({"kube_reserved": ReservedResources(ephemeral_storage=-3)}, "kube_reserved.ephemeral_storage"),
    ],
)
def test_bad_storage_settings_are_named(kwargs, field):
    with pytest.raises(SizingInputError, match=field):
        KubeletConfig(**kwargs)


# -- pods --------------------------------------------------------------------------------------------


def test_pod_storage_requests_follow_pod_requests():
    spec = {
        "initContainers": [
            {"name": "fetch", "resources": {"requests": {"ephemeral-storage": "8Gi"}}},
            {"name": "log", "restartPolicy": "Always", "resources": {"limits": {"ephemeral-storage": "1Gi"}}},
        ],
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "100m", "ephemeral-storage": "2Gi"}}},
            {"name": "b", "resources": {"requests": {"ephemeral-storage": "500M"}}},
        ],
    }
    # Containers 2Gi + 477Mi, plus the 1Gi sidecar (its limit stands in), against the 8Gi init container.
    assert pod_resource_requests(spec, "pod") == (100, 0, 8192)
    spec["containers"][1]["resources"]["requests"]["ephemeral-storage"] = "6Gi"
    assert pod_resource_requests(spec, "pod") == (100, 0, 2048 + 6144 + 1024)


def test_a_negative_storage_request_is_named():
    spec = {"containers": [{"name": "a", "resources": {"requests": {"ephemeral-storage": "-1Gi"}}}]}
    with pytest.raises(SizingInputError, match=r"containers\[0\].resources.requests.ephemeral-storage"):
        pod_resource_requests(spec, "pod")


# -- planning: Kubernetes objects ----------------------------------------------------------------------


M5_ON_DEMAND = (
    {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]},
    {"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["large", "xlarge", "2xlarge"]},
    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
)


def objects(volume: str | None = "20Gi", storage: str = "15Gi", replicas: int = 5, extra: str = "") -> str:
    mappings = (
        f"  blockDeviceMappings:\n    - {{deviceName: /dev/xvda, rootVolume: true, ebs: {{volumeSize: {volume}}}}}\n"
        if volume
        else ""
    )
    return (
        node_pool_yaml(*M5_ON_DEMAND, name="general")
        + node_class_yaml(extra=mappings).removeprefix("---\n")
        + extra
        + textwrap.dedent(f"""\
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: scratch}}
        spec:
          replicas: {replicas}
          strategy: {{type: Recreate}}
          template:
            metadata: {{labels: {{app: scratch}}}}
            spec:
              containers: [{{name: app, resources: {{requests: {{cpu: 100m, memory: 64Mi, ephemeral-storage: {storage}}}}}}}]
        """)
    )


def plan(text: str, solver: bool = False):
    plan_input = plan_input_from_objects(read_objects([("test", text)]))
    return plan_capacity(plan_input if solver else replace(plan_input, solver_work_limit=None))


def test_pods_that_fill_a_nodes_storage_get_a_node_each():
    # Five pods of 15Gi on a 20Gi root volume (17Gi allocatable): one pod per node, though cpu and
    # memory would put all five on one m5.large.
    result = plan(objects(), solver=True)
    assert len(result.fleet.new_nodes) == 5
    assert all(sum(node.pods.values()) == 1 for node in result.fleet.new_nodes)
    assert result.optimal is not None and result.optimal.node_count == 5
    assert all(node.allocatable.ephemeral_storage == 17 * 1024 for node in result.fleet.new_nodes)
    assert (
        "ephemeral storage is planned: pods may request 17408Mi of a node's 20480Mi root volume in NodePool "
        "general (the rest is kube-reserved storage and the nodefs.available eviction threshold); each pod "
        "requests: scratch 15360Mi"
    ) in result.notes


def test_a_larger_root_volume_packs_them_together():
    # 100Gi: 100 - 1 - 10 = 89Gi allocatable holds all five 15Gi pods.
    result = plan(objects(volume="100Gi"))
    assert len(result.fleet.new_nodes) == 1
    assert result.fleet.new_nodes[0].pod_requests.ephemeral_storage == 5 * 15 * 1024


def test_the_kubelet_eviction_threshold_changes_the_room():
    # 40Gi with the default 10 %: 40 - 1 - 4 = 35Gi holds two 15Gi pods per node (3 nodes for 5 pods);
    # with nodefs.available 100 % (no threshold) 39Gi still holds two; with 50 % only one.
    assert len(plan(objects(volume="40Gi")).fleet.new_nodes) == 3
    half = "  kubelet: {evictionHard: {nodefs.available: '50%'}}\n"
    assert len(plan(objects(volume="40Gi", extra=half)).fleet.new_nodes) == 5
    kube = "  kubelet: {kubeReserved: {ephemeral-storage: 10Gi}}\n"
    assert len(plan(objects(volume="40Gi", extra=kube)).fleet.new_nodes) == 5


def test_storage_no_node_holds_can_never_run():
    # "should not launch instances w/ instance storage for ephemeral storage resource requests when
    # exceeding blockDeviceMapping": a 5000Gi request on the default volume never runs.
    with pytest.raises(SizingInputError) as error:
        plan(objects(volume=None, storage="5000Gi", replicas=1))
    message = str(error.value)
    assert "workload 'scratch' requests 5120000Mi ephemeral-storage" in message
    assert "17408Mi allocatable" in message and "root volume of 20480Mi" in message
    assert "rootVolume: true" in message and "can never run" in message


def test_instance_store_raid0_is_flagged_not_modelled():
    text = objects(extra="  instanceStorePolicy: RAID0\n")
    with pytest.raises(SizingInputError, match=r"EC2NodeClass default: spec.instanceStorePolicy \(instance-store"):
        plan_input_from_objects(read_objects([("test", text)]))


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            "  kubelet: {evictionHard: {nodefs.available: '120%'}}\n",
            r"spec.kubelet.evictionHard.nodefs.available must be a percentage of the node.s storage such as .10%.",
        ),
        (
            "  kubelet: {kubeReserved: {ephemeral-storage: lots}}\n",
            r"spec.kubelet.kubeReserved.ephemeral-storage must be a Kubernetes storage quantity",
        ),
    ],
)
def test_bad_node_class_storage_settings_are_named(extra, message):
    with pytest.raises(SizingInputError, match=message):
        plan_input_from_objects(read_objects([("test", objects(extra=extra))]))


def test_bad_block_device_mappings_are_named():
    two_roots = objects(
        volume=None,
        extra="  blockDeviceMappings:\n    - {deviceName: /dev/xvda, rootVolume: true, ebs: {volumeSize: 20Gi}}\n"
        "    - {deviceName: /dev/xvdb, rootVolume: true, ebs: {volumeSize: 40Gi}}\n",
    )
    with pytest.raises(SizingInputError, match="must have only one blockDeviceMappings with rootVolume"):
        plan_input_from_objects(read_objects([("test", two_roots)]))
    with pytest.raises(SizingInputError, match=r"blockDeviceMappings\[0\].ebs.volumeSize must be"):
        plan_input_from_objects(read_objects([("test", objects(volume="big"))]))


def test_no_storage_request_poses_the_same_problem():
    # Where no pod asks for storage the solver sees cpu, memory and pods only, as before.
    plan_input = plan_input_from_objects(read_objects([("test", objects(storage="0"))]))
    assert plan_input.workloads[0].ephemeral_storage_mib == 0
    result = plan_capacity(replace(plan_input, solver_work_limit=None))
    assert not result.fleet.pending
    assert not [note for note in result.notes if "ephemeral storage" in note]
    problem, _ = build_problem(result.node_options, _groups(plan_input), None, ("on-demand",), 1000)
    assert all("ephemeral-storage" not in b.capacity for b in problem.bin_types)
    with_storage, _ = build_problem(result.node_options, _groups(plan_input, storage=1024), None, ("on-demand",), 1000)
    assert all(b.capacity["ephemeral-storage"] == 17 * 1024 for b in with_storage.bin_types)


def _groups(plan_input: PlanInput, storage: int = 0):
    from sizing.karpenter.simulation import PodGroup

    workload = plan_input.workloads[0]
    return [PodGroup(workload.name, replace(workload.requests, ephemeral_storage=storage), 5)]


# -- planning: the workload description ------------------------------------------------------------------


def description(**node_pool):
    return {
        "nodePool": {
            "requirements": [
                {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]},
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
            ],
            **node_pool,
        },
        "solverWorkLimit": None,
        "workloads": [
            {
                "name": "scratch",
                "maxReplicas": 5,
                "maxSurge": 0,
                "requests": {"cpu": "100m", "memory": "64Mi", "ephemeral-storage": "15Gi"},
            }
        ],
    }


def test_a_description_plans_storage_with_its_root_volume():
    assert len(plan_capacity(plan_input_from_document(description())).fleet.new_nodes) == 5
    bigger = plan_input_from_document(description(rootVolumeSize="100Gi"))
    assert bigger.node_pool.storage_bytes == 100 * GIB
    assert bigger.workloads[0].ephemeral_storage_mib == 15 * 1024
    assert len(plan_capacity(bigger).fleet.new_nodes) == 1
    windows = plan_input_from_document(description(amiFamily="Windows2022"))
    assert windows.node_pool.storage_bytes == 50 * GIB


def test_a_description_reads_the_kubelet_storage_settings():
    kubelet = {
        "kubeReserved": {"ephemeral-storage": "2Gi"},
        "systemReserved": {"ephemeral-storage": "1Gi"},
        "evictionHard": {"nodefs.available": "5%"},
    }
    config = plan_input_from_document(description(kubelet=kubelet)).node_pool.kubelet
    assert config.kube_reserved.ephemeral_storage == 2048
    assert config.system_reserved.ephemeral_storage == 1024
    assert config.eviction_hard_nodefs_percent == 5.0
    quantity = {"evictionHard": {"nodefs.available": "3Gi"}}
    assert plan_input_from_document(description(kubelet=quantity)).node_pool.kubelet.eviction_hard_nodefs_mib == 3072


@pytest.mark.parametrize(
    "change, message",
    [
        ({"rootVolumeSize": "20GB"}, "nodePool.rootVolumeSize"),
        ({"kubelet": {"evictionHard": {"nodefs.available": "150%"}}}, "nodePool.kubelet.evictionHard.nodefs.available"),
    ],
)
def test_a_description_names_bad_storage_keys(change, message):
    with pytest.raises(SizingInputError, match=message):
        plan_input_from_document(description(**change))


def test_a_bad_storage_request_in_a_description_is_named():
    document = description()
    document["workloads"][0]["requests"]["ephemeral-storage"] = "lots"
    with pytest.raises(SizingInputError, match=r"workloads\[0\].requests.ephemeral-storage"):
        plan_input_from_document(document)


def test_a_workload_with_a_negative_storage_request_is_refused():
    with pytest.raises(SizingInputError, match="ephemeral-storage"):
        Workload("w", 100, 64, 1, ephemeral_storage_mib=-1)


def test_the_cli_plans_storage_from_objects(tmp_path, capsys):
    path = tmp_path / "objects.yaml"
    path.write_text(objects())
    assert cli.main(["plan", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["fleet"]["nodeCount"] == 5


def test_node_pool_spec_defaults_to_the_default_volume():
    assert NodePoolSpec().storage_bytes == 20 * GIB
    plan_input = PlanInput(workloads=(Workload("w", 100, 64, 2, ephemeral_storage_mib=16 * 1024, max_surge=0),))
    assert len(plan_capacity(replace(plan_input, solver_work_limit=None)).fleet.new_nodes) == 2


def test_an_ephemeral_storage_limit_is_refused_with_the_nodes_alternative():
    text = objects().replace(
        "metadata: {name: general}\nspec:\n",
        "metadata: {name: general}\nspec:\n  limits: {ephemeral-storage: 1000Gi}\n",
    )
    with pytest.raises(
        SizingInputError, match=r"limit 'ephemeral-storage' is not planned: .* give it as a 'nodes' limit"
    ):
        plan(text)


def test_daemon_sets_that_take_all_the_storage_are_named():
    daemon = textwrap.dedent("""\
        ---
        apiVersion: apps/v1
        kind: DaemonSet
        metadata: {name: cache}
        spec:
          template:
            spec:
              containers: [{name: c, resources: {requests: {ephemeral-storage: 18Gi}}}]
        """)
    with pytest.raises(
        SizingInputError, match=r"the DaemonSets request 18432Mi ephemeral-storage on every node, more than the 17408Mi"
    ):
        plan(objects(storage="0") + daemon)
    # On a 40Gi volume the DaemonSet leaves 35 - 18 = 17Gi: one 15Gi pod per node.
    assert len(plan(objects(volume="40Gi") + daemon).fleet.new_nodes) == 5


def test_storage_no_node_holds_leaves_the_workload_pending_beside_others():
    # Karpenter leaves such pods pending and schedules the rest: the plan lists the workload as
    # never running and plans the others as if it were not there.
    other = textwrap.dedent("""\
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web}
        spec:
          replicas: 2
          template:
            metadata: {labels: {app: web}}
            spec:
              containers: [{name: app, resources: {requests: {cpu: 500m, memory: 512Mi}}}]
        """)
    with_it = plan(objects(volume=None, storage="5000Gi", replicas=1) + other)
    alone = plan(objects(volume=None, storage="1Gi", replicas=0) + other)
    (item,) = with_it.never_running
    assert (item.workload, item.pods) == ("scratch", 1)
    assert "requests 5120000Mi ephemeral-storage" in item.reason and "can never run" in item.reason
    assert with_it.node_pool_limits == alone.node_pool_limits
