"""Capacity planning for Karpenter NodePools.

A small numerical library, independent of Pulumi: a vector bin-packing solver
(`sizing.binpack.solver`), an instance-type catalog with Karpenter's allocatable model,
a simulation of Karpenter's provisioning, and the NodePool limits policy.

Units throughout: cpu in millicores, memory in MiB, pods as a count, prices in
USD/hour.
"""
