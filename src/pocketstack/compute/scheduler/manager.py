"""The scheduler: filter, weigh, claim (seed steps 9-11).

select_destinations returns, per instance, the host it claimed resources on plus alternates
for reschedules. When nothing fits it raises NoValidHost with a message that says, per
filter, how many hosts it removed and why — built only from host names and sizes, never
from other projects' servers.
"""
from __future__ import annotations

import logging
import random
import threading

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions
from pocketstack.compute.models import Instance, ServerGroupMember
from pocketstack.compute.scheduler import claims, filters, host_state, weighers
from pocketstack.compute.scheduler.filters.resources import need

LOG = logging.getLogger(__name__)


class NoValidHost(exceptions.PocketstackError):
    code = 500
    message = "No valid host was found."


def _hosts_of(uuids) -> list[str]:
    if not uuids:
        return []
    with db.reader() as s:
        return [h for h in s.scalars(sa.select(Instance.host).where(
            Instance.uuid.in_(list(uuids)), Instance.deleted.is_(False))).all() if h]


def _context(spec: dict) -> dict:
    """Data the placement-only filters need, loaded only for requests that use them."""
    ctx: dict = {}
    hints = spec.get("hints") or {}
    if hints.get("same_host"):
        ctx["same_hosts"] = set(_hosts_of(_as_list(hints["same_host"])))
    if hints.get("different_host"):
        ctx["different_hosts"] = set(_hosts_of(_as_list(hints["different_host"])))
    group = spec.get("group")
    if group:
        with db.reader() as s:
            members = s.scalars(sa.select(ServerGroupMember.instance_uuid)
                                .where(ServerGroupMember.group_uuid == group["uuid"])).all()
        counts: dict[str, int] = {}
        for h in _claimed_hosts([m for m in members if m not in spec.get("instance_uuids", [])]):
            counts[h] = counts.get(h, 0) + 1
        ctx["group_host_counts"] = counts
        ctx["group_hosts"] = set(counts)
    return ctx


def _claimed_hosts(uuids) -> list[str]:
    """Hosts holding the servers' claims: written at claim time, unlike instance.host
    (set only once the conductor has the answer)."""
    return claims.holder_hosts(uuids) if uuids else []


_group_locks: dict[str, threading.Lock] = {}
_group_locks_guard = threading.Lock()


def _group_lock(group: str) -> threading.Lock:
    with _group_locks_guard:
        return _group_locks.setdefault(group, threading.Lock())


def _as_list(value):
    return value if isinstance(value, list) else [value]


class SchedulerManager:
    def __init__(self):
        self.conf = config.CONF.scheduler

    def select_destinations(self, ctx, spec: dict, instance_uuids: list[str]) -> list[dict]:
        group = (spec.get("group") or {}).get("uuid")
        if group:
            # Members' hosts are read, filtered on and claimed as one step per group, so
            # concurrent boots into an anti-affinity group cannot pick the same host.
            with _group_lock(group):
                return self._select_destinations(ctx, spec, instance_uuids)
        return self._select_destinations(ctx, spec, instance_uuids)

    def _select_destinations(self, ctx, spec, instance_uuids):
        # The consumers' project and user in placement: the server's owner (the spec
        # carries it; an older spec falls back to the request's).
        spec = dict(spec, instance_uuids=instance_uuids,
                    project_id=spec.get("project_id") or getattr(ctx, "project_id", None),
                    user_id=spec.get("user_id") or getattr(ctx, "user_id", None))
        if not spec.get("group") and filters.database_only(spec):
            # The common boot (no hints, group or image/flavor constraints): the database
            # filters and weighs, and only the best few hosts come back — enough for the
            # claim, its alternates, the other instances and a few lost claim races.
            top = (self.conf.host_subset_size + self.conf.max_alternates
                   + len(instance_uuids) + 8)
            hosts = host_state.best(need(spec), self.conf.max_placement_results, top,
                                    zone=spec.get("availability_zone") or None)
            if hosts is not None:
                selections = self._select(spec, hosts, _context(spec), instance_uuids,
                                          explain=False, weighed=True)
                if selections is not None:
                    return selections
                # None of them: every host decides, and NoValidHost explains over all.
                hosts, _ = host_state.load()
                return self._select(spec, hosts, _context(spec), instance_uuids)
        # More hosts than max_placement_results: as nova with placement, filter and weigh
        # only candidates the database found (up, enabled, room enough), that many at most.
        hosts, candidates_only = host_state.load(need(spec),
                                                 self.conf.max_placement_results)
        if candidates_only:
            selections = self._select(spec, hosts, _context(spec), instance_uuids,
                                      explain=False)
            if selections is not None:
                return selections
            # None of them: every host decides, and NoValidHost explains over all of them.
            hosts, _ = host_state.load()
        return self._select(spec, hosts, _context(spec), instance_uuids)

    def _select(self, spec, hosts, context, instance_uuids, explain: bool = True,
                weighed: bool = False):
        """Filter, weigh (unless ``weighed``: already best first) and claim on ``hosts``.
        Without ``explain``, None (with nothing left claimed) where NoValidHost would be
        raised."""
        total = len(hosts)
        passing, notes = filters.run(spec, hosts, context)
        if not passing:
            if not explain:
                return None
            raise NoValidHost(self._explain(total, notes))
        ordered = passing if weighed else weighers.weigh(passing, spec, context)
        vcpus, ram, disk = need(spec)
        selections = []
        for uuid in instance_uuids:
            chosen = self._claim(ordered, uuid, vcpus, ram, disk, spec, context)
            if chosen is None:
                # Every passing host filled up while we were claiming (concurrent boots).
                for done in selections:
                    claims.release(done["instance_uuid"])
                if not explain:
                    return None
                notes.append(f"resource fit removed {len(passing)} (need {ram} MB RAM, "
                             f"{vcpus} vCPUs, {disk} GB disk; the last fitting hosts were "
                             f"taken by concurrent requests)")
                raise NoValidHost(self._explain(total, notes))
            alternates = [h.host for h in ordered
                          if h.host != chosen.host][:self.conf.max_alternates]
            selections.append({"instance_uuid": uuid, "host": chosen.host,
                               "node": chosen.nodename, "node_id": chosen.node_id,
                               "az": chosen.az,
                               "alternates": alternates})
            # The next instance of a multi-create sees this claim, and group members too.
            chosen.free_ram_mb -= ram
            chosen.free_vcpus -= vcpus
            chosen.free_disk_gb -= disk
            if spec.get("group"):
                counts = context.setdefault("group_host_counts", {})
                counts[chosen.host] = counts.get(chosen.host, 0) + 1
                context.setdefault("group_hosts", set()).add(chosen.host)
                ordered = self._refilter(ordered, spec, context)
        return selections

    def _refilter(self, ordered, spec, context):
        kept, _ = filters.run(spec, ordered, context)
        return kept

    def _claim(self, ordered, uuid, vcpus, ram, disk, spec, context):
        candidates = [h for h in ordered if h.free_ram_mb >= ram and h.free_vcpus >= vcpus
                      and h.free_disk_gb >= disk]
        policy = (spec.get("group") or {}).get("policy")
        if policy == "anti-affinity":
            limit = int((spec["group"].get("rules") or {}).get("max_server_per_host", 1))
            counts = context.get("group_host_counts") or {}
            candidates = [h for h in candidates if counts.get(h.host, 0) < limit]
        elif policy == "affinity" and context.get("group_hosts"):
            candidates = [h for h in candidates if h.host in context["group_hosts"]]
        while candidates:
            k = min(self.conf.host_subset_size, len(candidates))
            pick = candidates[random.randrange(k)] if k > 1 else candidates[0]
            if claims.claim(pick.uuid, uuid, vcpus, ram, disk,
                            project_id=spec["project_id"], user_id=spec["user_id"]):
                return pick
            # Lost a race for this host's last capacity: it is full for us now.
            candidates.remove(pick)
        return None

    @staticmethod
    def _explain(total: int, notes: list[str]) -> str:
        if total == 0:
            return "No valid host: there are no compute hosts."
        return f"No valid host: {total} host{'s' if total != 1 else ''}; " + "; ".join(notes)
