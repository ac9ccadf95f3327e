"""Inventories of a provider: replace all, create/update/delete one, with the provider's
generation checked and bumped, and 409 ``placement.inventory.inuse`` for a class that
still has allocations."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common.timeutils import utcnow
from pocketstack.placement import catalog, errors, providers
from pocketstack.placement.models import Allocation, Inventory

MAX_INT = 2 ** 31 - 1
FIELDS = ("total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio")
DEFAULTS = {"reserved": 0, "min_unit": 1, "max_unit": MAX_INT, "step_size": 1,
            "allocation_ratio": 1.0}


def to_dict(inv: Inventory) -> dict:
    return {f: getattr(inv, f) for f in FIELDS}


def of(s, rp_id: int) -> dict[str, Inventory]:
    return {inv.resource_class: inv for inv in s.scalars(
        sa.select(Inventory).where(Inventory.resource_provider_id == rp_id))}


def _record(rp, rc: str, data: dict, version: tuple[int, int]) -> dict:
    record = {f: data.get(f, DEFAULTS.get(f)) for f in FIELDS}
    reserved, total = record["reserved"], record["total"]
    if reserved > total or (reserved == total and version < (1, 26)):
        raise errors.bad_request(
            f"Unable to update inventory for resource provider {rp.uuid}: Invalid inventory "
            f"for '{rc}' on resource provider '{rp.uuid}'. The reserved value is greater "
            "than or equal to total." if version < (1, 26) else
            f"Unable to update inventory for resource provider {rp.uuid}: Invalid inventory "
            f"for '{rc}' on resource provider '{rp.uuid}'. The reserved value is greater "
            "than total.")
    if record["min_unit"] > record["max_unit"]:
        raise errors.bad_request(f"Unable to update inventory for resource provider "
                                 f"{rp.uuid}: min_unit is greater than max_unit for '{rc}'.")
    return record


def _check_classes(s, rp, classes) -> None:
    missing = catalog.unknown_classes(s, classes)
    if missing:
        raise errors.bad_request(f"Unknown resource class in inventory for resource "
                                 f"provider {rp.uuid}: {', '.join(missing)}")


def _in_use(s, rp, classes) -> None:
    if not classes:
        return
    used = sorted(set(s.scalars(sa.select(Allocation.resource_class).where(
        Allocation.resource_provider_id == rp.id,
        Allocation.resource_class.in_(sorted(classes))))))
    if used:
        raise errors.conflict(f"update conflict: Inventory for '{', '.join(used)}' on "
                              f"resource provider '{rp.uuid}' in use.",
                              errors.INVENTORY_INUSE)


def replace_all(s, rp, inventories: dict[str, dict], version: tuple[int, int],
                check_in_use: bool = True) -> None:
    """PUT /resource_providers/{uuid}/inventories (the generation was checked)."""
    _check_classes(s, rp, inventories)
    records = {rc: _record(rp, rc, data, version) for rc, data in inventories.items()}
    current = of(s, rp.id)
    gone = set(current) - set(records)
    if check_in_use:
        _in_use(s, rp, gone)
    for rc in gone:
        s.delete(current[rc])
    for rc, record in records.items():
        _write(s, rp, current.get(rc), rc, record)
    s.flush()
    providers.bump(s, rp)


def _write(s, rp, inv: Inventory | None, rc: str, record: dict) -> Inventory:
    if inv is None:
        inv = Inventory(resource_provider_id=rp.id, resource_class=rc)
        s.add(inv)
    for field, value in record.items():
        setattr(inv, field, value)
    inv.updated_at = utcnow()
    return inv


def create_one(s, rp, rc: str, data: dict, version: tuple[int, int]) -> Inventory:
    _check_classes(s, rp, [rc])
    if rc in of(s, rp.id):
        raise errors.conflict(f"Update conflict: Inventory for resource class {rc} on "
                              f"resource provider {rp.uuid} already exists.")
    inv = _write(s, rp, None, rc, _record(rp, rc, data, version))
    s.flush()
    providers.bump(s, rp)
    return inv


def update_one(s, rp, rc: str, data: dict, version: tuple[int, int]) -> Inventory:
    _check_classes(s, rp, [rc])
    providers.check_generation(rp, data["resource_provider_generation"])
    inv = of(s, rp.id).get(rc)
    if inv is None:
        raise errors.bad_request(f"No inventory record with resource class for resource "
                                 f"provider {rp.uuid}: {rc}")
    _write(s, rp, inv, rc, _record(rp, rc, data, version))
    s.flush()
    providers.bump(s, rp)
    return inv


def delete_one(s, rp, rc: str) -> None:
    inv = of(s, rp.id).get(rc)
    if inv is None:
        raise errors.not_found(f"No inventory of class {rc} found for delete")
    _in_use(s, rp, [rc])
    s.delete(inv)
    s.flush()
    providers.bump(s, rp)


def delete_all(s, rp) -> None:
    current = of(s, rp.id)
    _in_use(s, rp, set(current))
    for inv in current.values():
        s.delete(inv)
    s.flush()
    providers.bump(s, rp)
