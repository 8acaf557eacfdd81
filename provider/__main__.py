"""Entry point of the eks-autoscaling component package.

Pulumi runs this directory (`python provider <engine address>`) when a program that added the
package with `pulumi package add` needs the schema or builds an EksAutoscaling. The component's
code lives in the repository root, next to the stack program, so that is put on the import path.
"""

import sys
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parent.parent
if str(PROJECT_DIR) not in sys.path:
    sys.path.insert(0, str(PROJECT_DIR))

from pulumi.provider.experimental import component_provider_host  # noqa: E402

from components.package import COMPONENTS, PACKAGE_NAME, PACKAGE_VERSION  # noqa: E402

if __name__ == "__main__":
    component_provider_host(COMPONENTS, name=PACKAGE_NAME, version=PACKAGE_VERSION)
