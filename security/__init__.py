"""Security gates over the offline evaluation of the program.

`python -m security gates --stack dev` runs the project's own checks (IAM statements,
service-account trust, Pod Security "restricted", the policy pack's rules) on what the
program registers; `python -m security check` adds checkov on the plan's Kubernetes
manifests and parliament on the identity policies, each tool from its own virtualenv.
docs/security.md describes every gate and how findings are accepted.

Nothing in this package imports Pulumi at import time: the policy pack (policies/) reuses
`security.iam_checks` from its own environment.
"""
