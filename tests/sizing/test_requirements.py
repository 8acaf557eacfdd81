"""NodePool requirements: each operator on small hand-made catalogs, capacity types, zones, bad input."""

import re

import pytest

from sizing.errors import SizingInputError
from sizing.karpenter.catalog import InstanceType
from sizing.karpenter.requirements import (
    KNOWN_KEYS,
    OPERATORS,
    Requirement,
    allowed_capacity_types,
    allowed_zones,
    filter_instance_types,
    parse_requirement,
    parse_requirements,
    requirement_objects_from_document,
)


def make(name, arch="amd64", vcpu=2, memory_mib=8192, gpu_count=0, hypervisor="nitro"):
    family, size = name.split(".")
    category, generation = re.match(r"([a-z]+)([0-9])", family).groups()
    return InstanceType(
        name=name,
        category=category,
        family=family,
        generation=int(generation),
        size=size,
        arch=arch,
        hypervisor=hypervisor,
        vcpu=vcpu,
        memory_mib=memory_mib,
        max_enis=3,
        ipv4_per_eni=10,
        gpu_count=gpu_count,
        prices={},
    )


SMALL = (
    make("c5.metal", vcpu=96, memory_mib=196608, hypervisor=""),
    make("g4dn.xlarge", vcpu=4, memory_mib=16384, gpu_count=1),
    make("m5.large"),
    make("m6g.large", arch="arm64"),
    make("p3.8xlarge", vcpu=32, memory_mib=249856, gpu_count=4, hypervisor="xen"),
    make("t3.micro", memory_mib=1024),
)


def names(requirement_dicts, catalog=SMALL):
    return [i.name for i in filter_instance_types(catalog, parse_requirements(requirement_dicts))]


def req(key, operator, *values, **extra):
    obj = {"key": key, "operator": operator}
    if values:
        obj["values"] = list(values)
    obj.update(extra)
    return obj


ARCH = "kubernetes.io/arch"
CATEGORY = "karpenter.k8s.aws/instance-category"
FAMILY = "karpenter.k8s.aws/instance-family"
GENERATION = "karpenter.k8s.aws/instance-generation"
CPU = "karpenter.k8s.aws/instance-cpu"
MEMORY = "karpenter.k8s.aws/instance-memory"
GPU = "karpenter.k8s.aws/instance-gpu-count"
HYPERVISOR = "karpenter.k8s.aws/instance-hypervisor"
SIZE = "karpenter.k8s.aws/instance-size"
TYPE = "node.kubernetes.io/instance-type"
OS = "kubernetes.io/os"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
ZONE = "topology.kubernetes.io/zone"


def test_hand_made_labels():
    assert [i.category for i in SMALL] == ["c", "g", "m", "m", "p", "t"]
    assert [i.generation for i in SMALL] == [5, 4, 5, 6, 3, 3]


def test_no_requirements_keep_everything():
    assert names([]) == [i.name for i in SMALL]


def test_in():
    assert names([req(CATEGORY, "In", "m", "t")]) == ["m5.large", "m6g.large", "t3.micro"]
    assert names([req(ARCH, "In", "arm64")]) == ["m6g.large"]
    assert names([req(TYPE, "In", "t3.micro", "m5.large")]) == ["m5.large", "t3.micro"]
    assert names([req(SIZE, "In", "metal")]) == ["c5.metal"]
    assert names([req(OS, "In", "linux")]) == [i.name for i in SMALL]


def test_in_on_a_missing_label_fails():
    assert names([req(GPU, "In", "1", "4")]) == ["g4dn.xlarge", "p3.8xlarge"]


def test_not_in_keeps_types_without_the_label():
    assert names([req(FAMILY, "NotIn", "m5", "m6g", "c5")]) == ["g4dn.xlarge", "p3.8xlarge", "t3.micro"]
    assert names([req(GPU, "NotIn", "4")]) == ["c5.metal", "g4dn.xlarge", "m5.large", "m6g.large", "t3.micro"]


def test_exists_and_does_not_exist():
    assert names([req(GPU, "Exists")]) == ["g4dn.xlarge", "p3.8xlarge"]
    assert names([req(GPU, "DoesNotExist")]) == ["c5.metal", "m5.large", "m6g.large", "t3.micro"]
    # Bare metal has the hypervisor label with an empty value, as Karpenter sets it.
    assert names([req(HYPERVISOR, "Exists")]) == [i.name for i in SMALL]
    assert names([req(HYPERVISOR, "In", "nitro")]) == ["g4dn.xlarge", "m5.large", "m6g.large", "t3.micro"]
    assert names([req(HYPERVISOR, "NotIn", "nitro", "xen")]) == ["c5.metal"]


def test_numeric_comparisons():
    assert names([req(GENERATION, "Gt", "4")]) == ["c5.metal", "m5.large", "m6g.large"]
    assert names([req(GENERATION, "Gte", "5")]) == ["c5.metal", "m5.large", "m6g.large"]
    assert names([req(GENERATION, "Lt", "4")]) == ["p3.8xlarge", "t3.micro"]
    assert names([req(GENERATION, "Lte", "4")]) == ["g4dn.xlarge", "p3.8xlarge", "t3.micro"]
    assert names([req(CPU, "Gte", "32")]) == ["c5.metal", "p3.8xlarge"]
    assert names([req(MEMORY, "Lt", "8192")]) == ["t3.micro"]
    assert names([req(MEMORY, "Lte", "8192")]) == ["m5.large", "m6g.large", "t3.micro"]
    assert names([req(GPU, "Gt", "0")]) == ["g4dn.xlarge", "p3.8xlarge"]  # absent label fails


def test_requirements_on_the_same_key_intersect():
    assert names([req(CPU, "Gt", "2"), req(CPU, "Lt", "64")]) == ["g4dn.xlarge", "p3.8xlarge"]
    assert names([req(CATEGORY, "In", "m", "c"), req(CATEGORY, "NotIn", "c")]) == ["m5.large", "m6g.large"]
    assert names([req(FAMILY, "In", "m5", "m6g"), req(ARCH, "In", "amd64")]) == ["m5.large"]


def test_capacity_type_and_zone_do_not_filter_instance_types():
    assert names([req(CAPACITY_TYPE, "In", "spot"), req(ZONE, "In", "us-east-1a")]) == [i.name for i in SMALL]


def test_nothing_left_is_an_error_naming_the_requirements():
    with pytest.raises(SizingInputError) as error:
        names([req(ARCH, "In", "arm64"), req(GENERATION, "Lt", "6")])
    message = str(error.value)
    assert message.startswith("the NodePool requirements leave no instance type: ")
    assert "kubernetes.io/arch In [arm64]" in message and "karpenter.k8s.aws/instance-generation Lt 6" in message


def test_min_values():
    assert names([req(FAMILY, "In", "m5", "m6g", "t3", minValues=2), req(ARCH, "In", "amd64")]) == [
        "m5.large",
        "t3.micro",
    ]
    with pytest.raises(
        SizingInputError, match=r"needs 3 distinct values of karpenter.k8s.aws/instance-family.*leave 2"
    ):
        names([req(FAMILY, "In", "m5", "m6g", "t3", minValues=3), req(ARCH, "In", "amd64")])
    assert len(names([req(CATEGORY, "Exists", minValues=5)])) == 6
    with pytest.raises(SizingInputError, match="minValues 6"):
        names([req(CATEGORY, "Exists", minValues=6)])


def test_allowed_capacity_types():
    assert allowed_capacity_types(()) == ("on-demand",)
    assert allowed_capacity_types(parse_requirements([req(ARCH, "In", "amd64")])) == ("on-demand",)
    assert allowed_capacity_types(parse_requirements([req(CAPACITY_TYPE, "In", "spot", "on-demand")])) == (
        "on-demand",
        "spot",
    )
    assert allowed_capacity_types(parse_requirements([req(CAPACITY_TYPE, "NotIn", "spot")])) == (
        "on-demand",
        "reserved",
    )
    assert allowed_capacity_types(parse_requirements([req(CAPACITY_TYPE, "Exists")])) == (
        "on-demand",
        "spot",
        "reserved",
    )
    both = parse_requirements([req(CAPACITY_TYPE, "In", "spot", "reserved"), req(CAPACITY_TYPE, "NotIn", "reserved")])
    assert allowed_capacity_types(both) == ("spot",)


@pytest.mark.parametrize(
    "requirement_dicts",
    [
        [req(CAPACITY_TYPE, "DoesNotExist")],
        [req(CAPACITY_TYPE, "In", "spot"), req(CAPACITY_TYPE, "NotIn", "spot")],
    ],
)
def test_no_capacity_type_left(requirement_dicts):
    with pytest.raises(SizingInputError, match="leave no capacity type: karpenter.sh/capacity-type"):
        allowed_capacity_types(parse_requirements(requirement_dicts))


def test_allowed_zones():
    zones = ["us-east-1a", "us-east-1b", "us-east-1c"]
    assert allowed_zones((), zones) == tuple(zones)
    assert allowed_zones(parse_requirements([req(ZONE, "In", "us-east-1c", "us-east-1a")]), zones) == (
        "us-east-1a",
        "us-east-1c",
    )
    assert allowed_zones(parse_requirements([req(ZONE, "NotIn", "us-east-1b")]), zones) == ("us-east-1a", "us-east-1c")
    with pytest.raises(
        SizingInputError, match=r"leave no zone of \['us-east-1a'.*topology.kubernetes.io/zone In \[eu-west-1a\]"
    ):
        allowed_zones(parse_requirements([req(ZONE, "In", "eu-west-1a")]), zones)
    for bad in ("us-east-1a", ["us-east-1a", ""], [None]):
        with pytest.raises(SizingInputError, match="region_zones must be a list of zone names"):
            allowed_zones((), bad)


def test_yaml_integers_are_read_as_label_values():
    (requirement,) = parse_requirements([{"key": GENERATION, "operator": "Gt", "values": [5]}])
    assert requirement.values == ("5",)


def test_round_trip_and_description():
    obj = req(FAMILY, "In", "m5", "c5", minValues=2)
    requirement = parse_requirement(obj)
    assert requirement.to_dict() == obj
    assert requirement.describe() == "karpenter.k8s.aws/instance-family In [m5, c5] (minValues 2)"
    assert Requirement(GPU, "Exists").describe() == "karpenter.k8s.aws/instance-gpu-count Exists"


def test_requirement_objects_from_document():
    listed = [req(ARCH, "In", "amd64")]
    nodepool = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "spec": {"template": {"spec": {"requirements": listed}}},
    }
    assert requirement_objects_from_document(listed) is listed
    assert requirement_objects_from_document(nodepool) is listed
    with pytest.raises(
        SizingInputError, match=r"needs spec.template.spec.requirements; found top-level keys \['kind'\]"
    ):
        requirement_objects_from_document({"kind": "NodePool"})
    with pytest.raises(SizingInputError, match="expected a list of requirements or a NodePool object, got str"):
        requirement_objects_from_document("In")


@pytest.mark.parametrize(
    "obj, pattern",
    [
        (
            req("karpenter.k8s.aws/instance-cpu-manufacturer", "In", "intel"),
            r"key 'karpenter.k8s.aws/instance-cpu-manufacturer' is a label Karpenter derives from the instance type "
            r"or its offering, which the planner's catalog does not carry, so it cannot filter by it; "
            r"allowed keys are \['node.kubernetes.io/instance-type'.*\] and custom labels such as example.com/team",
        ),
        (
            req("karpenter.sh/tier", "In", "a"),
            r"^requirements\[0\]\.key: label domain \"karpenter.sh\" is restricted \(got 'karpenter.sh/tier'\) \(the NodePool",
        ),
        (req("karpenter.k8s.aws/team", "In", "a"), r"label domain \"karpenter.k8s.aws\" is restricted"),
        (
            req("kubernetes.io/hostname", "In", "a"),
            r"requirements\[0\]\.key: label \"kubernetes.io/hostname\" is restricted",
        ),
        (
            req("karpenter.sh/nodepool", "In", "a"),
            r"requirements\[0\]\.key: label \"karpenter.sh/nodepool\" is restricted",
        ),
        (req("beta.kubernetes.io/arch", "In", "a"), r"deprecated name of 'kubernetes.io/arch'; use that key"),
        (req("team name", "In", "a"), r"key 'team name' is not supported: label key 'team name' is not a qualified"),
        (
            req("a" * 10_000, "In", "a"),
            r"^requirements\[0\]\.key: has 10,000 characters, more than the 316 allowed",
        ),
        ({"operator": "Exists"}, r"requirements\[0\]\.key: Required value"),
        (
            req(ARCH, "Matches", "amd64"),
            r"operator 'Matches' is not supported; allowed operators are \['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt', 'Gte', 'Lte'\]",
        ),
        (req(ARCH, "In"), r"^requirements: requirements with operator 'In' must have a value defined \(at \[0\]\)"),
        ({"key": ARCH, "operator": "In", "values": []}, r"operator 'In' must have a value defined \(at \[0\]\)"),
        (req(ARCH, "NotIn"), r"operator NotIn needs at least one value"),
        (req(GPU, "Exists", "1"), r"operator Exists takes no values, got \['1'\]"),
        (req(GPU, "DoesNotExist", "1"), r"operator DoesNotExist takes no values"),
        (
            req(CPU, "Gt", "2", "4"),
            r"^requirements: requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value \(at \[0\]\)",
        ),
        (
            req(CPU, "Lt"),
            r"must have a single positive integer value \(at \[0\]\) \(the rule fails on this value: no field 'values'\)",
        ),
        (req(CPU, "Gte", "1.5"), r"must have a single positive integer value \(at \[0\]\)"),
        (req(CPU, "Gte", "-1"), r"values\[0\] '-1' is not a Kubernetes label value"),
        (
            req(CPU, "Lte", "two"),
            r"must have a single positive integer value \(at \[0\]\) \(the rule fails on this value: Function 'int' error",
        ),
        (
            req(FAMILY, "Gt", "5"),
            r"operator Gt compares integers; it applies to \['karpenter.k8s.aws/instance-generation'",
        ),
        (
            req(CAPACITY_TYPE, "In", "spot", "preemptible"),
            r"unknown capacity types \['preemptible'\]; allowed values are \['on-demand', 'spot', 'reserved'\]",
        ),
        (req(FAMILY, "In", "m5", minValues=0), r"minValues must be an integer from 1 to 50, got 0"),
        (req(FAMILY, "In", "m5", minValues=51), r"minValues must be an integer from 1 to 50, got 51"),
        (req(FAMILY, "In", "m5", minValues=True), r"minValues must be an integer from 1 to 50, got True"),
        (
            req(FAMILY, "In", "m5", minValues=2),
            r"requirements with 'minValues' must have at least that many values specified in the 'values' field \(at \[0\]\)",
        ),
        (
            {**req(FAMILY, "In", "m5"), "value": "m5"},
            r"unknown fields \['value'\]; allowed fields are \['key', 'operator', 'values', 'minValues'\]",
        ),
        ({"key": FAMILY, "operator": "In", "values": "m5"}, r"values must be a list of strings, got 'm5'"),
        (req(FAMILY, "In", 5.5), r"values\[0\] must be a string, got 5.5"),
        (req(FAMILY, "In", True), r"values\[0\] must be a string, got True"),
        (req(TYPE, "In", "m5.large "), r"values\[0\] 'm5.large ' is not a Kubernetes label value"),
        (req(TYPE, "In", "x" * 64), r"is not a Kubernetes label value"),
        ("kubernetes.io/arch=amd64", r"requirements\[0\] must be an object with key, operator and values"),
    ],
)
def test_bad_requirement(obj, pattern):
    with pytest.raises(SizingInputError, match=pattern):
        parse_requirements([obj])


def test_requirements_must_be_a_list():
    with pytest.raises(SizingInputError, match="requirements must be a list of requirements, got dict"):
        parse_requirements({"key": ARCH})


def test_error_names_the_position_of_the_bad_requirement():
    with pytest.raises(SizingInputError, match=r"^requirements: requirements with operator 'In' .* \(at \[1\]\)"):
        parse_requirements([req(ARCH, "In", "amd64"), req(ARCH, "In")])


def test_every_known_key_and_operator_is_accepted():
    for key in KNOWN_KEYS:
        assert parse_requirement(req(key, "Exists")).key == key
    for operator in OPERATORS:
        values = {"In": ("a",), "NotIn": ("a",), "Exists": (), "DoesNotExist": ()}.get(operator, ("1",))
        assert parse_requirement(req(CPU, operator, *values)).operator == operator
