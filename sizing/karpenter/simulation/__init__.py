"""Karpenter v1's provisioning of one batch of pending pods, simulated.

This follows the scheduler of kubernetes-sigs/karpenter v1.14
(`pkg/controllers/provisioning/scheduling/scheduler.go`, `queue.go`,
`existingnode.go`, `nodeclaim.go`, `topology.go`, `topologygroup.go`,
`preferences.go`). Parts: `model` (what goes in and out), `state` (type table,
limits left, claims, topology counts), `scheduler` (one pass), `queue` (the
pods in order, as runs), `existing_nodes` (running nodes first),
`nodeclaims` (the NodeClaims the pass opens), `nodes` (node choice),
`topology` and `domains` (constraints), `checks` (a scenario refused before
any pass).

1. Pods are taken by cpu request descending, then memory descending, then
   creation time (here: the order of the pod groups, all pods of a group
   together).
2. A pod goes to the first running node (in the given order) with room for
   it; otherwise to the in-flight NodeClaim with the fewest pods that can take
   it (Karpenter re-sorts its claims by pod count before every pod; Go's
   sort is not stable, this simulation breaks ties by creation order);
   otherwise it opens a new NodeClaim from the first NodePool, by weight
   (then name, descending), that can launch one: the pod is allowed there
   (taints tolerated, template labels and NodePool selector matched), some
   type fits it, the limits leave a type and `nodes` is not exhausted, and
   the types left keep each key's `minValues` distinct values. A pool that
   cannot launch passes the pod to the next one (overflow).
3. A NodeClaim keeps every instance type that still holds its pods:
   sum of pod requests + DaemonSet overhead <= allocatable in cpu, memory,
   pod slots and ephemeral storage (the EC2NodeClass's root volume less
   kube-reserved storage and the nodefs eviction threshold), and that matches every pod's instance, zone and capacity-type
   constraints. Each added pod narrows that set. With minValues a claim takes
   only as many pods as keep that many distinct values among its types.
4. Topology (`topology`, `domains`): spread with maxSkew and minDomains,
   required pod anti-affinity (and the inverse: pods it selects avoid its
   pods) and required pod affinity (a domain holding a selected pod; a pod
   that selects itself starts one when none does), by hostname or by any
   node label whose domains the NodePools give, as Karpenter's
   `buildDomainGroups` takes them: zone (the NodePool's zones),
   `karpenter.sh/capacity-type` (its capacity types), an instance-type
   label such as `kubernetes.io/arch` or `node.kubernetes.io/instance-type`
   (the values its types carry) and a custom label (the values of its `In`
   requirement or template label), plus the values running nodes carry. A
   pod with such topology commits its NodeClaim to one domain per key (one
   zone, one capacity type, the types with one label value, one custom
   label value). Host ports: a type whose DaemonSets bind one of the pod's
   host ports is not a candidate.
   Custom labels: a NodeClaim starts from its NodePool's requirements and
   template labels and adds each pod's (Karpenter's `Requirements.Add`),
   so pods that ask for different values of a label never share it; its
   node carries the value (the first its NodePool allows when no pod
   chose). A node an earlier batch launched takes a pod only if the pod may
   use its NodePool and its labels meet the pod's.
5. A new NodeClaim only considers types whose capacity (not allocatable) fits
   in what is left of its NodePool's limits, and then subtracts from what is
   left the largest capacity among its candidate types (`subtractMax`). When
   no pool can launch, the pod stays pending.
6. Relaxation: a pod group carries `fallback` groups, the same pods with the
   next soft constraint dropped in Karpenter's order (the next required
   node-affinity term, preferred pod anti-affinity, preferred node affinity
   terms heaviest first, ScheduleAnyway spreads, then PreferNoSchedule taints
   tolerated). Pods that cannot be placed are retried with the fallback
   before the next group, as Karpenter relaxes a pod before taking the next.
   Pods still unplaced go to the back of the queue and are tried again,
   soft constraints back on, while a round places any (Karpenter's `Queue`):
   this is how a pod with affinity to pods scheduled after it lands.
7. At the end each NodeClaim launches its cheapest remaining offering
   (ties by name). The capacity type comes first: spot when the NodeClaim
   allows it and some candidate has a spot offering in its zones, else
   on-demand (aws/karpenter-provider-aws v1.14 `pkg/providers/instance/instance.go`,
   `getCapacityType`); when both are allowed, spot offerings dearer than the
   cheapest on-demand one are dropped first (`pkg/providers/instance/filter/filter.go`,
   `SpotOfferingFilter`, skipped under minValues). Karpenter orders the types by
   their cheapest compatible offering (kubernetes-sigs/karpenter v1.14
   `pkg/cloudprovider/types.go`, `OrderByPrice` / `Truncate`) and sends the
   cheapest 60 to EC2 Fleet; for on-demand the lowest-price strategy takes the
   cheapest. For spot Karpenter asks for price-capacity-optimized, which weighs
   capacity pools and is not strictly the cheapest; this simulation models
   the cheapest.
8. Offerings (`NodeOption.offerings`): a NodeClaim keeps only types with an
   offering of one of its capacity types in one of its zones, as Karpenter's
   scheduler keeps only types with a compatible available offering
   (`pkg/controllers/provisioning/scheduling/nodeclaim.go`,
   `filterInstanceTypesByRequirements`). A NodeClaim committing to a zone (or,
   for topology on `karpenter.sh/capacity-type`, to a capacity type) takes one
   where some candidate is offered and holds the pod, and drops the types
   offered only elsewhere.

Within one batch subtractMax keeps the launched capacity within the limits.
The overshoot Karpenter's documentation warns about comes from successive
batches: a NodeClaim created by an earlier batch counts as zero until it has
launched and its capacity is known. Model such a claim as a running node with
`capacity_reported=False`. A running node's `pods` (workload -> count) count
in topology spread, pod (anti-)affinity and host ports, as the pods of an
earlier batch do in Karpenter's cluster state.

Not modelled: volumes and their topology, capacity that runs out (insufficient
capacity errors, which make Karpenter mark an offering unavailable for a
while), minValues on zone or capacity type, the pods of a running node given
without `pods` (then only its requests count), the host IP of a host port (any
two pods binding the same port and protocol conflict), zone anti-affinity's
one-pod-per-batch late commitment (see `topology`), topology spread's
node-inclusion policies (a spread counts the pods of every node whose label
its own requirement on that key allows; Karpenter also drops nodes other
node-affinity terms exclude), and topology on labels the NodePools do not
define (region, nodepool: the planner refuses such pods, Karpenter leaves them pending).

Units: cpu in millicores, memory in MiB, pods as a count, prices in
USD/hour (or whatever unit the caller's prices use).

Speed: identical pods come in runs. For an unconstrained run the simulation
computes, per NodeClaim, how many more such pods it can take (one vectorised
pass over its candidate types) and then hands pods out by fewest-pods-first
with a heap, several at a time when the order cannot change in between.
Constrained runs keep a heap per combination of committed domains and topology counts per key and
domain.
"""

from sizing.karpenter.simulation.model import (
    ANY_ZONE,
    CAPACITY_TYPE_PRIORITY,
    LIMIT_KEYS,
    NodeOption,
    NodePoolModel,
    PendingPods,
    PlacedNode,
    Placement,
    PodGroup,
    ProvisioningResult,
    RunningNode,
    Scenario,
    TopologyRule,
)
from sizing.karpenter.simulation.scheduler import Simulator
from sizing.karpenter.simulation.state import TypeTables

__all__ = [
    "ANY_ZONE",
    "CAPACITY_TYPE_PRIORITY",
    "LIMIT_KEYS",
    "NodeOption",
    "NodePoolModel",
    "PendingPods",
    "Placement",
    "PlacedNode",
    "PodGroup",
    "ProvisioningResult",
    "RunningNode",
    "Scenario",
    "TopologyRule",
    "TypeTables",
    "simulate",
]


def simulate(scenario: Scenario, tables: TypeTables | None = None) -> ProvisioningResult:
    """The fleet Karpenter launches for `scenario`'s pending pods, and the pods left pending.

    tables: type tables kept across simulations of the same NodePools (built afresh without).
    """
    return Simulator(scenario, tables).run()
