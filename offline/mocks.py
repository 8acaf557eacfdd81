"""Realistic answers for the resources and invokes of this program.

Remote components (awsx, pulumi-eks) create no children under mocks, so their
outputs are made up here the way the real components would report them;
resource-typed outputs are real references to fake registrations, so the
program can read `cluster.eks_cluster.endpoint` as it does in a deployment.
Custom resources echo their inputs, plus the identifiers AWS would assign.
"""

from __future__ import annotations

import base64
import hashlib
import json

import pulumi
from pulumi.runtime.mocks import MockMonitor

from offline.pulumi_internals import remember_resource
from offline.wire import ResourceRef

ACCOUNT_ID = "123456789012"
# Stands in for the cluster's CA bundle; a plan shows it as the placeholder it is registered with.
FAKE_CERTIFICATE_AUTHORITY = base64.b64encode(b"no certificate authority: offline evaluation").decode()
# The availability zones of the regions the stacks use, name -> zone ID. Names map to zones per
# account; these are one account's mapping. us-east-1c is use1-az3, where EKS refuses cluster
# subnets; ap-northeast-1 has three zones for new accounts (apne1-az3 is closed to them).
REGION_ZONES = {
    "ap-northeast-1": {"ap-northeast-1a": "apne1-az4", "ap-northeast-1c": "apne1-az1", "ap-northeast-1d": "apne1-az2"},
    "us-east-1": {
        "us-east-1a": "use1-az2",
        "us-east-1b": "use1-az4",
        "us-east-1c": "use1-az3",
        "us-east-1d": "use1-az6",
        "us-east-1e": "use1-az1",
        "us-east-1f": "use1-az5",
    },
}
# What tests change to stand for a zone that is impaired at the moment (its ID), and instance
# types EC2 does not offer in a zone (zone ID -> types); EC2 offers every other type everywhere.
UNAVAILABLE_ZONE_IDS: set[str] = set()
NOT_OFFERED: dict[str, set[str]] = {}


def _short_hash(*parts: str, length: int = 8) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:length]


class ProjectMocks(pulumi.runtime.Mocks):
    def __init__(self, region: str, project: str, stack: str):
        self.region = region
        self.project = project
        self.stack = stack
        self.monitor: MockMonitor | None = None
        # Every value made up here -> what it stands for, so that a plan never presents
        # an invented identifier as a real one.
        self.invented: dict[str, str] = {}
        # (token, provider URN or None) of every invoke, in order.
        self.invokes: list[tuple[str, str | None]] = []
        # Resource name of each pulumi-eks cluster -> (cluster name, endpoint), for its methods.
        self.clusters: dict[str, tuple[str, str]] = {}

    def invent(self, value: str, label: str) -> str:
        self.invented.setdefault(value, label)
        return value

    # Invokes

    def call(self, args: pulumi.runtime.MockCallArgs):
        token = args.token
        self.invokes.append((token, args.provider.rsplit("::", 1)[0] if args.provider else None))
        if token == "aws:index/getAvailabilityZones:getAvailabilityZones":
            zones = self.zones()
            if args.args.get("state") == "available":
                zones = {name: zone_id for name, zone_id in zones.items() if zone_id not in UNAVAILABLE_ZONE_IDS}
            return {
                "id": self.region,
                "names": list(zones),
                "zoneIds": list(zones.values()),
                "groupNames": [self.region] * len(zones),
                **({"state": args.args["state"]} if args.args.get("state") else {}),
            }
        if token == "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings":
            (wanted,) = [entry["values"] for entry in args.args["filters"] if entry["name"] == "instance-type"]
            assert args.args.get("locationType") == "availability-zone-id", args.args
            offers = [
                (zone_id, instance_type)
                for zone_id in sorted(self.zones().values())
                for instance_type in wanted
                if instance_type not in NOT_OFFERED.get(zone_id, set())
            ]
            return {
                "id": self.region,
                "locations": [zone_id for zone_id, _ in offers],
                "instanceTypes": [instance_type for _, instance_type in offers],
                "locationTypes": ["availability-zone-id"] * len(offers),
            }
        if token == "aws:index/getPartition:getPartition":
            return {"id": "aws", "partition": "aws", "dnsSuffix": "amazonaws.com", "reverseDnsPrefix": "com.amazonaws"}
        if token == "aws:index/getCallerIdentity:getCallerIdentity":
            self.invent(ACCOUNT_ID, "<account id>")
            self.invent("AIDAEXAMPLE", "<caller user id>")
            return {
                "id": ACCOUNT_ID,
                "accountId": ACCOUNT_ID,
                "arn": f"arn:aws:iam::{ACCOUNT_ID}:user/ci",
                "userId": "AIDAEXAMPLE",
            }
        if token in ("aws:index/getRegion:getRegion",):
            return {
                "id": self.region,
                "name": self.region,
                "region": self.region,
                "endpoint": f"ec2.{self.region}.amazonaws.com",
            }
        if token == "eks:index:Cluster/getKubeconfig":
            # As pulumi-eks's generateKubeconfig renders it for the cluster the method is called on.
            name, endpoint = self.clusters[args.args["__self__"].urn.rsplit("::", 1)[-1]]
            return {
                "result": _kubeconfig(
                    name,
                    endpoint,
                    self.region,
                    profile=args.args.get("profileName"),
                    role_arn=args.args.get("roleArn"),
                )
            }
        return {}

    def zones(self) -> dict[str, str]:
        return REGION_ZONES.get(self.region) or {
            f"{self.region}{letter}": f"{self.region.replace('-', '')[:6]}-az{index + 1}"
            for index, letter in enumerate("abc")
        }

    # Resources

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        handler = getattr(self, "_" + _python_name(args.typ), None)
        if handler is not None:
            return handler(args)
        if not args.custom:
            return f"{args.name}-id", {}
        return self._custom(args)

    def _custom(self, args):
        resource_id, state = self._custom_state(args)
        if not args.typ.startswith("aws:"):
            return resource_id, state
        for key, value in state.items():
            if key not in args.inputs and isinstance(value, str) and key not in ("tagsAll",):
                self.invent(value, f"<{key} of {args.name}>")
        self.invent(resource_id, f"<id of {args.name}>")
        return resource_id, state

    def _custom_state(self, args):
        state = dict(args.inputs)
        package, module, kind = (args.typ.split(":") + ["", ""])[:3]
        resource_id = f"{args.name}-{_short_hash(args.typ, args.name)}"
        if package == "aws":
            physical_name = state.get("name") or resource_id
            state.setdefault("name", physical_name)
            state.setdefault("arn", self._arn(module, kind, physical_name))
            state.setdefault("tagsAll", state.get("tags") or {})
            if kind == "SecurityGroup":
                resource_id = f"sg-{_short_hash(args.name, length=17)}"
            if kind == "Queue":
                state.setdefault("url", f"https://sqs.{self.region}.amazonaws.com/{ACCOUNT_ID}/{physical_name}")
            if kind == "LaunchTemplate":
                resource_id = f"lt-{_short_hash(args.name, length=17)}"
                state.setdefault("latestVersion", 1)
                state.setdefault("defaultVersion", 1)
            if kind == "Role":
                state.setdefault("uniqueId", f"AROA{_short_hash(args.name, length=16).upper()}")
        elif package == "kubernetes" and isinstance(state.get("metadata"), dict):
            metadata = dict(state["metadata"])
            metadata.setdefault("name", resource_id)
            state["metadata"] = metadata
            resource_id = f"{metadata.get('namespace', '')}/{metadata['name']}".lstrip("/")
            if args.typ == "kubernetes:networking.k8s.io/v1:Ingress":
                state["status"] = {
                    "loadBalancer": {
                        "ingress": [
                            {
                                "hostname": self.invent(
                                    f"k8s-{metadata['name']}-{_short_hash(args.name)}.{self.region}.elb.amazonaws.com",
                                    f"<ALB hostname of {args.name}>",
                                )
                            }
                        ]
                    }
                }
        elif args.typ == "kubernetes:helm.sh/v3:Release":
            state.setdefault("name", args.name)
            state["status"] = {
                "name": state["name"],
                "namespace": state.get("namespace", "default"),
                "status": "deployed",
                "version": state.get("version"),
            }
        return resource_id, state

    def _arn(self, module: str, kind: str, name: str) -> str:
        service = module.split("/")[0]
        if service == "sqs":
            return f"arn:aws:sqs:{self.region}:{ACCOUNT_ID}:{name}"
        if service == "cloudwatch" and kind == "EventRule":
            return f"arn:aws:events:{self.region}:{ACCOUNT_ID}:rule/{name}"
        if service == "iam":
            return f"arn:aws:iam::{ACCOUNT_ID}:{kind[0].lower() + kind[1:]}/{name}"
        return f"arn:aws:{service}:{self.region}:{ACCOUNT_ID}:{kind.lower()}/{name}"

    def _remote_outputs(self, name: str, outputs: dict) -> dict:
        for key, value in outputs.items():
            values = value if isinstance(value, list) else [value]
            for index, item in enumerate(values):
                if isinstance(item, str) and key not in ("kubeconfigJson",):
                    suffix = f"[{index}]" if isinstance(value, list) else ""
                    self.invent(item, f"<{key}{suffix} of {name}>")
        return outputs

    def _awsx_ec2_Vpc(self, args):
        zones = args.inputs.get("availabilityZoneNames") or ["z1", "z2"]
        vpc_id = f"vpc-{_short_hash(args.name, length=17)}"
        public = [f"subnet-pub{_short_hash(args.name, zone, length=14)}" for zone in zones]
        private = [f"subnet-prv{_short_hash(args.name, zone, length=14)}" for zone in zones]
        return f"{args.name}-id", self._remote_outputs(
            args.name,
            {
                "vpcId": vpc_id,
                "publicSubnetIds": public,
                "privateSubnetIds": private,
                "isolatedSubnetIds": [],
            },
        )

    def _eks_index_Cluster(self, args):
        name = args.inputs.get("name") or args.name
        oidc_id = _short_hash(name, length=32).upper()
        issuer = f"oidc.eks.{self.region}.amazonaws.com/id/{oidc_id}"
        cluster_sg = f"sg-{_short_hash(name, 'cluster', length=17)}"
        endpoint = f"https://{oidc_id}.gr7.{self.region}.eks.amazonaws.com"
        eks_cluster = self._fake(
            "aws:eks/cluster:Cluster",
            f"{args.name}-eksCluster",
            name,
            {
                "name": name,
                "arn": f"arn:aws:eks:{self.region}:{ACCOUNT_ID}:cluster/{name}",
                "endpoint": endpoint,
                "version": args.inputs.get("version"),
                "roleArn": f"arn:aws:iam::{ACCOUNT_ID}:role/{name}-eksRole",
                "vpcConfig": {"clusterSecurityGroupId": cluster_sg, "subnetIds": []},
                "identities": [{"oidcs": [{"issuer": f"https://{issuer}"}]}],
            },
        )
        # pulumi-eks's `kubeconfig` output leaves the profile out on purpose (its includeProfile false).
        kubeconfig = _kubeconfig(
            name, endpoint, self.region, role_arn=(args.inputs.get("providerCredentialOpts") or {}).get("roleArn")
        )
        self.clusters[args.name] = (name, endpoint)
        self.invent(FAKE_CERTIFICATE_AUTHORITY, f"<certificate-authority-data of {args.name}>")
        self.invent(oidc_id, f"<OIDC id of {args.name}>")
        self.invent(endpoint, f"<endpoint of {args.name}>")
        return f"{args.name}-id", self._remote_outputs(
            args.name,
            {
                "eksCluster": eks_cluster,
                "kubeconfig": json.loads(kubeconfig),
                "kubeconfigJson": kubeconfig,
                "oidcProviderArn": f"arn:aws:iam::{ACCOUNT_ID}:oidc-provider/{issuer}",
                "oidcProviderUrl": f"https://{issuer}",
                "oidcIssuer": issuer,
                "clusterSecurityGroupId": cluster_sg,
                "nodeSecurityGroupId": cluster_sg,
            },
        )

    def _eks_index_ManagedNodeGroup(self, args):
        group_name = self.invent(f"{args.name}-{_short_hash(args.name)}", f"<name of {args.name}>")
        node_group = self._fake(
            "aws:eks/nodeGroup:NodeGroup",
            f"{args.name}-nodeGroup",
            group_name,
            {
                "nodeGroupName": group_name,
                "arn": f"arn:aws:eks:{self.region}:{ACCOUNT_ID}:nodegroup/{group_name}",
                "status": "ACTIVE",
            },
        )
        return f"{args.name}-id", {"nodeGroup": node_group}

    def _random_index_randomPassword_RandomPassword(self, args):
        # A stand-in of the requested length and alphabet, the same on every run; the provider
        # marks `result` secret, and the plan shows it as such.
        length = int(args.inputs.get("length", 16))
        result = self.invent(("offline" + _short_hash(args.name, length=64))[:length], f"<password of {args.name}>")
        return f"{args.name}-id", {**args.inputs, "result": result}

    def _fake(self, type_: str, name: str, resource_id: str, state: dict) -> ResourceRef:
        """A resource the real component would create, known to the monitor but not recorded
        as one of the program's own registrations."""
        urn = f"urn:pulumi:{self.stack}::{self.project}::{type_}::{name}"
        assert self.monitor is not None, "the mocks are attached to a monitor before the program runs"
        remember_resource(self.monitor, urn, resource_id, {"id": resource_id, **state})
        return ResourceRef(urn, resource_id)


def _python_name(type_token: str) -> str:
    return type_token.replace(":", "_").replace("/", "_").replace(".", "_").replace("-", "_")


def _kubeconfig(
    name: str, endpoint: str, region: str, *, profile: str | None = None, role_arn: str | None = None
) -> str:
    """A kubeconfig as pulumi-eks renders one (nodejs/eks/cluster/cluster.ts, generateKubeconfig):
    one cluster `kubernetes`, one user `aws` whose token comes from `aws eks get-token`, with the
    role and the profile as its arguments."""
    token_args = ["--region", region, "eks", "get-token", "--cluster-name", name, "--output", "json"]
    if role_arn:
        token_args += ["--role", role_arn]
    if profile:
        token_args += ["--profile", profile]
    return json.dumps(
        {
            "apiVersion": "v1",
            "clusters": [
                {
                    "cluster": {"server": endpoint, "certificate-authority-data": FAKE_CERTIFICATE_AUTHORITY},
                    "name": "kubernetes",
                }
            ],
            "contexts": [{"context": {"cluster": "kubernetes", "user": "aws"}, "name": "aws"}],
            "current-context": "aws",
            "kind": "Config",
            "users": [
                {
                    "name": "aws",
                    "user": {
                        "exec": {
                            "apiVersion": "client.authentication.k8s.io/v1beta1",
                            "command": "aws",
                            "args": token_args,
                            "env": [
                                {
                                    "name": "KUBERNETES_EXEC_INFO",
                                    "value": '{"apiVersion": "client.authentication.k8s.io/v1beta1"}',
                                }
                            ],
                        }
                    },
                }
            ],
        }
    )
