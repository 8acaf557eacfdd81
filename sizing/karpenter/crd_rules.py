"""The validation rules of Karpenter's CRDs, evaluated as the API server evaluates them on create.

The NodePool and EC2NodeClass CRDs of the Karpenter version the project deploys ship with the
library (`sizing/karpenter/data/crds/`). Their OpenAPI schemas carry CEL rules
(`x-kubernetes-validations`): a NodePool with an `In` requirement without values, an
EC2NodeClass with both `role` and `instanceProfile`, a reserved tag... The API server refuses such
an object, so the planner refuses it too, with the rule's own message and the field path.

How a rule applies (as in Kubernetes' structural schemas): a rule sits at a node of the schema and
is evaluated with `self` bound to the object's value at that node, only where the value is
present (a null is absent); under `items` it is evaluated for each element of the list, under
`additionalProperties` for each value of the map. A field that is absent reads as absent (`has()`
is false; reading it is an evaluation error, which refuses the object as the API server does).
Rules that compare with `oldSelf` (transition rules) apply to updates only and are skipped: a plan
creates its objects. Before the rules, the schema's defaults are applied to absent fields (as the
API server defaults an object before validating it), and its `required` fields, `maxItems`,
`maxProperties` and `maxLength` are checked: the rules read what those guarantee, so they run only
on an object that passes. A rule `self.all(...)` over a list or map that fails names the entries
that break it alone, which the API server does not, for a clearer refusal.

CEL is evaluated by `common-expression-language` (the `cel` module: Python bindings of the Rust
`cel` interpreter). Kubernetes adds functions to CEL; the rules of the shipped CRDs call two of
them, registered here: `find` of Kubernetes' regex library (the first match of a regular
expression, or the empty string) and `split` of the strings extension (the library's own
`cel.stdlib.split`). Each rule is compiled once per process.

Bounds: CEL has no loops beyond its macros over the value, and the regular expressions are the
CRDs' own, so a rule's work grows with the lists and maps it reads, which the schema bounds
(`maxItems` 30 to 150 on the lists rules iterate over pairwise). Messages list at most
`MAX_SHOWN` violations.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cel
import yaml
from cel.stdlib import split

from sizing.errors import SizingInputError, echo

CRD_DIR = Path(__file__).resolve().parent / "data" / "crds"
# kind -> (apiVersion, CRD file)
CRD_FILES = {
    "NodePool": ("karpenter.sh/v1", "karpenter.sh_nodepools.yaml"),
    "EC2NodeClass": ("karpenter.k8s.aws/v1", "karpenter.k8s.aws_ec2nodeclasses.yaml"),
}
# Violations a refusal lists before saying how many more there are.
MAX_SHOWN = 5
# The schema path of a NodePool's requirement list, checked on its own where requirements come
# without their NodePool (a workload description, the stack's configuration).
REQUIREMENTS_PATH = ("spec", "template", "spec", "requirements")
TEMPLATE_LABELS_PATH = ("spec", "template", "metadata", "labels")


@functools.lru_cache(maxsize=64)
def _pattern(expression: str) -> re.Pattern[str]:
    return re.compile(expression)


def find(text: str, expression: str) -> str:
    """Kubernetes' regex library `<string>.find(<string>)`: the first match of `expression` in
    `text`, or the empty string when there is none."""
    match = _pattern(expression).search(text)
    return match.group(0) if match else ""


# The functions Kubernetes adds to CEL that the CRDs' rules call (the rest is CEL's own).
KUBERNETES_FUNCTIONS: dict[str, Callable[..., Any]] = {"find": find, "split": split}


@dataclass(frozen=True)
class CrdRule:
    """One `x-kubernetes-validations` entry at `schema_path` (property names; `[]` for a list's
    items, `{}` for a map's values) of `kind`'s CRD."""

    kind: str
    schema_path: tuple[str, ...]
    rule: str
    message: str | None
    message_expression: str | None
    field_path: str | None

    @property
    def transition(self) -> bool:
        """Whether the rule compares with the object's previous version (updates only)."""
        return re.search(r"\boldSelf\b", self.rule) is not None

    def where(self) -> str:
        """The rule's place in the schema, e.g. `spec.template.spec.requirements[].key`."""
        return ".".join(self.schema_path).replace(".[]", "[]").replace(".{}", "{}") or "(the object)"


@dataclass(frozen=True)
class RuleViolation:
    """A rule the object breaks: `path` is the field (e.g. `spec.amiSelectorTerms[0].alias`),
    `message` the rule's message, `error` why the rule could not be evaluated (if so)."""

    path: str
    message: str
    error: str | None = None
    entries: tuple[str, ...] = ()
    value: str | None = None

    def describe(self, prefix: str = "") -> str:
        """`path: message`, the path preceded by `prefix` (the place of the value checked), the value
        when it is a scalar, and the entries of the list or map that break the rule, when it is one
        rule per entry."""
        path = prefix + self.path if self.path.startswith(("[", ".")) or not prefix else f"{prefix}.{self.path}"
        text = f"{path.rstrip('.') or '(the object)'}: {self.message}"
        if self.value is not None:
            text += f" (got {self.value})"
        if self.entries:
            text += f" (at {', '.join(self.entries)})"
        if self.error is not None:
            text += f" (the rule fails on this value: {self.error})"
        return text


@functools.lru_cache(maxsize=len(CRD_FILES))
def crd_schema(kind: str) -> Mapping[str, Any]:
    """The openAPIV3Schema of `kind`'s shipped CRD, at its served version."""
    api_version, filename = CRD_FILES[kind]
    # The shipped files are trusted data; libyaml's safe loader reads them several times faster.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    crd = yaml.load((CRD_DIR / filename).read_text(encoding="utf-8"), Loader=loader)
    group = crd["spec"]["group"]
    for version in crd["spec"]["versions"]:
        if f"{group}/{version['name']}" == api_version:
            schema: Mapping[str, Any] = version["schema"]["openAPIV3Schema"]
            return schema
    raise AssertionError(f"{filename} has no version {api_version}")


def crd_rules(kind: str) -> tuple[CrdRule, ...]:
    """Every rule of `kind`'s CRD, transition rules included, in schema order."""
    found: list[CrdRule] = []

    def walk(schema: Mapping[str, Any], path: tuple[str, ...]) -> None:
        for entry in schema.get("x-kubernetes-validations", ()):
            found.append(
                CrdRule(
                    kind,
                    path,
                    entry["rule"],
                    entry.get("message"),
                    entry.get("messageExpression"),
                    entry.get("fieldPath"),
                )
            )
        for name, child in schema.get("properties", {}).items():
            walk(child, (*path, name))
        if isinstance(schema.get("items"), Mapping):
            walk(schema["items"], (*path, "[]"))
        if isinstance(schema.get("additionalProperties"), Mapping):
            walk(schema["additionalProperties"], (*path, "{}"))

    walk(crd_schema(kind), ())
    return tuple(found)


@functools.lru_cache(maxsize=256)
def compiled(expression: str) -> cel.Program:
    """A CEL expression compiled once per process."""
    return cel.compile(expression)


def evaluate(expression: str, value: Any) -> Any:
    """`expression` evaluated with `self` bound to `value` and Kubernetes' functions registered."""
    context = cel.Context(variables={"self": value}, functions=KUBERNETES_FUNCTIONS)
    return compiled(expression).execute(context)


def _without_nulls(value: Any) -> Any:
    """`value` with null map entries dropped: the API server reads a null field as absent."""
    if isinstance(value, Mapping):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, (list, tuple)):
        return [_without_nulls(item) for item in value]
    return value


def _apply(rule: CrdRule, value: Any, path: str) -> RuleViolation | None:
    where = path + (rule.field_path or "")
    shown = echo(value) if isinstance(value, (str, int, float)) else None
    try:
        result = evaluate(rule.rule, value)
    except Exception as error:  # the interpreter raises the type of each failure (KeyError, ...)
        reason = f"no field {error.args[0]!r}" if isinstance(error, KeyError) and error.args else str(error)
        return RuleViolation(
            where,
            _message(rule, value),
            reason if len(reason) <= 160 else reason[:160] + "…",
            _breaking_entries(rule, value),
            shown,
        )
    if result is True:
        return None
    return RuleViolation(where, _message(rule, value), entries=_breaking_entries(rule, value), value=shown)


def _breaking_entries(rule: CrdRule, value: Any) -> tuple[str, ...]:
    """For a rule `self.all(x, ...)` over a list or a map, the entries (`[index]` or map keys, at
    most MAX_SHOWN) that break it alone: the rule holds for each entry apart."""
    if not rule.rule.startswith("self.all(") or not isinstance(value, (list, Mapping)):
        return ()
    items = list(enumerate(value)) if isinstance(value, list) else [(key, {key: value[key]}) for key in value]
    found: list[str] = []
    for key, alone in items:
        try:
            holds = evaluate(rule.rule, [alone] if isinstance(value, list) else alone) is True
        except Exception:  # the entry alone makes the rule fail: it breaks it
            holds = False
        if not holds:
            found.append(f"[{key}]" if isinstance(value, list) else echo(key))
            if len(found) == MAX_SHOWN:
                break
    return tuple(found)


def _message(rule: CrdRule, value: Any) -> str:
    """The rule's message as the API server words it: `message`, else `messageExpression`'s
    string, else the rule itself."""
    if rule.message:
        return rule.message
    if rule.message_expression:
        try:
            text = evaluate(rule.message_expression, value)
        except Exception:  # a failing messageExpression falls back, as in Kubernetes
            text = None
        if isinstance(text, str) and text:
            return text
    return f"failed rule: {rule.rule}"


@functools.lru_cache(maxsize=len(CRD_FILES))
def _rules_by_path(kind: str) -> dict[tuple[str, ...], list[CrdRule]]:
    by_path: dict[tuple[str, ...], list[CrdRule]] = {}
    for rule in crd_rules(kind):
        if not rule.transition:
            by_path.setdefault(rule.schema_path, []).append(rule)
    return by_path


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


# schema type -> (the keyword bounding its size, what it counts)
_BOUNDS = {
    "array": ("maxItems", "items"),
    "object": ("maxProperties", "entries"),
    "string": ("maxLength", "characters"),
}


def _walk(
    kind: str,
    value: Any,
    schema: Mapping[str, Any],
    schema_path: tuple[str, ...],
    path: str,
    out: list[RuleViolation],
    rules: bool,
) -> None:
    """One pass over `value` along `schema`: the structural checks (types of maps and lists,
    bounds, defaults, required fields) when not `rules`, else the CEL rules."""
    if rules:
        for rule in _rules_by_path(kind).get(schema_path, ()):
            violation = _apply(rule, value, path)
            if violation is not None:
                out.append(violation)
    else:
        kind_of = schema.get("type")
        if kind_of == "object" and not isinstance(value, Mapping):
            out.append(RuleViolation(path, f"must be an object (a map), got {echo(value)}"))
            return
        if kind_of == "array" and not isinstance(value, list):
            out.append(RuleViolation(path, f"must be a list, got {echo(value)}"))
            return
        bound, unit = _BOUNDS.get(str(kind_of), ("", ""))
        if bound in schema and isinstance(value, (list, Mapping, str)) and len(value) > schema[bound]:
            out.append(RuleViolation(path, f"has {len(value):,} {unit}, more than the {schema[bound]:,} allowed"))
            return
        if isinstance(value, dict):
            for name, child in schema.get("properties", {}).items():
                if name not in value and "default" in child:
                    value[name] = copy.deepcopy(child["default"])
            for name in schema.get("required", ()):
                if name not in value:
                    out.append(RuleViolation(_join(path, name), "Required value"))
    if isinstance(value, Mapping):
        for name, child in schema.get("properties", {}).items():
            if name in value:
                _walk(kind, value[name], child, (*schema_path, name), _join(path, name), out, rules)
        values_schema = schema.get("additionalProperties")
        if isinstance(values_schema, Mapping):
            for key, item in value.items():
                _walk(kind, item, values_schema, (*schema_path, "{}"), f"{path}[{key}]", out, rules)
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(value):
            _walk(kind, item, schema["items"], (*schema_path, "[]"), f"{path}[{index}]", out, rules)


def _violations(kind: str, value: Any, schema: Mapping[str, Any], schema_path: tuple[str, ...]) -> list[RuleViolation]:
    """The structural violations of `value`, or when there are none, the rules it breaks: the rules
    read what the schema guarantees (required fields, bounded lists)."""
    value = _without_nulls(value)
    out: list[RuleViolation] = []
    _walk(kind, value, schema, schema_path, "", out, rules=False)
    if not out:
        _walk(kind, value, schema, schema_path, "", out, rules=True)
    return out


def _subschema(kind: str, schema_path: Sequence[str]) -> Mapping[str, Any]:
    schema = crd_schema(kind)
    for name in schema_path:
        schema = schema["properties"][name]
    return schema


def rule_violations(document: Mapping[str, Any], kind: str) -> list[RuleViolation]:
    """The CRD rules (and the bounds and required fields on their way) that a `kind` object breaks."""
    return _violations(kind, document, crd_schema(kind), ())


def part_violations(value: Any, schema_path: Sequence[str], kind: str = "NodePool") -> list[RuleViolation]:
    """The rules at and under `schema_path` of `kind`'s CRD that `value` (the object's value there)
    breaks; paths start at that node (e.g. `[2].key`)."""
    return _violations(kind, value, _subschema(kind, schema_path), tuple(schema_path))


def describe_violations(violations: Sequence[RuleViolation], prefix: str = "") -> str:
    """At most `MAX_SHOWN` violations, `; `-separated, each path preceded by `prefix`."""
    shown = [violation.describe(prefix) for violation in violations[:MAX_SHOWN]]
    if len(violations) > MAX_SHOWN:
        shown.append(f"and {len(violations) - MAX_SHOWN:,} more")
    return "; ".join(shown)


def check_part(
    value: Any, schema_path: Sequence[str], where: str, kind: str = "NodePool", element: bool = False
) -> None:
    """Refuse a part of a `kind` object given on its own (`where` names it, e.g. `nodePool.requirements`)
    that breaks a rule of the CRD at or under `schema_path`. `element`: `value` is one element of
    the list at `schema_path`, checked as a list of one."""
    violations = part_violations([value] if element else value, schema_path, kind)
    if element:
        violations = [replace(violation, path=violation.path.removeprefix("[0]")) for violation in violations]
    if violations:
        raise SizingInputError(
            f"{describe_violations(violations, where)} (the {kind} CRD's validation: the API server rejects "
            f"such {'an' if kind[0] in 'AEIOU' else 'a'} {kind})"
        )


def check_object(document: Mapping[str, Any], kind: str, what: str) -> None:
    """Refuse a `kind` object (`what`: e.g. `NodePool default`) that breaks a rule of its CRD."""
    violations = rule_violations(document, kind)
    if violations:
        api_version = CRD_FILES[kind][0]
        raise SizingInputError(
            f"{what}: the {kind} CRD ({api_version}) refuses it: {describe_violations(violations)}. "
            "The API server would reject the object; fix the field named"
        )
