"""Address groups (/v2.0/address-groups): named sets of CIDRs a security group rule can
name as ``remote_address_group_id`` (neutron's address-group extension). Addresses are
kept as neutron normalizes them (network/prefixlen); add_addresses refuses ones already
there, remove_addresses ones that are not. The host firewall matches them as nftables
interval sets (agent/firewall.py).
"""
from __future__ import annotations

import ipaddress

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.network import agent as host_agent
from pocketstack.network import base, listing
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.models import AddressGroup, SecurityGroupRule, Tag


def _address(value, name) -> str:
    try:
        if not isinstance(value, str) or "%" in value:
            raise ValueError(value)
        network = ipaddress.ip_interface(value).network
    except ValueError:
        raise v.invalid(name, f"'{value}' is not a valid IP subnet") from None
    return str(network)


ATTRS = {
    "name": v.Attr(v.string()),
    "description": v.Attr(v.string()),
    "addresses": v.Attr(v.list_of(_address), put=False),
    "project_id": v.Attr(v.project_id, put=False),
    "tenant_id": v.Attr(v.project_id, put=False),
}

COLLECTION = listing.Collection(
    name="address-groups", model=AddressGroup, not_found=exc.AddressGroupNotFound,
    columns={"id": AddressGroup.id, "name": AddressGroup.name,
             "description": AddressGroup.description,
             "project_id": AddressGroup.project_id, "tenant_id": AddressGroup.project_id,
             "revision_number": AddressGroup.revision_number,
             "created_at": AddressGroup.created_at, "updated_at": AddressGroup.updated_at},
    ignored=frozenset({"addresses"}),
)


def visible(ctx):
    return base.own_visible(AddressGroup, ctx)


def get_row(s, ctx, group_id: str, lock: bool = False) -> AddressGroup:
    query = sa.select(AddressGroup).where(AddressGroup.id == group_id, visible(ctx))
    group = s.scalar(query.with_for_update() if lock else query)
    if group is None:
        raise exc.AddressGroupNotFound(group_id)
    return group


def _sorted(addresses) -> list[str]:
    return sorted(set(addresses), key=lambda a: (ipaddress.ip_network(a).version,
                                                  ipaddress.ip_network(a)))


def view(group: AddressGroup, tags) -> dict:
    return {"id": group.id, "name": group.name, **base.project_view(group.project_id),
            "addresses": list(group.addresses or []), **base.standard_view(group, tags)}


def create(ctx, body) -> dict:
    values = v.parse(v.resource_body(body, "address_group"), ATTRS, update=False)
    project_id = base.owner_project(ctx, values)
    base.authorize(ctx, "create_address_group", {"project_id": project_id})
    with db.transaction() as s:
        group = AddressGroup(id=base.new_id(), project_id=project_id,
                             name=values.get("name", ""),
                             description=values.get("description", ""),
                             addresses=_sorted(values.get("addresses") or []))
        base.init_standard(group)
        s.add(group)
        s.flush()
        return view(group, [])


def get(ctx, group_id: str) -> dict:
    with db.reader() as s:
        group = get_row(s, ctx, group_id)
        return view(group, base.tags_of(s, group.id))


def list_groups(ctx, params: listing.Params):
    with db.reader() as s:
        page = listing.select_page(s, COLLECTION, params, visible(ctx))
        tags = listing.tags_by_id(s, [g.id for g in page.rows])
        items = [listing.select_fields(view(g, tags.get(g.id)), params) for g in page.rows]
    return items, page


def update(ctx, group_id: str, body, if_revision: int | None = None) -> dict:
    values = v.parse(v.resource_body(body, "address_group"), ATTRS, update=True)
    with db.transaction() as s:
        group = get_row(s, ctx, group_id, lock=True)
        base.authorize(ctx, "update_address_group", {"project_id": group.project_id})
        base.check_revision(group, if_revision)
        for key in ("name", "description"):
            if key in values:
                setattr(group, key, values[key])
        base.touch(group)
        s.flush()
        return view(group, base.tags_of(s, group.id))


def delete(ctx, group_id: str, if_revision: int | None = None) -> None:
    with db.transaction() as s:
        group = get_row(s, ctx, group_id, lock=True)
        base.authorize(ctx, "delete_address_group", {"project_id": group.project_id})
        base.check_revision(group, if_revision)
        if s.scalar(sa.select(SecurityGroupRule.id).where(
                SecurityGroupRule.remote_address_group_id == group.id).limit(1)):
            raise exc.AddressGroupInUse(group.id)
        s.execute(sa.delete(Tag).where(Tag.resource_id == group.id))
        s.delete(group)


def _addresses_body(body) -> list[str]:
    if not isinstance(body, dict) or not isinstance(body.get("addresses"), list):
        raise exc.HTTPBadRequest("Failed to parse request. Required attribute 'addresses' "
                                 "not specified")
    return sorted({_address(a, "addresses") for a in body["addresses"]})


def change_addresses(ctx, group_id: str, body, add: bool) -> dict:
    """PUT add_addresses / remove_addresses: {"addresses": [...]} in, the group out."""
    wanted = _addresses_body(body)
    action = "add_addresses" if add else "remove_addresses"
    with db.transaction() as s:
        group = get_row(s, ctx, group_id, lock=True)
        base.authorize(ctx, action, {"project_id": group.project_id})
        current = set(group.addresses or [])
        if add and current & set(wanted):
            raise exc.AddressesAlreadyExist(sorted(current & set(wanted)), group.id)
        if not add and set(wanted) - current:
            raise exc.AddressesNotFound(sorted(set(wanted) - current), group.id)
        group.addresses = _sorted(current | set(wanted) if add else current - set(wanted))
        base.touch(group)
        s.flush()
        out = view(group, base.tags_of(s, group.id))
    host_agent.changed()  # rules naming the group follow
    return out


def check_usable(s, ctx, group_id: str, project_id: str) -> None:
    """A rule of ``project_id``'s group may name the address group: its own (any for an
    admin), else 404 as neutron's check_address_group."""
    group = s.get(AddressGroup, group_id)
    if group is None or not (base.sees_all(ctx) or group.project_id == project_id):
        raise exc.AddressGroupNotFound(group_id)


def addresses_of(s, group_ids) -> dict[str, list[str]]:
    """{group id: CIDRs}, for the host firewall."""
    if not group_ids:
        return {}
    return {g: list(a or []) for g, a in s.execute(
        sa.select(AddressGroup.id, AddressGroup.addresses).where(
            AddressGroup.id.in_(sorted(group_ids))))}
