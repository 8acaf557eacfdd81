"""A stack planned with its own catalog (`capacity.catalog`) and spot discount (`capacity.spotDiscountPercent`)."""

import pytest

from offline.program import DELETE
from sizing.karpenter.catalog import read_catalog
from stackplan.capacity import plan_input_for_stack
from tests.catalogs import refreshed
from tests.catalogs import write_catalog as write_types
from tests.harness import ProgramFailed, run_program

TOKYO = "ap-northeast-1"


def write_catalog(path, region=TOKYO, zones=("a", "c", "d"), spot=0.045):
    names = [f"{region}{z}" for z in zones]
    return write_types(path, [refreshed("m5.large", region, 0.124, {z: spot for z in names}, names)], region)


def test_a_stack_plans_with_its_refreshed_catalog(tmp_path):
    catalog = write_catalog(tmp_path / "catalog-ap-northeast-1.json")
    recording = run_program("dev", {"capacity": {"catalog": str(catalog), "priceOverrides": DELETE}})
    prices = recording.outputs["capacityPlan"]["prices"]
    assert prices == {"catalog": str(catalog), "onDemand": ["refresh"], "spot": None, "offeringsChecked": True}
    assert recording.outputs["capacityPlan"]["fleet"]["costPerHour"] == 0.248


def test_the_dev_stack_says_its_prices_are_overridden_and_offerings_unchecked(dev):
    prices = dev.outputs["capacityPlan"]["prices"]
    assert prices == {"catalog": "bundled", "onDemand": ["override"], "spot": None, "offeringsChecked": False}


def test_a_catalog_of_another_region_is_refused_naming_both(tmp_path):
    catalog = write_catalog(tmp_path / "catalog-us-east-1.json", region="us-east-1", zones="abc")
    with pytest.raises(ProgramFailed) as failure:
        run_program("dev", {"capacity": {"catalog": str(catalog)}})
    message = str(failure.value)
    assert "`capacity.catalog`" in message
    assert "was refreshed for us-east-1, but the plan is for ap-northeast-1 (aws:region)" in message
    assert failure.value.recording.besides_providers() == []


def test_a_nodepool_whose_types_are_not_offered_in_the_vpcs_zones_is_refused(tmp_path):
    # The dev VPC takes the region's first two zones, ap-northeast-1a and ap-northeast-1c.
    catalog = write_catalog(tmp_path / "only-d.json", zones="d")
    with pytest.raises(ProgramFailed) as failure:
        run_program("dev", {"capacity": {"catalog": str(catalog)}})
    message = str(failure.value)
    assert "can be launched in ap-northeast-1 zones ap-northeast-1a, ap-northeast-1c" in message
    assert "m5.large: offered only in ap-northeast-1d, none of the NodePool's zones" in message


def test_a_spot_discount_prices_the_spot_fleet_below_on_demand():
    spot = {"nodePool": {"preset": "spot"}}
    full = run_program("dev", spot).outputs["capacityPlan"]
    discounted = run_program("dev", {**spot, "capacity": {"spotDiscountPercent": 70}}).outputs["capacityPlan"]
    assert discounted["fleet"]["instanceTypes"] == full["fleet"]["instanceTypes"]
    assert discounted["fleet"]["costPerHour"] == pytest.approx(full["fleet"]["costPerHour"] * 0.3, abs=1e-4)
    assert discounted["prices"]["spot"] == "spot 70 % below on-demand (capacity.spotDiscountPercent)"
    assert full["prices"]["spot"] == "spot priced at on-demand: an upper bound"


def test_plan_stack_reads_a_relative_catalog_from_the_project_directory(tmp_path):
    write_catalog(tmp_path / "catalog-ap-northeast-1.json")
    (tmp_path / "Pulumi.tokyo.yaml").write_text(
        "config:\n  aws:region: ap-northeast-1\n"
        "  eks-autoscaling:capacity:\n    catalog: catalog-ap-northeast-1.json\n    spotDiscountPercent: 55\n"
    )
    plan_input = plan_input_for_stack("tokyo", tmp_path)
    assert plan_input.catalog_info == read_catalog(tmp_path / "catalog-ap-northeast-1.json").info
    assert plan_input.spot_discount.percent == 55 and plan_input.spot_discount.set_by == "capacity.spotDiscountPercent"
