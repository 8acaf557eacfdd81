"""Kubernetes objects the command-line tests plan: a small NodePool of the m5 family."""

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
