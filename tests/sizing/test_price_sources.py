"""Where a plan's prices come from: spot priced by a user's discount, by market data or at on-demand,
said next to every spot cost in text and JSON alike; offerings of a refreshed catalog honoured."""

import json
import re

import pytest

from sizing.errors import SizingInputError
from sizing.karpenter.catalog import InstanceType
from sizing.karpenter.pricing import SpotDiscount
from sizing.kube.workloads import Workload
from sizing.planning.planner import NodePoolSpec, PlanInput, plan_capacity
from sizing.planning.report import plan_data, render_report
from tests.catalogs import refreshed_info

TOKYO = "ap-northeast-1"
A, C, D = (f"{TOKYO}{z}" for z in "acd")


def kind(name, vcpu, memory_mib, price, region="us-east-1", spot=None, zones=None):
    family, size = name.split(".")
    return InstanceType(
        name,
        family[0],
        family,
        int(family[1]),
        size,
        "amd64",
        "nitro",
        vcpu,
        memory_mib,
        4,
        15,
        0,
        {region: price} if price is not None else {},
        {region: spot} if spot else {},
        {region: zones} if zones is not None else {},
    )


US_CATALOG = (
    kind("m5.large", 2, 8192, 0.096),
    kind("m5.xlarge", 4, 16384, 0.192),
    kind("c5.large", 2, 4096, 0.085),
    kind("c5.xlarge", 4, 8192, 0.17),
)
# A refreshed Tokyo catalog: c5 is cheaper on-demand, m5 far cheaper on the spot market.
TOKYO_CATALOG = (
    kind("c5.xlarge", 4, 8192, 0.214, TOKYO, spot={A: 0.09, C: 0.08, D: 0.085}, zones=[A, C, D]),
    kind("m5.xlarge", 4, 16384, 0.248, TOKYO, spot={A: 0.05, C: 0.06}, zones=[A, C, D]),
    kind("m5.2xlarge", 8, 32768, 0.496, TOKYO, spot={A: 0.2}, zones=[A]),
    kind("r5.xlarge", 4, 32768, 0.304, TOKYO, zones=[D]),
    kind("m4.xlarge", 4, 16384, 0.258, TOKYO, zones=[]),
    kind("c4.xlarge", 4, 7680, None, TOKYO, zones=[A, C, D]),
)
TOKYO_INFO = refreshed_info(TOKYO, "catalog-ap-northeast-1.json")
SPOT_AND_ON_DEMAND = ({"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]},)
XLARGE = {"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["xlarge", "2xlarge"]}
WORKLOADS = (Workload("api", 500, 1024, replicas=20, max_surge="25%"), Workload("worker", 1000, 2048, replicas=6))


def plan(requirements=SPOT_AND_ON_DEMAND, workloads=WORKLOADS, **options):
    options.setdefault("catalog", US_CATALOG)
    options.setdefault("solver_work_limit", 400)
    return plan_capacity(
        PlanInput(workloads=tuple(workloads), node_pool=NodePoolSpec(requirements=requirements), **options)
    )


def tokyo_plan(requirements=SPOT_AND_ON_DEMAND + (XLARGE,), **options):
    options.setdefault("zones", (A, C))
    return plan(requirements, region=TOKYO, catalog=TOKYO_CATALOG, catalog_info=TOKYO_INFO, **options)


def spot_lines(text):
    """Every text line with a spot cost in it: spot nodes, the fleet total, optimum, gap, recommendation."""
    return [
        line
        for line in text.splitlines()
        if re.search(r"/\d+\.\d{4} spot", line)
        or re.search(r"USD/hour \| .*USD/month", line)
        or line.startswith(("Optimal fleet", "Gap:", "Recommendation:"))
    ]


@pytest.mark.parametrize(
    "make, source, tag",
    [
        (lambda: plan(), "spot-at-on-demand", "spot priced at on-demand: an upper bound"),
        (
            lambda: plan(spot_discount=SpotDiscount(60, "--spot-discount")),
            "spot-discount",
            "spot 60 % below on-demand (--spot-discount)",
        ),
        (lambda: tokyo_plan(), "spot-market", "spot at market prices of 2026-08-03T09:30:00Z"),
    ],
)
def test_the_spot_assumption_is_next_to_every_spot_cost_and_text_and_json_agree(make, source, tag):
    capacity_plan = make()
    text = render_report(capacity_plan)
    data = json.loads(json.dumps(plan_data(capacity_plan)))
    spot_nodes = [node for node in data["fleet"]["nodes"] if node["capacityType"] == "spot"]
    assert spot_nodes, "the NodePool prefers spot"
    assert all(node["priceSource"] == source for node in spot_nodes)
    assert data["prices"]["spot"]["source"] == source and data["prices"]["spot"]["tag"] == tag
    assert data["prices"]["spot"]["used"] is True
    lines = spot_lines(text)
    assert len(lines) >= len(spot_nodes) + 4
    for line in lines:
        assert line.endswith(f"[{tag}]") or f"[{tag}]" in line, line
    assert f"  spot ({source}): {data['prices']['spot']['description']}" in text
    for node in spot_nodes:
        assert re.search(rf"{re.escape(node['instanceType'])}/{node['price']:.4f} spot \[{re.escape(tag)}\]", text)
    optimal_sources = {group["priceSource"] for group in data["optimal"]["groups"] if group["capacityType"] == "spot"}
    assert optimal_sources <= {source}


def test_a_user_discount_scales_every_spot_cost_and_keeps_the_recommendation():
    spot_only = ({"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},)
    full, discounted = plan(spot_only), plan(spot_only, spot_discount=SpotDiscount(60))
    assert [n.instance_type for n in discounted.fleet.nodes] == [n.instance_type for n in full.fleet.nodes]
    assert discounted.fleet.cost == pytest.approx(full.fleet.cost * 0.4)
    assert discounted.optimal.cost == pytest.approx(full.optimal.cost * 0.4)
    chosen, before = discounted.recommendation.chosen, full.recommendation.chosen
    assert chosen.restriction == before.restriction, "a discount alike for every type changes no ranking"
    assert chosen.cost == pytest.approx(before.cost * 0.4)
    text = render_report(discounted)
    assert f"Recommendation: {discounted.recommendation.summary()} [spot 60 % below on-demand" in text


def test_a_discount_leaves_an_on_demand_nodepool_alone():
    on_demand = ({"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},)
    full, discounted = plan(on_demand), plan(on_demand, spot_discount=SpotDiscount(60))
    assert discounted.fleet.cost == full.fleet.cost
    assert render_report(discounted).count("spot") == render_report(full).count("spot") == 0
    assert plan_data(discounted)["prices"]["spot"]["used"] is False


def test_pods_that_require_on_demand_keep_on_demand_prices_under_a_discount():
    pinned = Workload("ledger", 1000, 2048, replicas=4, node_selector={"karpenter.sh/capacity-type": "on-demand"})
    result = plan(workloads=WORKLOADS + (pinned,), spot_discount=SpotDiscount(50))
    data = plan_data(result)
    on_demand = [node for node in data["fleet"]["nodes"] if node["capacityType"] == "on-demand"]
    assert on_demand and all(node["priceSource"] == "catalog" for node in on_demand)
    prices = {i.name: i.price("us-east-1") for i in US_CATALOG}
    assert all(node["price"] == prices[node["instanceType"]] for node in on_demand)
    spot = [node for node in data["fleet"]["nodes"] if node["capacityType"] == "spot"]
    assert all(node["price"] == pytest.approx(prices[node["instanceType"]] / 2) for node in spot)


def test_market_prices_drive_the_spot_choice():
    """At on-demand prices the cheaper c5.xlarge wins; on the spot market m5.xlarge is cheaper, and in
    the cheapest zone of the NodePool's (ap-northeast-1a, not ap-northeast-1d)."""
    market = tokyo_plan()
    launched = {(n.instance_type, n.capacity_type, n.price) for n in market.fleet.nodes}
    assert ("m5.xlarge", "spot", 0.05) in launched
    assert launched <= {("m5.xlarge", "spot", 0.05), ("m5.2xlarge", "spot", 0.2)}, "no c5.xlarge"
    assert all(n.zones == (A,) for n in market.fleet.nodes if n.instance_type == "m5.2xlarge"), (
        "the m5.2xlarge only in the one zone it is offered in"
    )
    discount = tokyo_plan(spot_discount=SpotDiscount(50))
    assert "c5.xlarge" in {n.instance_type for n in discount.fleet.nodes}
    assert "m5.xlarge" not in {n.instance_type for n in discount.fleet.nodes}
    assert "the catalog-ap-northeast-1.json' has market prices of 2026-08-03T09:30:00Z, which the discount" in (
        render_report(discount).replace("catalog file '", "the ")
    )


def test_offerings_filter_types_and_zones_and_the_report_lists_what_they_removed():
    result = tokyo_plan()
    assert set(result.instance_types) == {"c5.xlarge", "m5.xlarge", "m5.2xlarge"}
    excluded = dict(result.offerings.pools[0].excluded)
    assert excluded == {
        "c4.xlarge": "no on-demand price in ap-northeast-1, so Karpenter offers none",
        "m4.xlarge": "not offered in ap-northeast-1",
        "r5.xlarge": "offered only in ap-northeast-1d, none of the NodePool's zones",
    }
    m5_2xlarge = next(o for o in result.node_options if o.name == "m5.2xlarge")
    assert dict(m5_2xlarge.offerings["on-demand"]) == {A: 0.496}, "planned only in the zone it is offered in"
    assert dict(m5_2xlarge.offerings["spot"]) == {A: 0.2}
    text = render_report(result)
    assert "  offerings: checked against the offerings catalog file 'catalog-ap-northeast-1.json' recorded" in text
    assert "3 types the requirements allow cannot be launched" in text
    assert "    NodePool default: m4.xlarge: not offered in ap-northeast-1" in text
    data = plan_data(result)["prices"]["offerings"]
    assert data["checked"] is True and data["excluded"] == {"default": excluded}


def test_a_type_priced_by_the_user_is_planned_though_the_refresh_found_no_price():
    result = tokyo_plan(price_overrides={"c4.xlarge": 0.2})
    assert "c4.xlarge" in result.instance_types
    assert result.prices.sources["c4.xlarge"] == "override"
    assert result.prices.sources["c5.xlarge"] == "refresh"
    text = render_report(result)
    assert "  on-demand (refresh): catalog file 'catalog-ap-northeast-1.json', refreshed for ap-northeast-1 on" in text
    assert "  on-demand (override): the user's price overrides (priceOverrides); 1 type: c4.xlarge" in text


def test_a_nodepool_that_leaves_nothing_offered_is_refused_naming_the_region_and_zones():
    only_r5 = ({"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["r5", "m4"]},)
    with pytest.raises(
        SizingInputError,
        match=r"nodePool.requirements: none of the 2 instance types the requirements allow can be launched in "
        r"ap-northeast-1 zones ap-northeast-1a, ap-northeast-1c, according to catalog file "
        r"'catalog-ap-northeast-1.json' \(m4.xlarge: not offered in ap-northeast-1; r5.xlarge: offered only in",
    ):
        tokyo_plan(only_r5)


def test_a_catalog_of_another_region_is_refused_naming_both():
    with pytest.raises(
        SizingInputError,
        match=r"catalog: catalog file 'catalog-ap-northeast-1.json' was refreshed for ap-northeast-1, but the plan "
        r"is for us-east-1 \(region\)",
    ):
        plan(region="us-east-1", catalog=TOKYO_CATALOG, catalog_info=TOKYO_INFO)


def test_without_recorded_offerings_the_report_says_they_are_not_checked():
    result = plan()
    assert result.offerings is not None and not result.offerings.checked
    text = render_report(result)
    assert "  offerings: not checked: catalog file 'PlanInput.catalog' records no offerings for us-east-1" in text
    assert plan_data(result)["prices"]["offerings"]["checked"] is False


def test_the_bundled_catalog_says_how_old_its_prices_are():
    result = plan_capacity(PlanInput(workloads=WORKLOADS, solver_work_limit=None))
    text = render_report(result)
    assert "  on-demand (catalog): the bundled catalog, us-east-1 prices of 2026-07-20; " in text
    data = plan_data(result)["prices"]
    assert data["catalog"]["bundled"] is True and data["catalog"]["pricesAsOf"] == {"us-east-1": "2026-07-20"}
    assert set(data["onDemand"]["sources"].values()) == {"catalog"}


def test_capacity_units_are_a_source_of_their_own():
    result = plan(region="eu-west-1")
    assert set(result.prices.sources.values()) == {"capacity"}
    assert "  on-demand (capacity): capacity units (vCPU + memory GiB / 4), not USD;" in render_report(result)
    assert plan_data(result)["fleet"]["nodes"][0]["priceSource"] in ("capacity", "spot-at-on-demand")


@pytest.mark.parametrize("percent", [-1, 100, float("nan"), True, "60"])
def test_a_bad_discount_is_refused_naming_its_setting(percent):
    with pytest.raises(SizingInputError, match=r"--spot-discount must be a percentage below the on-demand price"):
        SpotDiscount(percent, "--spot-discount")


@pytest.mark.parametrize(
    "make",
    [
        lambda: plan(),
        lambda: tokyo_plan(price_overrides={"c4.xlarge": 0.2}),
        lambda: plan(region="eu-west-1"),
        lambda: plan(region="us-east-1", price_overrides={"m5.large": 0.09}),
    ],
)
def test_every_on_demand_source_in_the_json_is_in_the_text_with_its_count(make):
    capacity_plan = make()
    text = render_report(capacity_plan)
    on_demand = plan_data(capacity_plan)["prices"]["onDemand"]
    counts = {}
    for source in on_demand["sources"].values():
        counts[source] = counts.get(source, 0) + 1
    assert set(counts) == set(on_demand["descriptions"])
    for source, count in counts.items():
        noun = "type" if count == 1 else "types"
        assert f"  on-demand ({source}): {on_demand['descriptions'][source]}; {count} {noun}: " in text
    assert sum(counts.values()) == len(capacity_plan.prices.costs)
