"""Entry point of the eks-autoscaling component package.

Pulumi runs this directory (`python provider <engine address>`) when a program that added the
package with `pulumi package add` needs the schema or builds an EksAutoscaling. The component's
code lives in the repository root, next to the stack program, so that is put on the import path.
"""

import sys

# Before anything that needs it: the component's code uses Python 3.11 (its requirements too).
if sys.version_info < (3, 11):  # noqa: UP036 -- this file must run on the Python it refuses
    sys.exit(
        "error: the eks-autoscaling component package needs Python 3.11 or later, and this is Python "
        f'{sys.version_info[0]}.{sys.version_info[1]} ({sys.executable}); see docs/component.md, "Requirements"'
    )

from pathlib import Path  # noqa: E402

PROJECT_DIR = Path(__file__).resolve().parent.parent
if str(PROJECT_DIR) not in sys.path:
    sys.path.insert(0, str(PROJECT_DIR))

from pulumi.provider.experimental import component_provider_host  # noqa: E402

from components.package import COMPONENTS, PACKAGE_NAME, PACKAGE_VERSION  # noqa: E402

if __name__ == "__main__":
    component_provider_host(COMPONENTS, name=PACKAGE_NAME, version=PACKAGE_VERSION)
