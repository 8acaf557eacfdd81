"""The root of the stack configuration: one typed model for everything a stack sets."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from iam.errors import IamInputError
from iam.karpenter import require_karpenter_supports_kubernetes
from stackconfig.addons import AddonsConfig, IdentityMode
from stackconfig.app import AppConfig, check_alb_tags, parse_quantity
from stackconfig.base import ConfigSection
from stackconfig.capacity_config import CapacityConfig
from stackconfig.errors import StackConfigError
from stackconfig.foundation import (
    ClusterConfig,
    NetworkConfig,
    NodeGroupConfig,
    check_node_class_tags,
    validate_cluster_name,
    validate_tags,
)
from stackconfig.karpenter_dashboards import check_karpenter_dashboards_bundled
from stackconfig.monitoring import MonitoringConfig
from stackconfig.nodepool import NodePoolConfig, validate_zones
from stackconfig.regions import check_region
from stackconfig.system_pods import check_system_nodes_hold_their_pods


class StackConfig(ConfigSection):
    """Everything a stack can set, with defaults that reproduce the reference setup.

    Every field but `region` is the project key of the same name
    (`eks-autoscaling:<key>` in `Pulumi.<stack>.yaml`); `region` is `aws:region`.
    """

    region: str
    cluster_name: str = "karpenter-test"
    # Also the EC2NodeClass's `spec.tags`, part of its drift hash: a change replaces Karpenter's nodes.
    tags: dict[str, str] = Field(default_factory=dict)
    network: NetworkConfig = NetworkConfig()
    cluster: ClusterConfig = ClusterConfig()
    node_group: NodeGroupConfig = NodeGroupConfig()
    identity: IdentityMode = "irsa"
    addons: AddonsConfig = AddonsConfig()
    app: AppConfig = AppConfig()
    node_pool: NodePoolConfig = NodePoolConfig()
    capacity: CapacityConfig = CapacityConfig()
    monitoring: MonitoringConfig = MonitoringConfig()
    # False: no test app; the NodePool stays, for the workloads listed under `capacity.workloads`.
    deploy_test_app: bool = True

    @field_validator("region")
    @classmethod
    def _region_exists(cls, value: str) -> str:
        return check_region(value)

    @field_validator("cluster_name")
    @classmethod
    def _cluster_name_is_valid(cls, value: str) -> str:
        return validate_cluster_name(value)

    @field_validator("tags")
    @classmethod
    def _tags_are_valid(cls, value: dict[str, str]) -> dict[str, str]:
        validate_tags(value)
        # The EC2NodeClass carries them too, onto every node Karpenter launches.
        check_node_class_tags(value)
        return value

    @model_validator(mode="after")
    def _karpenter_fits_the_cluster(self) -> StackConfig:
        karpenter = self.addons.karpenter
        try:
            require_karpenter_supports_kubernetes(karpenter.version, self.cluster.version)
        except IamInputError as error:
            raise ValueError(f"addons.karpenter.version: {error}") from None
        # The chart's required anti-affinity puts one replica per node and its zone spread
        # (DoNotSchedule) one per zone, on nodes Karpenter did not launch: the system nodes.
        room = min(self.node_group.min_size, self.network.availability_zones)
        if karpenter.replicas > room:
            raise ValueError(
                f"addons.karpenter.replicas is {karpenter.replicas} but the system node group guarantees "
                f"{self.node_group.min_size} node(s) over {self.network.availability_zones} zone(s), room for {room} "
                f"replica(s); lower the replicas or raise nodeGroup.minSize"
            )
        return self

    @model_validator(mode="after")
    def _system_nodes_hold_the_controllers(self) -> StackConfig:
        check_system_nodes_hold_their_pods(self.node_group, self.addons, self.monitoring)
        return self

    @model_validator(mode="after")
    def _monitoring_fits_the_stack(self) -> StackConfig:
        monitoring = self.monitoring
        if not monitoring.enabled:
            return self
        check_karpenter_dashboards_bundled(self.addons.karpenter.version)
        if self.deploy_test_app and monitoring.namespace == self.app.namespace:
            raise ValueError(
                f"monitoring.namespace and app.namespace are both {monitoring.namespace!r}; each is created and "
                "deleted with its own part of the stack, so give them different names"
            )
        # Prometheus' emptyDir lives on the system node's root volume, beside the images and logs.
        storage_gib = parse_quantity(monitoring.prometheus.storage_limit) / 2**30
        if storage_gib * 2 > self.node_group.disk_size:
            raise ValueError(
                f"monitoring.prometheus.storageLimit {monitoring.prometheus.storage_limit} is more than half of "
                f"nodeGroup.diskSize ({self.node_group.disk_size} GiB), the system node's root volume that also "
                "holds the images and logs; lower storageLimit or raise nodeGroup.diskSize"
            )
        return self

    @model_validator(mode="after")
    def _log_key_is_in_the_region(self) -> StackConfig:
        # CloudWatch Logs encrypts a log group only with a key of its own region.
        key = self.cluster.log_kms_key_arn
        if key is not None and key.split(":")[3] != self.region:
            raise ValueError(
                f"cluster.logKmsKeyArn {key!r} is a key of {key.split(':')[3]}; the control-plane log group is in "
                f"{self.region} and needs a key of that region"
            )
        return self

    @model_validator(mode="after")
    def _zones_are_in_the_region(self) -> StackConfig:
        try:
            validate_zones(self.node_pool.zones or (), self.region)
        except StackConfigError as error:
            raise ValueError("; ".join(error.problems)) from None
        return self

    @model_validator(mode="after")
    def _node_pool_has_workloads(self) -> StackConfig:
        if not self.deploy_test_app and not self.capacity.workloads:
            raise ValueError(
                "deployTestApp is false and capacity.workloads is empty: the NodePool's limits are planned from "
                "the workloads it runs; list yours under capacity.workloads (see docs/sizing-input.md) or keep "
                "deployTestApp true"
            )
        return self

    @model_validator(mode="after")
    def _tags_fit_the_alb_annotation(self) -> StackConfig:
        # The test app's Ingress puts the stack's tags on its ALB through one annotation.
        if self.deploy_test_app:
            try:
                check_alb_tags(self.tags)
            except ValueError as error:
                raise ValueError(f"`tags`: {error} (the test app's ALB carries the stack's tags)") from None
        return self

    @property
    def resource_tags(self) -> dict[str, str]:
        """Tags applied to every AWS resource: the stack's own plus the project's."""
        return {"eks-autoscaling:cluster": self.cluster_name, **self.tags}
