"""Every CEL rule of the shipped NodePool and EC2NodeClass CRDs, evaluated: for each, an object it
rejects and one it accepts, and a count that fails when a new rule comes without its case."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cel
import pytest
import yaml

from sizing.errors import SizingInputError
from sizing.karpenter.crd_rules import (
    CRD_DIR,
    CRD_FILES,
    KUBERNETES_FUNCTIONS,
    MAX_SHOWN,
    REQUIREMENTS_PATH,
    CrdRule,
    RuleViolation,
    _apply,
    check_object,
    compiled,
    crd_rules,
    find,
    part_violations,
    rule_violations,
)
from sizing.kube.objects import read_objects
from sizing.planning.objects import plan_input_from_objects

NODE_POOL: dict[str, Any] = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "default"},
    "spec": {
        "template": {
            "metadata": {"labels": {"example.com/team": "web"}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c"]}],
            },
        },
        "limits": {"cpu": "100"},
        "disruption": {"consolidateAfter": "1m", "budgets": [{"nodes": "10%"}]},
    },
}
NODE_CLASS: dict[str, Any] = {
    "apiVersion": "karpenter.k8s.aws/v1",
    "kind": "EC2NodeClass",
    "metadata": {"name": "default"},
    "spec": {
        "role": "KarpenterNodeRole-demo",
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "tags": {"team": "platform"},
    },
}
BASES = {"NodePool": NODE_POOL, "EC2NodeClass": NODE_CLASS}

Patch = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True)
class Case:
    """A rule (its CRD's kind, schema place and message) with a change of the base object's spec
    that breaks it and one that keeps it."""

    kind: str
    where: str
    message: str
    reject: Patch
    accept: Patch

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.where, self.message)


def _template(spec: dict[str, Any]) -> dict[str, Any]:
    template: dict[str, Any] = spec["template"]["spec"]
    return template


def _labels(labels: dict[str, str]) -> Patch:
    return lambda spec: spec["template"]["metadata"].update(labels=labels)


def _requirement(requirement: dict[str, Any]) -> Patch:
    return lambda spec: _template(spec)["requirements"].append(requirement)


def _set(**fields: Any) -> Patch:
    return lambda spec: spec.update(copy.deepcopy(fields))


def _kubelet(**fields: Any) -> Patch:
    return lambda spec: spec.update(kubelet=copy.deepcopy(fields))


def _profile_instead_of_role(profile: str) -> Patch:
    return lambda spec: (spec.pop("role"), spec.update(instanceProfile=profile))


def _ami(terms: list[dict[str, Any]], family: str | None = None) -> Patch:
    def patch(spec: dict[str, Any]) -> None:
        spec["amiSelectorTerms"] = copy.deepcopy(terms)
        if family is not None:
            spec["amiFamily"] = family

    return patch


def _ebs(ebs: dict[str, Any]) -> Patch:
    return _set(blockDeviceMappings=[{"deviceName": "/dev/xvda", "rootVolume": True, "ebs": ebs}])


def _nic(card: int, device: int, kind: str = "interface") -> dict[str, Any]:
    return {"networkCardIndex": card, "deviceIndex": device, "interfaceType": kind}


REQUIREMENTS = "spec.template.spec.requirements"
KEY = "spec.template.spec.requirements[].key"
LABELS = "spec.template.metadata.labels"
AWS_DOMAIN = 'label domain "karpenter.k8s.aws" is restricted'
SIGNALS = "['memory.available','nodefs.available','nodefs.inodesFree','imagefs.available','imagefs.inodesFree','pid.available']"
NO_ALIAS = "must specify amiFamily if amiSelectorTerms does not contain an alias"
EMPTY_TAGS = "empty tag keys or values aren't supported"

CASES = [
    # NodePool
    Case("NodePool", "spec", "only 'limits.nodes' is supported on static NodePools",
         _set(replicas=2, limits={"cpu": "10"}), _set(replicas=2, limits={"nodes": "3"})),
    Case("NodePool", "spec", "'weight' is not supported on static NodePools",
         _set(replicas=2, limits={}, weight=10), _set(weight=10)),
    Case("NodePool", "spec.disruption.budgets", "'schedule' must be set with 'duration'",
         lambda s: s["disruption"].update(budgets=[{"nodes": "1", "schedule": "@daily"}]),
         lambda s: s["disruption"].update(budgets=[{"nodes": "1", "schedule": "@daily", "duration": "10m"}])),
    Case("NodePool", LABELS, 'label domain "karpenter.sh" is restricted',
         _labels({"team.karpenter.sh/x": "a"}), _labels({"karpenter.sh/capacity-type": "spot"})),
    Case("NodePool", LABELS, 'label "karpenter.sh/nodepool" is restricted',
         _labels({"karpenter.sh/nodepool": "a"}), _labels({"example.com/nodepool": "a"})),
    Case("NodePool", LABELS, 'label "kubernetes.io/hostname" is restricted',
         _labels({"kubernetes.io/hostname": "a"}), _labels({"kubernetes.io/arch": "amd64"})),
    Case("NodePool", LABELS, AWS_DOMAIN,
         _labels({"karpenter.k8s.aws/foo": "a"}), _labels({"karpenter.k8s.aws/instance-family": "m5"})),
    Case("NodePool", "spec.template.spec.nodeClassRef.group", "group may not be empty",
         lambda s: _template(s)["nodeClassRef"].update(group=""), lambda s: None),
    Case("NodePool", "spec.template.spec.nodeClassRef.kind", "kind may not be empty",
         lambda s: _template(s)["nodeClassRef"].update(kind=""), lambda s: None),
    Case("NodePool", "spec.template.spec.nodeClassRef.name", "name may not be empty",
         lambda s: _template(s)["nodeClassRef"].update(name=""), lambda s: None),
    Case("NodePool", REQUIREMENTS, "requirements with operator 'In' must have a value defined",
         _requirement({"key": "example.com/team", "operator": "In", "values": []}),
         _requirement({"key": "example.com/team", "operator": "NotIn", "values": []})),
    Case("NodePool", REQUIREMENTS,
         "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value",
         _requirement({"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["-1"]}),
         _requirement({"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["4"]})),
    Case("NodePool", REQUIREMENTS,
         "requirements with 'minValues' must have at least that many values specified in the 'values' field",
         _requirement({"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"], "minValues": 2}),
         _requirement({"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5", "m6i"],
                       "minValues": 2})),
    Case("NodePool", KEY, 'label domain "karpenter.sh" is restricted',
         _requirement({"key": "karpenter.sh/foo", "operator": "Exists"}),
         _requirement({"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]})),
    Case("NodePool", KEY, 'label "karpenter.sh/nodepool" is restricted',
         _requirement({"key": "karpenter.sh/nodepool", "operator": "Exists"}),
         _requirement({"key": "example.com/nodepool", "operator": "Exists"})),
    Case("NodePool", KEY, 'label "kubernetes.io/hostname" is restricted',
         _requirement({"key": "kubernetes.io/hostname", "operator": "Exists"}),
         _requirement({"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]})),
    Case("NodePool", KEY, AWS_DOMAIN,
         _requirement({"key": "sub.karpenter.k8s.aws/foo", "operator": "Exists"}),
         _requirement({"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "DoesNotExist"})),
    # EC2NodeClass
    Case("EC2NodeClass", "spec", "must specify exactly one of ['role', 'instanceProfile']",
         _set(instanceProfile="profile"), _profile_instead_of_role("profile")),
    *(
        Case("EC2NodeClass", "spec",
             f"if set, amiFamily must be '{family}' or 'Custom' when using a{'n' if family[0] == 'A' else ''} "
             f"{family} alias",
             _ami([{"alias": f"{family.lower()}@latest"}], "AL2023" if family == "AL2" else "AL2"),
             _ami([{"alias": f"{family.lower()}@latest"}], family))
        for family in ("AL2", "AL2023", "Bottlerocket", "Windows2019", "Windows2022", "Windows2025")
    ),
    Case("EC2NodeClass", "spec", NO_ALIAS, _ami([{"id": "ami-0123"}]), _ami([{"id": "ami-0123"}], "AL2023")),
    Case("EC2NodeClass", "spec.amiSelectorTerms",
         "expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']",
         _ami([{"owner": "self"}], "AL2023"), _ami([{"name": "my-ami", "owner": "self"}], "AL2023")),
    Case("EC2NodeClass", "spec.amiSelectorTerms",
         "'id' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",
         _ami([{"id": "ami-0123", "name": "my-ami"}], "AL2023"), _ami([{"id": "ami-0123"}], "AL2023")),
    Case("EC2NodeClass", "spec.amiSelectorTerms",
         "'alias' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",
         _ami([{"alias": "al2023@latest", "owner": "self"}]), _ami([{"alias": "al2023@v20250101"}])),
    Case("EC2NodeClass", "spec.amiSelectorTerms",
         "'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms",
         _ami([{"alias": "al2023@latest"}, {"name": "my-ami"}]), _ami([{"id": "ami-0123"}, {"name": "my-ami"}], "AL2")),
    Case("EC2NodeClass", "spec.amiSelectorTerms[].alias",
         "'alias' is improperly formatted, must match the format 'family@version'",
         _ami([{"alias": "al2023"}]), _ami([{"alias": "al2023@v20250101"}])),
    Case("EC2NodeClass", "spec.amiSelectorTerms[].alias",
         "family is not supported, must be one of the following: 'al2', 'al2023', 'bottlerocket', "
         "'windows2019', 'windows2022', 'windows2025'",
         _ami([{"alias": "ubuntu@latest"}]), _ami([{"alias": "bottlerocket@v1.30.0"}])),
    Case("EC2NodeClass", "spec.amiSelectorTerms[].alias", "windows families may only specify version 'latest'",
         _ami([{"alias": "windows2022@v1"}]), _ami([{"alias": "windows2022@latest"}])),
    Case("EC2NodeClass", "spec.amiSelectorTerms[].tags", EMPTY_TAGS,
         _ami([{"tags": {"team": ""}}], "AL2023"), _ami([{"tags": {"team": "a"}}], "AL2023")),
    Case("EC2NodeClass", "spec.blockDeviceMappings", "must have only one blockDeviceMappings with rootVolume",
         _set(blockDeviceMappings=[{"deviceName": d, "rootVolume": True, "ebs": {"volumeSize": "20Gi"}}
                                   for d in ("/dev/xvda", "/dev/xvdb")]),
         _set(blockDeviceMappings=[{"deviceName": d, "rootVolume": d == "/dev/xvda", "ebs": {"volumeSize": "20Gi"}}
                                   for d in ("/dev/xvda", "/dev/xvdb")])),
    Case("EC2NodeClass", "spec.blockDeviceMappings[].ebs", "snapshotID or volumeSize must be defined",
         _ebs({"volumeType": "gp3"}), _ebs({"volumeType": "gp3", "snapshotID": "snap-0123"})),
    Case("EC2NodeClass", "spec.blockDeviceMappings[].ebs",
         "snapshotID must be set when volumeInitializationRate is set",
         _ebs({"volumeSize": "20Gi", "volumeInitializationRate": 200}),
         _ebs({"snapshotID": "snap-0123", "volumeInitializationRate": 200})),
    Case("EC2NodeClass", "spec.capacityReservationSelectorTerms",
         "expected at least one, got none, ['tags', 'id', 'instanceMatchCriteria']",
         _set(capacityReservationSelectorTerms=[{"ownerID": "123456789012"}]),
         _set(capacityReservationSelectorTerms=[{"ownerID": "123456789012", "tags": {"a": "b"}}])),
    Case("EC2NodeClass", "spec.capacityReservationSelectorTerms",
         "'id' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term",
         _set(capacityReservationSelectorTerms=[{"id": "cr-0123456789abcdef0", "tags": {"a": "b"}}]),
         _set(capacityReservationSelectorTerms=[{"id": "cr-0123456789abcdef0"}])),
    Case("EC2NodeClass", "spec.capacityReservationSelectorTerms[].tags", EMPTY_TAGS,
         _set(capacityReservationSelectorTerms=[{"tags": {"": "b"}}]),
         _set(capacityReservationSelectorTerms=[{"tags": {"a": "b"}}])),
    Case("EC2NodeClass", "spec.connectionTracking",
         "at least one of tcpEstablishedTimeout, udpStreamTimeout, or udpTimeout must be set",
         _set(connectionTracking={}), _set(connectionTracking={"udpTimeout": "30s"})),
    Case("EC2NodeClass", "spec.instanceProfile", "instanceProfile cannot be empty",
         _profile_instead_of_role(""), _profile_instead_of_role("KarpenterNodeInstanceProfile")),
    Case("EC2NodeClass", "spec.kubelet", "imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent",
         _kubelet(imageGCHighThresholdPercent=50, imageGCLowThresholdPercent=60),
         _kubelet(imageGCHighThresholdPercent=85, imageGCLowThresholdPercent=80)),
    Case("EC2NodeClass", "spec.kubelet", "evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod",
         _kubelet(evictionSoft={"memory.available": "5%"}),
         _kubelet(evictionSoft={"memory.available": "5%"}, evictionSoftGracePeriod={"memory.available": "1m"})),
    Case("EC2NodeClass", "spec.kubelet", "evictionSoftGracePeriod OwnerKey does not have a matching evictionSoft",
         _kubelet(evictionSoft={"memory.available": "5%"},
                  evictionSoftGracePeriod={"memory.available": "1m", "nodefs.available": "1m"}),
         _kubelet(evictionSoft={"memory.available": "5%", "nodefs.available": "10%"},
                  evictionSoftGracePeriod={"memory.available": "1m", "nodefs.available": "1m"})),
    Case("EC2NodeClass", "spec.kubelet.evictionHard", f"valid keys for evictionHard are {SIGNALS}",
         _kubelet(evictionHard={"memory.free": "1%"}), _kubelet(evictionHard={"pid.available": "1%"})),
    Case("EC2NodeClass", "spec.kubelet.evictionSoft", f"valid keys for evictionSoft are {SIGNALS}",
         _kubelet(evictionSoft={"memory.free": "1%"}, evictionSoftGracePeriod={"memory.free": "1m"}),
         _kubelet(evictionSoft={"imagefs.available": "1%"}, evictionSoftGracePeriod={"imagefs.available": "1m"})),
    Case("EC2NodeClass", "spec.kubelet.evictionSoftGracePeriod", f"valid keys for evictionSoftGracePeriod are {SIGNALS}",
         _kubelet(evictionSoft={"memory.free": "1%"}, evictionSoftGracePeriod={"memory.free": "1m"}),
         _kubelet(evictionSoft={"nodefs.inodesFree": "5%"}, evictionSoftGracePeriod={"nodefs.inodesFree": "1m"})),
    *(
        Case("EC2NodeClass", f"spec.kubelet.{field}", message, _kubelet(**{field: bad}), _kubelet(**{field: good}))
        for field in ("kubeReserved", "systemReserved")
        for message, bad, good in (
            (f"valid keys for {field} are ['cpu','memory','ephemeral-storage','pid']", {"gpu": "1"}, {"pid": "100"}),
            (f"{field} value cannot be a negative resource quantity", {"cpu": "-100m"}, {"cpu": "100m"}),
        )
    ),
    Case("EC2NodeClass", "spec.networkInterfaces",
         "networkInterfaces must include a primary interface with interfaceType='interface'",
         _set(networkInterfaces=[_nic(0, 1)]), _set(networkInterfaces=[_nic(0, 0), _nic(0, 1)])),
    Case("EC2NodeClass", "spec.networkInterfaces",
         "networkInterfaces must not have duplicate networkCardIndex and deviceIndex pairs, and can have at most "
         "one efa device per network card",
         _set(networkInterfaces=[_nic(0, 0), _nic(1, 0, "efa-only"), _nic(1, 1, "efa-only")]),
         _set(networkInterfaces=[_nic(0, 0), _nic(1, 0, "efa-only"), _nic(2, 0, "efa-only")])),
    Case("EC2NodeClass", "spec.placementGroupSelector", "expected at least one, got none, ['name', 'id']",
         _set(placementGroupSelector={}), _set(placementGroupSelector={"name": "analytics"})),
    Case("EC2NodeClass", "spec.placementGroupSelector", "'name' and 'id' are mutually exclusive",
         _set(placementGroupSelector={"name": "analytics", "id": "pg-0123456789abcdef0"}),
         _set(placementGroupSelector={"id": "pg-0123456789abcdef0"})),
    Case("EC2NodeClass", "spec.role", "role cannot be empty", _set(role=""), _set(role="KarpenterNodeRole-other")),
    *(
        case
        for terms, name, fields in (
            ("securityGroupSelectorTerms", "security group", "['tags', 'id', 'name']"),
            ("subnetSelectorTerms", "subnet", "['tags', 'id']"),
        )
        for case in (
            Case("EC2NodeClass", f"spec.{terms}", f"{terms} cannot be empty",
                 _set(**{terms: []}), _set(**{terms: [{"id": "sg-0123" if "security" in name else "subnet-0123"}]})),
            Case("EC2NodeClass", f"spec.{terms}", f"expected at least one, got none, {fields}",
                 _set(**{terms: [{}]}), _set(**{terms: [{"tags": {"a": "b"}}]})),
            Case("EC2NodeClass", f"spec.{terms}",
                 f"'id' is mutually exclusive, cannot be set with a combination of other fields in a {name} selector term",
                 _set(**{terms: [{"id": "x-0123", "tags": {"a": "b"}}]}),
                 _set(**{terms: [{"id": "x-0123"}, {"tags": {"a": "b"}}]})),
            Case("EC2NodeClass", f"spec.{terms}[].tags", EMPTY_TAGS,
                 _set(**{terms: [{"tags": {"a": ""}}]}), _set(**{terms: [{"tags": {"a": "-"}}]})),
        )
    ),
    Case("EC2NodeClass", "spec.securityGroupSelectorTerms",
         "'name' is mutually exclusive, cannot be set with a combination of other fields in a security group "
         "selector term",
         _set(securityGroupSelectorTerms=[{"name": "web", "tags": {"a": "b"}}]),
         _set(securityGroupSelectorTerms=[{"name": "web"}])),
    Case("EC2NodeClass", "spec.tags", "empty tag keys aren't supported", _set(tags={"": "a"}), _set(tags={"a": ""})),
    *(
        Case("EC2NodeClass", "spec.tags", f"tag contains a restricted tag matching {restricted}",
             _set(tags={key: "x"}), _set(tags={f"example.com/{key}": "x"}))
        for restricted, key in (
            ("eks:eks-cluster-name", "eks:eks-cluster-name"),
            ("kubernetes.io/cluster/", "kubernetes.io/cluster/demo"),
            ("karpenter.sh/nodepool", "karpenter.sh/nodepool"),
            ("karpenter.sh/nodeclaim", "karpenter.sh/nodeclaim"),
            ("karpenter.k8s.aws/ec2nodeclass", "karpenter.k8s.aws/ec2nodeclass"),
        )
    ),
]  # fmt: skip

# Rules on updates only (they compare with `oldSelf`): skipped, since a plan creates its objects.
TRANSITION_RULES = {
    ("NodePool", "spec", "Cannot transition NodePool between static (replicas set) and dynamic (replicas unset) "
     "provisioning modes"),
    ("NodePool", "spec.template.spec.nodeClassRef", "nodeClassRef.group is immutable"),
    ("NodePool", "spec.template.spec.nodeClassRef", "nodeClassRef.kind is immutable"),
}  # fmt: skip


def _object(kind: str, patch: Patch) -> dict[str, Any]:
    obj = copy.deepcopy(BASES[kind])
    patch(obj["spec"])
    return obj


def _schema_place(path: str) -> str:
    return re.sub(r"\[\d+\]", "[]", path)


def _all_rules() -> list[tuple[str, str, str]]:
    return [(rule.kind, rule.where(), rule.message or rule.rule) for kind in CRD_FILES for rule in crd_rules(kind)]


def test_the_base_objects_pass():
    for kind, base in BASES.items():
        assert rule_violations(base, kind) == []


@pytest.mark.parametrize("case", CASES, ids=[f"{c.kind}:{c.where}:{c.message[:60]}" for c in CASES])
def test_each_rule_rejects_an_object_and_accepts_another(case: Case):
    rejected = rule_violations(_object(case.kind, case.reject), case.kind)
    assert (case.message, case.where) in {(v.message, _schema_place(v.path)) for v in rejected}, rejected
    assert rule_violations(_object(case.kind, case.accept), case.kind) == []


def test_every_rule_of_the_crds_has_its_case():
    rules = _all_rules()
    assert len(rules) == len(set(rules)) == 74
    assert len(TRANSITION_RULES) == sum(rule.transition for kind in CRD_FILES for rule in crd_rules(kind)) == 3
    covered = [case.key for case in CASES]
    assert len(covered) == len(set(covered))
    assert set(covered) | TRANSITION_RULES == set(rules)
    assert not set(covered) & TRANSITION_RULES


def test_transition_rules_are_skipped():
    # nodeClassRef.group is immutable: `self.group == oldSelf.group` cannot be evaluated on create.
    transition = [rule for kind in CRD_FILES for rule in crd_rules(kind) if rule.transition]
    assert {(rule.kind, rule.where(), rule.message) for rule in transition} == TRANSITION_RULES
    static = _object("NodePool", _set(replicas=3, limits={"nodes": "3"}))
    assert rule_violations(static, "NodePool") == []


def test_the_rules_call_only_cel_and_the_registered_kubernetes_functions():
    called = {name for kind in CRD_FILES for rule in crd_rules(kind) for name in compiled(rule.rule).functions()}
    named = {name for name in called if re.fullmatch(r"[A-Za-z]\w*", name)}
    assert named == {"endsWith", "find", "int", "matches", "size", "split", "startsWith"}
    # The Kubernetes extensions are not CEL's own: without them the rules that call them fail.
    assert set(KUBERNETES_FUNCTIONS) == {"find", "split"}
    with pytest.raises(RuntimeError, match="find"):
        cel.compile('self.find("^[^/]+")').execute({"self": "a/b"})


@pytest.mark.parametrize(
    "text, expression, found",
    [("example.com/team", "^([^/]+)", "example.com"), ("/team", "^([^/]+)", ""), ("al2023@latest", "^[^@]+", "al2023")],
)
def test_find_returns_the_first_match_or_nothing(text, expression, found):
    assert find(text, expression) == found


def test_a_rule_that_fails_on_the_value_refuses_with_its_message():
    pool = _object(
        "NodePool", _requirement({"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lt", "values": ["x"]})
    )
    (violation,) = rule_violations(pool, "NodePool")
    assert violation.path == REQUIREMENTS
    assert violation.message.startswith("requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have")
    assert violation.error is not None and "int" in violation.error
    # `In` without its values field: the rule reads x.values, which is absent.
    pool = _object("NodePool", _requirement({"key": "example.com/team", "operator": "In"}))
    assert [v.message for v in rule_violations(pool, "NodePool")] == [
        "requirements with operator 'In' must have a value defined"
    ]


def test_the_refusal_names_the_object_the_field_and_the_rule_message():
    node_class = _object("EC2NodeClass", _set(tags={"karpenter.sh/nodepool": "x"}))
    with pytest.raises(SizingInputError) as error:
        check_object(node_class, "EC2NodeClass", "EC2NodeClass default")
    assert str(error.value).startswith("EC2NodeClass default: the EC2NodeClass CRD (karpenter.k8s.aws/v1) refuses it: ")
    assert "spec.tags: tag contains a restricted tag matching karpenter.sh/nodepool" in str(error.value)


def test_a_refusal_lists_a_bounded_number_of_violations():
    pool = _object("NodePool", lambda s: _template(s)["requirements"].extend(
        {"key": f"karpenter.sh/k{index}", "operator": "Exists"} for index in range(40)
    ))  # fmt: skip
    with pytest.raises(SizingInputError, match=f"and {40 - MAX_SHOWN} more"):
        check_object(pool, "NodePool", "NodePool default")


def test_schema_bounds_and_required_fields_are_checked_on_the_way():
    too_many = _object("EC2NodeClass", _set(subnetSelectorTerms=[{"id": f"subnet-{i}"} for i in range(31)]))
    assert [v.describe() for v in rule_violations(too_many, "EC2NodeClass")] == [
        "spec.subnetSelectorTerms: has 31 items, more than the 30 allowed"
    ]
    no_operator = _object("NodePool", _requirement({"key": "example.com/team"}))
    assert [v.describe() for v in rule_violations(no_operator, "NodePool")] == [
        "spec.template.spec.requirements[1].operator: Required value"
    ]
    not_a_list = _object("NodePool", lambda s: _template(s).update(requirements="c5"))
    assert [v.describe() for v in rule_violations(not_a_list, "NodePool")] == [
        "spec.template.spec.requirements: must be a list, got 'c5'"
    ]


def test_a_null_field_is_absent():
    node_class = _object("EC2NodeClass", _set(instanceProfile=None))
    assert rule_violations(node_class, "EC2NodeClass") == []


def test_a_requirement_list_is_checked_on_its_own():
    requirements = [{"key": "karpenter.sh/foo", "operator": "Exists"}]
    (violation,) = part_violations(requirements, REQUIREMENTS_PATH)
    assert violation.describe("nodePool.requirements") == (
        "nodePool.requirements[0].key: label domain \"karpenter.sh\" is restricted (got 'karpenter.sh/foo')"
    )


def test_the_shipped_crds_are_the_reference_copies():
    reference = CRD_DIR.parents[3].parent / "shared" / "upstream" / "karpenter-1.14.1"
    if not reference.is_dir():
        pytest.skip(f"the reference copies are not at {reference} (reference material absent)")
    for _, filename in CRD_FILES.values():
        assert (CRD_DIR / filename).read_bytes() == (reference / filename).read_bytes()
    shipped = yaml.safe_load((CRD_DIR / CRD_FILES["NodePool"][1]).read_text())
    assert shipped["metadata"]["annotations"]["controller-gen.kubebuilder.io/version"]


# -- the planner's object door ------------------------------------------------------------------

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "cluster-objects.yaml"


def _example_with(kind: str, patch: Patch) -> str:
    documents = list(yaml.safe_load_all(EXAMPLE.read_text()))
    for document in documents:
        if document["kind"] == kind and document["metadata"]["name"] in ("default", "general"):
            patch(document["spec"])
            break
    return yaml.safe_dump_all(documents, sort_keys=False)


@pytest.mark.parametrize(
    "kind, patch, refusal",
    [
        (
            "NodePool",
            lambda s: s.setdefault("disruption", {"consolidateAfter": "1m"}).update(
                budgets=[{"nodes": "1", "schedule": "0 9 * * mon-fri"}]
            ),
            "NodePool general: the NodePool CRD (karpenter.sh/v1) refuses it: spec.disruption.budgets: "
            "'schedule' must be set with 'duration'",
        ),
        (
            "NodePool",
            _requirement({"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["5.5"]}),
            "spec.template.spec.requirements: requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a "
            "single positive integer value (at [3]) (the rule fails on this value:",
        ),
        (
            "NodePool",
            _requirement({"key": "karpenter.sh/nodepool", "operator": "In", "values": ["other"]}),
            'spec.template.spec.requirements[3].key: label "karpenter.sh/nodepool" is restricted',
        ),
        (
            "EC2NodeClass",
            lambda s: s["amiSelectorTerms"][0].update(id="ami-0123456789abcdef0"),
            "EC2NodeClass default: the EC2NodeClass CRD (karpenter.k8s.aws/v1) refuses it: spec.amiSelectorTerms: "
            "'id' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",
        ),
        (
            "EC2NodeClass",
            _ami([{"alias": "ubuntu@latest"}]),
            "spec.amiSelectorTerms[0].alias: family is not supported, must be one of the following:",
        ),
        (
            "EC2NodeClass",
            _set(instanceProfile="profile"),
            "spec: must specify exactly one of ['role', 'instanceProfile']",
        ),
        (
            "EC2NodeClass",
            _set(tags={"karpenter.sh/nodepool": "web"}),
            "spec.tags: tag contains a restricted tag matching karpenter.sh/nodepool",
        ),
        (
            "EC2NodeClass",
            lambda s: s["kubelet"].update(imageGCHighThresholdPercent=40, imageGCLowThresholdPercent=60),
            "spec.kubelet: imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent",
        ),
        (
            "EC2NodeClass",
            lambda s: s["kubelet"].update(evictionSoft={"memory.available": "500Mi"}),
            "spec.kubelet: evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod",
        ),
    ],
)
def test_the_planner_refuses_what_the_api_server_rejects(kind, patch, refusal):
    text = _example_with(kind, patch)
    with pytest.raises(SizingInputError) as error:
        plan_input_from_objects(read_objects([("example", text)]))
    assert refusal in str(error.value)
    assert "The API server would reject the object" in str(error.value)


def test_the_refusal_comes_before_unmodelled_fields_are_accepted():
    text = _example_with("EC2NodeClass", _set(instanceProfile="profile"))
    with pytest.raises(SizingInputError, match="must specify exactly one of"):
        plan_input_from_objects(read_objects([("example", text)]), accept_unmodelled=True)


def test_the_example_objects_plan_unchanged():
    plan_input = plan_input_from_objects(read_objects([("example", EXAMPLE.read_text())]))
    assert [pool.name for pool in (plan_input.node_pool, *plan_input.other_node_pools)] == ["general", "data"]


def test_a_rule_over_each_entry_names_the_entries_that_break_it():
    node_class = _object("EC2NodeClass", _set(tags={"team": "a", "karpenter.sh/nodepool": "x", "": "y"}))
    described = [violation.describe() for violation in rule_violations(node_class, "EC2NodeClass")]
    assert described == [
        "spec.tags: empty tag keys aren't supported (at '')",
        "spec.tags: tag contains a restricted tag matching karpenter.sh/nodepool (at 'karpenter.sh/nodepool')",
    ]
    # A rule over the whole list (a primary interface somewhere) names no entry.
    node_class = _object("EC2NodeClass", _set(networkInterfaces=[_nic(0, 1), _nic(1, 1)]))
    (violation,) = rule_violations(node_class, "EC2NodeClass")
    assert violation.entries == ()


def test_a_rule_without_a_message_speaks_through_its_message_expression_or_its_text():
    # The shipped CRDs give every rule a message; Kubernetes also allows messageExpression and fieldPath.
    worded = CrdRule("NodePool", ("spec",), "self.size() < 2", None, "'has ' + string(self.size()) + ' items'", ".x")
    assert _apply(worded, [1, 2, 3], "spec") == RuleViolation("spec.x", "has 3 items")
    failing_wording = CrdRule("NodePool", ("spec",), "self.size() < 2", None, "self.nothing", None)
    assert _apply(failing_wording, [1, 2], "spec") == RuleViolation("spec", "failed rule: self.size() < 2")
    alias = CrdRule("EC2NodeClass", (), "self.split('@')[1] == 'latest'", "m", None, None)
    violation = _apply(alias, "windows2022", "spec.amiSelectorTerms[0].alias")
    assert violation is not None and violation.value == "'windows2022'" and violation.error
