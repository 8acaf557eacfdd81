"""The capacity plan as JSON-able data (`plan_data`) and as text (`render_report`).

The text is rendered from the data alone (`report_data`, `report_text`), so both carry the same
content, figure by figure: first the workloads whose pods can never run (left out of the plan, with
their pods and the reason), then the pods at peak and with the rollout surge, warnings (workloads whose
pods request no cpu or no memory), the fleet Karpenter would launch (one row per node: type, price,
zone, pods, cpu and memory requests against allocatable), every scenario under the planned limits
and without them, the pods that stay pending even without limits, the NodePool limits as a YAML
snippet and what one step less would change, the input's own limits and what they change, the
optimal fleet and the gap, the recommendation, and notes such as the price basis, the inputs
ignored and the objects not planned (they place no pods).
"""

from __future__ import annotations

from sizing.planning.plan_types import CapacityPlan
from sizing.planning.report_data import plan_data
from sizing.planning.report_text import DEFAULT_NODE_ROWS, MAX_WARNING_NAMES, render_text

__all__ = ["DEFAULT_NODE_ROWS", "MAX_WARNING_NAMES", "plan_data", "render_report", "render_text"]


def render_report(plan: CapacityPlan, max_rows: int = DEFAULT_NODE_ROWS) -> str:
    """The plan as text for a terminal; at most `max_rows` nodes are listed one per row."""
    return render_text(plan_data(plan), max_rows)
