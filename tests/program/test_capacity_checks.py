"""The VPC address model and the vCPU quota warnings behind the capacity checks."""

from __future__ import annotations

import time

import pytest

from sizing.karpenter.catalog import catalog_by_name, load_catalog
from stackplan.vpc_capacity import (
    DEFAULT_STANDARD_VCPU_QUOTA,
    node_addresses,
    private_subnet_sizes,
    quota_warnings,
    usable_addresses,
)

CATALOG = catalog_by_name(load_catalog())


@pytest.mark.parametrize(
    "cidr, zones, sizes",
    [
        # awsx Auto: the VPC split over the zones (a power of two), each zone over public and private.
        ("10.0.0.0/16", 2, [16384, 16384]),
        ("10.0.0.0/16", 3, [8192, 8192, 8192]),
        ("10.0.0.0/16", 4, [8192] * 4),
        ("10.20.0.0/24", 2, [64, 64]),
    ],
)
def test_private_subnets_as_awsx_lays_them_out(cidr, zones, sizes):
    assert private_subnet_sizes(cidr, zones) == sizes
    assert usable_addresses(cidr, zones) == sum(size - 11 for size in sizes)


@pytest.mark.parametrize(
    "pods, addresses",
    [
        (0, 20),  # the primary ENI and the warm one, 10 addresses each
        (9, 20),  # nine pods fill the primary ENI's secondary addresses; one warm ENI
        (10, 30),  # a second ENI for the tenth pod, and a warm third
        (27, 30),  # capped at m5.large's three ENIs
    ],
)
def test_a_node_holds_its_pods_enis_and_one_warm_eni(pods, addresses):
    m5_large = CATALOG["m5.large"]
    assert (m5_large.max_enis, m5_large.ipv4_per_eni) == (3, 10)
    assert node_addresses(m5_large, pods) == addresses


def test_no_warning_within_the_default_quota():
    assert quota_warnings([("m5.large", "on-demand"), ("m5.large", "on-demand")]) == []


def test_standard_vcpus_above_the_default_quota_warn_per_capacity_type():
    warnings = quota_warnings([("m5.xlarge", "on-demand"), ("m5.xlarge", "on-demand"), ("c5.2xlarge", "spot")])
    assert len(warnings) == 2
    assert f"8 on-demand vCPUs of standard instance families, above {DEFAULT_STANDARD_VCPU_QUOTA}" in warnings[0]
    assert (
        "8 spot vCPUs" in warnings[1]
        and "All Standard (A, C, D, H, I, M, R, T, Z) Spot Instance Requests" in warnings[1]
    )


def test_the_quota_warning_says_the_default_is_for_new_accounts_and_how_to_read_the_applied_value():
    on_demand, spot = quota_warnings([("m5.2xlarge", "on-demand"), ("m5.2xlarge", "spot")], "eu-west-1")
    assert "the default value for new accounts" in on_demand and "applied value is often higher" in on_demand
    assert (
        "`aws service-quotas get-service-quota --service-code ec2 --quota-code L-1216C47A --region eu-west-1`"
        in on_demand
    )
    assert "--quota-code L-34B43A08 --region eu-west-1`" in spot


def test_other_families_have_quotas_of_their_own():
    (warning,) = quota_warnings([("g5.xlarge", "on-demand")])
    assert "4 on-demand vCPUs of g5, a family with a vCPU quota of its own" in warning
    assert "`aws service-quotas list-service-quotas --service-code ec2`" in warning


def test_the_stacks_plan_refuses_a_peak_the_vpc_cannot_address_before_simulating_it(tmp_path, capsys):
    from sizing.cli import main

    (tmp_path / "Pulumi.big.yaml").write_text(
        "config:\n  aws:region: us-east-1\n  eks-autoscaling:app: {hpa: {maxReplicas: 40000}}\n"
    )
    started = time.monotonic()
    status = main(["plan", "--stack", "big", "--project-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2
    assert "the planned peak has 80000 pods" in err and "32746 pod addresses" in err
    assert "Traceback" not in err
    assert time.monotonic() - started < 10, "refused without planning 80,000 pods"


def test_the_stack_output_summary_has_no_float_noise():
    from offline.program import PROJECT_DIR
    from sizing.planning.report import plan_data
    from stackconfig.load import load_stack_file
    from stackplan.capacity import plan_for, plan_summary

    # prod's fleet costs 5 × 0.6912 + 0.612, which binary floats sum to 4.0680000000000005.
    config = load_stack_file(PROJECT_DIR / "Pulumi.prod.yaml")
    plan = plan_for(config, [f"{config.region}{zone}" for zone in "abcdef"[: config.network.availability_zones]])
    summary, data = plan_summary(plan), plan_data(plan)
    costs = {
        "fleet": (summary["fleet"]["costPerHour"], data["fleet"]["cost"]),
        "optimal": (summary["optimal"]["costPerHour"], data["optimal"]["cost"]),
        "lower bound": (summary["optimal"]["lowerBound"]["cost"], data["optimal"]["lowerBound"]["cost"]),
        "gap": (summary["gap"]["cost"], data["gap"]["cost"]),
    }
    for name, (shown, exact) in costs.items():
        assert shown == round(exact, 4) and len(repr(shown).partition(".")[2]) <= 4, (name, shown)
    assert summary["gap"]["percent"] == round(data["gap"]["percent"], 2)
    assert any(exact != round(exact, 4) for _, exact in costs.values()), "the exact costs carry noise to remove"
