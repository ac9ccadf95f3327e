"""Resource providers: create, update (rename, re-parent), delete, list with filters,
and the generation compare-and-swap every provider write ends with."""
from __future__ import annotations

import uuid as uuidlib

import sqlalchemy as sa

from pocketstack.common.timeutils import utcnow
from pocketstack.placement import errors
from pocketstack.placement.models import (Allocation, Inventory, ProviderAggregate,
                                          ProviderTrait, ResourceProvider)

RP = ResourceProvider


def get(s, rp_uuid: str, *, for_update: bool = False) -> RP:
    """``for_update``: lock the row (writers of inventories do: usage.py says why)."""
    query = sa.select(RP).where(RP.uuid == rp_uuid)
    row = s.scalars(query.with_for_update() if for_update else query).first()
    if row is None:
        raise errors.not_found(f"No resource provider with uuid {rp_uuid} found",
                               errors.RESOURCE_PROVIDER_NOT_FOUND)
    return row


def bump(s, rp: RP, expected: int | None = None) -> int:
    """Increment the provider's generation if it is still ``expected`` (default: what
    this transaction read): a concurrent writer makes this a 409 concurrent_update."""
    expected = rp.generation if expected is None else expected
    done = s.execute(sa.update(RP).where(RP.id == rp.id, RP.generation == expected)
                     .values(generation=expected + 1, updated_at=utcnow())
                     .execution_options(synchronize_session=False)).rowcount
    if done != 1:
        error = errors.concurrent_update()
        error.retryable = True  # nobody asked for this generation: an allocation write retries
        raise error
    s.expire(rp)
    return expected + 1


def check_generation(rp: RP, given: int) -> None:
    if rp.generation != given:
        raise errors.concurrent_update()


def uuids_of(s, ids) -> dict[int, str]:
    ids = {i for i in ids if i is not None}
    if not ids:
        return {}
    return dict(s.execute(sa.select(RP.id, RP.uuid).where(RP.id.in_(ids))).all())


def to_dict(rp: RP, tree: dict[int, str], version: tuple[int, int], base: str) -> dict:
    href = f"{base}/resource_providers/{rp.uuid}"
    links = [{"rel": "self", "href": href},
             {"rel": "inventories", "href": f"{href}/inventories"},
             {"rel": "usages", "href": f"{href}/usages"}]
    if version >= (1, 1):
        links.append({"rel": "aggregates", "href": f"{href}/aggregates"})
    if version >= (1, 6):
        links.append({"rel": "traits", "href": f"{href}/traits"})
    if version >= (1, 11):
        links.append({"rel": "allocations", "href": f"{href}/allocations"})
    body = {"uuid": rp.uuid, "name": rp.name, "generation": rp.generation, "links": links}
    if version >= (1, 14):
        body["parent_provider_uuid"] = tree.get(rp.parent_provider_id)
        body["root_provider_uuid"] = tree.get(rp.root_provider_id)
    return body


def _check_unique(s, name: str | None, rp_uuid: str | None, own_id: int | None = None):
    if name is not None:
        other = s.scalar(sa.select(RP.id).where(RP.name == name))
        if other is not None and other != own_id:
            raise errors.conflict(f"Conflicting resource provider name: {name} already "
                                  "exists.", errors.DUPLICATE_NAME)
    if rp_uuid is not None and s.scalar(sa.select(RP.id).where(RP.uuid == rp_uuid)):
        raise errors.conflict(f"Conflicting resource provider uuid: {rp_uuid} already "
                              "exists.", errors.DUPLICATE_NAME)


def create(s, name: str, rp_uuid: str | None = None, parent_uuid: str | None = None) -> RP:
    rp_uuid = str(uuidlib.UUID(rp_uuid)) if rp_uuid else str(uuidlib.uuid4())
    _check_unique(s, name, rp_uuid)
    parent = None
    if parent_uuid is not None:
        parent = s.scalars(sa.select(RP).where(RP.uuid == parent_uuid)).first()
        if parent is None:
            raise errors.bad_request(f"Unable to create resource provider \"{name}\", "
                                     f"{rp_uuid}: parent provider UUID {parent_uuid} "
                                     "does not exist.")
    rp = RP(uuid=rp_uuid, name=name, generation=0,
            parent_provider_id=parent.id if parent else None,
            root_provider_id=parent.root_provider_id if parent else None)
    s.add(rp)
    s.flush()
    if parent is None:
        rp.root_provider_id = rp.id
    s.flush()
    return rp


def _subtree(s, rp: RP) -> set[int]:
    """Ids of ``rp`` and every provider below it."""
    found, frontier = {rp.id}, [rp.id]
    while frontier:
        frontier = list(s.scalars(sa.select(RP.id).where(
            RP.parent_provider_id.in_(frontier))))
        found.update(frontier)
    return found


def update(s, rp: RP, name: str, parent_uuid, version: tuple[int, int],
           parent_given: bool) -> RP:
    _check_unique(s, name, None, own_id=rp.id)
    rp.name = name
    if parent_given:
        _reparent(s, rp, parent_uuid, version)
    rp.updated_at = utcnow()
    s.flush()
    return rp


def _reparent(s, rp: RP, parent_uuid: str | None, version: tuple[int, int]) -> None:
    current = uuids_of(s, [rp.parent_provider_id]).get(rp.parent_provider_id)
    if parent_uuid == current:
        return
    if version < (1, 37):
        if current is not None and parent_uuid is None:
            raise errors.bad_request("un-parenting a provider is not currently allowed.")
        if current is not None:
            raise errors.bad_request("re-parenting a provider is not currently allowed.")
    subtree = _subtree(s, rp)
    if parent_uuid is None:
        rp.parent_provider_id, root = None, rp.id
    else:
        parent = s.scalars(sa.select(RP).where(RP.uuid == parent_uuid)).first()
        if parent is None:
            raise errors.bad_request(f"parent provider UUID {parent_uuid} does not exist.")
        if parent.id in subtree:
            raise errors.bad_request("creating loop in the provider tree is not allowed.")
        rp.parent_provider_id, root = parent.id, parent.root_provider_id
    s.execute(sa.update(RP).where(RP.id.in_(subtree)).values(root_provider_id=root)
              .execution_options(synchronize_session=False))
    rp.root_provider_id = root


def delete(s, rp: RP) -> None:
    if s.scalar(sa.select(Allocation.id).where(Allocation.resource_provider_id == rp.id)
                .limit(1)) is not None:
        raise errors.conflict(f"Unable to delete resource provider {rp.uuid}: Resource "
                              "provider has allocations.", errors.PROVIDER_IN_USE)
    if s.scalar(sa.select(RP.id).where(RP.parent_provider_id == rp.id).limit(1)):
        raise errors.conflict(f"Unable to delete parent resource provider {rp.uuid}: It "
                              "has child resource providers.",
                              errors.PROVIDER_CANNOT_DELETE_PARENT)
    for model in (Inventory, ProviderTrait, ProviderAggregate):
        s.execute(sa.delete(model).where(model.resource_provider_id == rp.id))
    s.delete(rp)
