"""Host aggregates (nova's AggregateAPI): named host sets with metadata. The metadata key
``availability_zone`` puts the aggregate's hosts in that zone (os-availability-zone, the
AvailabilityZoneFilter, a server's OS-EXT-AZ); other keys feed the
AggregateInstanceExtraSpecsFilter. Nova's rules keep zones consistent: a host is in one
zone only, and a host holding servers does not change zone under them."""
from __future__ import annotations

import uuid as uuidlib

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions
from pocketstack.common.timeutils import utcnow
from pocketstack.compute.models import Aggregate, Instance, Service

AZ = "availability_zone"


def not_found(agg_id) -> exceptions.NotFound:
    return exceptions.NotFound(f"Aggregate {agg_id} could not be found.")


def parse_id(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise exceptions.BadRequest("id must be an integer") from None
    if not 1 <= value <= 2 ** 31 - 1:
        raise exceptions.BadRequest("id must be >= 1 and <= 2147483647")
    return value


def get(s, agg_id: int, lock: bool = False) -> Aggregate:
    stmt = sa.select(Aggregate).where(Aggregate.id == agg_id)
    row = s.scalar(stmt.with_for_update() if lock else stmt)
    if row is None:
        raise not_found(agg_id)
    return row


def _zone_of_host(s, host: str, skip_id: int | None = None) -> str | None:
    for agg in s.scalars(sa.select(Aggregate)).all():
        if agg.id != skip_id and host in (agg.hosts or []) and (agg.metadata_ or {}).get(AZ):
            return agg.metadata_[AZ]
    return None


def _has_servers(s, host: str) -> bool:
    return s.scalar(sa.select(sa.func.count()).select_from(Instance)
                    .where(Instance.host == host, Instance.deleted.is_(False))) > 0


def _check_move(s, agg: Aggregate, hosts, new_zone: str | None, action: str) -> None:
    """Hosts would go to ``new_zone`` (None: back to the default zone)."""
    default = config.CONF.compute.default_availability_zone
    error = exceptions.BadRequest if action == "update" else exceptions.Conflict
    for host in hosts:
        other = _zone_of_host(s, host, skip_id=agg.id)
        if other and new_zone and other != new_zone:
            raise error(
                f"Cannot {action} aggregate {agg.id}. Reason: One or more hosts already in "
                f"availability zone(s) ['{other}'].")
        current = _zone_of_host(s, host) or default
        target = new_zone or other or default
        if current != target and _has_servers(s, host):
            raise error(
                f"Cannot {action} aggregate {agg.id}. Reason: host {host} has servers in "
                f"availability zone {current}; they cannot move to {target}.")


def create(name: str, zone: str | None) -> Aggregate:
    row = Aggregate(uuid=str(uuidlib.uuid4()), name=name, hosts=[],
                    metadata_={AZ: zone} if zone else {})
    try:
        with db.transaction() as s:
            if s.scalar(sa.select(Aggregate.id).where(Aggregate.name == name)) is not None:
                raise exceptions.Conflict(f"Aggregate {name} already exists.")
            s.add(row)
    except sa.exc.IntegrityError as error:
        if db.is_duplicate(error):
            raise exceptions.Conflict(f"Aggregate {name} already exists.") from None
        raise
    return row


def update(agg_id: int, values: dict) -> Aggregate:
    with db.transaction() as s:
        agg = get(s, agg_id, lock=True)
        if "name" in values and values["name"] != agg.name:
            if s.scalar(sa.select(Aggregate.id).where(Aggregate.name == values["name"])):
                raise exceptions.Conflict(f"Aggregate {values['name']} already exists.")
            agg.name = values["name"]
        if AZ in values:
            _set_zone(s, agg, values[AZ], "update")
        agg.updated_at = utcnow()
        return agg


def _set_zone(s, agg, zone, action) -> None:
    meta = dict(agg.metadata_ or {})
    if zone != meta.get(AZ):
        _check_move(s, agg, agg.hosts or [], zone, action)
    if zone:
        meta[AZ] = zone
    else:
        meta.pop(AZ, None)
    agg.metadata_ = meta


def delete(agg_id: int) -> None:
    with db.transaction() as s:
        agg = get(s, agg_id, lock=True)
        if agg.hosts:
            raise exceptions.BadRequest(f"Cannot remove aggregate {agg_id}. Reason: Host "
                                        "aggregate is not empty.")
        s.delete(agg)


def add_host(agg_id: int, host: str) -> Aggregate:
    with db.transaction() as s:
        agg = get(s, agg_id, lock=True)
        if s.scalar(sa.select(Service.id).where(Service.host == host,
                                                Service.binary == "nova-compute")) is None:
            raise exceptions.NotFound(f"Compute host {host} could not be found.")
        if host in (agg.hosts or []):
            raise exceptions.Conflict(f"Aggregate {agg_id} already has host {host}.")
        _check_move(s, agg, [host], (agg.metadata_ or {}).get(AZ), "add host to")
        agg.hosts = list(agg.hosts or []) + [host]
        agg.updated_at = utcnow()
        return agg


def remove_host(agg_id: int, host: str) -> Aggregate:
    with db.transaction() as s:
        agg = get(s, agg_id, lock=True)
        if host not in (agg.hosts or []):
            raise exceptions.NotFound(f"Cannot remove host {host} in aggregate {agg_id}")
        if (agg.metadata_ or {}).get(AZ):
            # the host falls back to another aggregate's zone or the default
            _check_move(s, agg, [host], None, "remove host from")
        agg.hosts = [h for h in agg.hosts if h != host]
        agg.updated_at = utcnow()
        return agg


def set_metadata(agg_id: int, metadata: dict) -> Aggregate:
    """Merge: a null value removes the key (nova's update_aggregate_metadata)."""
    with db.transaction() as s:
        agg = get(s, agg_id, lock=True)
        if AZ in metadata:
            _set_zone(s, agg, metadata[AZ], "update")
        meta = dict(agg.metadata_ or {})
        for key, value in metadata.items():
            if key == AZ:
                continue
            if value is None:
                meta.pop(key, None)
            else:
                meta[key] = value
        agg.metadata_ = meta
        agg.updated_at = utcnow()
        return agg
