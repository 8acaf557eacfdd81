"""A PEP 517 build backend that builds nothing: every hook stops pip with the reason.

pip reaches it only on a Python older than 3.11 (the marker in ../requirements.txt), and before the
project's pinned requirements, which have no release for such a Python and would fail with pip's
own, less helpful message. Kept to Python 3.6 syntax: it runs on the Python it refuses.
"""

import sys

MESSAGE = (
    "the eks-autoscaling component package needs Python 3.11 or later, and this is Python {major}.{minor} "
    "({executable}). Install a newer Python, delete the plugin's virtualenv (provider/venv), and run "
    "`pulumi package add` again with that Python first on PATH as python3, or named in PULUMI_PYTHON_CMD "
    "(for example PULUMI_PYTHON_CMD=python3.12)."
)


def _refuse(*args, **kwargs):
    major, minor = sys.version_info[:2]
    raise SystemExit("error: " + MESSAGE.format(major=major, minor=minor, executable=sys.executable))


get_requires_for_build_wheel = _refuse
prepare_metadata_for_build_wheel = _refuse
build_wheel = _refuse
get_requires_for_build_sdist = _refuse
build_sdist = _refuse
