"""parliament over every identity policy the program creates.

Trust policies are left out: parliament reads them as identity policies and reports
false findings ("Unknown federation source", "neither Resource nor NotResource"); the
service-account trust gate covers them. The documents come from the evaluated program with
its mock ARNs (well-formed), not from the plan's files, whose placeholders are not ARNs.

Each finding is accepted only by an entry of `security/parliament-ignore.yaml` naming the same
policy, issue and exact set of actions (and statement or condition key when given); an entry
that accepts nothing any more is reported too, so the list cannot outlive the findings.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from offline.plan import iam_documents
from offline.recording import Recording
from security.suppressions import ParliamentIgnore

PARLIAMENT_TIMEOUT_SECONDS = 120
_UNKNOWN_ACTION = re.compile(r"^Unknown action (\S+)$")
_UNKNOWN_CONDITION = re.compile(r"^Unknown condition (\S+) for action (\S+)$")
# json.dumps(indent=2) puts each element of the Statement list on a line of its own, "    {".
_STATEMENT_START = "    {"


class ParliamentError(Exception):
    """parliament did not produce a usable report."""


@dataclass(frozen=True)
class ParliamentFinding:
    policy: str
    issue: str
    severity: str
    title: str
    actions: frozenset[str]
    statement: str | None
    condition: str | None
    detail: Any

    def __str__(self) -> str:
        where = self.policy + (f" {self.statement}" if self.statement else "")
        extra = f" condition {self.condition}" if self.condition else ""
        named = ", ".join(sorted(self.actions)) if self.actions else json.dumps(self.detail)
        return f"{self.severity} {self.issue} ({self.title}) on {where}: {named}{extra}"


def write_identity_policies(recording: Recording, directory: Path) -> list[Path]:
    """One JSON file per identity policy, named after its Pulumi resource; `directory` is emptied first."""
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.json"):
        stale.unlink()
    written = []
    for relative, document in sorted(iam_documents(recording).items()):
        if relative.startswith("policies/"):
            path = directory / relative.split("/", 1)[1]
            path.write_text(json.dumps(document, indent=2) + "\n")
            written.append(path)
    return written


def run_parliament(parliament: Path | str, files: Sequence[Path]) -> list[ParliamentFinding]:
    """Analyze every file in one parliament process (directory mode, JSON lines)."""
    if not files:
        return []
    directories = {path.parent for path in files}
    if len(directories) != 1:
        raise ParliamentError("the policies to analyze must share one directory")
    # stdin is closed explicitly: parliament reads a policy from stdin when it is not a TTY.
    completed = subprocess.run(
        [str(parliament), "--directory", str(directories.pop()), "--include_policy_extension", ".json", "--json"],
        capture_output=True,
        text=True,
        timeout=PARLIAMENT_TIMEOUT_SECONDS,
        stdin=subprocess.DEVNULL,
    )
    findings = parse_parliament_output(completed.stdout)
    # parliament exits 1 when it reports a finding and 0 when it reports none.
    if completed.returncode != (1 if findings else 0):
        raise ParliamentError(f"parliament exited with {completed.returncode}: {completed.stderr.strip()[-2000:]}")
    return findings


def parse_parliament_output(text: str) -> list[ParliamentFinding]:
    """Findings from parliament's `--json` output: one JSON object per line."""
    findings = []
    sources: dict[Path, list[str]] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError:
            raise ParliamentError(f"unexpected parliament output: {line[:300]!r}") from None
        location = raw.get("location") or {}
        path = Path(location.get("filepath") or "")
        if path not in sources:
            sources[path] = path.read_text().splitlines() if path.is_file() else []
        actions, condition = finding_actions(raw.get("issue", ""), raw.get("detail"))
        findings.append(
            ParliamentFinding(
                policy=path.stem,
                issue=raw.get("issue", ""),
                severity=raw.get("severity", ""),
                title=raw.get("title", ""),
                actions=actions,
                statement=statement_at(sources[path], location.get("line")),
                condition=condition,
                detail=raw.get("detail"),
            )
        )
    return findings


def finding_actions(issue: str, detail: Any) -> tuple[frozenset[str], str | None]:
    """The IAM actions a finding names (and the condition key, for an unknown condition)."""
    if isinstance(detail, str):
        unknown_condition = _UNKNOWN_CONDITION.match(detail)
        if unknown_condition:
            return frozenset({unknown_condition.group(2)}), unknown_condition.group(1)
        unknown_action = _UNKNOWN_ACTION.match(detail)
        if unknown_action:
            return frozenset({unknown_action.group(1)}), None
        return frozenset(), None
    if isinstance(detail, list):
        actions = set()
        for item in detail:
            if isinstance(item, str):
                actions.add(item)
            elif isinstance(item, dict) and isinstance(item.get("action"), str):
                actions.add(item["action"])
        return frozenset(actions), None
    return frozenset(), None


def statement_at(lines: Sequence[str], line_number: Any) -> str | None:
    """The Sid of the statement holding `line_number` (1-based) in a file written by
    `write_identity_policies`, or `#<index>` for a statement without a Sid."""
    if not isinstance(line_number, int) or not lines:
        return None
    starts = [number for number, text in enumerate(lines, start=1) if text == _STATEMENT_START]
    preceding = [start for start in starts if start <= line_number]
    if not preceding:
        return None
    index = len(preceding) - 1
    try:
        statements = json.loads("\n".join(lines)).get("Statement")
    except (json.JSONDecodeError, AttributeError):
        return f"#{index}"
    statement = statements[index] if isinstance(statements, list) and index < len(statements) else {}
    return statement.get("Sid") or f"#{index}"


def apply_ignores(
    findings: Iterable[ParliamentFinding], ignores: Sequence[ParliamentIgnore]
) -> tuple[list[ParliamentFinding], list[tuple[ParliamentFinding, ParliamentIgnore]]]:
    """(findings no entry accepts, (finding, entry) pairs accepted)."""
    unaccepted, accepted = [], []
    for finding in findings:
        entry = next((ignore for ignore in ignores if accepts(ignore, finding)), None)
        if entry is None:
            unaccepted.append(finding)
        else:
            accepted.append((finding, entry))
    return unaccepted, accepted


def accepts(ignore: ParliamentIgnore, finding: ParliamentFinding) -> bool:
    return (
        ignore.policy == finding.policy
        and ignore.issue == finding.issue
        and bool(finding.actions)
        and ignore.actions == finding.actions
        and (ignore.statement is None or ignore.statement == finding.statement)
        and (ignore.condition is None or ignore.condition == finding.condition)
    )


def unused_ignores(
    ignores: Sequence[ParliamentIgnore], accepted: Iterable[tuple[ParliamentFinding, ParliamentIgnore]]
) -> list[ParliamentIgnore]:
    used = {entry for _, entry in accepted}
    return [ignore for ignore in ignores if ignore not in used]
