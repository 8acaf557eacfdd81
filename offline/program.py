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
) -> dict:
    """The `config:` map of `Pulumi.<stack>.yaml` with overrides merged in.

    Override keys without a namespace are project keys; map values merge into the
    stack's map, other values replace it; `DELETE` removes the key.
    """
    config = copy.deepcopy(read_stack_file(project_dir / f"Pulumi.{stack}.yaml"))
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
) -> Recording:
    """Run the real program with a stack's config under mocks; raise ProgramFailed if it stops.
    project_dir and project: another program (the examples) with its own stack files."""
    try:
        config = stack_config(stack, overrides, project_dir, project)
    except StackConfigError as error:
        raise ProgramFailed(str(error), Recording()) from None
    raw = {key: value if isinstance(value, str) else json.dumps(value) for key, value in config.items()}
    recording = Recording()
    mocks = ProjectMocks(region=str(config.get("aws:region", "us-east-1")), project=project, stack=stack)
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
