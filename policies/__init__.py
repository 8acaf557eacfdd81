"""The CrossGuard policy pack of this project (`pulumi up --policy-pack policies`).

`eks_autoscaling_rules` holds the rules as plain functions; `eks_autoscaling_policies`
wraps them for pulumi-policy; `__main__.py` serves them as a pack. See docs/security.md.
"""
