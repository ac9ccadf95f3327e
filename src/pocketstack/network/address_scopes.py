"""Address scopes: a label that subnet pools of one IP version share, meaning "these
addresses are routed without NAT between each other" (neutron's address-scope
extension; no routing consequence here, as no packets are routed)."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.network import base, listing
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.models import AddressScope, SubnetPool

ATTRS = {
    "name": v.Attr(v.string()),
    "ip_version": v.Attr(lambda value, name: v.one_of(4, 6)(v.integer()(value, name), name),
                         put=False),
    "shared": v.Attr(v.boolean),
    "project_id": v.Attr(v.project_id, put=False),
    "tenant_id": v.Attr(v.project_id, put=False),
}

COLLECTION = listing.Collection(
    name="address-scopes", model=AddressScope, not_found=exc.AddressScopeNotFound,
    columns={"id": AddressScope.id, "name": AddressScope.name,
             "project_id": AddressScope.project_id, "tenant_id": AddressScope.project_id,
             "ip_version": AddressScope.ip_version, "shared": AddressScope.shared},
)


def visible(ctx):
    if base.sees_all(ctx):
        return sa.true()
    return sa.or_(AddressScope.project_id == ctx.project_id, AddressScope.shared.is_(True))


def get_row(s, ctx, scope_id: str) -> AddressScope:
    scope = s.scalar(sa.select(AddressScope).where(AddressScope.id == scope_id, visible(ctx)))
    if scope is None:
        raise exc.AddressScopeNotFound(scope_id)
    return scope


def view(scope: AddressScope) -> dict:
    return {"id": scope.id, "name": scope.name, **base.project_view(scope.project_id),
            "ip_version": scope.ip_version, "shared": scope.shared}


def create_address_scope(ctx, body: dict) -> dict:
    values = v.parse(v.resource_body(body, "address_scope"), ATTRS, update=False)
    if "ip_version" not in values:
        raise exc.HTTPBadRequest("Failed to parse request. Required attribute 'ip_version' "
                                 "not specified")
    project_id = base.owner_project(ctx, values)
    base.authorize(ctx, "create_address_scope", {"project_id": project_id})
    if values.get("shared"):
        base.authorize(ctx, "create_address_scope:shared", {"project_id": project_id})
    with db.transaction() as s:
        scope = AddressScope(id=base.new_id(), project_id=project_id,
                             name=values.get("name", ""), ip_version=values["ip_version"],
                             shared=values.get("shared", False))
        s.add(scope)
        s.flush()
        return view(scope)


def get_address_scope(ctx, scope_id: str) -> dict:
    with db.reader() as s:
        return view(get_row(s, ctx, scope_id))


def list_address_scopes(ctx, params: listing.Params) -> tuple[list[dict], listing.Page]:
    with db.reader() as s:
        page = listing.select_page(s, COLLECTION, params, visible(ctx))
        return [listing.select_fields(view(a), params) for a in page.rows], page


def update_address_scope(ctx, scope_id: str, body: dict) -> dict:
    values = v.parse(v.resource_body(body, "address_scope"), ATTRS, update=True)
    with db.transaction() as s:
        scope = get_row(s, ctx, scope_id)
        base.authorize(ctx, "update_address_scope", {"project_id": scope.project_id})
        if "shared" in values and values["shared"] != scope.shared:
            if not values["shared"]:
                raise exc.InvalidInput("Unsharing an address scope is not allowed")
            base.authorize(ctx, "update_address_scope:shared", {"project_id": scope.project_id})
        for key in ("name", "shared"):
            if key in values:
                setattr(scope, key, values[key])
        s.flush()
        return view(scope)


def delete_address_scope(ctx, scope_id: str) -> None:
    with db.transaction() as s:
        scope = get_row(s, ctx, scope_id)
        base.authorize(ctx, "delete_address_scope", {"project_id": scope.project_id})
        if s.scalar(sa.select(SubnetPool.id).where(SubnetPool.address_scope_id == scope.id)
                    .limit(1)):
            raise exc.AddressScopeInUse(scope.id)
        s.delete(scope)


def check_for_pool(s, ctx, scope_id: str, ip_version: int, project_id: str) -> None:
    """neutron's rules for a subnet pool's address_scope_id."""
    scope = get_row(s, ctx, scope_id)
    if scope.ip_version != ip_version:
        raise exc.InvalidInput(f"Illegal subnetpool association: subnetpool can not be "
                               f"associated with address scope {scope_id} because subnetpool "
                               f"ip_version is not {scope.ip_version}")
    if not scope.shared and scope.project_id != project_id and not base.sees_all(ctx):
        raise exc.InvalidInput(f"Illegal subnetpool association: subnetpool can not use "
                               f"address scope {scope_id}")
