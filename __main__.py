"""eks-autoscaling: EKS with pods scaled by the HPA and nodes scaled by Karpenter.

The stack program is the first user of the EksAutoscaling component: it reads the stack
configuration, builds the component from it and exports the component's outputs.
"""

from typing import cast

import pulumi

from components.aws_provider import look_up_account, stack_aws_provider
from components.eks_autoscaling import EksAutoscaling
from components.eks_autoscaling_args import EksAutoscalingArgs
from stackconfig.aws_provider import parse_aws_settings
from stackconfig.errors import StackConfigError
from stackconfig.load import load_from_pulumi, pulumi_config_values
from stackplan.deployment import args_from_config, check_api_endpoint, check_aws_auth_sign_in, plan_deployment

# Everything that can reject the configuration runs before the first resource is registered, but
# for the checks that need the region's zones: they follow the AWS provider, which creates nothing.
try:
    config = load_from_pulumi()
    aws_settings = parse_aws_settings(pulumi_config_values())
    check_api_endpoint(config)
    check_aws_auth_sign_in(config.cluster.authentication_mode, aws_settings.kubeconfig_sign_in)
except StackConfigError as error:
    raise pulumi.RunError(str(error)) from None
aws_provider = stack_aws_provider("aws", config.region, aws_settings, config.resource_tags)
try:
    account = look_up_account(aws_provider, config.region, config.node_group.instance_types)
    plan_deployment(config, account.region_zones)
except StackConfigError as error:
    raise pulumi.RunError(str(error)) from None

autoscaling = EksAutoscaling(
    "eks-autoscaling",
    cast(EksAutoscalingArgs, args_from_config(config, aws_settings)),
    opts=pulumi.ResourceOptions(providers={"aws": aws_provider}),
    keep_stack_resource_names=True,
)

for output_name, value in autoscaling.stack_outputs().items():
    pulumi.export(output_name, value)
