"""Compute hosts report their resource providers here, as nova-compute's
update_available_resource does through the report client: one provider per host (name =
hypervisor hostname, uuid = compute node uuid), VCPU / MEMORY_MB / DISK_GB inventories and
the COMPUTE_NODE trait.

The rule for what an operator changed through the API: a host always writes ``total``
and ``max_unit`` (it knows its hardware); it writes ``reserved`` and ``allocation_ratio``
when it creates the inventory (the configured value, else the ``initial_*`` one) and
afterwards only where its config sets the option explicitly (not None), as nova does for
``cpu_allocation_ratio`` & co since Stein. So `openstack resource provider inventory set
... --allocation-ratio` stays until someone sets the option in the host's config.
Traits are set when the provider is created only (an operator may change them).

Many hosts are reported in one transaction with a few statements per 500 of them (one
process runs 1,000 simulated hosts); a host whose figures did not change writes nothing.
"""
from __future__ import annotations

import dataclasses
import logging

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.common.timeutils import utcnow
from pocketstack.placement import usage
from pocketstack.placement.models import (Allocation, Inventory, ProviderAggregate,
                                          ProviderTrait, ResourceProvider)

LOG = logging.getLogger(__name__)
_RP, _INV = ResourceProvider.__table__, Inventory.__table__
CHUNK = 500


@dataclasses.dataclass
class Host:
    """What one compute host reports. ``reserved``/``ratios``: {class: value or None}
    (None: the option is unset, keep placement's); ``initial_ratios``: {class: value}."""
    uuid: str
    name: str
    totals: dict[str, int]
    reserved: dict[str, int | None]
    ratios: dict[str, float | None]
    initial_ratios: dict[str, float]
    traits: tuple[str, ...] = ("COMPUTE_NODE",)


def _inventory(host: Host, rc: str, old: dict | None) -> dict:
    total = host.totals[rc]
    reserved = host.reserved.get(rc)
    ratio = host.ratios.get(rc)
    if old is None:
        reserved = reserved or 0
        ratio = ratio if ratio is not None else host.initial_ratios.get(rc, 1.0)
    else:
        reserved = old["reserved"] if reserved is None else reserved
        ratio = old["allocation_ratio"] if ratio is None else ratio
    # placement refuses reserved > total; a host smaller than its reservation has no room
    return {"total": total, "reserved": min(reserved, total), "min_unit": 1,
            "max_unit": max(total, 1), "step_size": 1, "allocation_ratio": ratio}


def report(hosts: list[Host]) -> None:
    for start in range(0, len(hosts), CHUNK):
        with db.transaction() as s:
            _report_chunk(s.connection(), hosts[start:start + CHUNK])


def _report_chunk(conn, hosts: list[Host]) -> None:
    now = utcnow()
    uuids = [h.uuid for h in hosts]
    existing = {u: (i, name) for i, u, name in conn.execute(
        sa.select(_RP.c.id, _RP.c.uuid, _RP.c.name).where(_RP.c.uuid.in_(uuids)))}
    new = [h for h in hosts if h.uuid not in existing]
    if new:
        _drop_stale_names(conn, [h.name for h in new])
        conn.execute(sa.insert(_RP), [{"uuid": h.uuid, "name": h.name, "generation": 0,
                                       "created_at": now, "updated_at": now} for h in new])
        ids = dict(conn.execute(sa.select(_RP.c.uuid, _RP.c.id)
                                .where(_RP.c.uuid.in_([h.uuid for h in new]))).all())
        conn.execute(sa.update(_RP).where(_RP.c.id.in_(list(ids.values())))
                     .values(root_provider_id=_RP.c.id))
        traits = [{"resource_provider_id": ids[h.uuid], "trait": t} for h in new
                  for t in h.traits]
        if traits:
            conn.execute(sa.insert(ProviderTrait.__table__), traits)
        existing.update({u: (i, None) for u, i in ids.items()})
    ids = [existing[h.uuid][0] for h in hosts]
    old: dict[tuple[int, str], dict] = {}
    for row in conn.execute(sa.select(_INV).where(_INV.c.resource_provider_id.in_(ids))):
        old[(row.resource_provider_id, row.resource_class)] = row._asdict()
    inserts, updates, bumped = [], [], set()
    for host in hosts:
        rp_id = existing[host.uuid][0]
        for rc in host.totals:
            before = old.get((rp_id, rc))
            want = _inventory(host, rc, before)
            if before is None:
                inserts.append({"resource_provider_id": rp_id, "resource_class": rc,
                                "created_at": now, "updated_at": now, **want})
            elif any(before[k] != v for k, v in want.items()):
                updates.append({"inv_id": before["id"], "updated_at": now, **want})
            else:
                continue
            bumped.add(rp_id)
    # Lock before writing inventory rows, as every writer of usage does (usage.py); only
    # hosts that changed, so an idle periodic run holds no lock.
    usage.lock(conn, bumped)
    if inserts:
        conn.execute(sa.insert(_INV), inserts)
    if updates:
        conn.execute(_INV.update().where(_INV.c.id == sa.bindparam("inv_id")), updates)
    if bumped:
        conn.execute(sa.update(_RP).where(_RP.c.id.in_(sorted(bumped)))
                     .values(generation=_RP.c.generation + 1, updated_at=now))


def _drop_stale_names(conn, names: list[str]) -> None:
    """A host whose compute node was deleted and made again (new uuid) takes its name
    back from the old provider, if nothing is allocated there; otherwise the old one is
    renamed (its allocations stay visible until their servers go)."""
    stale = conn.execute(sa.select(_RP.c.id, _RP.c.uuid, _RP.c.name)
                         .where(_RP.c.name.in_(names))).all()
    for rp_id, rp_uuid, name in stale:
        used = conn.execute(sa.select(Allocation.__table__.c.id).where(
            Allocation.__table__.c.resource_provider_id == rp_id).limit(1)).first()
        if used is None:
            delete(conn, rp_id)
        else:
            LOG.warning("provider %s (%s) still has allocations: renamed", name, rp_uuid)
            conn.execute(sa.update(_RP).where(_RP.c.id == rp_id)
                         .values(name=f"{name[:150]}-{rp_uuid}"))


def delete(conn, rp_id: int) -> None:
    conn.execute(sa.delete(_INV).where(_INV.c.resource_provider_id == rp_id))
    conn.execute(sa.delete(ProviderTrait.__table__)
                 .where(ProviderTrait.__table__.c.resource_provider_id == rp_id))
    conn.execute(sa.delete(ProviderAggregate.__table__)
                 .where(ProviderAggregate.__table__.c.resource_provider_id == rp_id))
    conn.execute(sa.delete(_RP).where(_RP.c.id == rp_id))


def forget_host(rp_uuid: str, session) -> bool:
    """A compute service deleted: its provider goes too, unless something is still
    allocated on it (nova leaves those for the operator to clean). False if kept."""
    conn = session.connection()
    row = conn.execute(sa.select(_RP.c.id).where(_RP.c.uuid == rp_uuid)).first()
    if row is None:
        return True
    if conn.execute(sa.select(Allocation.__table__.c.id).where(
            Allocation.__table__.c.resource_provider_id == row[0]).limit(1)).first():
        return False
    delete(conn, row[0])
    return True
