"""One scheduling pass over a batch of pending pods (see the package docstring for the rules).

The scheduler (Karpenter's `scheduler.go`) takes the queue's runs of pods (`queue`) in turn and
places each pod on a running node (`existing_nodes`) or on a NodeClaim it opens or has opened
(`nodeclaims`), under the topology of the pods (`topology`, `domains`).

Pods come in runs of identical pods. An unconstrained run is handed out with a heap of claims
ordered by (pods, creation), several pods at a time when the order cannot change in between.
A constrained run (topology, host ports, or the target of another workload's anti-affinity)
keeps one heap per combination of domains the claims are committed to (one per topology key) and
takes one pod at a time whenever domain counts decide where the next pod may go.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from dataclasses import replace
from types import MappingProxyType

from sizing.karpenter.labels import LabelRequirement
from sizing.karpenter.simulation.checks import check_scenario
from sizing.karpenter.simulation.domains import Domains
from sizing.karpenter.simulation.existing_nodes import ExistingNodes, FirstRunning
from sizing.karpenter.simulation.model import (
    CAPACITY_TYPE,
    LIMIT_KEYS,
    OUTSIDE_NODE_POOLS,
    ZONE,
    PendingPods,
    Placement,
    PodGroup,
    ProvisioningResult,
    Scenario,
)
from sizing.karpenter.simulation.nodeclaims import NodeClaims
from sizing.karpenter.simulation.nodes import launch, most_pods, set_candidates
from sizing.karpenter.simulation.queue import (
    PodRun,
    Stamp,
    is_careful,
    pod_runs,
    pods_by_workload,
    run_for,
    smallest_later,
)
from sizing.karpenter.simulation.rounds import fewest_first
from sizing.karpenter.simulation.state import (
    DIMENSIONS,
    NOTHING,
    Candidates,
    Claim,
    LimitsLeft,
    TopologyCounts,
    TypeTable,
    TypeTables,
    Valid,
    Vector,
    apply_mask,
)
from sizing.karpenter.simulation.topology import (
    Inverse,
    OwnSpread,
    block_reason,
    commit_domain,
    domain_keys,
    hostname_bootstrap,
    hostname_cap,
    valid_domains,
)

_ANY = "*"
# A bucket of NodeClaims: per domain key of the run, the domain they are committed to, or _ANY.
Bucket = tuple[str, ...]
# What committing a NodeClaim to domains narrows: zones, capacity types, candidates, headroom, labels.
_Snapshot = tuple[frozenset[str] | None, frozenset[str], Candidates, Vector, dict[str, LabelRequirement]]

_ZONE_ONLY = (ZONE,)


def _bucket_valid(name: Bucket, keys: tuple[str, ...], valid: Valid) -> bool:
    """Whether claims of this bucket may be committed, or are, to valid domains on every key."""
    if len(keys) == 1:
        return name[0] == _ANY or name[0] in valid[keys[0]]
    return all(domain == _ANY or domain in valid[key] for key, domain in zip(keys, name, strict=True))


class Simulator:
    """One pass of Karpenter's scheduler over a scenario's batch: `run` takes the queue's runs in
    order, puts each pod on a running node (`ExistingNodes`) or a NodeClaim (`NodeClaims`), then
    tries the pods that failed again, as Karpenter's queue does."""

    def __init__(self, scenario: Scenario, tables: TypeTables | None = None):
        check_scenario(scenario)
        self.scenario = scenario
        self.pools = scenario.pools
        self.primary = scenario.primary_pool
        self.table = TypeTable(self.pools) if tables is None else tables.for_pools(self.pools)
        self.limits = LimitsLeft(self.pools, scenario.running_nodes, self.primary)
        self.groups: list[PodGroup] = list(scenario.pod_groups)
        self.inverse = Inverse(self.groups)
        self.counts = TopologyCounts()
        self.heap: list[tuple[int, int, Claim]] = []
        # Claims out of the heap for now: no room for the pods of the last run, perhaps for later ones.
        self.aside: list[tuple[int, int, Claim]] = []
        self.pending: list[PendingPods] = []
        # (group index, pods) that failed, in the order they failed: Karpenter's queue retries them.
        self.failed: list[tuple[int, int]] = []
        # Pods placed per workload, on running nodes and new NodeClaims alike (both add to it).
        self.placed: dict[str, int] = {}
        self.relaxed: dict[str, list[str]] = {}
        self.domains = Domains(self.table, self.pools, scenario.running_nodes, self.groups)
        self.existing = ExistingNodes(scenario.running_nodes, self.domains, self.counts, self.inverse, self.placed)
        self.nodeclaims = NodeClaims(self.pools, self.table, self.limits, self.domains, self.placed)
        # Why the last constrained pass left pods over, for their PendingPods.
        self.reason: str | None = None

    # -- recording -------------------------------------------------------------------------

    def _record_domains(self, claims: Iterable[Claim], run: PodRun) -> None:
        if not self.domains.tracked:
            return
        for claim in claims:
            placed = claim.placed.get(run.segments[0][0], 0) if len(run.segments) == 1 else None
            if placed is None:
                for group_index, _ in run.segments:
                    workload = self.groups[group_index].workload
                    self.domains.record_claim(self.counts, workload, claim, claim.placed.get(group_index, 0))
            else:
                self.domains.record_claim(self.counts, run.group.workload, claim, placed)

    # -- an unconstrained run --------------------------------------------------------------

    def _place_run(self, run: PodRun, stamp: Stamp, smallest_later: Vector) -> None:
        heap = self.heap
        requests = run.requests
        # Claims set aside by earlier runs come back when their headroom might hold this run's pod;
        # the others stay aside without a look at the heap (thousands of claims, dozens of runs),
        # and a claim without room for the smallest pod of this run or a later one is done for the batch.
        floor = [min(requests[d], smallest_later[d]) for d in range(DIMENSIONS)]
        kept: list[tuple[int, int, Claim]] = []
        for entry in self.aside:
            headroom = entry[2].headroom
            if (
                headroom[0] >= requests[0]
                and headroom[1] >= requests[1]
                and headroom[2] >= requests[2]
                and headroom[3] >= requests[3]
            ):
                heapq.heappush(heap, entry)
            elif (
                headroom[0] >= floor[0]
                and headroom[1] >= floor[1]
                and headroom[2] >= floor[2]
                and headroom[3] >= floor[3]
            ):
                kept.append(entry)
        set_aside = kept
        touched: list[Claim] = []
        pending_reason: str | None = None
        for group_index, count in run.segments:
            count = self.existing.fill(run, group_index, count) if self.existing.nodes else count
            while count > 0 and pending_reason is None:
                if heap:
                    pod_count, index, claim = heap[0]
                    if claim.run_stamp != stamp:
                        claim.run_stamp = stamp
                        claim.room_in_run = self.nodeclaims.room_in(claim, run)
                    if claim.room_in_run <= 0:
                        set_aside.append(heapq.heappop(heap))
                        continue
                    take = min(count, claim.room_in_run)
                    if len(heap) > 1:
                        runner_up = heap[1] if len(heap) == 2 else min(heap[1], heap[2])
                        # The claim stays first while (pods, index) sorts before the runner-up's.
                        lead = runner_up[0] - pod_count + (1 if index < runner_up[1] else 0)
                        take = min(take, max(lead, 1))
                else:
                    opened, pending_reason = self.nodeclaims.open(run, stamp)
                    if opened is None:
                        break
                    claim = opened
                    claim.run_stamp = stamp
                    # Room for pods of this run on the claim's best type, counting this first pod.
                    claim.room_in_run = self.nodeclaims.most_pods(claim.pool, claim.candidates, NOTHING, requests)
                    if claim.room_in_run < 1:
                        raise RuntimeError("a new NodeClaim has no room for the pod that opened it")
                    heapq.heappush(heap, (0, claim.index, claim))
                    continue
                claim.room_in_run -= take
                self.nodeclaims.add(claim, run, group_index, take)
                if claim.touched_stamp != stamp:
                    claim.touched_stamp = stamp
                    touched.append(claim)
                heapq.heapreplace(heap, (claim.pod_count, claim.index, claim))
                count -= take
            if count > 0:
                self._add_pending(group_index, count, pending_reason)
        for claim in touched:
            self.nodeclaims.narrow(claim, run)
        self._record_domains(touched, run)
        self.aside = set_aside

    # -- a constrained run -----------------------------------------------------------------

    def _pool_names(self, group: PodGroup) -> list[str]:
        return [pool.name for pool in self.pools if group.pools is None or pool.name in group.pools]

    def _place_constrained(self, run: PodRun, stamp: Stamp, group_index: int, count: int) -> int:
        """Place `count` pods of a constrained group; returns the pods left over (self.reason says why)."""
        if count > 0 and hostname_bootstrap(run.group, self.placed):
            # The first pod picks the node for the others; where they may go changes once it is placed.
            if self._place_pass(run, stamp, group_index, 1):
                return count
            count -= 1
        return self._place_pass(run, stamp, group_index, count) if count > 0 else 0

    def _bucket(self, claim: Claim, keys: tuple[str, ...]) -> Bucket:
        """Per key, the domain the claim is committed to, or _ANY."""
        if keys == _ZONE_ONLY:
            return (claim.zone or _ANY,)
        bucket = []
        for key in keys:
            values = self.domains.claim_values(claim, key)
            bucket.append(next(iter(values)) if values is not None and len(values) == 1 else _ANY)
        return tuple(bucket)

    def _place_pass(self, run: PodRun, stamp: Stamp, group_index: int, count: int) -> int:
        group = run.group
        keys = domain_keys(group, self.inverse)
        domains = {key: self.domains.for_group(group, key) for key in keys}
        for key in keys:
            if not domains[key]:
                self.reason = (
                    "the pod's zone topology needs zones; none are known for its NodePools"
                    if key == ZONE
                    else f"the pod's topology on {key} has no domain: no NodePool it may use gives that label a "
                    "value (a requirement with In or a template label) and no running node carries it"
                )
                return count
        buckets: dict[Bucket, list[tuple[int, int, Claim]]] = {}
        room: dict[int, int] = {}
        requests = run.requests
        for claim in self.nodeclaims.claims:
            headroom = claim.headroom
            if (
                headroom[0] < requests[0]
                or headroom[1] < requests[1]
                or headroom[2] < requests[2]
                or headroom[3] < requests[3]
            ):
                continue  # full for this pod: the common case once a fleet is large
            claim_room = self.nodeclaims.room_in(claim, run)
            if claim_room > 0:
                claim_room = min(
                    claim_room, hostname_cap(group, claim.workloads, claim.ports, self.inverse, self.placed)
                )
            if claim_room > 0:
                room[claim.index] = claim_room
                buckets.setdefault(self._bucket(claim, keys), []).append((claim.pod_count, claim.index, claim))
        for heap in buckets.values():
            heapq.heapify(heap)
        touched: dict[int, Claim] = {}
        self.reason = None
        first_running = FirstRunning(self.existing, run, keys)
        own_spread = OwnSpread.of(group, domains, self.counts, self.inverse) if keys else None
        # Rounds are tried again only once a claim has opened: until then the bucket that ran
        # out of room still has none.
        rounds_ready = own_spread is not None
        while count > 0:
            if rounds_ready and own_spread is not None and not first_running.nodes and own_spread.in_rounds():
                rounds_ready = False
                count -= self._place_rounds(own_spread, buckets, room, run, group_index, count, touched)
                if count == 0:
                    break
            valid: Valid | None
            if own_spread is not None:
                valid = own_spread.valid()
            elif keys:
                valid = {key: valid_domains(group, key, domains[key], self.counts, self.inverse) for key in keys}
            else:
                valid = None
            if valid is not None and not all(valid.values()):
                blocked = next(key for key in keys if not valid[key])
                self.reason = block_reason(
                    group, blocked, domains[blocked], self.counts, self.inverse, self._pool_names(group)
                )
                break
            # Running nodes come first, in order.
            index, fit = first_running.find(valid)
            if index is not None:
                take = 1 if keys else min(fit, count)
                self.existing.place(index, run, group_index, take)
                if own_spread is not None:
                    own_spread.add(self.domains.node_value(self.existing.nodes[index], own_spread.key), take)
                count -= take
                continue
            best = self._best_claim(buckets, room, valid, run, keys)
            just_opened = False
            if best is None:
                if hostname_cap(group, {}, frozenset(), self.inverse, self.placed) < 1:
                    # Pod affinity by hostname: an empty new node never holds the pods it needs.
                    self.reason = "no node with room holds a pod its hostname pod affinity selects"
                    break
                opened, reason = self.nodeclaims.open(run, stamp, valid)
                if opened is None:
                    self.reason = reason
                    break
                claim = opened
                just_opened = rounds_ready = True
                claim_room = most_pods(self.table, claim.pool, claim.candidates, NOTHING, run.requests)
                claim_room = min(
                    claim_room, hostname_cap(group, claim.workloads, claim.ports, self.inverse, self.placed)
                )
                if claim_room < 1:
                    raise RuntimeError("a new NodeClaim has no room for the pod that opened it")
                room[claim.index] = claim_room
                best = claim
            elif not keys:
                heapq.heappop(buckets[()])
            if valid is not None and not self._commit(best, run, valid, keys, room, just_opened):
                continue  # the claim's types with a valid domain have no room left: try another
            take = 1 if keys else min(count, room[best.index], self._lead(buckets, best))
            self.nodeclaims.add(best, run, group_index, take)
            if keys:
                self.domains.record_claim(self.counts, group.workload, best, take)
                if own_spread is not None:
                    values = self.domains.claim_values(best, own_spread.key)
                    if values is not None and len(values) == 1:
                        own_spread.add(next(iter(values)), take)
            room[best.index] -= take
            touched[best.index] = best
            count -= take
            if room[best.index] > 0:
                heapq.heappush(buckets.setdefault(self._bucket(best, keys), []), (best.pod_count, best.index, best))
        for claim in touched.values():
            self.nodeclaims.narrow(claim, run)
        if not keys:
            single = PodRun(run.group, run.requests, run.mask, run.mask_list, [(group_index, 0)])
            self._record_domains(touched.values(), single)
        return count

    def _place_rounds(
        self,
        own_spread: OwnSpread,
        buckets: dict[Bucket, list[tuple[int, int, Claim]]],
        room: dict[int, int],
        run: PodRun,
        group_index: int,
        count: int,
        touched: dict[int, Claim],
    ) -> int:
        """Whole rounds of a maxSkew-1 spread over its own pods at once; returns the pods placed.

        With every domain level, the next pods go one to each domain in turn, and each domain's
        pod goes to the claim of its bucket with the fewest pods: what one domain takes does not
        change where another's go. So while no running node can take a pod, no claim with room is
        still uncommitted (open to every domain), and every domain's claims have room for them, R
        rounds are R pods per domain, handed out in each bucket fewest-pods-first (`fewest_first`),
        as one pod at a time would."""
        domains = sorted(own_spread.per_domain)
        if (_ANY,) in buckets and any(self._live(entry, room) for entry in buckets[(_ANY,)]):
            return 0
        # One entry per claim: its latest, with room left.
        live = {
            domain: list({entry[1]: entry for entry in buckets.get((domain,), ()) if self._live(entry, room)}.values())
            for domain in domains
        }
        rounds = min([count // len(domains), *(sum(room[index] for _, index, _ in live[d]) for d in domains)])
        if rounds < 1:
            return 0
        workload = run.group.workload
        for domain in domains:
            claims = {index: claim for _, index, claim in live[domain]}
            taken = fewest_first([(held, index, room[index]) for held, index, _ in live[domain]], rounds)
            for index, take in taken.items():
                claim = claims[index]
                self.nodeclaims.add(claim, run, group_index, take)
                self.domains.record_claim(self.counts, workload, claim, take)
                room[index] -= take
                touched[index] = claim
            heap = [(claim.pod_count, index, claim) for index, claim in claims.items() if room[index] > 0]
            heapq.heapify(heap)
            buckets[(domain,)] = heap
            own_spread.add(domain, rounds)
        return rounds * len(domains)

    @staticmethod
    def _live(entry: tuple[int, int, Claim], room: Mapping[int, int]) -> bool:
        """Whether a bucket's entry is its claim's latest, with room left (older ones are skipped)."""
        pod_count, index, claim = entry
        return room.get(index, 0) > 0 and pod_count == claim.pod_count

    def _commit(
        self, claim: Claim, run: PodRun, valid: Valid, keys: tuple[str, ...], room: dict[int, int], just_opened: bool
    ) -> bool:
        """Commit the claim, per key it is not committed on, to a valid domain (the fewest pods of the
        group's spread on the key first); False, the claim as it was, when no valid domain leaves room
        for the pod. Where offerings differ, a zone or capacity type is one where some type of the
        claim is offered and holds the pod (a claim just opened for the pod always gets one), and the
        claim then keeps only the types offered there."""
        before: _Snapshot | None = None
        narrowed = False
        for key in keys:
            values = self.domains.claim_values(claim, key)
            if values is not None and len(values) == 1:
                continue  # committed already, to a domain its bucket showed valid
            options = self.domains.claim_options(
                claim, key, run.group, self.nodeclaims.matching(claim.candidates, run), run.requests
            )
            options = valid[key] if options is None else options & valid[key]
            offered = self.table.partial and key in (ZONE, CAPACITY_TYPE)
            if offered and options:
                # Its types with room for the pod may be offered only in domains the topology rules out.
                options = self._offered_with_room(claim, run, key, options, just_opened)
            if not options:
                self._restore(claim, before)
                room[claim.index] = 0
                return False
            if before is None:
                before = (claim.zones, claim.capacity_types, claim.candidates, claim.headroom, dict(claim.labels))
            self.domains.commit(claim, key, commit_domain(run.group, key, options, self.counts))
            if offered:
                offer = self.table.offer_mask(claim.zones, claim.capacity_types)
                set_candidates(self.table, claim, apply_mask(claim.candidates, offer))
            narrowed = narrowed or offered or key in self.domains.instance_keys
        if narrowed:
            left = min(
                self.nodeclaims.room_in(claim, run),
                hostname_cap(run.group, claim.workloads, claim.ports, self.inverse, self.placed),
            )
            if left < 1 and not just_opened:
                # Not committed after all: the claim keeps its domains for other pods.
                self._restore(claim, before)
                room[claim.index] = 0
                return False
            room[claim.index] = max(min(room[claim.index], left), 1)
        return True

    @staticmethod
    def _restore(claim: Claim, before: _Snapshot | None) -> None:
        """Undo `_commit`'s narrowing of the claim (`before`: what it had; None: nothing was narrowed)."""
        if before is not None:
            claim.zones, claim.capacity_types, claim.candidates, claim.headroom, claim.labels = before

    def _offered_with_room(
        self, claim: Claim, run: PodRun, key: str, options: frozenset[str], opener: bool
    ) -> frozenset[str]:
        """The zones (key ZONE) or capacity types among `options` where some type of the claim is
        offered and holds one more pod of the run (keeping minValues). A claim just opened for the
        pod always gets one: its types all fit the pod and are offered in one of its zones and
        capacity types, though minValues may not hold in one zone."""
        candidates = self.nodeclaims.matching(claim.candidates, run)
        by_option = {}
        for option in sorted(options):
            one = frozenset({option})
            mask = (
                self.table.offer_mask(one, claim.capacity_types)
                if key == ZONE
                else self.table.offer_mask(claim.zones, one)
            )
            by_option[option] = apply_mask(candidates, mask)
        found = frozenset(
            option
            for option, rows in by_option.items()
            if most_pods(self.table, claim.pool, rows, claim.requests, run.requests) > 0
        )
        if found or not opener:
            return found
        return frozenset(option for option, rows in by_option.items() if len(rows))

    @staticmethod
    def _lead(buckets: Mapping[Bucket, list[tuple[int, int, Claim]]], best: Claim) -> int:
        heap = buckets.get(())
        if not heap:
            return 2**62
        runner_up = heap[0]
        return max(runner_up[0] - best.pod_count + (1 if best.index < runner_up[1] else 0), 1)

    def _fits_valid(self, claim: Claim, valid: Valid, keys: tuple[str, ...], run: PodRun) -> bool:
        """Whether an uncommitted claim can still reach a valid domain on every key."""
        for key in keys:
            options = self.domains.claim_options(
                claim, key, run.group, self.nodeclaims.matching(claim.candidates, run), run.requests
            )
            if options is not None and not (options & valid[key]):
                return False
        return True

    def _best_claim(
        self,
        buckets: dict[Bucket, list[tuple[int, int, Claim]]],
        room: Mapping[int, int],
        valid: Valid | None,
        run: PodRun,
        keys: tuple[str, ...],
    ) -> Claim | None:
        """The claim with the fewest pods (then the oldest) that may take the next pod."""
        best = None
        best_key = None
        for name, heap in buckets.items():
            if valid is not None and not _bucket_valid(name, keys, valid):
                continue
            held = []
            while heap:
                pod_count, index, claim = heap[0]
                # A claim that took a pod since it was pushed is in the heap of its bucket again.
                if room.get(index, 0) <= 0 or pod_count != claim.pod_count:
                    heapq.heappop(heap)
                    continue
                if valid is not None and _ANY in name and not self._fits_valid(claim, valid, keys, run):
                    held.append(heapq.heappop(heap))
                    continue
                break
            if heap:
                head = heap[0]
                if best_key is None or (head[0], head[1]) < best_key:
                    best, best_key = head[2], (head[0], head[1])
            for entry in held:
                heapq.heappush(heap, entry)
        return best

    def _place_careful(self, run: PodRun, stamp: Stamp) -> None:
        for group_index, count in run.segments:
            left = self._place_constrained(run, stamp, group_index, count)
            group = self.groups[group_index]
            while left > 0 and group.fallback is not None:
                self.groups.append(replace(group.fallback, count=left))
                fallback_index = len(self.groups) - 1
                group = self.groups[fallback_index]
                self.relaxed.setdefault(group.workload, [])
                for step in group.relaxed:
                    if step not in self.relaxed[group.workload]:
                        self.relaxed[group.workload].append(step)
                relaxed_run = run_for(self.table, group)
                relaxed_run.segments.append((fallback_index, left))
                left = self._place_constrained(relaxed_run, ("relaxed", fallback_index), fallback_index, left)
            if left > 0:
                self._add_pending(group_index, left, self.reason)
        self._rebuild_heap()

    def _rebuild_heap(self) -> None:
        self.aside = []
        self.heap = [(c.pod_count, c.index, c) for c in self.nodeclaims.claims if c.headroom[0] >= 0]
        heapq.heapify(self.heap)

    def _add_pending(self, group_index: int, count: int, reason: str | None) -> None:
        workload = self.groups[group_index].workload
        self.pending.append(PendingPods(workload, count, reason or "no node could take the pod"))
        self.failed.append((group_index, count))

    def _retry_failed(self) -> None:
        """Karpenter's queue: pods that failed go to the back and are tried again, with their soft
        constraints back, while a round places any of them (pod affinity to pods scheduled later)."""
        round_number = 0
        while self.failed:
            round_number += 1
            failed, self.failed, self.pending = self.failed, [], []
            before = sum(count for _, count in failed)
            self._rebuild_heap()
            for position, (group_index, count) in enumerate(failed):
                run = run_for(self.table, self.groups[group_index])
                run.segments.append((group_index, count))
                stamp = ("retry", round_number, position)
                if is_careful(run.group, self.inverse):
                    self._place_careful(run, stamp)
                else:
                    self._place_run(run, stamp, NOTHING)
            if sum(count for _, count in self.failed) >= before:
                break

    # -- results ---------------------------------------------------------------------------

    def run(self) -> ProvisioningResult:
        runs = pod_runs(self.groups, self.table, self.inverse)
        smallest = smallest_later(runs)
        for stamp, run in enumerate(runs):
            if is_careful(run.group, self.inverse):
                self._place_careful(run, stamp)
            else:
                self._place_run(run, stamp, smallest[stamp + 1])
        self._retry_failed()
        idle = self.scenario.idle_running
        existing = self.existing
        nodes = [
            existing.result(i, self.groups, self.primary)
            for i in range(len(existing.nodes))
            if idle or existing.placed_groups[i]
        ]
        nodes += [
            launch(
                self.table,
                claim,
                pods_by_workload(self.groups, claim.placed),
                self.pools[claim.pool].name,
                self.domains.launched_labels(claim),
            )
            for claim in self.nodeclaims.claims
        ]
        limits = self.limits
        pool_remaining = {
            pool.name: MappingProxyType(
                {key: int(value) for key, value in zip(limits.keys[i], limits.remaining[i], strict=False)}
            )
            for i, pool in enumerate(self.pools)
        }
        return ProvisioningResult(
            nodes=tuple(nodes),
            pending=tuple(self.pending),
            limits=MappingProxyType(dict(self.pools[0].limits)),
            remaining=pool_remaining[self.primary],
            limit_demand=MappingProxyType(
                {key: int(value) for key, value in zip(LIMIT_KEYS, limits.demand[0], strict=True)}
            ),
            limit_consumed=MappingProxyType(
                {key: int(value) for key, value in zip(LIMIT_KEYS, limits.used[0] + limits.reserved[0], strict=True)}
            ),
            reserved=MappingProxyType(
                {key: int(value) for key, value in zip(LIMIT_KEYS, limits.reserved[0], strict=False)}
            ),
            primary_pool=self.primary,
            pool_remaining=MappingProxyType(pool_remaining),
            relaxed=MappingProxyType({w: tuple(steps) for w, steps in self.relaxed.items()}),
            placements=self._placements(),
        )

    def _placements(self) -> Mapping[str, Mapping[Placement, int]]:
        """Per workload, the pods this batch placed, by NodePool and soft constraints relaxed."""
        found: dict[str, dict[Placement, int]] = {}

        def add(where: str, placed: Mapping[int, int]) -> None:
            for group_index, count in placed.items():
                group = self.groups[group_index]
                by_place = found.setdefault(group.workload, {})
                key = (where, group.relaxed)
                by_place[key] = by_place.get(key, 0) + count

        for node, placed in zip(self.existing.nodes, self.existing.placed_groups, strict=True):
            add((node.node_pool or self.primary) if node.in_node_pool else OUTSIDE_NODE_POOLS, placed)
        for claim in self.nodeclaims.claims:
            add(self.pools[claim.pool].name, claim.placed)
        return MappingProxyType(
            {workload: MappingProxyType(dict(sorted(by_place.items()))) for workload, by_place in sorted(found.items())}
        )
