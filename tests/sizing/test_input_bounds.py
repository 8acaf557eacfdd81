"""Input that used to hang the planner or eat gigabytes is refused at once, under a memory and a
CPU-time limit set on the child process by the test itself (`tests/bounded.py`): replica counts
past the planner's ceilings, YAML "billion laughs", deep nesting, huge values and huge stdin."""

from __future__ import annotations

import re
import textwrap

import pytest

from sizing.kube.safe_yaml import MAX_ALIAS_REPEATS, MAX_INPUT_BYTES
from sizing.kube.workloads import MAX_EXISTING_NODES, MAX_NODE_PER_POD_PODS, MAX_PEAK_PODS, MAX_REPLICAS, MAX_WORKLOADS
from sizing.planning.ceilings import MAX_NODE_POOL_LABELS, MAX_NODE_POOL_REQUIREMENTS, MAX_TOPOLOGY_POD_DOMAINS
from sizing.planning.objects import NOT_PLANNED_NAMED, not_planned_notes
from tests.bounded import CPU_LIMIT_SECONDS, MEMORY_LIMIT_MIB, run_bounded
from tests.sizing.sample_objects import NODE_POOL, deployment

# A refusal before planning takes about a second of CPU and a hundred MiB on this machine; these are
# generous bounds that a simulation of millions of pods or an expanded alias bomb would break.
REFUSED_WITHIN_CPU_SECONDS = 15
REFUSED_WITHIN_RSS_MIB = 400
# The longest message any of these may print: values are echoed cut.
MESSAGE_LIMIT = 4200


def laughs(levels=9, anchor_at="replicas"):
    """Nested aliases, each level ten of the one below: 10**levels values once expanded."""
    lines = ['lol0: &l0 "lol"'] + [f"lol{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + f"\n{anchor_at}: *l{levels}\n"


def refused(tmp_path, files, *more, stdin=b""):
    paths = []
    for index, text in enumerate(files):
        path = tmp_path / f"input-{index}.yaml"
        path.write_text(text) if isinstance(text, str) else path.write_bytes(text)
        paths.append(str(path))
    run = run_bounded(["-m", "sizing", "plan", *paths, *more], stdin=stdin)
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])
    assert run.stdout == ""
    assert "Traceback" not in run.stderr and run.stderr.startswith("error: ") and run.stderr.count("\n") == 1
    assert len(run.stderr) < MESSAGE_LIMIT
    assert run.cpu_seconds < REFUSED_WITHIN_CPU_SECONDS, run
    assert run.max_rss_mib < REFUSED_WITHIN_RSS_MIB, run
    return run.stderr


def test_the_bounds_are_the_tests_own():
    assert MEMORY_LIMIT_MIB <= 1024 and CPU_LIMIT_SECONDS <= 30


@pytest.mark.parametrize("replicas", [10**7, 10**9])
def test_a_deployment_of_millions_of_replicas_is_refused_naming_the_ceiling(tmp_path, replicas):
    err = refused(tmp_path, [NODE_POOL + "---\n" + deployment(replicas=str(replicas))])
    assert "Deployment default/web: spec.replicas" in err
    assert f"{replicas:,}, more than {MAX_REPLICAS:,}" in err and "ceiling" in err


def test_an_hpa_of_a_billion_replicas_is_refused_naming_it(tmp_path):
    hpa = textwrap.dedent("""\
        apiVersion: autoscaling/v2
        kind: HorizontalPodAutoscaler
        metadata: {name: web}
        spec: {scaleTargetRef: {kind: Deployment, name: web}, minReplicas: 1, maxReplicas: 1000000000}
        """)
    err = refused(tmp_path, [NODE_POOL, deployment(), hpa])
    assert "HorizontalPodAutoscaler default/web: spec.maxReplicas is 1,000,000,000" in err
    assert f"more than {MAX_REPLICAS:,}" in err


def test_a_description_of_a_billion_replicas_is_refused_naming_the_key(tmp_path):
    description = "workloads: [{name: api, requests: {cpu: 1, memory: 1Gi}, maxReplicas: 1000000000}]\n"
    err = refused(tmp_path, [description])
    assert "workloads[0].maxReplicas must be at most 100,000" in err and "ceiling" in err


def test_pods_at_peak_past_the_ceiling_in_all_are_refused(tmp_path):
    # Each workload is under the per-workload ceiling; together, with their surge, they are not.
    workloads = [deployment(f"w{i}", str(MAX_REPLICAS // 2)) for i in range(3)]
    err = refused(tmp_path, [NODE_POOL, *workloads])
    assert f"more than {MAX_PEAK_PODS:,}" in err and "pods at peak" in err and "'w0'" in err


def test_more_workloads_than_the_ceiling_are_refused(tmp_path):
    many = "---\n".join(deployment(f"w{i}", "1") for i in range(MAX_WORKLOADS + 1))
    err = refused(tmp_path, [NODE_POOL, many])
    assert f"{MAX_WORKLOADS + 1:,} workloads" in err and f"more than {MAX_WORKLOADS:,}" in err


def test_pods_that_each_need_a_node_past_their_ceiling_are_refused(tmp_path):
    text = textwrap.dedent(f"""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: web}}
        spec:
          replicas: {MAX_NODE_PER_POD_PODS}
          template:
            metadata: {{labels: {{app: web}}}}
            spec:
              affinity:
                podAntiAffinity:
                  requiredDuringSchedulingIgnoredDuringExecution:
                    - {{topologyKey: kubernetes.io/hostname, labelSelector: {{matchLabels: {{app: web}}}}}}
              containers: [{{name: app, resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}}}]
        """)
    err = refused(tmp_path, [NODE_POOL, text])
    assert "need a node each" in err and f"more than {MAX_NODE_PER_POD_PODS:,}" in err and "'web'" in err


def test_a_billion_laughs_in_replicas_is_refused_before_it_is_expanded(tmp_path):
    text = laughs() + deployment().split("spec:\n", 1)[0]
    err = refused(tmp_path, [text])
    # Billions of values once expanded; counted on the node graph, never built.
    assert re.search(r"uses aliases \(\*name\) that repeat \d,\d{3},\d{3},\d{3} values", err), err
    assert f"more than the {MAX_ALIAS_REPEATS:,}" in err


def test_a_billion_laughs_in_a_description_is_refused(tmp_path):
    err = refused(tmp_path, [laughs(anchor_at="priceOverrides")])
    assert "uses aliases (*name) that repeat" in err


def test_a_recursive_alias_is_refused(tmp_path):
    err = refused(tmp_path, ["workloads: &w [*w]\n"])
    assert "an alias refers to a value that contains it" in err


def test_deep_nesting_is_refused(tmp_path):
    err = refused(tmp_path, ["workloads: " + "[" * 100_000 + "\n"])
    assert "nest more than 100 deep" in err


def test_a_huge_value_is_echoed_cut(tmp_path):
    description = (
        f"region: {'x' * 100_000}\nworkloads: [{{name: a, requests: {{cpu: 1, memory: 1Gi}}, maxReplicas: 1}}]\n"
    )
    err = refused(tmp_path, [description])
    assert "(100,000 characters)" in err and len(err) < 1000


def test_a_number_of_thousands_of_digits_is_refused(tmp_path):
    err = refused(tmp_path, [deployment(replicas="9" * 5000)])
    assert "a number has more than 4,300 digits" in err


def test_stdin_past_the_size_limit_is_refused_without_reading_it_all(tmp_path):
    err = refused(tmp_path, [], "-", stdin=b"# padding\n" * (MAX_INPUT_BYTES // 10 + 1))
    assert "stdin is larger than 16 MiB" in err


def test_a_file_past_the_size_limit_is_refused_unread(tmp_path):
    path = tmp_path / "big.yaml"
    with path.open("wb") as stream:
        stream.truncate(MAX_INPUT_BYTES + 1)
    err = refused(tmp_path, [], str(path))
    assert "is larger than 16 MiB" in err


# --- the doors of custom labels, topology on any key and catalog files ----------------------------------


def _pool_with_labels(values=0, labels=0, requirements=0):
    """NODE_POOL with a custom key of `values` values, `labels` template labels and `requirements` more
    requirements."""
    template = ", ".join(f"l{i}.example.com/x: a" for i in range(labels))
    lines = [f"        - {{key: r{i}.example.com/x, operator: Exists}}\n" for i in range(requirements)]
    if values:
        listed = ", ".join(f"v{i}" for i in range(values))
        lines.append(f"        - {{key: example.com/rack, operator: In, values: [{listed}]}}\n")
    text = NODE_POOL.replace("  template:\n", f"  template:\n    metadata: {{labels: {{{template}}}}}\n")
    return text + "".join(lines)


def test_a_spread_over_thousands_of_custom_values_is_refused_under_a_bound(tmp_path):
    # Without the ceiling: 1,000 values and 2,500 pods ran past a minute and a half of CPU.
    spread = (
        "      topologySpreadConstraints: [{topologyKey: example.com/rack, maxSkew: 1, "
        "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]\n"
    )
    workload = deployment(replicas="2000").replace("      containers:", spread + "      containers:")
    err = refused(tmp_path, [_pool_with_labels(values=5000) + "---\n" + workload])
    assert "'web': 2,500 pods over 5,000 values of example.com/rack" in err
    assert f"more than {MAX_TOPOLOGY_POD_DOMAINS:,}" in err and "ceiling" in err


@pytest.mark.parametrize(
    "pool, named",
    [
        (
            {"labels": MAX_NODE_POOL_LABELS + 1},
            f"spec.template.metadata.labels: has {MAX_NODE_POOL_LABELS + 1} entries, more than the 100 allowed",
        ),
        (
            {"requirements": MAX_NODE_POOL_REQUIREMENTS},
            f"spec.template.spec.requirements: has {MAX_NODE_POOL_REQUIREMENTS + 2} items, more than the 100 allowed",
        ),
    ],
)
def test_a_nodepool_past_karpenters_own_bounds_is_refused(tmp_path, pool, named):
    # The object door: the NodePool CRD's own bounds (maxProperties, maxItems), as the API server applies them.
    err = refused(tmp_path, [_pool_with_labels(**pool) + "---\n" + deployment()])
    assert f"NodePool general: the NodePool CRD (karpenter.sh/v1) refuses it: {named}" in err


def test_a_description_with_too_many_nodepool_labels_is_refused_naming_the_key(tmp_path):
    labels = ", ".join(f"l{i}.example.com/x: a" for i in range(MAX_NODE_POOL_LABELS + 1))
    description = (
        f"nodePool: {{labels: {{{labels}}}}}\n"
        "workloads: [{name: api, requests: {cpu: 1, memory: 1Gi}, maxReplicas: 1}]\n"
    )
    err = refused(tmp_path, [description])
    assert f"nodePool: {MAX_NODE_POOL_LABELS + 1} template labels, more than 100" in err


def test_a_description_without_requests_is_held_to_the_ceilings_too(tmp_path):
    err = refused(tmp_path, ["workloads: [{name: api, requests: {}, maxReplicas: 1000000000}]\n"])
    assert "workloads[0].maxReplicas must be at most 100,000" in err


def test_a_huge_ami_family_is_echoed_cut(tmp_path):
    description = (
        f"nodePool: {{amiFamily: {'A' * 100_000}}}\n"
        "workloads: [{name: api, requests: {cpu: 1, memory: 1Gi}, maxReplicas: 1}]\n"
    )
    err = refused(tmp_path, [description])
    assert "nodePool.amiFamily" in err and "(100,000 characters)" in err and len(err) < 1000


def test_a_catalog_past_the_size_limit_is_refused_unread(tmp_path):
    catalog = tmp_path / "catalog.json"
    with catalog.open("wb") as stream:
        stream.truncate(MAX_INPUT_BYTES + 1)
    err = refused(tmp_path, [NODE_POOL + "---\n" + deployment()], "--catalog", str(catalog))
    assert f"catalog file {str(catalog)!r} is larger than 16 MiB" in err


def test_a_deeply_nested_catalog_is_refused(tmp_path):
    catalog = tmp_path / "catalog.json"
    catalog.write_text("[" * 100_000 + "]" * 100_000)
    err = refused(tmp_path, [NODE_POOL + "---\n" + deployment()], "--catalog", str(catalog))
    assert "not a catalog (its JSON nests too deep)" in err


def test_a_list_of_twenty_thousand_deployments_is_refused_while_it_is_read(tmp_path):
    # kubectl's `get -o yaml` shape: one `kind: List` whose items follow each other; the ceiling
    # stops the read at the first workload past it, with no NodePool in the input at all.
    items = "".join("\n- " + textwrap.indent(deployment(f"w{i}", "1"), "  ").lstrip() for i in range(20_000))
    err = refused(tmp_path, [f"apiVersion: v1\nitems:{items}\nkind: List\n"])
    assert f"document 1.items[{MAX_WORKLOADS}]: {MAX_WORKLOADS + 1:,} workloads" in err
    assert f"more than {MAX_WORKLOADS:,}" in err and "NodePool" in err


def test_existing_nodes_past_the_ceiling_are_refused_while_they_are_read(tmp_path):
    nodes = "---\n".join(
        f"apiVersion: v1\nkind: Node\nmetadata: {{name: n{i}}}\n" for i in range(MAX_EXISTING_NODES + 1)
    )
    err = refused(tmp_path, [NODE_POOL, deployment(), nodes])
    assert f"document {MAX_EXISTING_NODES + 1}: {MAX_EXISTING_NODES + 1:,} existing nodes" in err


def test_objects_not_planned_by_the_thousand_are_counted_per_kind_in_one_short_note():
    items = [f"ConfigMap default/settings-{i} (places no pods)" for i in range(19_990)]
    items += ["Service default/web (places no pods)"]
    items += [f"Pod default/web-{i} (created by its owner, ReplicaSet web-{i})" for i in range(50)]
    notes = not_planned_notes(items)
    assert notes[0] == (
        "19,990 ConfigMap: default/settings-0, default/settings-1, default/settings-2 and 19,987 more; "
        "1 Service: default/web (places no pods)"
    )
    assert len(notes) == NOT_PLANNED_NAMED + 1 and notes[-1] == "41 more objects, for 41 other reasons"
    assert sum(map(len, notes)) < 2000
    # A few objects keep their names, as before.
    assert not_planned_notes(items[-3:-1]) == (
        "Pod default/web-47 (created by its owner, ReplicaSet web-47)",
        "Pod default/web-48 (created by its owner, ReplicaSet web-48)",
    )
