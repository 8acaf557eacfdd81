"""Kubernetes objects the command-line tests plan: a small NodePool of the m5 family, and workloads."""

import textwrap

NODE_POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}
        - {key: karpenter.k8s.aws/instance-size, operator: In, values: [large, xlarge]}
"""


def deployment(name="web", replicas=3, kind="Deployment", namespace="default"):
    """A workload of 100m / 64Mi pods labelled `app: <name>`."""
    return textwrap.dedent(f"""\
        apiVersion: apps/v1
        kind: {kind}
        metadata: {{name: {name}, namespace: {namespace}}}
        spec:
          replicas: {replicas}
          template:
            metadata: {{labels: {{app: {name}}}}}
            spec:
              containers: [{{name: app, resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}}}]
        """)
