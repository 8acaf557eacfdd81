"""IAM documents of the stack, as plain dicts.

Nothing here talks to AWS or imports Pulumi: each function takes plain values
(ARNs, names, versions) and returns the JSON document IAM expects, so the
Pulumi components call them inside `Output.all(...).apply(...)` and tests
check them directly.

Modules:
- `iam.trust`: IRSA, Pod Identity and EC2 trust policies.
- `iam.karpenter`: Karpenter controller policies, node role policies, version support.
- `iam.interruption`: Karpenter's interruption queue policy, EventBridge rules and names.
- `iam.load_balancer_controller`: the AWS Load Balancer Controller's published policy.
- `iam.documents`: policy size and security checks.
"""
