"""The workload description (docs/sizing-input.md) as pydantic models.

Keys are camelCase, as in Kubernetes objects; unknown keys and wrong types are errors (no "2" for
2). Quantities are checked here for their form only; what they mean (a request of 0 cpu, a memory
limit below the peak) is checked where the planner reads them. The JSON Schema of `Description`
is published as docs/schemas/workload-description.schema.json (scripts/generate_description_schema.py).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, WithJsonSchema, field_validator, model_validator
from pydantic.alias_generators import to_camel

from sizing.binpack.model import DEFAULT_WORK_LIMIT
from sizing.errors import SizingInputError, echo
from sizing.karpenter.allocatable import NODEFS_FORMS, nodefs_available
from sizing.karpenter.ami_families import AMI_FAMILIES, DEFAULT_AMI_FAMILY
from sizing.kube.quantities import CPU_FORMS, MEMORY_FORMS, STORAGE_FORMS, cpu_millicores, memory_mib, storage_mib
from sizing.kube.workloads import CEILING_WHY, DEFAULT_MAX_SURGE, MAX_REPLICAS, SURGE_FORMS, surge_pods

_QUANTITY_PATTERN = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$"


def _quantity_check(parse: Any, forms: str) -> Any:
    def check(value: Any) -> Any:
        try:
            parse(value, "")
        except SizingInputError:
            raise ValueError(f"must be {forms}, got {echo(value)}") from None
        return value  # kept as written: a stack turns entries back into a description

    return check


def _quantity_schema(forms: str) -> dict[str, Any]:
    return {"anyOf": [{"type": "string", "pattern": _QUANTITY_PATTERN}, {"type": "number"}], "description": forms}


def _surge_check(value: Any) -> Any:
    try:
        surge_pods(1, value)
    except SizingInputError:
        raise ValueError(f"must be {SURGE_FORMS}, got {echo(value)}") from None
    return value


def _eviction_check(value: Any) -> Any:
    if isinstance(value, str) and value.strip().endswith("%"):
        raise ValueError(f"must be a quantity such as 100Mi; percentages ({echo(value)}) are not supported")
    return _quantity_check(memory_mib, MEMORY_FORMS)(value)


def _nodefs_check(value: Any) -> Any:
    try:
        nodefs_available(value, "")
    except SizingInputError:
        raise ValueError(f"must be {NODEFS_FORMS}, got {echo(value)}") from None
    return value


def _ami_family(value: Any) -> Any:
    if value not in AMI_FAMILIES:
        raise ValueError(f"must be one of {list(AMI_FAMILIES)} (an EC2NodeClass amiFamily), got {echo(value)}")
    return value


def _label_values(value: Any) -> Any:
    # Label values are strings, but YAML reads `true` or `1` as other scalars: they mean their text.
    if not isinstance(value, dict):
        raise ValueError(f"must map label keys to values, got {echo(value)}")
    return {str(key): str(label) for key, label in value.items()}


CpuQuantity = Annotated[
    Any, PlainValidator(_quantity_check(cpu_millicores, CPU_FORMS)), WithJsonSchema(_quantity_schema(CPU_FORMS))
]
MemoryQuantity = Annotated[
    Any, PlainValidator(_quantity_check(memory_mib, MEMORY_FORMS)), WithJsonSchema(_quantity_schema(MEMORY_FORMS))
]
StorageQuantity = Annotated[
    Any, PlainValidator(_quantity_check(storage_mib, STORAGE_FORMS)), WithJsonSchema(_quantity_schema(STORAGE_FORMS))
]
NodefsThreshold = Annotated[
    Any,
    PlainValidator(_nodefs_check),
    WithJsonSchema(
        {
            "anyOf": [{"type": "string", "pattern": r"^\s*[0-9]+(\.[0-9]+)?%\s*$"}, *_quantity_schema("")["anyOf"]],
            "description": NODEFS_FORMS,
        }
    ),
]
EvictionQuantity = Annotated[
    Any,
    PlainValidator(_eviction_check),
    WithJsonSchema(_quantity_schema("a memory quantity such as 100Mi (no percentage)")),
]
MaxSurge = Annotated[
    Any,
    PlainValidator(_surge_check),
    WithJsonSchema({"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "pattern": r"^\s*[0-9]+%?\s*$"}]}),
]
LabelSelector = Annotated[
    dict[str, str],
    PlainValidator(_label_values),
    WithJsonSchema({"type": "object", "additionalProperties": {"type": "string"}}),
]
Requirement = Annotated[
    dict[str, Any],
    WithJsonSchema(
        {
            "type": "object",
            "description": "a NodePool requirement: {key, operator, values, minValues}",
            "properties": {
                "key": {"type": "string"},
                "operator": {"enum": ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"]},
                "values": {"type": "array", "items": {"type": "string"}},
                "minValues": {"type": "integer", "minimum": 1},
            },
            "required": ["key", "operator"],
        }
    ),
]
AmiFamily = Annotated[str, PlainValidator(_ami_family), WithJsonSchema({"type": "string", "enum": list(AMI_FAMILIES)})]
LimitValue = Annotated[Any, WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "number"}]})]
Name = Annotated[str, Field(min_length=1)]


class DescriptionModel(BaseModel):
    """camelCase keys, unknown keys rejected, no coercion between types."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        strict=True,
        field_title_generator=lambda name, field: field.alias or to_camel(name),  # titles as the keys are written
    )


class Requests(DescriptionModel):
    """A workload pod's requests; a resource left out is requested as 0, as Kubernetes schedules a container
    without a request, and the report lists the workload in its warning."""

    cpu: CpuQuantity | None = Field(
        default=None, description="cpu of one pod; left out: no cpu request (0, named in the report's warning)"
    )
    memory: MemoryQuantity | None = Field(
        default=None, description="memory of one pod; left out: no memory request (0, named in the report's warning)"
    )
    ephemeral_storage: StorageQuantity | None = Field(
        default=None,
        alias="ephemeral-storage",
        description="local disk of one pod (writable layers, logs, emptyDir); left out: none (0)",
    )


class OptionalRequests(DescriptionModel):
    cpu: CpuQuantity | None = Field(default=None, description="cpu of one pod (default 0)")
    memory: MemoryQuantity | None = Field(default=None, description="memory of one pod (default 0)")
    ephemeral_storage: StorageQuantity | None = Field(
        default=None, alias="ephemeral-storage", description="local disk of one pod (default 0)"
    )


class Requested(OptionalRequests):
    pods: int = Field(default=0, ge=0, description="pods already bound to the node")


class Reserved(DescriptionModel):
    cpu: CpuQuantity | None = Field(default=None, description="cpu held back (default: Karpenter's formula)")
    memory: MemoryQuantity | None = Field(default=None, description="memory held back (default: Karpenter's formula)")
    ephemeral_storage: StorageQuantity | None = Field(
        default=None,
        alias="ephemeral-storage",
        description="node storage held back (default: 1Gi for kubeReserved, 0 for systemReserved)",
    )


class EvictionHard(DescriptionModel):
    memory_available: EvictionQuantity | None = Field(
        default=None, alias="memory.available", description="hard eviction threshold of memory"
    )
    nodefs_available: NodefsThreshold | None = Field(
        default=None,
        alias="nodefs.available",
        description="hard eviction threshold of the node's storage (default 10%)",
    )


class Kubelet(DescriptionModel):
    """The EC2NodeClass `spec.kubelet` settings that change a node's allocatable room."""

    max_pods: int | None = Field(default=None, ge=1, description="pods per node (default: the ENI limit)")
    pods_per_core: int | None = Field(default=None, ge=0, description="pods per vCPU; 0 for no such cap")
    kube_reserved: Reserved | None = Field(default=None, description="held back for the kubelet and runtime")
    system_reserved: Reserved | None = Field(default=None, description="held back for the operating system")
    eviction_hard: EvictionHard | None = Field(default=None, description="hard eviction thresholds")


class NodePool(DescriptionModel):
    name: Name | None = Field(default=None, description="checked against pods selecting karpenter.sh/nodepool")
    requirements: list[Requirement] = Field(
        default_factory=list,
        description="as in the NodePool's spec.template.spec.requirements (instance-type labels, capacity type, "
        "zone, and custom labels, which narrow no type but label the nodes); when absent, the getting-started NodePool",
    )
    labels: LabelSelector = Field(
        default_factory=dict,
        description="as in the NodePool's spec.template.metadata.labels: custom labels its nodes carry, for pods "
        "to select",
    )
    kubelet: Kubelet | None = Field(default=None, description="as in the EC2NodeClass spec.kubelet")
    ami_family: AmiFamily = Field(
        default=DEFAULT_AMI_FAMILY,
        description="the EC2NodeClass's AMI family, which decides the types it can launch (AL2023: no a1.*); "
        "default AL2023, the family this project deploys",
    )
    root_volume_size: StorageQuantity | None = Field(
        default=None,
        description="the EC2NodeClass's root volume (blockDeviceMappings[].ebs.volumeSize with rootVolume: true): "
        "a node's ephemeral storage before kube-reserved and the eviction threshold; default: the AMI family's "
        "volume (20Gi, 50Gi for Windows)",
    )
    limits: dict[str, LimitValue] | None = Field(
        default=None, description="the NodePool's current spec.limits, checked against the peak"
    )


class WorkloadEntry(DescriptionModel):
    """A Deployment at its peak."""

    name: Name
    requests: Requests = Field(description="requests of one pod")
    max_replicas: int = Field(
        ge=1,
        json_schema_extra={"maximum": MAX_REPLICAS},
        description=f"peak replicas: the HPA's maxReplicas (at most {MAX_REPLICAS:,})",
    )
    max_surge: MaxSurge = Field(
        default=DEFAULT_MAX_SURGE, description="extra pods of a rollout: a count or a percentage"
    )
    node_selector: LabelSelector = Field(default_factory=dict, description="labels the pods require of their node")

    @field_validator("max_replicas")
    @classmethod
    def _within_the_ceiling(cls, value: int) -> int:
        if value > MAX_REPLICAS:
            raise ValueError(f"must be at most {MAX_REPLICAS:,} ({CEILING_WHY}), got {value:,}")
        return value


class DaemonSetEntry(DescriptionModel):
    """A DaemonSet whose pod runs on every node it selects."""

    name: Name
    requests: OptionalRequests = Field(default_factory=OptionalRequests, description="requests of its pod")
    node_selector: LabelSelector = Field(default_factory=dict, description="labels of the nodes it runs on")


class ExistingNodeEntry(DescriptionModel):
    """A node running before the peak."""

    name: Name
    instance_type: Name = Field(description="an instance type of the catalog, such as m5.large")
    requested: Requested = Field(default_factory=Requested, description="requests already bound, DaemonSets included")
    zone: Name | None = Field(default=None, description="its zone")
    capacity_type: Name = Field(default="on-demand", description="on-demand or spot")
    in_node_pool: bool = Field(default=True, description="false: another NodePool or a managed node group")
    capacity_reported: bool = Field(
        default=True, description="false: launched a moment ago, Karpenter still counts it as zero"
    )


class Description(DescriptionModel):
    """What `python -m sizing plan FILE` plans a Karpenter NodePool for (docs/sizing-input.md)."""

    model_config = ConfigDict(title="Workload description")

    region: Name = Field(default="us-east-1", description="the AWS region whose prices are used")
    zones: list[Name] = Field(default_factory=list, description="the region's zones to plan with")
    headroom_percent: float = Field(
        default=10.0, ge=0, le=1000, allow_inf_nan=False, description="extra room in the limits"
    )
    max_pods_per_node: int | None = Field(
        default=None,
        ge=1,
        description="blast-radius cap that ranks the recommendation's candidates by the planned pods on their fullest node (a ranking, not a bound)",
    )
    price_overrides: dict[str, float] = Field(default_factory=dict, description="USD/hour per instance type")
    solver_work_limit: int | None = Field(
        default=DEFAULT_WORK_LIMIT,
        ge=1,
        description="units of solver work for the optimal fleet (about 1 ms each), so a plan is the same on any "
        "machine; null skips it",
    )
    node_pool: NodePool = Field(default_factory=NodePool, description="the NodePool and EC2NodeClass settings")
    workloads: list[WorkloadEntry] = Field(default_factory=list, description="Deployments at their peak")
    manifests: list[Name] = Field(default_factory=list, description="Kubernetes manifests, relative to this file")
    daemon_sets: list[DaemonSetEntry] = Field(default_factory=list, description="added to every node it selects")
    default_daemon_sets: bool = Field(
        default=True, description="add aws-node, kube-proxy and eks-pod-identity-agent to every node"
    )
    existing_nodes: list[ExistingNodeEntry] = Field(default_factory=list, description="nodes running before the peak")

    @model_validator(mode="before")
    @classmethod
    def _time_limit_was_replaced(cls, data: Any) -> Any:
        if isinstance(data, dict) and "solverTimeLimitSeconds" in data:
            raise ValueError(
                "solverTimeLimitSeconds was replaced by solverWorkLimit: the solver is bounded by work, not time, "
                f"so a plan is the same on any machine; use solverWorkLimit: <units> (default {DEFAULT_WORK_LIMIT}) "
                "or null to skip the solver"
            )
        return data


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a description file, for editors (docs/schemas/workload-description.schema.json)."""
    schema = Description.model_json_schema(by_alias=True, mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
