"""Every key of the stack configuration is documented in the README's configuration table."""

import typing

from pydantic import BaseModel

from offline.program import PROJECT_DIR
from stackconfig.model import StackConfig

README = (PROJECT_DIR / "README.md").read_text()
# Lists of free-form entries, documented as a whole.
OPAQUE = {"capacity.workloads", "capacity.daemonSets", "nodePool.requirements", "nodePool.budgets", "nodePool.limits"}


def config_keys(model: type[BaseModel] = StackConfig, prefix: str = "") -> list[str]:
    keys = []
    for name, field in model.model_fields.items():
        if model is StackConfig and name == "region":
            keys.append("aws:region")
            continue
        key = prefix + (field.alias or name)
        annotation = field.annotation
        inner: list[typing.Any] = [arg for arg in typing.get_args(annotation) if isinstance(arg, type)] or [annotation]
        section = next((t for t in inner if isinstance(t, type) and issubclass(t, BaseModel)), None)
        if section is not None and key not in OPAQUE:
            keys.extend(config_keys(section, key + "."))
        else:
            keys.append(key)
    return keys


def _documented(key: str) -> bool:
    parent, _, leaf = key.rpartition(".")
    # A row may list sibling keys together: `app.hpa.minReplicas` / `maxReplicas`.
    return f"`{key}`" in README or bool(parent and f"`{parent}." in README and f"`{leaf}`" in README)


def test_every_config_key_is_in_the_readme():
    missing = [key for key in config_keys() if not _documented(key)]
    assert missing == []


def test_the_walk_finds_nested_keys():
    keys = config_keys()
    assert "nodeGroup.minSize" in keys and "app.hpa.scaleDown.percent" in keys and "aws:region" in keys
    assert not _documented("nodeGroup.minSise")
