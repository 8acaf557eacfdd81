"""The eks-autoscaling policy pack, served to the Pulumi CLI: `pulumi up --policy-pack policies`.

The CLI runs this file with the pack's directory first on sys.path. The rules reuse the
project's IAM checks (`iam`, `security.iam_checks`: standard library only), so the project
root goes on the path too. Constructing PolicyPack starts the analyzer's gRPC server and
blocks; nothing else may import this module.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402

from policies.eks_autoscaling_policies import PACK_NAME, POLICIES  # noqa: E402

PolicyPack(
    name=PACK_NAME,
    enforcement_level=EnforcementLevel.MANDATORY,
    policies=POLICIES,
    description="EKS endpoint, audit logs, service-account trust, IMDSv2, node addresses and secrets encryption.",
)
