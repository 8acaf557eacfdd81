"""The two files that accept tool findings, each entry with the reason it is accepted.

- `security/checkov-skips.yaml`: checkov checks skipped on the plan's Kubernetes manifests.
- `security/parliament-ignore.yaml`: parliament findings accepted on the identity policies.

Both are YAML lists. An entry without a reason, with an unknown key or naming the same thing
twice stops the gates before any tool runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import yaml

SECURITY_DIR = Path(__file__).resolve().parent
CHECKOV_SKIPS_FILE = SECURITY_DIR / "checkov-skips.yaml"
PARLIAMENT_IGNORE_FILE = SECURITY_DIR / "parliament-ignore.yaml"

CHECKOV_KUBERNETES_CHECK = re.compile(r"^CKV2?_K8S_\d+$")
PARLIAMENT_ISSUE = re.compile(r"^[A-Z][A-Z0-9_]*$")
IAM_ACTION = re.compile(r"^[a-z0-9-]+:[A-Za-z0-9]+$")
# A reason says why the finding is acceptable here, which takes more than a word or two.
MINIMUM_REASON_LENGTH = 40


class SuppressionFileError(Exception):
    def __init__(self, path: Path, problems: list[str]):
        super().__init__(f"{path}:\n" + "\n".join(f"  - {problem}" for problem in problems))
        self.path = path
        self.problems = problems


@dataclass(frozen=True)
class CheckovSkip:
    check: str
    title: str
    reason: str


@dataclass(frozen=True)
class ParliamentIgnore:
    """A parliament finding accepted on one policy: its issue code and the exact set of actions
    it names; `statement` (a Sid) and `condition` narrow it further when given."""

    policy: str
    issue: str
    actions: frozenset[str]
    reason: str
    statement: Optional[str] = None
    condition: Optional[str] = None

    def describe(self) -> str:
        where = f"{self.policy}" + (f" {self.statement}" if self.statement else "")
        extra = f" condition {self.condition}" if self.condition else ""
        return f"{self.issue} on {where}: {', '.join(sorted(self.actions))}{extra}"


def load_checkov_skips(path: Path = CHECKOV_SKIPS_FILE) -> list[CheckovSkip]:
    entries, problems = _entries(path)
    skips = []
    for index, entry in enumerate(entries):
        entry_problems = _keys(entry, required={"check", "title", "reason"}, optional=set())
        check = entry.get("check")
        if isinstance(check, str) and not CHECKOV_KUBERNETES_CHECK.match(check):
            entry_problems.append(f"check {check!r} is not a checkov Kubernetes check id such as CKV_K8S_43")
        entry_problems += _reason_problems(entry)
        if entry_problems:
            problems += [f"entry {index + 1}: {problem}" for problem in entry_problems]
            continue
        skips.append(CheckovSkip(str(check), str(entry["title"]), entry["reason"].strip()))
    duplicates = _duplicates(skip.check for skip in skips)
    problems += [f"check {check} is listed more than once" for check in duplicates]
    if problems:
        raise SuppressionFileError(path, problems)
    return skips


def load_parliament_ignores(path: Path = PARLIAMENT_IGNORE_FILE) -> list[ParliamentIgnore]:
    entries, problems = _entries(path)
    ignores = []
    for index, entry in enumerate(entries):
        entry_problems = _keys(
            entry, required={"policy", "issue", "actions", "reason"}, optional={"statement", "condition"}
        )
        issue = entry.get("issue")
        if isinstance(issue, str) and not PARLIAMENT_ISSUE.match(issue):
            entry_problems.append(f"issue {issue!r} is not a parliament issue code such as RESOURCE_STAR")
        actions = entry.get("actions")
        if not isinstance(actions, list) or not actions:
            entry_problems.append("actions must list the IAM actions the finding names")
        else:
            entry_problems += [f"{action!r} is not an IAM action" for action in actions if not IAM_ACTION.match(str(action))]
        for key in ("policy", "statement", "condition"):
            if key in entry and (not isinstance(entry[key], str) or not entry[key]):
                entry_problems.append(f"{key} must be a non-empty string")
        entry_problems += _reason_problems(entry)
        if entry_problems:
            problems += [f"entry {index + 1}: {problem}" for problem in entry_problems]
            continue
        ignores.append(
            ParliamentIgnore(
                policy=entry["policy"],
                issue=str(issue),
                actions=frozenset(actions or ()),
                reason=entry["reason"].strip(),
                statement=entry.get("statement"),
                condition=entry.get("condition"),
            )
        )
    problems += [f"{ignore.describe()} is listed more than once" for ignore in _duplicates(
        ParliamentIgnore(i.policy, i.issue, i.actions, "", i.statement, i.condition) for i in ignores
    )]
    if problems:
        raise SuppressionFileError(path, problems)
    return ignores


def _entries(path: Path) -> tuple[list[dict], list[str]]:
    try:
        document = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise SuppressionFileError(path, [f"cannot read: {error}"]) from None
    if document is None:
        return [], []
    if not isinstance(document, list):
        raise SuppressionFileError(path, ["the file must hold a YAML list of entries"])
    problems = [f"entry {i + 1} is not a mapping" for i, entry in enumerate(document) if not isinstance(entry, dict)]
    return [entry for entry in document if isinstance(entry, dict)], problems


def _keys(entry: dict, required: set[str], optional: set[str]) -> list[str]:
    problems = [f"missing key {key!r}" for key in sorted(required - set(entry))]
    problems += [f"unknown key {key!r}" for key in sorted(set(entry) - required - optional)]
    return problems


def _reason_problems(entry: dict) -> list[str]:
    reason = entry.get("reason")
    if "reason" in entry and (not isinstance(reason, str) or len(reason.strip()) < MINIMUM_REASON_LENGTH):
        return [f"reason must say why the finding is accepted (at least {MINIMUM_REASON_LENGTH} characters)"]
    return []


def _duplicates(items) -> list[Any]:
    seen, repeated = set(), []
    for item in items:
        if item in seen and item not in repeated:
            repeated.append(item)
        seen.add(item)
    return repeated
