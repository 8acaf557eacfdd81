"""Bad configuration stops the program with one clear message, before any resource."""

import pytest

from offline.program import DELETE, PROJECT_DIR
from stackconfig.errors import StackConfigError
from stackconfig.load import load_stack_file, parse_stack_config
from tests.bounded import run_bounded
from tests.harness import ProgramFailed, run_program

BAD_INPUTS = [
    pytest.param(
        {"network": {"cidr": "10.0.0/16"}}, ["network.cidr", "'10.0.0/16'", "IPv4 CIDR block"], id="malformed-cidr"
    ),
    pytest.param({"network": {"cidr": "10.0.0.1/16"}}, ["network.cidr", "10.0.0.1/16"], id="cidr-host-bits"),
    pytest.param({"network": {"cidr": "10.0.0.0/8"}}, ["network.cidr", "/16 and /24"], id="cidr-too-large"),
    pytest.param(
        {"network": {"availabilityZones": 1}},
        ["network.availabilityZones", "greater than or equal to 2", "got 1"],
        id="too-few-azs",
    ),
    pytest.param(
        {"network": {"availabilityZones": 7}},
        ["network.availabilityZones", "less than or equal to 6", "got 7"],
        id="too-many-azs",
    ),
    pytest.param(
        {"network": {"zoneIds": ["ap-northeast-1a", "apne1-az1"]}},
        ["network.zoneIds", "'ap-northeast-1a' is not an availability zone ID such as use1-az1", "ZoneId"],
        id="zone-name-for-a-zone-id",
    ),
    pytest.param(
        {"network": {"zoneIds": ["apne1-az1", "apne1-az1"]}},
        ["network.zoneIds", "lists a zone twice"],
        id="zone-id-twice",
    ),
    pytest.param(
        {"network": {"zoneIds": ["apne1-az1", "apne1-az2", "apne1-az4"]}},
        ["availabilityZones is 2 but zoneIds pins 3 zones", "re-addresses every subnet"],
        id="more-zone-ids-than-zones",
    ),
    pytest.param(
        {"network": {"natGateways": "perAz"}},
        ["network.natGateways", "'single' or 'onePerAz'", "perAz"],
        id="unknown-nat-strategy",
    ),
    pytest.param(
        {"nodeGroup": {"minSize": 3, "maxSize": 2, "desiredSize": 2}},
        ["nodeGroup", "minSize (3) is greater than maxSize (2)"],
        id="min-above-max",
    ),
    pytest.param(
        {"nodeGroup": {"desiredSize": 5}},
        ["nodeGroup", "desiredSize (5)", "between minSize (2) and maxSize (3)"],
        id="desired-above-max",
    ),
    pytest.param(
        {"nodeGroup": {"minSize": 2, "desiredSize": 1}},
        ["desiredSize (1)", "between minSize (2)"],
        id="desired-below-min",
    ),
    pytest.param(
        {"cluster": {"version": "1.29"}},
        ["cluster.version", "'1.29'", "1.33, 1.34, 1.35, 1.36"],
        id="unsupported-version",
    ),
    pytest.param(
        {"cluster": {"version": 1.35}}, ["cluster.version", "number 1.35", "quotes", '"1.35"'], id="version-as-number"
    ),
    pytest.param({"nodeGroup": {"minSise": 2}}, ["unknown key `nodeGroup.minSise`", "minSize"], id="typo-in-section"),
    pytest.param({"nodeGrup": {"minSize": 2}}, ["unknown key `nodeGrup`", "nodeGroup"], id="typo-at-top"),
    pytest.param({"nodeGroup": {"minSize": "2"}}, ["nodeGroup.minSize", "valid integer", "'2'"], id="wrong-type"),
    pytest.param(
        {"nodeGroup": {"instanceTypes": ["m5large"]}},
        ["nodeGroup.instanceTypes", "'m5large'", "m5.large"],
        id="bad-instance-type",
    ),
    pytest.param({"nodeGroup": {"labels": {}}}, ["nodeGroup.labels", "at least one label"], id="no-system-label"),
    pytest.param(
        {"cluster": {"publicAccessCidrs": ["my-office"]}},
        ["cluster.publicAccessCidrs", "'my-office'"],
        id="bad-endpoint-cidr",
    ),
    pytest.param(
        {"cluster": {"publicAccessCidrs": []}},
        ["`cluster.publicAccessCidrs` is empty", "checkip.amazonaws.com"],
        id="public-endpoint-without-cidrs",
    ),
    pytest.param(
        {"cluster": {"endpointPublicAccess": False}},
        ["`cluster.endpointPublicAccess` is false on a stack that builds its own VPC", "deployFromInsideVpc"],
        id="private-endpoint-on-the-stacks-own-vpc",
    ),
    pytest.param(
        {"cluster": {"deployFromInsideVpc": "yes"}},
        ["cluster.deployFromInsideVpc", "valid boolean"],
        id="deploy-from-inside-vpc-not-a-bool",
    ),
    pytest.param(
        {"cluster": {"logTypes": ["api", "audits"]}}, ["cluster.logTypes[1]", "audits"], id="unknown-log-type"
    ),
    pytest.param(
        {"clusterName": "karpenter test"}, ["clusterName", "'karpenter test'", "letters, digits"], id="bad-cluster-name"
    ),
    pytest.param({"tags": {"aws:owner": "x"}}, ["tags", "aws:"], id="reserved-tag"),
    pytest.param({"aws:region": DELETE}, ["aws:region", "pulumi config set aws:region"], id="missing-region"),
    pytest.param(
        {"cluster": {"authenticationMode": "API_AND_CONFIG_MAP"}, "aws:sharedConfigFiles": ["/etc/aws/config"]},
        [
            "`cluster.authenticationMode` API_AND_CONFIG_MAP cannot be combined with `aws:sharedConfigFiles`",
            "aws-auth ConfigMap",
            "Use authenticationMode API",
        ],
        id="config-map-auth-with-a-config-file",
    ),
    pytest.param(
        {
            "cluster": {"authenticationMode": "API_AND_CONFIG_MAP"},
            "aws:profile": "work",
            "aws:sharedCredentialsFiles": ["/etc/aws/credentials"],
        },
        ["API_AND_CONFIG_MAP cannot be combined with `aws:sharedCredentialsFiles`", "~/.aws/credentials"],
        id="config-map-auth-with-a-credentials-file",
    ),
    pytest.param(
        {"cluster": {"secretsEncryption": {"enabled": True, "kmsKeyArn": "alias/mine"}}},
        ["cluster.secretsEncryption.kmsKeyArn", "alias/mine", "KMS key ARN"],
        id="bad-kms-key",
    ),
    pytest.param({"network": "single"}, ["`network`", "structured value"], id="scalar-for-section"),
    pytest.param(
        {"tags": {"karpenter.sh/nodepool": "mine"}},
        ["`tags`", "tag contains a restricted tag matching karpenter.sh/nodepool (at 'karpenter.sh/nodepool')"],
        id="tag-karpenter-sets",
    ),
    pytest.param(
        {"tags": {"kubernetes.io/cluster/other": "owned"}},
        ["`tags`", "restricted tag matching kubernetes.io/cluster/ (at 'kubernetes.io/cluster/other')"],
        id="cluster-ownership-tag",
    ),
    pytest.param(
        {"tags": {"team": "web,api"}},
        ["`tags`", "team='web,api' contains ',' or '='", "the test app's ALB carries the stack's tags"],
        id="stack-tag-the-alb-annotation-cannot-carry",
    ),
    pytest.param(
        {
            "capacity": {
                "workloads": [
                    {"name": "api", "requests": {"cpu": "1", "memory": "1Gi"}, "maxReplicas": 2, "replicas": 3}
                ]
            }
        },
        ["unknown key `capacity.workloads[0].replicas`", "maxReplicas, maxSurge, name, nodeSelector, requests"],
        id="capacity-workload-typo",
    ),
    pytest.param(
        {"capacity": {"daemonSets": [{"name": "agent"}, {"name": "log", "requests": {"cpu": "a lot"}}]}},
        ["`capacity.daemonSets[1].requests.cpu`", "cpu quantity such as 100m", "'a lot'"],
        id="capacity-daemonset-quantity",
    ),
    pytest.param(
        {"cluster": {"logRetentionDays": 45}},
        ["cluster.logRetentionDays", "45", "30, 60, 90"],
        id="log-retention-not-offered",
    ),
    pytest.param(
        {"cluster": {"logKmsKeyArn": "alias/logs"}},
        ["cluster.logKmsKeyArn", "alias/logs", "KMS key ARN"],
        id="bad-log-key",
    ),
    pytest.param(
        {"cluster": {"logKmsKeyArn": "arn:aws:kms:us-east-1:111122223333:key/0f1e2d3c-4b5a-6978-8695-a4b3c2d1e0f9"}},
        ["cluster.logKmsKeyArn", "us-east-1", "ap-northeast-1"],
        id="log-key-of-another-region",
    ),
    pytest.param(
        {"cluster": {"publicAccessCidrs": ["203.0.113.0/24"]}},
        ["cluster.publicAccessCidrs", "'203.0.113.0/24'", "TEST-NET-3"],
        id="documentation-endpoint-cidr",
    ),
    pytest.param(
        {"addons": {"karpenter": {"createSpotServiceLinkedRole": "yes"}}},
        ["addons.karpenter.createSpotServiceLinkedRole", "valid boolean"],
        id="spot-role-not-a-bool",
    ),
    pytest.param({"capacity": {"catalog": 5}}, ["capacity.catalog", "text is expected"], id="catalog-not-a-path"),
    pytest.param({"capacity": {"catalog": ""}}, ["capacity.catalog", "at least 1 character"], id="catalog-empty"),
    pytest.param(
        {"capacity": {"catalog": " catalog.json"}},
        ["capacity.catalog", "without surrounding blanks"],
        id="catalog-with-blanks",
    ),
    pytest.param(
        {"capacity": {"spotDiscountPercent": 100}},
        ["capacity.spotDiscountPercent", "less than or equal to 99", "100"],
        id="spot-discount-of-everything",
    ),
    pytest.param(
        {"capacity": {"spotDiscountPercent": -5}},
        ["capacity.spotDiscountPercent", "greater than or equal to 0"],
        id="negative-spot-discount",
    ),
    pytest.param(
        {"capacity": {"spotDiscountPercent": "60%"}},
        ["capacity.spotDiscountPercent", "valid number", "'60%'"],
        id="spot-discount-as-text",
    ),
]


@pytest.mark.parametrize("overrides, fragments", BAD_INPUTS)
def test_bad_input_stops_before_any_resource(overrides, fragments):
    with pytest.raises(ProgramFailed) as failure:
        run_program("dev", overrides)
    message = str(failure.value)
    assert message.startswith("invalid stack configuration")
    for fragment in fragments:
        assert fragment in message
    assert "Traceback" not in message
    assert failure.value.recording.resources == []


def test_several_problems_are_reported_together():
    with pytest.raises(StackConfigError) as failure:
        parse_stack_config(
            {
                "aws:region": "ap-northeast-1",
                "eks-autoscaling:network": '{"cidr": "nope", "availabilityZones": 9}',
            }
        )
    assert len(failure.value.problems) == 2
    assert "2 problems" in str(failure.value)


def test_other_namespaces_are_left_to_their_providers():
    config = parse_stack_config({"aws:region": "eu-west-1", "aws:profile": "work", "kubernetes:context": "x"})
    assert config.region == "eu-west-1"


def test_more_zones_than_the_region_has():
    # The mocked ap-northeast-1 has three zones, as the real region does for new accounts.
    with pytest.raises(ProgramFailed) as failure:
        run_program("dev", {"network": {"availabilityZones": 4}})
    assert "`network.availabilityZones` is 4" in str(failure.value)
    assert "ap-northeast-1 has only 3 zones the cluster can use" in str(failure.value)


def test_every_stack_file_is_valid():
    stacks = sorted(PROJECT_DIR.glob("Pulumi.*.yaml"))
    assert stacks, "no stack files"
    for path in stacks:
        load_stack_file(path)


def test_defaults_reproduce_the_reference_setup():
    config = parse_stack_config({"aws:region": "ap-northeast-1"})
    assert config.cluster_name == "karpenter-test"
    assert config.network.cidr == "10.0.0.0/16"
    assert config.network.availability_zones == 2
    assert config.cluster.version == "1.35"
    assert config.cluster.log_types == ("api", "audit", "authenticator")
    assert (config.cluster.log_retention_days, config.cluster.log_kms_key_arn) == (90, None)
    assert config.addons.karpenter.create_spot_service_linked_role is False
    assert config.node_group.instance_types == ("m5.large",)
    assert (config.node_group.min_size, config.node_group.desired_size, config.node_group.max_size) == (2, 2, 3)
    assert config.node_group.ami_type.startswith("AL2023")


# Bad input that used to pass silently or with a weak message: each stops before any resource,
# naming the key, the value and what is allowed.
MORE_BAD_INPUTS = [
    pytest.param(
        {"nodeGroup": {"instanceTypes": ["m5.largee"]}},
        ["nodeGroup.instanceTypes", "'m5.largee'", "not in the bundled instance-type catalog", "m5.large"],
        id="instance-type-not-in-catalog",
    ),
    pytest.param(
        {"nodeGroup": {"instanceTypes": ["m6g.large"]}},
        ["nodeGroup", "m6g.large (arm64)", "AL2023_x86_64_STANDARD", "amd64", "AL2023_ARM_64_STANDARD"],
        id="instance-type-of-the-other-architecture",
    ),
    pytest.param(
        {"nodeGroup": {"amiType": "AL2023_ARM_64_STANDARD"}},
        ["m5.large (amd64)", "AL2023_ARM_64_STANDARD", "an arm64 AMI", "AL2023_x86_64_STANDARD"],
        id="arm-ami-with-an-x86-type",
    ),
    pytest.param(
        {"nodeGroup": {"instanceTypes": ["t3.micro"]}},
        ["nodeGroup.instanceTypes", "t3.micro", "548 MiB memory", "karpenter replica", "1024 MiB"],
        id="instance-type-too-small-for-karpenter",
    ),
    pytest.param(
        {"nodeGroup": {"instanceTypes": ["m5.large", "t3.micro"]}},
        ["t3.micro", "karpenter replica"],
        id="smallest-listed-type-decides",
    ),
    pytest.param(
        {"aws:region": "us-east-7"},
        ["`aws:region`", "'us-east-7' is not an AWS region; such as us-east-1", "us-east-1"],
        id="region-that-does-not-exist",
    ),
    pytest.param(
        {"aws:region": "mars-north-1"},
        ["`aws:region`", "'mars-north-1' is not an AWS region; such as us-east-1"],
        id="region-of-another-planet",
    ),
    pytest.param(
        {"cluster": {"version": 1.3}},
        ["cluster.version", "number 1.3", "1.30 even becomes 1.3", "write it in quotes", '"1.35"'],
        id="unquoted-version-1.30",
    ),
    pytest.param(
        {"app": {"hpa": {"maxReplicas": -5}}},
        ["app.hpa.maxReplicas", "maxReplicas must be at least 1, got -5"],
        id="negative-max-replicas",
    ),
    pytest.param(
        {"app": {"hpa": {"maxReplicas": 0}}}, ["app.hpa.maxReplicas", "at least 1, got 0"], id="zero-max-replicas"
    ),
    pytest.param(
        {"app": {"hpa": {"maxReplicas": 40000}}},
        ["80000 pods", "app.hpa.maxReplicas", "network.cidr 10.0.0.0/16", "32746 pod addresses", "VPC CNI"],
        id="peak-beyond-the-vpc-pods",
    ),
    pytest.param(
        {"app": {"hpa": {"maxReplicas": 1000000000}}},
        ["`app.hpa.maxReplicas`", "at most 100,000", "the planner's ceiling", "got 1,000,000,000"],
        id="max-replicas-past-the-ceiling",
    ),
    pytest.param(
        {"capacity": {"workloads": [{"name": "api", "requests": {"cpu": "1", "memory": "1Gi"}, "maxReplicas": 10**7}]}},
        ["`capacity.workloads[0].maxReplicas`", "at most 100,000", "got 10,000,000"],
        id="capacity-workload-past-the-ceiling",
    ),
    pytest.param(
        {"capacity": {"headroomPercent": float("nan")}},
        ["`capacity.headroomPercent`", "must be a finite number, not nan", ".nan and .inf"],
        id="headroom-nan",
    ),
    pytest.param(
        {"capacity": {"headroomPercent": float("inf")}},
        ["`capacity.headroomPercent`", "must be a finite number, not inf"],
        id="headroom-inf",
    ),
    # 24000 pods fit the 32746 addresses, but 18 pods a node hold three ENIs of ten addresses each.
    pytest.param(
        {"app": {"hpa": {"maxReplicas": 12000}}},
        [
            "needs about 40",
            "VPC addresses",
            "1337 nodes with 24012 pods",
            "warm ENI",
            "WARM_ENI_TARGET=1",
            "network.cidr 10.0.0.0/16",
            "hold 32746",
            "already /16",
        ],
        id="peak-nodes-and-warm-enis-beyond-the-vpc",
    ),
    pytest.param(
        {"capacity": {"daemonSets": [{"name": "big-agent", "requests": {"cpu": "2", "memory": "64Mi"}}]}},
        ["capacity: the DaemonSets request 2125m cpu on every node", "(m5.large)", "no pod fits beside them"],
        id="oversized-daemon-set-is-blamed",
    ),
    pytest.param(
        # The command line plans the rest and lists such a workload; a stack refuses its own.
        {
            "capacity": {
                "workloads": [
                    {
                        "name": "batch",
                        "requests": {"cpu": "1", "memory": "1Gi"},
                        "maxReplicas": 2,
                        "nodeSelector": {"team": "a"},
                    }
                ]
            }
        },
        ["capacity: workload 'batch': nodeSelector requires custom label team=a", "Karpenter would leave"],
        id="capacity-workload-that-can-never-run",
    ),
    pytest.param(
        {
            "capacity": {
                "workloads": [
                    {"name": "api", "requests": {"cpu": "1", "memory": "1Gi"}, "maxReplicas": n} for n in (2, 3)
                ]
            }
        },
        ["`capacity.workloads`", "'api' is given more than once"],
        id="capacity-workload-named-twice",
    ),
    pytest.param(
        {"capacity": {"daemonSets": [{"name": "agent"}, {"name": "agent"}, {"name": "logs"}, {"name": "logs"}]}},
        ["`capacity.daemonSets`", "'agent', 'logs' are given more than once"],
        id="daemon-sets-named-twice",
    ),
    pytest.param(
        {"nodePool": {"limits": {"cpu": "1"}}},
        [
            "`nodePool.limits` {'cpu': '1'} change what Karpenter decides (peak: test-app/test-app: 10 more pods pending",
            "rollout: test-app/test-app: 20 more pods pending",
        ],
        id="limits-count-pods-not-groups",
    ),
    pytest.param(
        {"capacity": {"catalog": "no-such-catalog.json"}},
        ["`capacity.catalog`: 'no-such-catalog.json' cannot be read", "catalog refresh --region ap-northeast-1"],
        id="catalog-file-missing",
    ),
    pytest.param(
        {"capacity": {"catalog": "docs"}},
        ["`capacity.catalog`: 'docs' is a folder, not a file", "catalog refresh --region ap-northeast-1"],
        id="catalog-file-a-folder",
    ),
]


@pytest.mark.parametrize("overrides, fragments", MORE_BAD_INPUTS)
def test_more_bad_input_stops_before_any_resource(overrides, fragments):
    # Some of these checks need the plan, so the region's zones: they run after the AWS provider, which
    # creates nothing in AWS, and before any other resource.
    with pytest.raises(ProgramFailed) as failure:
        run_program("dev", overrides)
    message = str(failure.value)
    assert message.startswith("invalid stack configuration")
    for fragment in fragments:
        assert fragment in message
    assert "Traceback" not in message
    assert failure.value.recording.besides_providers() == []


@pytest.mark.parametrize("region", ["us-east-1", "eu-west-1", "cn-north-1", "us-gov-west-1", "us-isob-east-1"])
def test_regions_of_every_partition_are_accepted(region):
    assert parse_stack_config({"aws:region": region}).region == region


def test_integer_node_pool_limits_are_quantities():
    # docs/sizing-input.md writes `limits: {cpu: 1000, memory: 1000Gi}`; a stack accepts the same.
    config = parse_stack_config({"aws:region": "us-east-1", "eks-autoscaling:nodePool": {"limits": {"cpu": 16}}})
    assert config.node_pool.limits.cpu == "16"
    recording = run_program("dev", {"nodePool": {"limits": {"cpu": 16}}})
    assert recording.one("kubernetes:karpenter.sh/v1:NodePool").input("spec.limits.cpu") == "16"


def test_a_boolean_is_not_a_limit():
    with pytest.raises(StackConfigError) as failure:
        parse_stack_config({"aws:region": "us-east-1", "eks-autoscaling:nodePool": {"limits": {"cpu": True}}})
    assert "nodePool.limits.cpu" in str(failure.value)


def test_an_arm_node_group_with_arm_types_is_accepted():
    config = parse_stack_config(
        {
            "aws:region": "us-east-1",
            "eks-autoscaling:nodeGroup": {
                "instanceTypes": ["m6g.large", "m7g.large"],
                "amiType": "AL2023_ARM_64_STANDARD",
            },
        }
    )
    assert config.node_group.instance_types == ("m6g.large", "m7g.large")


def test_a_small_type_that_holds_the_controllers_is_accepted():
    # t3.medium: 3246 MiB allocatable holds a Karpenter replica (1 GiB) beside the DaemonSets.
    config = parse_stack_config(
        {"aws:region": "us-east-1", "eks-autoscaling:nodeGroup": {"instanceTypes": ["t3.medium"]}}
    )
    assert config.node_group.instance_types == ("t3.medium",)


def test_too_few_system_nodes_for_every_system_pod():
    # One Karpenter replica fits a t3.small node, but two t3.small nodes cannot hold every system pod
    # once metrics-server and the Load Balancer Controller run five replicas each.
    with pytest.raises(StackConfigError) as failure:
        parse_stack_config(
            {
                "aws:region": "us-east-1",
                "eks-autoscaling:nodeGroup": {"instanceTypes": ["t3.small"]},
                "eks-autoscaling:addons": {"metricsServer": {"replicas": 5}, "loadBalancerController": {"replicas": 5}},
            }
        )
    message = str(failure.value)
    assert "2 node(s) of t3.small" in message and "nodeGroup.minSize" in message
    assert "karpenter x2, metrics-server x5, aws-load-balancer-controller x5, coredns x2" in message


def test_the_controllers_requests_are_the_ones_the_chart_is_given(dev):
    from stackconfig.system_pods import KARPENTER_CONTROLLER_RESOURCES

    karpenter = dev.one("kubernetes:helm.sh/v3:Release", "addons-karpenter")
    assert karpenter.input("values.controller.resources") == KARPENTER_CONTROLLER_RESOURCES
    assert KARPENTER_CONTROLLER_RESOURCES["requests"] == {"cpu": "1", "memory": "1Gi"}


def test_the_program_warns_above_the_default_vcpu_quota(dev):
    (warning,) = [warning for warning in dev.warnings if "quota" in warning]
    assert "8 on-demand vCPUs of standard instance families, above 5" in warning
    assert "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances" in warning
    assert "the default value for new accounts" in warning
    assert "--quota-code L-1216C47A --region ap-northeast-1`" in warning


# --- the stack file itself ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, fragments",
    [
        (
            "config:\n  aws:region: us-east-1\n  eks-autoscaling:network: {cidr: 10.0.0.0/16\n",
            ["YAML syntax error at line 4, column 1", "flow mapping", "opened at line 3, column 28"],
        ),
        ("config:\n  - aws:region: us-east-1\n", ["`config` must be a map of keys to values", "not a list"]),
        ("- config\n- aws:region\n", ["the top level must be a map with a `config:` key, not a list"]),
        ("just some text\n", ["the top level must be a map", "not a string ('just some text')"]),
        ("config:\n\taws:region: us-east-1\n", ["YAML syntax error at line 2, column 1", "found character '\\t'"]),
    ],
    ids=["unclosed-brace", "config-is-a-list", "top-level-list", "top-level-scalar", "tab-indent"],
)
def test_a_malformed_stack_file_is_named_with_its_position(tmp_path, text, fragments):
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(text)
    with pytest.raises(StackConfigError) as failure:
        load_stack_file(path)
    message = str(failure.value)
    assert str(path) in message
    for fragment in fragments:
        assert fragment in message, message


def test_a_binary_stack_file_is_not_text(tmp_path):
    path = tmp_path / "Pulumi.bin.yaml"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    with pytest.raises(StackConfigError) as failure:
        load_stack_file(path)
    assert f"{path} is not a text file" in str(failure.value)


@pytest.mark.parametrize(
    "text, fragments",
    [
        ("confg:\n  aws:region: us-east-1\n", ["unknown top-level key 'confg' (did you mean `config`?)"]),
        (
            "config:\n  aws:region: us-east-1\nnotes: kept for later\n",
            ["unknown top-level key 'notes';", "holds only `config`, `encryptedkey`, `encryptionsalt`, `environment`"],
        ),
    ],
    ids=["typo", "unknown"],
)
def test_an_unknown_top_level_key_of_a_stack_file_is_refused(tmp_path, text, fragments):
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(text)
    with pytest.raises(StackConfigError) as failure:
        load_stack_file(path)
    message = str(failure.value)
    assert "aws:region" not in message and str(path) in message
    for fragment in fragments:
        assert fragment in message, message


def test_the_keys_pulumi_writes_to_a_stack_file_are_read(tmp_path):
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(
        "secretsprovider: passphrase\nencryptionsalt: v1:abc\nencryptedkey: xyz\nenvironment: [shared]\n"
        "config:\n  aws:region: us-east-1\n"
    )
    assert load_stack_file(path).region == "us-east-1"


def test_a_utf16_stack_file_is_named_as_such(tmp_path):
    path = tmp_path / "Pulumi.w.yaml"
    path.write_bytes("config:\n  aws:region: us-east-1\n".encode("utf-16"))
    with pytest.raises(StackConfigError) as failure:
        load_stack_file(path)
    assert f"{path} is UTF-16LE text, and YAML is read as UTF-8; save it as UTF-8" in str(failure.value)


def test_the_program_reports_a_malformed_stack_file_without_a_traceback(tmp_path):
    (tmp_path / "Pulumi.t.yaml").write_text("config: [oops\n")
    with pytest.raises(ProgramFailed) as failure:
        run_program("t", project_dir=tmp_path)
    assert "YAML syntax error at line 2, column 1" in str(failure.value)
    assert failure.value.recording.resources == []


MONITORING_BAD_INPUTS = [
    pytest.param({"enabled": "yes"}, ["monitoring.enabled", "valid boolean", "'yes'"], id="enabled-not-a-bool"),
    pytest.param({"prometeus": {}}, ["unknown key `monitoring.prometeus`", "prometheus"], id="typo"),
    pytest.param(
        {"namespace": "Monitoring"},
        ["monitoring.namespace", "'Monitoring' is not a namespace name"],
        id="namespace-case",
    ),
    pytest.param(
        {"namespace": "kube-monitoring"}, ["monitoring.namespace", "Kubernetes' own"], id="namespace-kube-prefix"
    ),
    pytest.param({"namespace": "default"}, ["monitoring.namespace", "'default'"], id="namespace-default"),
    pytest.param(
        {"namespace": "test-app"}, ["monitoring.namespace and app.namespace are both 'test-app'"], id="namespace-of-app"
    ),
    pytest.param(
        {"prometheus": {"retention": "7 days"}},
        ["monitoring.prometheus.retention", "not a Prometheus duration", "7d"],
        id="retention-not-a-duration",
    ),
    pytest.param(
        {"prometheus": {"retention": "30m"}},
        ["monitoring.prometheus.retention", "shorter than an hour"],
        id="retention-short",
    ),
    pytest.param(
        {"prometheus": {"storageLimit": "12Gi"}},
        ["monitoring.prometheus.storageLimit 12Gi", "half of nodeGroup.diskSize (20 GiB)"],
        id="storage-beyond-the-disk",
    ),
    pytest.param(
        {"prometheus": {"storageLimit": "512Mi"}},
        ["monitoring.prometheus.storageLimit", "below 1Gi"],
        id="storage-small",
    ),
    pytest.param(
        {"prometheus": {"scrapeInterval": "5s"}},
        ["monitoring.prometheus.scrapeInterval", "'5s'", "from 10s to 5m"],
        id="scrape-interval-short",
    ),
    pytest.param(
        {"prometheus": {"memoryRequest": "2Gi"}},
        ["monitoring.prometheus", "memoryLimit (1Gi) is below memoryRequest (2Gi)"],
        id="memory-limit-below-request",
    ),
    pytest.param(
        {"prometheus": {"cpuRequest": "lots"}},
        ["monitoring.prometheus.cpuRequest", "not a Kubernetes quantity"],
        id="cpu-not-a-quantity",
    ),
    pytest.param(
        {"prometheus": {"version": "latest"}}, ["monitoring.prometheus.version", "chart version"], id="chart-not-pinned"
    ),
    pytest.param({"grafana": {"version": "12"}}, ["monitoring.grafana.version", "'12'"], id="grafana-chart-not-pinned"),
    pytest.param(
        {"alerts": {"nodePoolUsagePercent": 150}},
        ["monitoring.alerts.nodePoolUsagePercent", "less than or equal to 100", "150"],
        id="usage-percent-above-100",
    ),
    pytest.param(
        {"alerts": {"nodeStartupSeconds": -1}},
        ["monitoring.alerts.nodeStartupSeconds", "greater than or equal to 0"],
        id="negative-node-startup",
    ),
    pytest.param(
        {"alerts": {"hpaAtMaxSeconds": 10}},
        ["monitoring.alerts.hpaAtMaxSeconds", "greater than or equal to 60"],
        id="hpa-for-short",
    ),
]


@pytest.mark.parametrize("monitoring, fragments", MONITORING_BAD_INPUTS)
def test_bad_monitoring_input_stops_before_any_resource(monitoring, fragments):
    with pytest.raises(ProgramFailed) as failure:
        run_program("dev", {"monitoring": {"enabled": True, **monitoring}})
    message = str(failure.value)
    assert message.startswith("invalid stack configuration")
    for fragment in fragments:
        assert fragment in message
    assert failure.value.recording.resources == []


def test_a_karpenter_version_without_bundled_dashboards_is_refused_with_monitoring(monkeypatch):
    from stackconfig import karpenter_dashboards

    monkeypatch.setattr(karpenter_dashboards, "bundled_karpenter_minors", lambda: ("1.13",))
    with pytest.raises(ProgramFailed) as failure:
        run_program("dev")
    assert "Karpenter's dashboards are bundled for Karpenter 1.13 only" in str(failure.value)
    assert "monitoring.enabled: false" in str(failure.value)
    run_program("dev", {"monitoring": {"enabled": False}})


# --- YAML the stack file may not hold, and values echoed cut ------------------------------------------


@pytest.mark.parametrize(
    "text, fragments",
    [
        (
            "config:\n  aws:region: us-east-1\n  eks-autoscaling:clusterName: a\n  eks-autoscaling:clusterName: b\n",
            ["key 'eks-autoscaling:clusterName' appears twice in one map, on line 3 and line 4", "remove one"],
        ),
        (
            "config:\n  aws:region: us-east-1\n  eks-autoscaling:nodeGroup:\n    minSize: 2\n    minSize: 3\n",
            ["key 'minSize' appears twice in one map, on line 4 and line 5"],
        ),
        (
            "config:\n  aws:region: us-east-1\n  eks-autoscaling:tags: &t {a: *t}\n",
            ["an alias refers to a value that contains it"],
        ),
        (
            "config:\n  aws:region: us-east-1\n  eks-autoscaling:capacity: {headroomPercent: .nan}\n",
            ["`capacity.headroomPercent`: must be a finite number, not nan"],
        ),
    ],
    ids=["duplicate-top-key", "duplicate-nested-key", "recursive-alias", "headroom-nan-in-yaml"],
)
def test_yaml_the_stack_file_may_not_hold_is_refused(tmp_path, text, fragments):
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(text)
    with pytest.raises(StackConfigError) as failure:
        load_stack_file(path)
    for fragment in fragments:
        assert fragment in str(failure.value), str(failure.value)


@pytest.mark.parametrize(
    "key, value",
    [
        ("eks-autoscaling:clusterName", "a" * 100_000),
        ("eks-autoscaling:network", {"cidr": "1" * 100_000}),
        ("eks-autoscaling:tags", {"t" * 100_000: "x"}),
        ("eks-autoscaling:nodeGroup", {"instanceTypes": ["m" * 100_000]}),
        ("aws:region", "r" * 100_000),
        ("eks-autoscaling:monitoring", {"enabled": True, "namespace": "n" * 100_000}),
        ("eks-autoscaling:monitoring", {"enabled": True, "prometheus": {"retention": "7" * 100_000}}),
        ("eks-autoscaling:network", {"zoneIds": ["z" * 100_000]}),
        ("eks-autoscaling:capacity", {"catalog": "c" * 100_000}),
        ("eks-autoscaling:capacity", {"spotDiscountPercent": "9" * 100_000}),
        ("eks-autoscaling:cluster", {"deployFromInsideVpc": "y" * 100_000}),
    ],
    ids=[
        "cluster-name",
        "cidr",
        "tag-key",
        "instance-type",
        "region",
        "monitoring-namespace",
        "prometheus-retention",
        "zone-ids",
        "catalog",
        "spot-discount",
        "deploy-from-inside-vpc",
    ],
)
def test_a_huge_value_is_quoted_cut(key, value):
    with pytest.raises(StackConfigError) as failure:
        parse_stack_config({"aws:region": "us-east-1", key: value})
    message = str(failure.value)
    assert "(100,00" in message and "characters)" in message
    assert len(message) < 2000


def _laughs(levels: int) -> str:
    lines = ["    l0: &l0 lol"] + [f"    l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, levels + 1)]
    return "\n".join(lines)


def test_a_billion_laughs_in_tags_is_refused_under_a_memory_and_time_bound(tmp_path):
    # Expanded, these tags would be billions of values (gigabytes, then a message of gigabytes).
    text = f"config:\n  aws:region: us-east-1\n  eks-autoscaling:tags:\n{_laughs(9)}\n    team: *l9\n"
    (tmp_path / "Pulumi.laughs.yaml").write_text(text)
    run = run_bounded(["-m", "sizing", "plan", "--stack", "laughs", "--project-dir", str(tmp_path)])
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert "uses aliases (*name) that repeat" in run.stderr and "more than the 10,000" in run.stderr
    assert len(run.stderr) < 1000 and run.cpu_seconds < 15 and run.max_rss_mib < 400, run


def test_a_billion_replicas_in_a_stack_is_refused_under_a_memory_and_time_bound(tmp_path):
    text = "config:\n  aws:region: us-east-1\n  eks-autoscaling:app: {hpa: {maxReplicas: 1000000000}}\n"
    (tmp_path / "Pulumi.big.yaml").write_text(text)
    run = run_bounded(["-m", "sizing", "plan", "--stack", "big", "--project-dir", str(tmp_path)])
    assert run.returncode == 2 and "`app.hpa.maxReplicas`: maxReplicas must be at most 100,000" in run.stderr
    assert run.cpu_seconds < 15 and run.max_rss_mib < 400, run
