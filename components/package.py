"""The component package: its name, version and components, and the schema Pulumi infers from them.

The plugin entry point (provider/__main__.py) serves exactly these components, and the checked-in
schema.json is what `package_schema()` returns, so SDKs generated from either agree.
"""

from __future__ import annotations

import json

import pulumi

from components.eks_autoscaling import EksAutoscaling

PACKAGE_NAME = "eks-autoscaling"
PACKAGE_VERSION = "0.1.0"
COMPONENTS: list[type[pulumi.ComponentResource]] = [EksAutoscaling]


def package_schema() -> dict:
    """The package schema as the plugin reports it to `pulumi package add`, through the SDK's own
    analyzer (which raises on a type it cannot express)."""
    from pulumi.provider.experimental.component import ComponentProvider

    provider = ComponentProvider(COMPONENTS, PACKAGE_NAME, version=PACKAGE_VERSION)
    schema: dict = json.loads(provider.schema or "{}")
    return schema
