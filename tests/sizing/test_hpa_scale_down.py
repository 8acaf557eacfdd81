"""The HPA's scale-down steps (kubernetes/kubernetes pkg/controller/podautoscaler/horizontal.go)."""

import pytest

from sizing.errors import SizingInputError
from sizing.kube.hpa_behavior import ScalingPolicy
from sizing.kube.hpa_scale_down import HpaScaleDown, scale_down_steps


def test_default_behaviour_waits_five_minutes_then_drops_to_the_target():
    """Kubernetes' defaults: a 300 s window, then 100 % per 15 s: one step to the target."""
    assert scale_down_steps(20, 2, HpaScaleDown()) == [(0, 20), (300, 2)]


def test_pods_policy_removes_at_most_value_per_period():
    behaviour = HpaScaleDown((ScalingPolicy("Pods", 4, 60),), stabilization_window_seconds=0)
    steps = scale_down_steps(10, 1, behaviour)
    assert steps == [(0, 10), (15, 6), (75, 2), (135, 1)]


def test_percent_rounds_down_and_max_takes_the_larger_change():
    """Percent 50 against Pods 1 per 15 s: Max removes the most, Min the least."""
    behaviour = HpaScaleDown(
        (ScalingPolicy("Percent", 50, 15), ScalingPolicy("Pods", 1, 15)), stabilization_window_seconds=0
    )
    assert scale_down_steps(9, 1, behaviour) == [(0, 9), (15, 4), (30, 2), (45, 1)]
    least = HpaScaleDown(behaviour.policies, "Min", 0)
    assert scale_down_steps(4, 1, least) == [(0, 4), (15, 3), (30, 2), (45, 1)]


def test_disabled_keeps_the_replicas():
    assert scale_down_steps(9, 1, HpaScaleDown(select_policy="Disabled")) == [(0, 9)]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"select_policy": "Most"}, "selectPolicy"),
        ({"policies": ()}, "policies is empty"),
        ({"policies": (ScalingPolicy("Nodes", 1, 15),)}, r"policies\[0\].type"),
        ({"policies": (ScalingPolicy("Pods", 0, 15),)}, r"policies\[0\].value"),
        ({"policies": (ScalingPolicy("Pods", 1, 0),)}, "periodSeconds"),
        ({"stabilization_window_seconds": 4000}, "stabilizationWindowSeconds"),
    ],
)
def test_bad_behaviour_is_refused(kwargs, message):
    with pytest.raises(SizingInputError, match=message):
        HpaScaleDown(**kwargs)
