"""eks-autoscaling: EKS with pods scaled by the HPA and nodes scaled by Karpenter.

The stack program is the first user of the EksAutoscaling component: it reads the stack
configuration, builds the component from it and exports the component's outputs.
"""

import pulumi
import pulumi_aws as aws

from components.eks_autoscaling import EksAutoscaling
from stackconfig.deployment import args_from_config, plan_deployment
from stackconfig.errors import StackConfigError
from stackconfig.load import load_from_pulumi

# Everything that can reject the configuration runs before the first resource is registered.
try:
    config = load_from_pulumi()
    plan_deployment(config, aws.get_availability_zones(state="available").names)
except StackConfigError as error:
    raise pulumi.RunError(str(error)) from None

aws_provider = aws.Provider(
    "aws",
    region=config.region,
    default_tags=aws.ProviderDefaultTagsArgs(tags=config.resource_tags),
)
autoscaling = EksAutoscaling(
    "eks-autoscaling",
    args_from_config(config),
    opts=pulumi.ResourceOptions(providers={"aws": aws_provider}),
    keep_stack_resource_names=True,
)

for output_name, value in autoscaling.stack_outputs().items():
    pulumi.export(output_name, value)
