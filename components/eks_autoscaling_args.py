"""The inputs of the EksAutoscaling component, as the types Pulumi turns into its package schema.

Each input mirrors a key of the stack configuration (stackconfig/), which stays the one place
of defaults and validation: the component hands these values to that model, so an input left
out takes the stack's default and a bad one is refused with the same message as in a stack file.
Only the inputs of an existing VPC and `region` are the component's own.

Pulumi reads the annotations and the docstring under each field to build the schema (SDK types
and their documentation), so this module keeps its annotations evaluated: no postponed
annotations here. Configuration values are plain (not `pulumi.Input`): they must be known when
the program runs, because the capacity plan and the validation are computed from them.
"""

from typing import TypedDict

import pulumi


class Network(TypedDict, total=False):
    """The VPC the component builds (`network.*` of the stack configuration)."""

    cidr: str
    """IPv4 CIDR block of the VPC, /16 to /24 (default 10.0.0.0/16). With `vpcId`, give your VPC's block: the test app admits the ALB's traffic from it."""
    availability_zones: int
    """Number of availability zones, 2 to 6 (default 2): without `zoneIds`, the first zones of the region by name that EKS supports and that offer the system node group's instance types. With `vpcId`, the number of zones your private subnets span."""
    zone_ids: list[str]
    """The VPC's zones by zone ID (use1-az1), as many as `availabilityZones`, in subnet order: pin them once (the component warns with the IDs it chose) so that a zone leaving the region's list never re-addresses the subnets. Not allowed with `vpcId`."""
    nat_gateways: str
    """`single` (default) or `onePerAz`. Not allowed with `vpcId`."""


class SecretsEncryption(TypedDict, total=False):
    """Envelope encryption of Kubernetes secrets with a customer-managed KMS key."""

    enabled: bool
    """Encrypt secrets with a KMS key of your own (default false; cannot be undone)."""
    kms_key_arn: str
    """ARN of an existing KMS key; without it a key with rotation is created."""


class Cluster(TypedDict, total=False):
    """The EKS control plane."""

    version: str
    """Kubernetes version in EKS support: 1.33, 1.34, 1.35 (default) or 1.36."""
    endpoint_public_access: bool
    """Whether the API server has a public endpoint (default true); the private endpoint is always on. False on a VPC the component builds needs `deployFromInsideVpc`."""
    public_access_cidrs: list[str]
    """IPv4 CIDR blocks allowed to reach the public endpoint (default 0.0.0.0/0, which needs `acknowledgeOpenEndpoint`)."""
    acknowledge_open_endpoint: bool
    """Set true to accept a public endpoint open to 0.0.0.0/0 (default false)."""
    deploy_from_inside_vpc: bool
    """Set true when `pulumi up` runs inside the VPC or a network routed into it (default false); without it a private-only endpoint on a VPC the component builds is refused, since the first Helm release could not reach the API server."""
    log_types: list[str]
    """Control-plane log types: any of api, audit, authenticator, controllerManager, scheduler (default api, audit, authenticator)."""
    log_retention_days: int
    """Days CloudWatch keeps the control-plane logs: one of CloudWatch's retention values, or 0 for ever (default 90)."""
    log_kms_key_arn: str
    """A KMS key of the stack's region to encrypt the control-plane logs with."""
    authentication_mode: str
    """`API` (default, access entries) or `API_AND_CONFIG_MAP`, which is refused with `awsSharedConfigFile` or `awsSharedCredentialsFile`."""
    secrets_encryption: SecretsEncryption
    """Envelope encryption of Kubernetes secrets."""


class NodeGroup(TypedDict, total=False):
    """The managed node group that runs the system pods (controllers, CoreDNS)."""

    instance_types: list[str]
    """EC2 instance types (default m5.large)."""
    min_size: int
    """Minimum number of system nodes (default 2)."""
    desired_size: int
    """Desired number of system nodes, between min and max (default 2)."""
    max_size: int
    """Maximum number of system nodes (default 3)."""
    disk_size: int
    """Root volume size in GiB, 20 to 16384 (default 20)."""
    ami_type: str
    """`AL2023_x86_64_STANDARD` (default) or `AL2023_ARM_64_STANDARD`."""
    capacity_type: str
    """`ON_DEMAND` (default) or `SPOT`."""
    labels: dict[str, str]
    """Node labels; controllers are pinned to the system nodes by them (default node-role: system)."""


class Chart(TypedDict, total=False):
    """A Helm chart installed on the system nodes."""

    version: str
    """Chart version (metrics-server 3.13.1, aws-load-balancer-controller 3.5.0 by default)."""
    replicas: int
    """Number of replicas, 1 to 5."""


class Karpenter(TypedDict, total=False):
    """Karpenter: chart version, replicas, and the AMI and root volume of the nodes it launches."""

    version: str
    """Karpenter version whose controller policy is bundled and that supports the cluster version (default 1.14.1)."""
    replicas: int
    """Controller replicas, at most the system nodes and zones (default 2)."""
    ami_alias: str
    """Pinned AMI alias `al2023@<release>` (default al2023@v20260714); `latest` is refused."""
    root_volume_size: int
    """Root volume of Karpenter's nodes in GiB, gp3 and encrypted (default 20)."""
    create_spot_service_linked_role: bool
    """Create the account-wide role AWSServiceRoleForEC2Spot, which spot launches need (default false; kept on destroy)."""


class Addons(TypedDict, total=False):
    """The add-ons installed with Helm."""

    metrics_server: Chart
    """metrics-server, which the HPA reads CPU usage from."""
    load_balancer_controller: Chart
    """The AWS Load Balancer Controller, which turns the Ingress into an ALB."""
    karpenter: Karpenter
    """Karpenter and its CRDs."""


class ScaleDown(TypedDict, total=False):
    """How fast the HPA may remove pods."""

    stabilization_window_seconds: int
    """Seconds of stable low load before scaling down, 0 to 3600 (default 60)."""
    percent: int
    """At most this percentage of pods removed per period, 1 to 100 (default 30)."""
    period_seconds: int
    """The period of `percent`, 1 to 1800 seconds (default 60)."""


class Hpa(TypedDict, total=False):
    """The test app's HorizontalPodAutoscaler."""

    min_replicas: int
    """Minimum replicas, at least 1 (default 1)."""
    max_replicas: int
    """Maximum replicas (default 10); the NodePool limits are planned for this peak."""
    target_cpu_utilization_percent: int
    """Target CPU utilisation in percent of the CPU request, 1 to 100 (default 50)."""
    scale_down: ScaleDown
    """Scale-down behaviour."""


class Ingress(TypedDict, total=False):
    """The ALB in front of the test app."""

    scheme: str
    """`internet-facing` (default) or `internal`."""
    tags: dict[str, str]
    """Tags for the ALB, added to `tags`."""
    inbound_cidrs: list[str]
    """IPv4 CIDR blocks the ALB admits, at most 50 (default 0.0.0.0/0, which on an internet-facing ALB needs `acknowledgeOpenToInternet`)."""
    acknowledge_open_to_internet: bool
    """Set true to accept an internet-facing ALB open to every address (default false: the security checks flag it)."""


class App(TypedDict, total=False):
    """The test workload (go-httpbin) with its HPA, PodDisruptionBudget, NetworkPolicy and ALB Ingress."""

    namespace: str
    """Namespace, a DNS label (default test-app); it enforces Pod Security "restricted"."""
    name: str
    """Name of the Deployment and Service, a DNS label (default test-app)."""
    image: str
    """Container image with a pinned tag or digest (default ghcr.io/mccutchen/go-httpbin:2.25.0)."""
    cpu_request: str
    """CPU request, a Kubernetes quantity (default 100m)."""
    cpu_limit: str
    """CPU limit, at least the request (default 200m)."""
    memory_request: str
    """Memory request (default 64Mi)."""
    memory_limit: str
    """Memory limit, at least the request (default 128Mi)."""
    hpa: Hpa
    """The HorizontalPodAutoscaler."""
    max_surge_percent: int
    """Rolling-update surge in percent, 1 to 100 (default 100); the plan reserves room for it."""
    health_check_path: str
    """Path of the probes and of the ALB health check (default /status/200)."""
    ingress: Ingress
    """The ALB."""


class Requirement(TypedDict, total=False):
    """A NodePool requirement, as in `spec.template.spec.requirements`."""

    key: str
    """Node label key, such as karpenter.sh/capacity-type (required)."""
    operator: str
    """In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte or Lte (required)."""
    values: list[str]
    """Values of the label."""
    min_values: int
    """Minimum number of distinct values the scheduler must keep available."""


class Budget(TypedDict, total=False):
    """A disruption budget: at most `nodes` disrupted at once."""

    nodes: str
    """A node count such as "1" or a percentage such as "10%" (required)."""
    reasons: list[str]
    """Underutilized, Empty and/or Drifted; all reasons when unset."""
    schedule: str
    """Cron expression or macro opening the budget's window; set with `duration`."""
    duration: str
    """Length of the window, such as 30m or 8h."""


class NodePoolLimits(TypedDict, total=False):
    """Overrides of the planned NodePool limits."""

    cpu: str
    """CPU limit, such as 16."""
    memory: str
    """Memory limit, such as 64Gi."""


class NodePool(TypedDict, total=False):
    """The Karpenter NodePool whose limits come from the capacity plan."""

    name: str
    """NodePool name and the `karpenter.sh/nodepool` label value its pods select (default test-app)."""
    preset: str
    """`reference` (default: on-demand m5.large) or `spot` (spot then on-demand, c/m/r, xlarge and up)."""
    requirements: list[Requirement]
    """Requirements replacing the preset's; zones go in `zones`."""
    zones: list[str]
    """Zones of the region the nodes may use (default: the VPC's zones; with `vpcId`, the region's)."""
    consolidation_policy: str
    """WhenEmpty (default), WhenEmptyOrUnderutilized or Balanced."""
    consolidate_after: str
    """Wait before consolidating, a duration such as 30s (default) or Never."""
    expire_after: str
    """Node lifetime, a duration such as 15m (default) or Never."""
    budgets: list[Budget]
    """Disruption budgets (default: all empty nodes at once, one node for drift or underuse)."""
    limits: NodePoolLimits
    """Overrides of the planned limits."""
    acknowledge_limits_below_peak: bool
    """Accept `limits` under which Karpenter decides otherwise than without limits in a scenario: pods left pending, moved to another NodePool or packed against a preference (default false)."""
    weight: int
    """1 to 100; higher weights are tried first when several NodePools fit."""


class PodRequests(TypedDict, total=False):
    """Requests of one pod, as Kubernetes quantities."""

    cpu: str
    """cpu of one pod, such as 250m or 1."""
    memory: str
    """memory of one pod, such as 512Mi or 2Gi."""
    ephemeral_storage: str
    """local disk of one pod, such as 10Gi (`ephemeral-storage` in a stack file, as Kubernetes names it)."""


class CapacityWorkload(TypedDict, total=False):
    """A Deployment on the NodePool at its peak (an entry of a workload description)."""

    name: str
    """Name of the workload."""
    requests: PodRequests
    """Requests of one pod; cpu or memory left out is no request (planned as 0 and named in the plan's warning)."""
    max_replicas: int
    """Peak replicas: the HPA's maxReplicas, at least 1."""
    max_surge: str
    """Extra pods of a rollout: a count such as 2 or a percentage such as 25% (default 25%)."""
    node_selector: dict[str, str]
    """Labels the pods require of their node."""


class CapacityDaemonSet(TypedDict, total=False):
    """A DaemonSet on every node it selects (an entry of a workload description)."""

    name: str
    """Name of the DaemonSet."""
    requests: PodRequests
    """Requests of its pod (default 0 cpu, 0 memory)."""
    node_selector: dict[str, str]
    """Labels of the nodes it runs on."""


class Capacity(TypedDict, total=False):
    """How the NodePool limits are planned (docs/sizing-input.md)."""

    workloads: list[CapacityWorkload]
    """More workloads on the NodePool: entries of a workload description (name, requests, maxReplicas, maxSurge, ...)."""
    daemon_sets: list[CapacityDaemonSet]
    """More DaemonSets on every node, as entries of a workload description."""
    headroom_percent: float
    """Headroom added to the limits in percent, 0 to 1000 (default 10)."""
    max_pods_per_node: int
    """Blast-radius cap ranking the recommendation's candidates by the pods on their fullest node."""
    price_overrides: dict[str, float]
    """USD per hour by instance type; the bundled catalog has us-east-1 prices only."""
    catalog: str
    """Catalog file to plan with, as `python -m sizing catalog refresh --region R` writes it (types, on-demand and spot prices, offerings per zone), relative to the program's directory; it must be of the stack's region (default: the bundled catalog)."""
    spot_discount_percent: float
    """Spot priced this many percent below on-demand, 0 to 99; wins over the catalog's spot prices (unset: the catalog's spot prices, else spot priced at on-demand, an upper bound)."""
    solver_work_limit: int
    """Units of solver work (about 1 ms each) for the search of the cheapest fleet, 1 to 100000 (default 2000): bounded by work, so the plan is the same on any machine."""


class Prometheus(TypedDict, total=False):
    """Prometheus, from the prometheus-community `prometheus` chart with kube-state-metrics."""

    version: str
    """Chart version (default 29.27.0, the one its values are checked against)."""
    retention: str
    """How long samples are kept, a Prometheus duration of at least 1h such as 12h or 7d (default 7d)."""
    storage_limit: str
    """Size limit of its emptyDir on the system node's root volume, at least 1Gi and at most half of nodeGroup.diskSize (default 4Gi); 80 % of it is the retention size."""
    scrape_interval: str
    """How often targets are scraped and rules evaluated, 10s to 5m (default 30s)."""
    cpu_request: str
    """CPU request of the server (default 250m), counted on the system nodes."""
    memory_request: str
    """Memory request of the server (default 512Mi), counted on the system nodes."""
    memory_limit: str
    """Memory limit of the server, at least the request (default 1Gi)."""


class Grafana(TypedDict, total=False):
    """Grafana, from the grafana-community `grafana` chart."""

    version: str
    """Chart version (default 12.11.1, the one its values are checked against)."""


class Alerts(TypedDict, total=False):
    """How the alerts generated from the capacity plan judge the live cluster."""

    node_pool_usage_percent: int
    """Alert when a NodePool uses more than this percentage of a limit, 1 to 100 (default 80)."""
    node_startup_seconds: int
    """Seconds a new node may take to run its pods, added to the plan's HPA ramp before a Pending pod is an alert, 0 to 3600 (default 300)."""
    hpa_at_max_seconds: int
    """Seconds the HPA may stay at the planned peak before that is an alert, 60 to 86400 (default 900)."""
    unplanned_instance_type_seconds: int
    """Seconds a node of a type the plan did not launch may run before that is an alert, 60 to 86400 (default 600)."""


class Monitoring(TypedDict, total=False):
    """Prometheus and Grafana on the system nodes with Karpenter's dashboards and alerts that check the capacity plan."""

    enabled: bool
    """Install them (default false; the dev stack turns them on)."""
    namespace: str
    """Their namespace, created and deleted with them (default monitoring)."""
    prometheus: Prometheus
    """Prometheus and kube-state-metrics."""
    grafana: Grafana
    """Grafana."""
    alerts: Alerts
    """The alerts generated from the capacity plan."""


class EksAutoscalingArgs(TypedDict, total=False):
    """The inputs of EksAutoscaling. Every input is optional; defaults reproduce the reference setup."""

    region: str
    """AWS region: the region of the AWS provider the component runs with, which is the default; another one is refused."""
    cluster_name: str
    """Name of the EKS cluster, 1 to 40 letters, digits, - or _ (default karpenter-test)."""
    tags: dict[str, str]
    """Tags for every AWS resource (keys must not start with aws:). Karpenter's nodes get them through the EC2NodeClass, whose drift hash includes them: changing them on a live cluster replaces every node Karpenter launched."""
    vpc_id: pulumi.Input[str]
    """An existing VPC to build the cluster in; give the subnets too. Without it the component builds a VPC."""
    public_subnet_ids: pulumi.Input[list[str]]
    """Public subnets of `vpcId` for internet-facing ALBs; they need the tag kubernetes.io/role/elb=1."""
    private_subnet_ids: pulumi.Input[list[str]]
    """Private subnets of `vpcId` for every node, with a route to the internet through NAT."""
    network: Network
    """The VPC the component builds."""
    cluster: Cluster
    """The EKS control plane."""
    node_group: NodeGroup
    """The system node group."""
    identity: str
    """How the controllers get their AWS roles: `irsa` (default) or `podIdentity`."""
    addons: Addons
    """Helm add-ons: metrics-server, the AWS Load Balancer Controller and Karpenter."""
    app: App
    """The test app (go-httpbin behind an ALB, scaled by the HPA)."""
    node_pool: NodePool
    """The Karpenter NodePool."""
    capacity: Capacity
    """Inputs of the capacity plan that sizes the NodePool limits."""
    aws_profile: str
    """AWS profile the cluster's kubeconfig signs in with: the profile of the AWS provider the component runs with, if it has one."""
    aws_role_arn: str
    """IAM role the cluster's kubeconfig assumes to sign in: the role the AWS provider assumes, if any."""
    aws_shared_config_file: str
    """AWS CLI config file the kubeconfig signs in with (its AWS_CONFIG_FILE), absolute or under ~/: the AWS provider's shared config file, if it has one."""
    aws_shared_credentials_file: str
    """AWS CLI credentials file the kubeconfig signs in with (its AWS_SHARED_CREDENTIALS_FILE), absolute or under ~/: the AWS provider's shared credentials file, if it has one."""
    deploy_test_app: bool
    """Deploy the test app (default true). With false the NodePool is planned from `capacity.workloads` alone."""
    monitoring: Monitoring
    """Prometheus and Grafana with Karpenter's dashboards and alerts from the capacity plan (off by default)."""
