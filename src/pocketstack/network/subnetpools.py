"""Subnet pools: prefixes a subnet's CIDR can be allocated from (``subnetpool_id`` and
``prefixlen`` on a subnet create, or a ``cidr`` inside the pool), with neutron's
prefix-length rules. Subnets from one pool never overlap.
"""
from __future__ import annotations

import ipaddress

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.network import address_scopes, base, listing, quotas
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.models import Subnet, SubnetPool, Tag

MAX_PREFIXLEN = {4: 32, 6: 128}
DEFAULT_MIN_PREFIXLEN = {4: 8, 6: 64}  # neutron's SubnetPoolHelper defaults

ATTRS = {
    "name": v.Attr(v.string()),
    "description": v.Attr(v.string()),
    "prefixes": v.Attr(v.list_of(v.cidr)),
    "min_prefixlen": v.Attr(v.integer(0, 128)),
    "max_prefixlen": v.Attr(v.integer(0, 128)),
    "default_prefixlen": v.Attr(v.integer(0, 128)),
    "shared": v.Attr(v.boolean, put=False),
    "is_default": v.Attr(v.boolean),
    "default_quota": v.Attr(v.integer(0, nullable=True)),
    "address_scope_id": v.Attr(v.nullable_uuid),
    "project_id": v.Attr(v.project_id, put=False),
    "tenant_id": v.Attr(v.project_id, put=False),
    "tags": v.Attr(v.tags, put=False),
}

COLLECTION = listing.Collection(
    name="subnetpools", model=SubnetPool, not_found=exc.SubnetPoolNotFound,
    columns={"id": SubnetPool.id, "name": SubnetPool.name,
             "description": SubnetPool.description, "project_id": SubnetPool.project_id,
             "tenant_id": SubnetPool.project_id, "ip_version": SubnetPool.ip_version,
             "min_prefixlen": SubnetPool.min_prefixlen,
             "max_prefixlen": SubnetPool.max_prefixlen,
             "default_prefixlen": SubnetPool.default_prefixlen, "shared": SubnetPool.shared,
             "is_default": SubnetPool.is_default,
             "revision_number": SubnetPool.revision_number,
             "created_at": SubnetPool.created_at, "updated_at": SubnetPool.updated_at},
    special={"address_scope_id": lambda values: SubnetPool.address_scope_id.in_(values)
             if set(values) - {"", "None"} else SubnetPool.address_scope_id.is_(None)},
    ignored=frozenset({"prefixes", "default_quota"}),
)


def visible(ctx):
    if base.sees_all(ctx):
        return sa.true()
    return sa.or_(SubnetPool.project_id == ctx.project_id, SubnetPool.shared.is_(True))


def get_row(s, ctx, pool_id: str, lock: bool = False) -> SubnetPool:
    query = sa.select(SubnetPool).where(SubnetPool.id == pool_id, visible(ctx))
    pool = s.scalar(query.with_for_update() if lock else query)
    if pool is None:
        raise exc.SubnetPoolNotFound(pool_id)
    return pool


def view(pool: SubnetPool, tags) -> dict:
    return {"id": pool.id, "name": pool.name, **base.project_view(pool.project_id),
            "ip_version": pool.ip_version, "prefixes": list(pool.prefixes),
            "min_prefixlen": pool.min_prefixlen, "max_prefixlen": pool.max_prefixlen,
            "default_prefixlen": pool.default_prefixlen, "shared": pool.shared,
            "is_default": pool.is_default, "default_quota": pool.default_quota,
            "address_scope_id": pool.address_scope_id, **base.standard_view(pool, tags)}


def _merged(prefixes: list[str]) -> list:
    networks = [ipaddress.ip_network(p) for p in prefixes]
    if len({n.version for n in networks}) > 1:
        raise exc.InvalidInput("Cannot mix IPv4 and IPv6 prefixes in a subnet pool.")
    return list(ipaddress.collapse_addresses(networks))


def _check_lengths(version: int, minimum: int, maximum: int, default: int) -> None:
    if not 0 <= minimum <= default <= maximum <= MAX_PREFIXLEN[version]:
        raise exc.InvalidInput(
            f"Illegal prefix bounds: min_prefixlen={minimum}, default_prefixlen={default}, "
            f"max_prefixlen={maximum} (0 <= min <= default <= max <= "
            f"{MAX_PREFIXLEN[version]})")


def _check_no_default(s, ip_version: int) -> None:
    """One default pool per IP family, as neutron (subnets without a CIDR use it)."""
    if s.scalar(sa.select(SubnetPool.id).where(SubnetPool.is_default.is_(True),
                                               SubnetPool.ip_version == ip_version).limit(1)):
        raise exc.InvalidInput("A default subnetpool for this IP family has already been "
                               "set. Only one default may exist per IP family")


@base.retry_on_deadlock
def create_subnetpool(ctx, body: dict) -> dict:
    values = v.parse(v.resource_body(body, "subnetpool"), ATTRS, update=False)
    if not values.get("prefixes"):
        raise exc.HTTPBadRequest("Failed to parse request. Required attribute 'prefixes' "
                                 "not specified")
    project_id = base.owner_project(ctx, values)
    base.authorize(ctx, "create_subnetpool", {"project_id": project_id})
    for admin_only in ("shared", "is_default"):
        if values.get(admin_only):
            base.authorize(ctx, f"create_subnetpool:{admin_only}", {"project_id": project_id})
    prefixes = _merged(values["prefixes"])
    version = prefixes[0].version
    minimum = values.get("min_prefixlen", DEFAULT_MIN_PREFIXLEN[version])
    maximum = values.get("max_prefixlen", MAX_PREFIXLEN[version])
    default = values.get("default_prefixlen", minimum)
    _check_lengths(version, minimum, maximum, default)
    with db.transaction() as s:
        if values.get("is_default"):
            _check_no_default(s, version)
        if values.get("address_scope_id"):
            address_scopes.check_for_pool(s, ctx, values["address_scope_id"], version,
                                          project_id)
        quotas.check(s, ctx, project_id, "subnetpool")
        pool = SubnetPool(address_scope_id=values.get("address_scope_id"), id=base.new_id(),
                          project_id=project_id,
                          name=values.get("name", ""),
                          description=values.get("description", ""), ip_version=version,
                          prefixes=[str(p) for p in prefixes], min_prefixlen=minimum,
                          max_prefixlen=maximum, default_prefixlen=default,
                          shared=values.get("shared", False),
                          is_default=values.get("is_default", False),
                          default_quota=values.get("default_quota"))
        base.init_standard(pool)
        s.add(pool)
        s.flush()
        if values.get("tags"):
            base.set_tags(s, pool.id, values["tags"])
        return view(pool, values.get("tags"))


def get_subnetpool(ctx, pool_id: str) -> dict:
    with db.reader() as s:
        pool = get_row(s, ctx, pool_id)
        return view(pool, base.tags_of(s, pool.id))


def list_subnetpools(ctx, params: listing.Params) -> tuple[list[dict], listing.Page]:
    with db.reader() as s:
        page = listing.select_page(s, COLLECTION, params, visible(ctx))
        tags = listing.tags_by_id(s, [p.id for p in page.rows])
        items = [listing.select_fields(view(p, tags.get(p.id)), params) for p in page.rows]
    return items, page


def _allocated(s, pool_id: str) -> list:
    return [ipaddress.ip_network(c) for c in s.scalars(
        sa.select(Subnet.cidr).where(Subnet.subnetpool_id == pool_id))]


@base.retry_on_deadlock
def update_subnetpool(ctx, pool_id: str, body: dict, if_revision: int | None = None) -> dict:
    values = v.parse(v.resource_body(body, "subnetpool"), ATTRS, update=True)
    with db.transaction() as s:
        pool = get_row(s, ctx, pool_id, lock=True)
        base.authorize(ctx, "update_subnetpool", {"project_id": pool.project_id})
        base.check_revision(pool, if_revision)
        if values.get("is_default"):
            base.authorize(ctx, "update_subnetpool:is_default", {"project_id": pool.project_id})
        if "prefixes" in values:
            prefixes = _merged(values["prefixes"] or [])
            old = [ipaddress.ip_network(p) for p in pool.prefixes]
            # neutron: prefixes may only grow (every old prefix stays covered)
            if not prefixes or prefixes[0].version != pool.ip_version or any(
                    not any(o.subnet_of(n) for n in prefixes) for o in old):
                raise exc.IllegalSubnetPoolPrefixUpdate("Existing prefixes must be a subset "
                                                        "of the new prefixes")
            pool.prefixes = [str(p) for p in prefixes]
        if values.get("is_default") and not pool.is_default:
            _check_no_default(s, pool.ip_version)
        lengths = {k: values.get(k, getattr(pool, k))
                   for k in ("min_prefixlen", "max_prefixlen", "default_prefixlen")}
        _check_lengths(pool.ip_version, lengths["min_prefixlen"], lengths["max_prefixlen"],
                       lengths["default_prefixlen"])
        if values.get("address_scope_id"):
            address_scopes.check_for_pool(s, ctx, values["address_scope_id"], pool.ip_version,
                                          pool.project_id)
        for key in ("name", "description", "is_default", "default_quota", "address_scope_id",
                    *lengths):
            if key in values:
                setattr(pool, key, values[key])
        base.touch(pool)
        s.flush()
        return view(pool, base.tags_of(s, pool.id))


def _prefixes_body(body) -> list[str]:
    """neutron's subnetpool-prefix-ops body: {"prefixes": [CIDR, ...]}, not empty."""
    prefixes = body.get("prefixes") if isinstance(body, dict) else None
    if not prefixes or not isinstance(prefixes, list):
        raise exc.HTTPBadRequest("Request body contains invalid data")
    return v.list_of(v.cidr)(prefixes, "prefixes")


@base.retry_on_deadlock
def add_prefixes(ctx, pool_id: str, body) -> dict:
    """PUT .../add_prefixes: the pool grows by the given prefixes (merged)."""
    wanted = _prefixes_body(body)
    with db.transaction() as s:
        pool = get_row(s, ctx, pool_id, lock=True)
        base.authorize(ctx, "add_prefixes", {"project_id": pool.project_id})
        merged = _merged([*pool.prefixes, *wanted])
        if merged[0].version != pool.ip_version:
            raise exc.InvalidInput("Cannot mix IPv4 and IPv6 prefixes in a subnet pool.")
        _set_prefixes(pool, merged)
        return {"prefixes": list(pool.prefixes)}


@base.retry_on_deadlock
def remove_prefixes(ctx, pool_id: str, body) -> dict:
    """PUT .../remove_prefixes: the address space of the given prefixes leaves the pool,
    refused while a subnet allocated from the pool lies in it."""
    wanted = _prefixes_body(body)
    with db.transaction() as s:
        pool = get_row(s, ctx, pool_id, lock=True)
        base.authorize(ctx, "remove_prefixes", {"project_id": pool.project_id})
        removed = [ipaddress.ip_network(p) for p in wanted]
        current = [ipaddress.ip_network(p) for p in pool.prefixes]
        if not any(r.overlaps(c) for r in removed for c in current
                   if r.version == c.version):
            return {"prefixes": list(pool.prefixes)}  # nothing to remove: a no-op there too
        if any(r.overlaps(a) for r in removed for a in _allocated(s, pool.id)
               if r.version == a.version):
            raise exc.IllegalSubnetPoolPrefixUpdate("One or more the prefixes to be removed "
                                                    "is in use by a subnet.")
        _set_prefixes(pool, _difference(current, removed))
        return {"prefixes": list(pool.prefixes)}


def _difference(current: list, removed: list) -> list:
    left = list(current)
    for cut in removed:
        next_left = []
        for net in left:
            if cut.version != net.version or not net.overlaps(cut):
                next_left.append(net)
            elif not net.subnet_of(cut):  # cut lies inside net: keep the rest of net
                next_left.extend(net.address_exclude(cut))
        left = next_left
    return list(ipaddress.collapse_addresses(left))


def _set_prefixes(pool: SubnetPool, prefixes: list) -> None:
    pool.prefixes = [str(p) for p in prefixes]
    base.touch(pool)


@base.retry_on_deadlock
def delete_subnetpool(ctx, pool_id: str, if_revision: int | None = None) -> None:
    with db.transaction() as s:
        pool = get_row(s, ctx, pool_id, lock=True)
        base.authorize(ctx, "delete_subnetpool", {"project_id": pool.project_id})
        base.check_revision(pool, if_revision)
        if _allocated(s, pool_id):
            raise exc.SubnetPoolInUse(pool_id)
        s.execute(sa.delete(Tag).where(Tag.resource_id == pool.id))
        s.delete(pool)


# --- allocation (subnet create) ----------------------------------------------------------

def default_pool(s, ctx, ip_version: int) -> str:
    """The default pool of the family, if the caller may use it (neutron looks it up with
    the caller's context: an unshared pool of another project is no default for it)."""
    pool_id = s.scalar(sa.select(SubnetPool.id).where(SubnetPool.is_default.is_(True),
                                                      SubnetPool.ip_version == ip_version,
                                                      visible(ctx)))
    if pool_id is None:
        raise exc.BadRequest("subnets", f"No default subnetpool found for IPv{ip_version}")
    return pool_id


def allocate(s, ctx, pool_id: str, cidr: str | None, prefixlen: int | None,
             ip_version: int | None) -> str:
    """A CIDR for a new subnet from the pool: ``cidr`` if it is free and inside it, else
    the first free prefix of ``prefixlen`` (the pool's default length if not given)."""
    pool = get_row(s, ctx, pool_id, lock=True)  # the lock serialises allocations
    if ip_version is not None and ip_version != pool.ip_version:
        raise exc.InvalidInput(f"Cannot allocate IPv{ip_version} subnet from IPv"
                               f"{pool.ip_version} subnet pool")
    prefixes = [ipaddress.ip_network(p) for p in pool.prefixes]
    taken = _allocated(s, pool.id)
    if cidr is not None:
        wanted = ipaddress.ip_network(cidr)
        if not pool.min_prefixlen <= wanted.prefixlen <= pool.max_prefixlen:
            raise exc.InvalidInput(f"Prefix length {wanted.prefixlen} is outside the pool's "
                                   f"{pool.min_prefixlen}-{pool.max_prefixlen}")
        if not any(wanted.version == p.version and wanted.subnet_of(p) for p in prefixes):
            raise exc.BadRequest("subnets", f"Cidr {cidr} is not within the prefixes of "
                                            f"subnet pool {pool.id}")
        if any(wanted.overlaps(t) for t in taken):
            raise exc.SubnetAllocationFailed(f"Cidr {cidr} overlaps a subnet allocated from "
                                             f"subnet pool {pool.id}")
        return str(wanted)
    length = pool.default_prefixlen if prefixlen is None else prefixlen
    if not pool.min_prefixlen <= length <= pool.max_prefixlen:
        raise exc.InvalidInput(f"Prefix length {length} is outside the pool's "
                               f"{pool.min_prefixlen}-{pool.max_prefixlen}")
    for prefix in prefixes:
        if prefix.prefixlen > length:
            continue
        for candidate in prefix.subnets(new_prefix=length):
            if not any(candidate.overlaps(t) for t in taken):
                return str(candidate)
    raise exc.SubnetAllocationFailed(f"Insufficient prefix space to allocate subnet size "
                                     f"/{length}")
