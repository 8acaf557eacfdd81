"""TypeScript declarations of the package, written from schema.json, for the TypeScript compiler to check the
examples against: an interface per input type, the args of EksAutoscaling and its outputs.

They follow what Pulumi's Node.js code generator makes of the schema where a program can tell the difference:
optional properties, plain values where the schema says `plain`, `Input<T>` elsewhere, `Output<T>` outputs.
`Input` and `Output` are small stand-ins for @pulumi/pulumi's, enough to type-check a program offline.
"""

from __future__ import annotations

from tests.package.schema_checks import COMPONENT, SCHEMA, TYPE_PREFIX

MODULE = "@pulumi/eks-autoscaling"

PRELUDE = """\
interface Output<T> { apply<U>(func: (value: T) => U): Output<U>; }
type Input<T> = T | Promise<T> | Output<T>;
"""


def _interface_name(token: str) -> str:
    return token.rsplit(":", 1)[-1] + "Args"


def ts_type(prop: dict) -> str:
    ref = prop.get("$ref")
    if ref:
        return _interface_name(ref[len(TYPE_PREFIX):]) if ref.startswith(TYPE_PREFIX) else "any"
    kind = prop.get("type")
    if kind == "array":
        return f"{ts_type(prop['items'])}[]"
    if kind == "object":
        return f"{{[key: string]: {ts_type(prop.get('additionalProperties', {}))}}}"
    return {"integer": "number", "number": "number", "string": "string", "boolean": "boolean"}.get(kind or "", "any")


def _members(properties: dict, required: list[str], wrap_inputs: bool) -> list[str]:
    lines = []
    for name, prop in properties.items():
        kind = ts_type(prop)
        if wrap_inputs and not prop.get("plain"):
            kind = f"Input<{kind}>"
        optional = "" if name in required else "?"
        lines.append(f"        {name}{optional}: {kind};")
    return lines


def declarations() -> str:
    """A .d.ts declaring the package module as its generated SDK would, from schema.json."""
    resource = SCHEMA["resources"][COMPONENT]
    lines = [PRELUDE, f'declare module "{MODULE}" {{']
    for token, spec in SCHEMA["types"].items():
        lines.append(f"    export interface {_interface_name(token)} {{")
        lines += _members(spec["properties"], spec.get("required", []), wrap_inputs=True)
        lines.append("    }")
    lines.append("    export interface EksAutoscalingArgs {")
    lines += _members(resource["inputProperties"], resource.get("requiredInputs", []), wrap_inputs=True)
    lines.append("    }")
    lines.append("    export class EksAutoscaling {")
    lines.append("        constructor(name: string, args?: EksAutoscalingArgs, opts?: object);")
    for name, prop in resource["properties"].items():
        lines.append(f"        readonly {name}: Output<{ts_type(prop)}>;")
    lines.append("    }")
    lines.append("}")
    return "\n".join(lines) + "\n"
