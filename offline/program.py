"""Running `__main__.py` of the project for one stack under the recording monitor."""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import runpy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pulumi

from offline.mocks import ProjectMocks
from offline.monitor import RecordingMonitor
from offline.pulumi_internals import forget_root_resource
from offline.recording import Recording
from offline.wire import Unknown
from stackconfig.errors import StackConfigError
from stackconfig.load import read_stack_file

PROJECT_DIR = Path(__file__).resolve().parents[1]
PROJECT = "eks-autoscaling"
DELETE = object()  # an override value that removes the key
# Values a stack file leaves empty for its operator to fill in before the first `up`, which the
# program refuses until then (prod's `cluster.publicAccessCidrs`). The offline evaluation stands in
# for them, so that the rest of the stack can be reviewed, and the plan shows the placeholder, not
# the stand-in: (section, key) -> (stand-in, placeholder). 192.0.0.9/32 is an IANA anycast address
# (RFC 7723), no operator's network.
OPERATOR_VALUES = {
    ("cluster", "publicAccessCidrs"): (["192.0.0.9/32"], "<the operator's address: cluster.publicAccessCidrs>"),
}


class ProgramFailed(Exception):
    """The program stopped; `recording` holds whatever it registered before."""

    def __init__(self, message: str, recording: Recording):
        super().__init__(message)
        self.recording = recording


def stack_config(
    stack: str,
    overrides: Mapping[str, Any] | None = None,
    project_dir: Path = PROJECT_DIR,
    project: str = PROJECT,
    stood_in: dict[str, str] | None = None,
) -> dict:
    """The `config:` map of `Pulumi.<stack>.yaml` with overrides merged in.

    Override keys without a namespace are project keys; map values merge into the
    stack's map, other values replace it; `DELETE` removes the key. stood_in: when given, the
    operator's values the file leaves empty take their stand-ins (OPERATOR_VALUES), before the
    overrides, and each stand-in's text is added with its placeholder.
    """
    config = copy.deepcopy(read_stack_file(project_dir / f"Pulumi.{stack}.yaml"))
    if stood_in is not None:
        for (section, key), (value, placeholder) in OPERATOR_VALUES.items():
            values = config.get(f"{project}:{section}")
            if isinstance(values, dict) and values.get(key) == []:
                values[key] = copy.deepcopy(value)
                for text in value:
                    stood_in[text] = placeholder
    for key, value in (overrides or {}).items():
        full_key = key if ":" in key else f"{project}:{key}"
        if value is DELETE:
            config.pop(full_key, None)
        elif isinstance(value, dict) and isinstance(config.get(full_key), dict):
            config[full_key] = _merge(config[full_key], value)
        else:
            config[full_key] = value
    return config


def run_program(
    stack: str = "dev",
    overrides: Mapping[str, Any] | None = None,
    project_dir: Path = PROJECT_DIR,
    project: str = PROJECT,
    *,
    operator_values: bool = True,
) -> Recording:
    """Run the real program with a stack's config under mocks; raise ProgramFailed if it stops.
    project_dir and project: another program (the examples) with its own stack files.
    operator_values: stand in for the values the stack file leaves to its operator
    (OPERATOR_VALUES); False runs the file as it is, as `pulumi up` would."""
    stood_in: dict[str, str] = {}
    try:
        config = stack_config(stack, overrides, project_dir, project, stood_in if operator_values else None)
    except StackConfigError as error:
        raise ProgramFailed(str(error), Recording()) from None
    raw = {key: value if isinstance(value, str) else json.dumps(value) for key, value in config.items()}
    recording = Recording()
    mocks = ProjectMocks(region=str(config.get("aws:region", "us-east-1")), project=project, stack=stack)
    for text, placeholder in stood_in.items():
        mocks.invent(text, placeholder)
    monitor = RecordingMonitor(mocks, recording.add)
    mocks.monitor = monitor

    forget_root_resource()
    pulumi.runtime.set_all_config(raw, secret_keys=[])
    pulumi.runtime.set_mocks(
        mocks, project=project, stack=stack, preview=False, monitor=monitor, logger=_engine_log(recording)
    )
    outputs: dict = {}

    @pulumi.runtime.test
    def program():
        runpy.run_path(str(project_dir / "__main__.py"), run_name="__main__")
        stack_resource = pulumi.runtime.get_root_resource()
        exported = dict(getattr(stack_resource, "outputs", {}) or {})
        return pulumi.Output.all(**{name: _resolve(value) for name, value in exported.items()}).apply(outputs.update)

    try:
        program()
    except pulumi.RunError as error:
        raise ProgramFailed(str(error), recording) from None
    finally:
        recording.component_outputs = monitor.component_outputs
        recording.invented = dict(mocks.invented)
        recording.invokes = list(mocks.invokes)
        recording.stood_in = dict(stood_in)
    for name, (value, secret) in outputs.items():
        recording.outputs[name] = value
        if secret:
            recording.secret_outputs.add(name)
    return recording


class _WarningsOf(logging.Handler):
    def __init__(self, recording: Recording):
        super().__init__(level=logging.WARNING)
        self.recording = recording

    def emit(self, record: logging.LogRecord) -> None:
        self.recording.warnings.append(record.getMessage())


def _engine_log(recording: Recording) -> logging.Logger:
    """The mock engine's log: warnings go to the recording (and nowhere else)."""
    logger = logging.getLogger(f"offline.engine.{id(recording)}")
    logger.handlers[:] = [_WarningsOf(recording)]
    logger.propagate = False
    logger.setLevel(logging.WARNING)
    return logger


def _resolve(value: Any) -> pulumi.Output:
    """An output that resolves to (value, is_secret), unknowns shown as such."""
    output = pulumi.Output.from_input(value)

    async def resolve():
        known = await output.is_known()
        secret = await output.is_secret()
        return (await output.future() if known else Unknown(), secret)

    return pulumi.Output.from_input(asyncio.ensure_future(resolve()))


def _merge(base: dict, extra: Mapping) -> dict:
    merged = dict(base)
    for key, value in extra.items():
        if value is DELETE:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged
