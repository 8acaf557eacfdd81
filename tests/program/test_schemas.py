"""Every Kubernetes object the program creates, as recorded for each stack, validates against the
Kubernetes schema of the stack's cluster version and, for Karpenter's kinds, the CRDs of the pinned
Karpenter release."""

import pytest

from offline import run_program
from offline.plan import kubernetes_objects
from offline.program import PROJECT_DIR
from stackconfig.load import load_stack_file
from tests import schemas

STACKS = sorted(path.name[len("Pulumi.") : -len(".yaml")] for path in PROJECT_DIR.glob("Pulumi.*.yaml"))
KARPENTER_KINDS = {("karpenter.sh/v1", "NodePool"), ("karpenter.k8s.aws/v1", "EC2NodeClass")}


@pytest.fixture(scope="module")
def validators():
    return schemas.crd_validators()


@pytest.mark.parametrize("stack", STACKS)
def test_every_object_of_the_stack_validates(stack, validators):
    config = load_stack_file(PROJECT_DIR / f"Pulumi.{stack}.yaml")
    version = config.cluster.version
    objects = [document for _, document in kubernetes_objects(run_program(stack))]
    kinds = {(obj["apiVersion"], obj["kind"]) for obj in objects}
    # prod leaves the test app out: its Deployment, Ingress and the rest are not there to check.
    assert kinds >= KARPENTER_KINDS and (("apps/v1", "Deployment") in kinds) == config.deploy_test_app
    for obj in objects:
        if (obj["apiVersion"], obj["kind"]) in KARPENTER_KINDS:
            schemas.validate_crd(validators, obj)
        else:
            assert schemas.validate_kubernetes(obj, f"{version}.0") == version, schemas.label(obj)


def test_a_recorded_object_with_a_bad_field_is_caught(dev, validators):
    (node_pool,) = [doc for _, doc in kubernetes_objects(dev) if doc["kind"] == "NodePool"]
    node_pool["spec"]["limits"]["memory"] = "1000GB"
    with pytest.raises(AssertionError, match="limits"):
        schemas.validate_crd(validators, node_pool)


def test_a_recorded_object_breaking_a_cel_rule_is_caught(dev, validators):
    (node_class,) = [doc for _, doc in kubernetes_objects(dev) if doc["kind"] == "EC2NodeClass"]
    node_class["spec"]["tags"]["karpenter.sh/nodeclaim"] = "x"
    with pytest.raises(
        AssertionError, match="spec.tags: tag contains a restricted tag matching karpenter.sh/nodeclaim"
    ):
        schemas.validate_crd(validators, node_class)
