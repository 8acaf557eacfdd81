"""The pack's policies: each rule of `eks_autoscaling_rules` as a mandatory ResourceValidationPolicy.

The wrappers only route: they pick the rule's resource types, merge the pack configuration
over the rule's defaults and report each message the rule returns. During a preview, a
value that is not known yet raises pulumi_policy's UnknownValueError when a rule reads it;
it is left to propagate so that the engine reports "can't run policy during preview" rather
than a verdict on a guess. The same rules run again with known values during `pulumi up`.
"""

from __future__ import annotations

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from policies.eks_autoscaling_rules import RULES, Rule

PACK_NAME = "eks-autoscaling"


def validation_for(rule: Rule):
    """The validate callback of `rule`."""

    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        if args.resource_type not in rule.resource_types:
            return
        config = {key: value for key, value in args.get_config().items() if key in rule.config_schema}
        for message in rule.violations(args.resource_type, args.props, config):
            report_violation(message, None)

    return validate


def policy_for(rule: Rule) -> ResourceValidationPolicy:
    return ResourceValidationPolicy(
        name=rule.name,
        description=rule.description,
        validate=validation_for(rule),
        enforcement_level=EnforcementLevel.MANDATORY,
        config_schema=PolicyConfigSchema(properties={k: dict(v) for k, v in rule.config_schema.items()})
        if rule.config_schema
        else None,
        remediation_steps=rule.remediation,
    )


POLICIES: list[ResourceValidationPolicy] = [policy_for(rule) for rule in RULES]
