"""The allocatable model over the whole bundled catalog, and recomputed independently from the source CSV."""

import csv
import itertools
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sizing.karpenter.allocatable import KubeletConfig, ReservedResources, allocatable, capacity, node_overhead
from sizing.karpenter.catalog import load_catalog
from sizing.kube.resources import Resources

CATALOG = load_catalog()
SOURCE_CSV = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "instance-types.csv"


def test_every_type_has_positive_allocatable_within_capacity():
    failures = []
    for instance in CATALOG:
        node_capacity = capacity(instance)
        node_allocatable = allocatable(instance)
        if not (
            instance.max_enis > 0
            and node_allocatable.fits_in(node_capacity)
            and min(node_allocatable.cpu, node_allocatable.memory, node_allocatable.pods) > 0
            and node_capacity.cpu == instance.vcpu * 1000
            and node_capacity.memory < instance.memory_mib
            and node_allocatable == node_capacity - node_overhead(instance)
        ):
            failures.append((instance.name, node_capacity, node_allocatable))
    assert failures == []
    assert len(CATALOG) > 1000


def test_allocatable_cpu_grows_with_vcpu():
    by_vcpu = {}
    for instance in CATALOG:
        by_vcpu.setdefault(instance.vcpu, set()).add(allocatable(instance).cpu)
    assert all(len(values) == 1 for values in by_vcpu.values()), "allocatable cpu depends on vCPU only"
    ordered = [by_vcpu[vcpu].pop() for vcpu in sorted(by_vcpu)]
    assert ordered == sorted(set(ordered))


def test_memory_capacity_grows_with_memory_for_each_arch():
    for arch in ("amd64", "arm64"):
        pairs = sorted({(i.memory_mib, capacity(i).memory) for i in CATALOG if i.arch == arch})
        capacities = [memory for _, memory in pairs]
        assert capacities == sorted(capacities)


def test_allocatable_memory_grows_with_memory_within_a_family():
    families = {}
    for instance in CATALOG:
        families.setdefault(instance.family, []).append(instance)
    for members in families.values():
        members.sort(key=lambda i: (i.memory_mib, i.vcpu))
        for smaller, larger in itertools.pairwise(members):
            if larger.memory_mib > smaller.memory_mib:
                assert allocatable(smaller).memory < allocatable(larger).memory, (smaller.name, larger.name)


def test_pods_follow_the_default_network_card_not_the_size():
    # Multi-card types expose fewer ENIs on the default card, so a larger size can hold fewer pods.
    by_name = {instance.name: instance for instance in CATALOG}
    assert allocatable(by_name["c6in.24xlarge"]).pods == 737
    assert allocatable(by_name["c6in.32xlarge"]).pods == 394


reservations = st.builds(
    ReservedResources,
    cpu=st.one_of(st.none(), st.integers(0, 4000)),
    memory=st.one_of(st.none(), st.integers(0, 8192)),
)
kubelets = st.builds(
    KubeletConfig,
    max_pods=st.one_of(st.none(), st.integers(0, 737)),
    pods_per_core=st.one_of(st.none(), st.integers(0, 110)),
    kube_reserved=st.one_of(st.none(), reservations),
    system_reserved=st.one_of(st.none(), reservations),
    eviction_hard_memory_mib=st.one_of(st.none(), st.integers(0, 2048)),
)


@settings(max_examples=150, deadline=None)
@given(instance=st.sampled_from(CATALOG), kubelet=kubelets, extra_memory=st.integers(1, 1024))
def test_overrides_move_allocatable_the_expected_way(instance, kubelet, extra_memory):
    node_capacity = capacity(instance, kubelet)
    node_allocatable = allocatable(instance, kubelet)
    assert node_allocatable == node_capacity - node_overhead(instance, kubelet)
    assert node_allocatable.cpu <= node_capacity.cpu and node_allocatable.memory <= node_capacity.memory
    assert node_allocatable.pods == node_capacity.pods
    if kubelet.pods_per_core:
        assert node_capacity.pods <= kubelet.pods_per_core * instance.vcpu
    # More system-reserved memory lowers allocatable memory by exactly that much, and nothing else.
    system = kubelet.system_reserved or ReservedResources()
    more = KubeletConfig(
        max_pods=kubelet.max_pods,
        pods_per_core=kubelet.pods_per_core,
        kube_reserved=kubelet.kube_reserved,
        system_reserved=ReservedResources(system.cpu, (system.memory or 0) + extra_memory),
        eviction_hard_memory_mib=kubelet.eviction_hard_memory_mib,
    )
    assert allocatable(instance, more) == node_allocatable - Resources(0, extra_memory, 0)
    assert capacity(instance, more) == node_capacity


def _independent_allocatable(row):
    """Karpenter's AL2023 formulas written out again, straight from the CSV columns."""
    vcpu, memory = int(row["vcpu"]), int(row["memory_mib"])
    enis, ips = int(row["max_enis"]), int(row["ipv4_per_eni"])
    pods = enis * (ips - 1) + 2
    if row["arch"] == "arm64":
        memory -= 64
    memory_capacity = memory - math.ceil(memory * 0.075)
    millicores = vcpu * 1000
    reserved_cpu = (
        int(min(millicores, 1000) * 0.06)
        + int(max(0, min(millicores, 2000) - 1000) * 0.01)
        + int(max(0, min(millicores, 4000) - 2000) * 0.005)
        + int(max(0, millicores - 4000) * 0.0025)
    )
    reserved_memory = 11 * pods + 255
    return millicores - reserved_cpu, memory_capacity - reserved_memory - 100, pods


SAMPLED_ROWS = ("a1.medium", "c6g.xlarge", "hpc6id.32xlarge", "m5.large", "p5.48xlarge", "t4g.nano", "u-6tb1.112xlarge")


def test_recomputed_from_the_source_csv():
    if not SOURCE_CSV.exists():
        pytest.skip(f"source CSV {SOURCE_CSV} is not available (reference data outside the repository)")
    by_name = {instance.name: instance for instance in CATALOG}
    with SOURCE_CSV.open(newline="") as handle:
        rows = {row["instance_type"]: row for row in csv.DictReader(handle)}
    for name in SAMPLED_ROWS:
        expected = _independent_allocatable(rows[name])
        found = allocatable(by_name[name])
        assert (found.cpu, found.memory, found.pods) == tuple(expected), name
