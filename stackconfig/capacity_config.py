"""The `capacity` section of the stack configuration: what the NodePool limits are planned for."""

from __future__ import annotations

from pydantic import Field, field_validator

from sizing.binpack.model import DEFAULT_WORK_LIMIT
from sizing.karpenter.pricing import MAX_DISCOUNT_PERCENT
from sizing.planning.description_model import DaemonSetEntry, WorkloadEntry
from stackconfig.base import ConfigSection


class CapacityConfig(ConfigSection):
    """How the NodePool limits are planned. `workloads` and `daemonSets` take the entries of a
    workload description file (docs/sizing-input.md), validated by the same models, so a mistake
    is named by its own key (`capacity.workloads[0].requests.cpu`); they add to the test app and
    to the EKS DaemonSets (aws-node, kube-proxy, eks-pod-identity-agent)."""

    workloads: tuple[WorkloadEntry, ...] = ()
    daemon_sets: tuple[DaemonSetEntry, ...] = ()
    headroom_percent: float = Field(default=10.0, ge=0, le=1000, allow_inf_nan=False)
    max_pods_per_node: int | None = Field(default=None, ge=1)
    price_overrides: dict[str, float] = Field(default_factory=dict)
    # A catalog file (`python -m sizing catalog refresh --region R` writes one): its prices, spot
    # prices and offerings replace the bundled catalog's. A relative path is read from the project
    # directory. The file must describe the stack's region.
    catalog: str | None = Field(default=None, min_length=1, max_length=1024)
    # Spot priced this many percent below on-demand, for every type and zone; wins over the
    # catalog's market prices. Unset: market prices if the catalog has them, else on-demand.
    spot_discount_percent: float | None = Field(default=None, ge=0, le=MAX_DISCOUNT_PERCENT)
    # Units of solver work (sizing.binpack.work), not seconds: the plan, and the capacityPlan
    # output, are then the same on any machine and under any load.
    solver_work_limit: int = Field(default=DEFAULT_WORK_LIMIT, ge=1, le=100_000)

    # The former wall-clock limit, refused with a message naming its replacement. Excluded from
    # dumps: a retired key, which the component's inputs do not offer.
    solver_time_limit_seconds: float | None = Field(default=None, exclude=True)

    @field_validator("solver_time_limit_seconds")
    @classmethod
    def _time_limit_was_replaced(cls, value: float | None) -> float | None:
        if value is not None:
            raise ValueError(
                "capacity.solverTimeLimitSeconds was replaced by capacity.solverWorkLimit (units of solver "
                f"work, default {DEFAULT_WORK_LIMIT}), so that the plan does not depend on the machine's speed; "
                "remove solverTimeLimitSeconds or set solverWorkLimit instead"
            )
        return value

    @field_validator("catalog")
    @classmethod
    def _catalog_is_a_path(cls, value: str | None) -> str | None:
        if value is not None and (value != value.strip() or any(ch in value for ch in "\0\n\r")):
            raise ValueError(
                "give the path of a catalog file, such as catalog-ap-northeast-1.json, without surrounding "
                "blanks or line breaks"
            )
        return value

    @field_validator("workloads", "daemon_sets")
    @classmethod
    def _names_are_unique(cls, entries: tuple) -> tuple:
        # Each entry becomes a Kubernetes object of that name; a second one would replace the first.
        names = [entry.name for entry in entries]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            listed = ", ".join(repr(name) for name in repeated)
            verb = "is" if len(repeated) == 1 else "are"
            raise ValueError(f"each name may be given once; {listed} {verb} given more than once")
        return entries
