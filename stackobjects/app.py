"""The test workload's Kubernetes objects as plain dicts.

The objects start from the YAML files in `manifests/test-app/`, which hold the
reference values and can be applied with kubectl as they are. The values that
the stack configuration or the program decides are then written over them.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from pathlib import Path

import yaml

from stackconfig.app import AppConfig, check_alb_tags

MANIFEST_DIR = Path(__file__).resolve().parent.parent / "manifests" / "test-app"
# The numbers make `kubectl apply -f manifests/test-app/` create the namespace first, and the
# network policy and disruption budget before the pods they protect.
MANIFEST_FILES = (
    "00-namespace.yaml",
    "10-networkpolicy.yaml",
    "20-poddisruptionbudget.yaml",
    "30-deployment.yaml",
    "40-service.yaml",
    "50-horizontalpodautoscaler.yaml",
    "60-ingress.yaml",
)
NAME_LABEL = "app.kubernetes.io/name"
NODEPOOL_LABEL = "karpenter.sh/nodepool"
ALB_ANNOTATION_PREFIX = "alb.ingress.kubernetes.io/"
# On the Ingress, for the security checks, which see objects, not the stack configuration: "true"
# when the stack accepts an internet-facing ALB open to every address.
OPEN_TO_INTERNET_ANNOTATION = "eks-autoscaling/app.ingress.acknowledgeOpenToInternet"
# The safe loader, in its C implementation when PyYAML was built with libyaml.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_manifest(path: Path) -> dict:
    """The single Kubernetes object in a YAML file."""
    documents = [document for document in yaml.load_all(path.read_text(), Loader=_YAML_LOADER) if document is not None]
    if len(documents) != 1:
        raise ValueError(f"{path} must hold exactly one object, found {len(documents)}")
    return documents[0]


def alb_tags_annotation(tags: Mapping[str, str]) -> str:
    """The `alb.ingress.kubernetes.io/tags` value: `k1=v1,k2=v2`, sorted by key so it never churns."""
    check_alb_tags(dict(tags))
    return ",".join(f"{key}={tags[key]}" for key in sorted(tags))


def app_objects(app: AppConfig, *, nodepool_name: str, vpc_cidr: str, tags: Mapping[str, str]) -> list[dict]:
    """Namespace, NetworkPolicy, PodDisruptionBudget, Deployment, Service, HPA and Ingress, in that order.

    nodepool_name: the Karpenter NodePool whose nodes run the pods.
    vpc_cidr: the VPC's CIDR block, the only source allowed to reach the pods.
    tags: the stack's tags, put on the ALB together with `app.ingress.tags` (which win).
    """
    try:
        ipaddress.ip_network(vpc_cidr, strict=True)
    except ValueError:
        raise ValueError(f"vpc_cidr {vpc_cidr!r} is not a CIDR block such as 10.0.0.0/16") from None
    if not nodepool_name:
        raise ValueError("nodepool_name is empty; pass the NodePool's name")
    builders = {
        "00-namespace.yaml": lambda obj: _namespace(obj, app),
        "10-networkpolicy.yaml": lambda obj: _network_policy(obj, app, vpc_cidr),
        "20-poddisruptionbudget.yaml": lambda obj: _pod_disruption_budget(obj, app),
        "30-deployment.yaml": lambda obj: _deployment(obj, app, nodepool_name),
        "40-service.yaml": lambda obj: _service(obj, app),
        "50-horizontalpodautoscaler.yaml": lambda obj: _horizontal_pod_autoscaler(obj, app),
        "60-ingress.yaml": lambda obj: _ingress(obj, app, {**tags, **app.ingress.tags}),
    }
    return [builders[filename](load_manifest(MANIFEST_DIR / filename)) for filename in MANIFEST_FILES]


# The function's name starts with "test_"; keep pytest from collecting it when a test imports it.


def _name_and_labels(obj: dict, app: AppConfig) -> dict:
    metadata = obj["metadata"]
    metadata["name"] = app.name
    metadata["namespace"] = app.namespace
    metadata["labels"][NAME_LABEL] = app.name
    return obj


def _pod_selector(app: AppConfig) -> dict:
    return {"matchLabels": {NAME_LABEL: app.name}}


def _namespace(obj: dict, app: AppConfig) -> dict:
    obj["metadata"]["name"] = app.namespace
    return obj


def _deployment(obj: dict, app: AppConfig, nodepool_name: str) -> dict:
    _name_and_labels(obj, app)
    spec = obj["spec"]
    spec["selector"] = _pod_selector(app)
    spec["strategy"]["rollingUpdate"]["maxSurge"] = f"{app.max_surge_percent}%"
    pod = spec["template"]
    pod["metadata"]["labels"][NAME_LABEL] = app.name
    pod["spec"]["nodeSelector"] = {NODEPOOL_LABEL: nodepool_name}
    (container,) = pod["spec"]["containers"]
    container["image"] = app.image
    container["resources"] = {
        "requests": {"cpu": app.cpu_request, "memory": app.memory_request},
        "limits": {"cpu": app.cpu_limit, "memory": app.memory_limit},
    }
    container["readinessProbe"]["httpGet"]["path"] = app.health_check_path
    container["livenessProbe"]["httpGet"]["path"] = app.health_check_path
    return obj


def _service(obj: dict, app: AppConfig) -> dict:
    _name_and_labels(obj, app)
    obj["spec"]["selector"] = {NAME_LABEL: app.name}
    return obj


def _ingress(obj: dict, app: AppConfig, tags: Mapping[str, str]) -> dict:
    _name_and_labels(obj, app)
    annotations = obj["metadata"]["annotations"]
    annotations[ALB_ANNOTATION_PREFIX + "scheme"] = app.ingress.scheme
    annotations[ALB_ANNOTATION_PREFIX + "inbound-cidrs"] = ",".join(app.ingress.inbound_cidrs)
    if app.ingress.acknowledge_open_to_internet:
        annotations[OPEN_TO_INTERNET_ANNOTATION] = "true"
    annotations[ALB_ANNOTATION_PREFIX + "healthcheck-path"] = app.health_check_path
    if tags:
        annotations[ALB_ANNOTATION_PREFIX + "tags"] = alb_tags_annotation(tags)
    else:
        del annotations[ALB_ANNOTATION_PREFIX + "tags"]
    for rule in obj["spec"]["rules"]:
        for path in rule["http"]["paths"]:
            path["backend"]["service"]["name"] = app.name
    return obj


def _horizontal_pod_autoscaler(obj: dict, app: AppConfig) -> dict:
    _name_and_labels(obj, app)
    hpa = app.hpa
    spec = obj["spec"]
    spec["scaleTargetRef"]["name"] = app.name
    spec["minReplicas"] = hpa.min_replicas
    spec["maxReplicas"] = hpa.max_replicas
    spec["metrics"] = [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": hpa.target_cpu_utilization_percent},
            },
        }
    ]
    spec["behavior"]["scaleDown"] = {
        "stabilizationWindowSeconds": hpa.scale_down.stabilization_window_seconds,
        "policies": [
            {"type": "Percent", "value": hpa.scale_down.percent, "periodSeconds": hpa.scale_down.period_seconds}
        ],
    }
    return obj


def _pod_disruption_budget(obj: dict, app: AppConfig) -> dict:
    _name_and_labels(obj, app)
    obj["spec"]["selector"] = _pod_selector(app)
    return obj


def _network_policy(obj: dict, app: AppConfig, vpc_cidr: str) -> dict:
    _name_and_labels(obj, app)
    obj["spec"]["podSelector"] = _pod_selector(app)
    (from_vpc,) = obj["spec"]["ingress"]
    from_vpc["from"] = [{"ipBlock": {"cidr": vpc_cidr}}]
    return obj
