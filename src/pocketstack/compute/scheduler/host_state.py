"""Host states for one scheduling request: one Core query over compute_nodes joined with
their services (no ORM objects: 10,000 hosts load in a few milliseconds), plus the
aggregates, read once and indexed by host."""
from __future__ import annotations

import datetime as dt
import functools

import sqlalchemy as sa

from pocketstack.common import config, db
from pocketstack.common.timeutils import utcnow
from pocketstack.compute.models import Aggregate, ComputeNode, Service
from pocketstack.compute.scheduler import weighers
from pocketstack.placement import direct


class HostState:
    __slots__ = ("node_id", "uuid", "host", "nodename", "free_ram_mb", "free_disk_gb", "free_vcpus",
                 "total_ram_mb", "vcpus", "running_vms", "failed_builds", "up", "disabled",
                 "down_reason", "aggregates", "az", "hypervisor_type", "arch", "generation")

    def __repr__(self):
        return f"<HostState {self.host} ram={self.free_ram_mb} disk={self.free_disk_gb}>"


def _aggregates_by_host(s) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for agg in s.scalars(sa.select(Aggregate)).all():
        for host in agg.hosts or []:
            out.setdefault(host, []).append(agg.metadata_ or {})
    return out


def service_is_up(last_seen_up: dt.datetime | None, forced_down: bool, now=None) -> bool:
    if forced_down or last_seen_up is None:
        return False
    now = now or utcnow()
    return (now - last_seen_up).total_seconds() <= config.CONF.compute.service_down_time


_n, _sv = ComputeNode.__table__.c, Service.__table__.c
# Free room is placement's: each node is the provider of the same uuid, and
# (total - reserved) x allocation_ratio - allocations is what its claim will check, so
# an operator's reserved or allocation_ratio set through the placement API moves boots.
_FROM, _FREE_OF, _PROVIDER_GENERATION = direct.join_free_room(
    ComputeNode.__table__.join(Service.__table__, sa.and_(_sv.host == _n.host,
                                                          _sv.binary == "nova-compute")),
    _n.uuid)
_FREE = {"free_vcpus": _FREE_OF["VCPU"], "free_ram_mb": _FREE_OF["MEMORY_MB"],
         "free_disk_gb": _FREE_OF["DISK_GB"], "failed_builds": _n.failed_builds}
# Built once, Core on the tables: the scheduler runs it for every request.
_HOSTS = (sa.select(_n.id, _n.host, _n.hypervisor_hostname, _n.vcpus, _n.memory_mb,
                    _FREE["free_vcpus"], _FREE["free_ram_mb"], _FREE["free_disk_gb"],
                    _n.running_vms, _n.failed_builds, _n.hypervisor_type,
                    sa.func.coalesce(_PROVIDER_GENERATION, 0), _sv.disabled,
                    _sv.disabled_reason, _sv.forced_down, _sv.last_seen_up, _n.uuid)
          .select_from(_FROM)
          .order_by(_n.id))
# Candidates, as placement's allocation candidates: hosts whose service is enabled and
# up and whose free resources fit the request, at most ``limit`` of them. A superset of
# what ComputeFilter and the resource fit filter pass (they still run on it).
_CANDIDATES = (_HOSTS
               .where(_sv.disabled.is_(False), _sv.forced_down.is_(False),
                      _sv.last_seen_up >= sa.bindparam("up_since"),
                      _FREE["free_vcpus"] >= sa.bindparam("need_vcpus"),
                      _FREE["free_ram_mb"] >= sa.bindparam("need_ram"),
                      _FREE["free_disk_gb"] >= sa.bindparam("need_disk"))
               .limit(sa.bindparam("limit")))
_COUNT = sa.select(sa.func.count()).select_from(ComputeNode.__table__)
_ANY_AGGREGATE = sa.select(Aggregate.__table__.c.id).limit(1)


def load(fitting: tuple[int, int, int] | None = None,
         limit: int | None = None) -> tuple[list[HostState], bool]:
    """(hosts, candidates_only): every host, in id order; or, given ``fitting`` = (vcpus,
    RAM MB, disk GB) and ``limit`` while there are more hosts than that, at most ``limit``
    hosts that are up, enabled and have room for it (the database filters them, so
    10,000 hosts cost what ``limit`` do)."""
    default_az = config.CONF.compute.default_availability_zone
    now = utcnow()
    down_after = config.CONF.compute.service_down_time
    with db.reader() as s:
        conn = s.connection()
        candidates = fitting is not None and conn.execute(_COUNT).scalar_one() > limit
        if candidates:
            vcpus, ram, disk = fitting
            rows = conn.execute(_CANDIDATES, {
                "up_since": now - dt.timedelta(seconds=down_after), "need_vcpus": vcpus,
                "need_ram": ram, "need_disk": disk, "limit": limit}).all()
        else:
            rows = conn.execute(_HOSTS).all()
        aggs = _aggregates_by_host(s) if conn.execute(_ANY_AGGREGATE).first() else {}
    hosts = [_host_state(row, now, down_after, aggs, default_az) for row in rows]
    return hosts, candidates


def _host_state(row, now, down_after, aggs, default_az) -> HostState:
    (node_id, host, nodename, vcpus, ram, free_vcpus, free_ram, free_disk, running,
     failed, hv_type, gen, disabled, reason, forced, seen, node_uuid) = row[:17]
    h = HostState()
    h.node_id, h.host, h.nodename, h.generation = node_id, host, nodename, gen
    h.uuid = node_uuid
    h.total_ram_mb, h.vcpus = ram, vcpus
    h.free_ram_mb, h.free_disk_gb, h.free_vcpus = free_ram, free_disk, free_vcpus
    h.running_vms, h.failed_builds = running, failed
    h.disabled = disabled
    h.up = not forced and seen is not None and (now - seen).total_seconds() <= down_after
    h.down_reason = (f"{host} is disabled" + (f" ({reason})" if reason else "") if disabled
                     else f"{host} is forced down" if forced
                     else f"{host} is down" if not h.up else "")
    h.aggregates = aggs.get(host, []) if aggs else []
    h.az = next((m["availability_zone"] for m in h.aggregates
                 if m.get("availability_zone")), default_az)
    h.hypervisor_type, h.arch = hv_type, "x86_64"
    return h


@functools.cache  # one pair of statements per set of weighers in use (values are parameters)
def _best_statements_for(attrs: tuple[str, ...]):
    """(spread, ranked). spread: the lowest and highest of each weighed value over the
    candidates (as _CANDIDATES). ranked: the ``top`` candidates by sum of value x
    ``c_<attr>``, ties in host id order, as full host rows. With c = multiplier / (highest
    - lowest) that is weighers.weigh's order (each value normalized to 0..1 over the
    candidates, times its multiplier, summed: the lowest only shifts every score alike).
    Both run on narrow rows (id and the weighed values); only the winners are joined back."""
    cand = _CANDIDATES.with_only_columns(
        _n.id, *(_FREE[attr].label(f"w_{attr}") for attr in attrs)).subquery()
    spread = sa.select(*(f(cand.c[f"w_{attr}"]) for attr in attrs
                         for f in (sa.func.min, sa.func.max)))
    score = sa.literal(0.0, sa.Float)
    for attr in attrs:
        score = score + sa.bindparam(f"c_{attr}", type_=sa.Float) * cand.c[f"w_{attr}"]
    ranked = (sa.select(cand.c.id, score.label("score"))
              .order_by(score.desc(), cand.c.id).limit(sa.bindparam("top")).subquery())
    return spread, (_HOSTS.join(ranked, ranked.c.id == _n.id)
                    .order_by(None).order_by(ranked.c.score.desc(), ranked.c.id))


def best(fitting: tuple[int, int, int], limit: int, top: int, *, zone: str | None = None,
         ) -> list[HostState] | None:
    """The ``top`` best weighed candidates (up, enabled, room for ``fitting``; at most
    ``limit`` considered, in host id order, as ``load`` does), best first: filtering and
    resource weighing done by the database, so a request reads ``top`` rows, not one per
    host. For requests no other filter or weigher applies to. With ``zone``, None when any
    aggregate exists (zones come from aggregates: the caller filters in Python then)."""
    default_az = config.CONF.compute.default_availability_zone
    now = utcnow()
    down_after = config.CONF.compute.service_down_time
    parts = weighers.resource_parts()
    vcpus, ram, disk = fitting
    with db.reader() as s:
        conn = s.connection()
        any_aggregate = conn.execute(_ANY_AGGREGATE).first() is not None
        if zone is not None and any_aggregate:
            return None
        if zone is not None and zone != default_az:
            return []  # every host is in the default zone
        params = {"up_since": now - dt.timedelta(seconds=down_after), "need_vcpus": vcpus,
                  "need_ram": ram, "need_disk": disk, "limit": limit, "top": top}
        weighed = [(multiplier, attr) for multiplier, attr in parts if multiplier]
        spread, ranked = _best_statements_for(tuple(attr for _, attr in weighed))
        if weighed:
            bounds = conn.execute(spread, params).one()
            for i, (multiplier, attr) in enumerate(weighed):
                lo, hi = bounds[2 * i], bounds[2 * i + 1]
                params[f"c_{attr}"] = 0.0 if lo is None or hi == lo else multiplier / (hi - lo)
        rows = conn.execute(ranked, params).all()
        aggs = _aggregates_by_host(s) if any_aggregate else {}
    return [_host_state(row, now, down_after, aggs, default_az) for row in rows]
