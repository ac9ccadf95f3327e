"""Networks: create/show/list/update/delete, segments (provider attributes, or the
multi-provider extension's ``segments`` for several), MTU, sharing.

Visibility follows neutron: a project sees its own networks, shared ones and external
ones; admins see all. Provider attributes are shown to admins only.
"""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import orm

from pocketstack.common import config, db
from pocketstack.network import base, listing, qos, quotas, rbac, security_groups
from pocketstack.network import agent as host_agent
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.models import (FloatingIP, IPAllocation, Network, NetworkSegment,
                                        Port, RbacPolicy, Subnet, Tag)

NETWORK_TYPES = ("geneve", "vxlan", "vlan", "flat", "local")
SEGMENT_RANGES = {"geneve": (1, 2 ** 24 - 1), "vxlan": (1, 2 ** 24 - 1), "vlan": (1, 4094)}
OVERHEAD = {"geneve": 58, "vxlan": 50}
PROVIDER = ("provider:network_type", "provider:physical_network", "provider:segmentation_id")
NETWORK_OWNED = ("network:dhcp",)  # ports deleted along with their network

_PROVIDER_SEGMENT = v.dict_of({
    "provider:network_type": v.one_of(*NETWORK_TYPES),
    "provider:physical_network": v.string(64, nullable=True),
    "provider:segmentation_id": v.integer(1, nullable=True)})


def _segments_list(value, name) -> list[dict]:
    """multi-provider's ``segments``: provider attribute dictionaries."""
    return v.list_of(_PROVIDER_SEGMENT)(value, name)


ATTRS = {
    "name": v.Attr(v.string()),
    "description": v.Attr(v.string()),
    "admin_state_up": v.Attr(v.boolean),
    "shared": v.Attr(v.boolean),
    "router:external": v.Attr(v.boolean),
    "mtu": v.Attr(v.integer(68)),
    "port_security_enabled": v.Attr(v.boolean),
    "vlan_transparent": v.Attr(v.boolean, put=False),  # the bridges pass tagged frames
    "dns_domain": v.Attr(v.dns_domain),
    "project_id": v.Attr(v.project_id, put=False),
    "tenant_id": v.Attr(v.project_id, put=False),
    "provider:network_type": v.Attr(v.one_of(*NETWORK_TYPES), put=False),
    "provider:physical_network": v.Attr(v.string(64, nullable=True), put=False),
    "provider:segmentation_id": v.Attr(v.integer(1, nullable=True), put=False),
    "tags": v.Attr(v.tags, put=False),
    "qos_policy_id": v.Attr(v.nullable_uuid),
    "is_default": v.Attr(v.boolean),
    "segments": v.Attr(_segments_list, put=False),
}

COLLECTION = listing.Collection(
    name="networks", model=Network, not_found=exc.NetworkNotFound,
    columns={"id": Network.id, "name": Network.name, "description": Network.description,
             "project_id": Network.project_id, "tenant_id": Network.project_id,
             "admin_state_up": Network.admin_state_up, "status": Network.status,
             "shared": Network.shared, "router:external": Network.external,
             "mtu": Network.mtu, "port_security_enabled": Network.port_security_enabled,
             "vlan_transparent": Network.vlan_transparent,
             "dns_domain": Network.dns_domain, "revision_number": Network.revision_number,
             "created_at": Network.created_at, "updated_at": Network.updated_at,
             "provider:network_type": Network.network_type,
             "provider:physical_network": Network.physical_network,
             "provider:segmentation_id": Network.segmentation_id,
             "qos_policy_id": Network.qos_policy_id},
    special={"subnets": lambda ids: Network.id.in_(
        sa.select(Subnet.network_id).where(Subnet.id.in_(ids))),
        "is_default": lambda values: _is_default_filter(values)},
)


def _is_default_filter(values: list[str]):
    """is_default is stored as True or NULL (the unique constraint keeps one default)."""
    wanted = {v.boolean(value, "is_default") for value in values}
    return sa.or_(*([Network.is_default.is_(True)] if True in wanted else []),
                  *([Network.is_default.is_(None)] if False in wanted else []))


def visible(ctx):
    if base.sees_all(ctx):
        return sa.true()
    return sa.or_(Network.project_id == ctx.project_id, Network.shared.is_(True),
                  Network.external.is_(True),
                  rbac.granted("network", Network.id, ctx.project_id))


def policy_target(network: Network, granted: set | None = None) -> dict:
    return {"project_id": network.project_id,
            "shared": bool(network.shared or network.external or granted),
            "network:project_id": network.project_id}


def granted_actions(s, ctx, networks: list) -> dict[str, set]:
    """What RBAC policies give the caller's project on these networks it does not own."""
    ids = [n.id for n in networks if n.project_id != ctx.project_id]
    return rbac.actions_for(s, "network", ids, ctx.project_id)


def is_external_for(s, network, project_id: str) -> bool:
    """router:external for everyone, or an access_as_external policy for this project."""
    return bool(network.external) or rbac.has_access(s, "network", network.id, project_id,
                                                     (rbac.EXTERNAL,))


def get_row(s, ctx, network_id: str, lock: bool = False) -> Network:
    query = sa.select(Network).where(Network.id == network_id, visible(ctx))
    network = s.scalar(query.with_for_update() if lock else query)
    if network is None:
        raise exc.NetworkNotFound(network_id)
    return network


_NETWORK_COLUMNS = (Network.id, Network.project_id, Network.port_security_enabled,
                    Network.shared, Network.external, Network.qos_policy_id)
_WITH_SUBNETS = sa.select(
    *[c.label(f"n_{c.key}") for c in _NETWORK_COLUMNS],
    *[c.label(f"s_{c.key}") for c in Subnet.__table__.columns]).select_from(
    sa.outerjoin(Network, Subnet, Subnet.network_id == Network.id)).where(
    Network.id == sa.bindparam("id")).order_by(Subnet.created_at, Subnet.id)


class _Row:
    """Read-only attributes, like the model's (rows of a joined query)."""

    def __init__(self, mapping: dict, prefix: str):
        self.__dict__.update((key[len(prefix):], value) for key, value in mapping.items()
                             if key.startswith(prefix))


def with_subnets_and(*columns):
    """The query of ``get_with_subnets`` with more columns (labelled scalar subqueries
    that do not depend on the network row), read in the same round trip."""
    return _WITH_SUBNETS.add_columns(*columns)


def get_with_subnets(s, ctx, network_id: str, query=_WITH_SUBNETS,
                     params: dict | None = None) -> tuple[_Row, list[_Row]]:
    """What a port create needs of its network, in one query: a few network columns and
    its subnets (read-only). With a ``query`` from ``with_subnets_and``, the network row
    also has the extra columns (and ``params`` their bound values)."""
    s.flush()  # subnets created in this transaction count
    rows = [r._mapping for r in base.core(s, query, {**(params or {}), "id": network_id})]
    network = _Row(rows[0], "n_") if rows else None
    if network is None or not (base.sees_all(ctx) or network.project_id == ctx.project_id
                               or network.shared or network.external
                               or rbac.has_access(s, "network", network.id, ctx.project_id)):
        raise exc.NetworkNotFound(network_id)
    if query is not _WITH_SUBNETS:
        network.facts = rows[0]
    return network, [_Row(r, "s_") for r in rows if r["s_id"] is not None]


def view(network: Network, tags: list[str], show_provider: bool,
         granted: set | None = None) -> dict:
    """``granted``: the RBAC actions the caller's project has on it (neutron shows
    ``shared`` and ``router:external`` as they are for the caller)."""
    granted = granted or set()
    out = {"id": network.id, "name": network.name, **base.project_view(network.project_id),
           "admin_state_up": network.admin_state_up, "status": network.status,
           "shared": network.shared or rbac.SHARED in granted,
           "router:external": network.external or rbac.EXTERNAL in granted,
           "qos_policy_id": network.qos_policy_id,
           "mtu": network.mtu, "subnets": [s.id for s in network.subnets],
           "port_security_enabled": network.port_security_enabled,
           "vlan_transparent": network.vlan_transparent,
           "dns_domain": network.dns_domain, **base.standard_view(network, tags)}
    if network.external:  # neutron shows it on external networks only
        out["is_default"] = bool(network.is_default)
    if show_provider and network.extra_segments:  # multi-provider, as neutron's ML2
        out["segments"] = [_provider_view(x) for x in (network, *network.extra_segments)]
    elif show_provider:
        out.update(_provider_view(network))
    return out


def _provider_view(segment) -> dict:
    """A segment's provider attributes (the network row holds the first)."""
    return {"provider:network_type": segment.network_type,
            "provider:physical_network": segment.physical_network,
            "provider:segmentation_id": segment.segmentation_id}


def _show_provider(ctx) -> bool:
    return base.can(ctx, "get_network:provider", {"project_id": ctx.project_id})


# --- segments and MTU ------------------------------------------------------------------

def _max_mtu(network_type: str) -> int:
    return config.CONF.network.global_physnet_mtu - OVERHEAD.get(network_type, 0)


def validate_segment(s, values: dict) -> tuple[str, str | None, int | None]:
    network_type = values.get("provider:network_type")
    physnet = values.get("provider:physical_network")
    seg_id = values.get("provider:segmentation_id")
    if network_type is None:
        if physnet is not None or seg_id is not None:
            raise exc.InvalidInput("provider:network_type required")
        network_type = config.CONF.network.tenant_network_type
    if network_type in ("vlan", "flat") and not physnet:
        raise exc.InvalidInput(f"provider:physical_network required for {network_type} "
                               "provider network")
    if network_type not in ("vlan", "flat") and physnet:
        raise exc.InvalidInput(f"provider:physical_network specified for {network_type} "
                               "network")
    if network_type in ("flat", "local") and seg_id is not None:
        raise exc.InvalidInput(f"provider:segmentation_id specified for {network_type} "
                               "network")
    if seg_id is not None:
        low, high = SEGMENT_RANGES[network_type]
        if not low <= seg_id <= high:
            raise exc.InvalidInput(f"provider:segmentation_id out of range ({low} through "
                                   f"{high})")
    return network_type, physnet, seg_id


def _segment_key(network_type, physnet, seg_id) -> str | None:
    if network_type == "local":
        return None
    return f"{network_type}:{physnet or ''}:{seg_id if seg_id is not None else ''}"


def vni_ranges() -> list[tuple[int, int]]:
    """[network] vni_ranges as (low, high) pairs; the whole VXLAN range if empty."""
    low, high = SEGMENT_RANGES["vxlan"]
    ranges = []
    for entry in config.CONF.network.vni_ranges:
        first, sep, last = entry.strip().partition(":")
        try:
            pair = (int(first), int(last))
        except ValueError:
            pair = None
        if not sep or pair is None or not low <= pair[0] <= pair[1] <= high:
            raise config.ConfigError(
                f"[network] vni_ranges: {entry!r} is not <vni_min>:<vni_max> with "
                f"{low} <= vni_min <= vni_max <= {high}")
        ranges.append(pair)
    return ranges or [(low, high)]


def _free_segment_ids(s, network_type: str, physnet: str | None):
    used = set()
    for model in (Network, NetworkSegment):  # first segments and further ones
        used |= set(s.scalars(sa.select(model.segmentation_id).where(
            model.network_type == network_type, model.physical_network == physnet
            if physnet else model.physical_network.is_(None))))
    ranges = vni_ranges() if network_type == "vxlan" else [SEGMENT_RANGES[network_type]]
    for low, high in ranges:
        for seg_id in range(low, high + 1):
            if seg_id not in used:
                yield seg_id


def _taken(s, model, key: str) -> bool:
    return s.scalar(sa.select(model.segment_key).where(model.segment_key == key)) is not None


def insert_with_segment(s, row, requested_seg_id: int | None) -> None:
    """Insert ``row``, a network (holding its first segment) or a further NetworkSegment,
    with a segment unique across both tables; a taken segment is a 409 if asked for, else
    the next free one is tried."""
    other = NetworkSegment if isinstance(row, Network) else Network
    auto = requested_seg_id is None and row.network_type not in ("flat", "local")
    candidates = (_free_segment_ids(s, row.network_type, row.physical_network) if auto
                  else [requested_seg_id])
    for attempt, seg_id in enumerate(candidates):
        row.segmentation_id = seg_id
        row.segment_key = _segment_key(row.network_type, row.physical_network, seg_id)
        if row.segment_key is None or not _taken(s, other, row.segment_key):
            try:
                with s.begin_nested():
                    s.add(row)
                    s.flush()
                return
            except sa.exc.IntegrityError as error:
                s.expunge(row) if row in s else None
                if not db.is_duplicate(error):
                    auto = False  # not a taken segment: no other id will do better
        if not auto or attempt > 50:
            raise exc.SegmentationIdInUse(row.network_type, seg_id, row.physical_network)
    raise exc.NoNetworkAvailable()  # every id of the type's ranges is taken


def _requested_segments(s, ctx, values: dict, target: dict) -> list[tuple]:
    """(network_type, physical_network, segmentation_id) of each segment asked for: the
    provider attributes' one, or multi-provider's ``segments`` (neutron's
    _process_provider_create)."""
    listed = values.get("segments") or []
    if not listed:
        return [validate_segment(s, values)]
    if any(k in values for k in PROVIDER):
        raise exc.SegmentsSetInConjunctionWithProviders()
    base.authorize(ctx, "create_network:segments", target)
    segments = [validate_segment(s, item) for item in listed]
    complete = [x for x in segments if x[2] is not None or x[0] in ("flat", "local")]
    if len(set(complete)) != len(complete):
        raise exc.SegmentsContainDuplicateEntry()
    return segments


def add_segment(s, network: Network, network_type: str, physnet: str | None,
                seg_id: int | None, name: str | None = None,
                description: str = "") -> NetworkSegment:
    """A further segment of the network (validated by ``validate_segment``)."""
    row = NetworkSegment(id=base.new_id(), network_id=network.id, name=name,
                         description=description, network_type=network_type,
                         physical_network=physnet)
    base.init_standard(row)
    insert_with_segment(s, row, seg_id)
    s.expire(network, ["extra_segments"])
    return row


def _make_default(s, network: Network) -> None:
    """Only one default external network (neutron's auto_allocate callback)."""
    other = s.scalar(sa.select(Network.id).where(Network.is_default.is_(True),
                                                 Network.id != network.id))
    if other is not None:
        raise exc.DefaultExternalNetworkExists(other)
    network.is_default = True
    try:
        with s.begin_nested():
            s.flush()
    except sa.exc.IntegrityError as error:  # another request made one meanwhile
        if not db.is_duplicate(error):
            raise
        raise exc.DefaultExternalNetworkExists("(made concurrently)") from None


# --- API --------------------------------------------------------------------------------

@base.retry_on_deadlock
def create_network(ctx, body: dict) -> dict:
    values = v.parse(v.resource_body(body, "network"), ATTRS, update=False)
    effects = base.AfterCommit()
    with db.transaction() as s:
        network = create_in(s, ctx, values)
        out = view(network, values.get("tags", []), _show_provider(ctx))
    effects.run()
    return out


def create_in(s, ctx, values: dict) -> Network:
    project_id = base.owner_project(ctx, values)
    target = {"project_id": project_id}
    base.authorize(ctx, "create_network", target)
    if values.get("shared"):
        base.authorize(ctx, "create_network:shared", target)
    if values.get("router:external"):
        base.authorize(ctx, "create_network:router:external", target)
    if any(k in values for k in PROVIDER):
        base.authorize(ctx, "create_network:provider", target)
    if values.get("is_default"):
        base.authorize(ctx, "create_network:is_default", target)
    segments = _requested_segments(s, ctx, values, target)
    network_type, physnet, seg_id = segments[0]
    max_mtu = min(_max_mtu(kind) for kind, _, _ in segments)  # every segment carries it
    mtu = values.get("mtu", max_mtu)
    if mtu > max_mtu:
        raise exc.InvalidInput(f"Requested MTU is too big, maximum is {max_mtu}")
    quotas.check(s, ctx, project_id, "network")
    security_groups.ensure_default(s, project_id)
    if "qos_policy_id" in values:
        qos_policy_id = values["qos_policy_id"]
        if qos_policy_id:
            qos.check_usable(s, ctx, qos_policy_id, project_id)
    else:  # neutron's qos-default: the project's default policy, if it has one
        qos_policy_id = qos.default_policy_id(s, project_id)
    network = Network(id=base.new_id(), project_id=project_id, name=values.get("name", ""),
                      description=values.get("description", ""),
                      admin_state_up=values.get("admin_state_up", True),
                      shared=values.get("shared", False),
                      external=values.get("router:external", False), mtu=mtu,
                      port_security_enabled=values.get("port_security_enabled", True),
                      vlan_transparent=values.get("vlan_transparent", False),
                      dns_domain=values.get("dns_domain", ""), network_type=network_type,
                      physical_network=physnet, status="ACTIVE", qos_policy_id=qos_policy_id)
    base.init_standard(network)
    insert_with_segment(s, network, seg_id)
    for kind, physnet, seg_id in segments[1:]:
        add_segment(s, network, kind, physnet, seg_id)
    if values.get("is_default") and network.external:
        _make_default(s, network)
    for action, on in ((rbac.SHARED, network.shared), (rbac.EXTERNAL, network.external)):
        if on:  # as neutron, a '*' policy says so
            rbac.set_wildcard(s, "network", network, action, True)
    if values.get("tags"):
        base.set_tags(s, network.id, values["tags"])
    s.refresh(network, ["subnets"])
    return network


def get_network(ctx, network_id: str) -> dict:
    with db.reader() as s:
        network = get_row(s, ctx, network_id)
        granted = granted_actions(s, ctx, [network]).get(network.id)
        base.authorize(ctx, "get_network", policy_target(network, granted))
        return view(network, base.tags_of(s, network.id), _show_provider(ctx), granted)


def _as_seen_by(ctx, params: listing.Params):
    """``shared`` / ``router:external`` filters as the caller sees those attributes: with
    the RBAC policies that share the network with its project. Returns the other filters
    and the visibility clause with these applied."""
    clause = visible(ctx)
    if base.sees_all(ctx) or not ({"shared", "router:external"} & params.keys()):
        return params, clause
    params = dict(params)
    for name, column, action in (("shared", Network.shared, rbac.SHARED),
                                 ("router:external", Network.external, rbac.EXTERNAL)):
        if name in params:
            wanted = set(listing.filter_values(COLLECTION, name, params.pop(name)))
            seen_true = sa.or_(column.is_(True),
                               rbac.granted("network", Network.id, ctx.project_id, (action,)))
            if wanted == {True}:
                clause = sa.and_(clause, seen_true)
            elif wanted == {False}:
                clause = sa.and_(clause, sa.not_(seen_true))
    return params, clause


def list_networks(ctx, params: listing.Params) -> tuple[list[dict], listing.Page]:
    params, seen = _as_seen_by(ctx, params)
    with db.reader() as s:
        show_provider = _show_provider(ctx)
        page = listing.select_page(s, COLLECTION, params, seen, options=[
            orm.selectinload(Network.subnets),
            *([orm.selectinload(Network.extra_segments)] if show_provider else [])])
        tags = listing.tags_by_id(s, [n.id for n in page.rows])
        granted = granted_actions(s, ctx, page.rows)
        items = [listing.select_fields(view(n, tags.get(n.id), show_provider,
                                            granted.get(n.id)), params)
                 for n in page.rows]
    return items, page


@base.retry_on_deadlock
def update_network(ctx, network_id: str, body: dict, if_revision: int | None = None) -> dict:
    values = v.parse(v.resource_body(body, "network"), ATTRS, update=True)
    with db.transaction() as s:
        network = get_row(s, ctx, network_id, lock=True)
        granted = granted_actions(s, ctx, [network]).get(network.id)
        target = policy_target(network, granted)
        base.authorize(ctx, "update_network", target)
        base.check_revision(network, if_revision)
        if "shared" in values and values["shared"] != network.shared:
            base.authorize(ctx, "update_network:shared", target)
            # projects it stays shared with by their own policy keep their ports
            still_shared = sa.select(RbacPolicy.target_project).where(
                RbacPolicy.object_type == "network", RbacPolicy.object_id == network.id,
                RbacPolicy.action == rbac.SHARED, RbacPolicy.target_project != rbac.WILDCARD)
            if not values["shared"] and s.scalar(sa.select(Port.id).where(
                    Port.network_id == network.id, Port.project_id != network.project_id,
                    Port.project_id.not_in(still_shared),
                    Port.device_owner.not_in(NETWORK_OWNED)).limit(1)):
                raise exc.InvalidSharedSetting(network.id)
        if "router:external" in values and values["router:external"] != network.external:
            base.authorize(ctx, "update_network:router:external", target)
            if not values["router:external"] and s.scalar(sa.select(Port.id).where(
                    Port.network_id == network.id, Port.device_owner.in_(
                        ("network:router_gateway", "network:floatingip"))).limit(1)):
                raise exc.InUse(f"External network {network.id} cannot be updated to be made "
                                "non-external, since it has existing gateway ports or "
                                "floating IPs.")
        if "mtu" in values and values["mtu"] < 1280:
            v6 = s.scalar(sa.select(Subnet.id).where(Subnet.network_id == network.id,
                                                     Subnet.ip_version == 6).limit(1))
            if v6:
                raise exc.NetworkMTUSubnetConflict(network.id, v6)
        if "mtu" in values and values["mtu"] > _max_mtu(network.network_type):
            raise exc.InvalidInput(f"Requested MTU is too big, maximum is "
                                   f"{_max_mtu(network.network_type)}")
        if values.get("qos_policy_id"):
            qos.check_usable(s, ctx, values["qos_policy_id"], network.project_id)
        if "is_default" in values:
            base.authorize(ctx, "update_network:is_default", target)
        is_default = values.pop("is_default", bool(network.is_default))
        for key, value in values.items():
            setattr(network, {"router:external": "external"}.get(key, key), value)
        if not (is_default and network.external):
            network.is_default = None  # an internal network is no default
        elif not network.is_default:
            _make_default(s, network)
        rbac.set_wildcard(s, "network", network, rbac.SHARED, network.shared)
        rbac.set_wildcard(s, "network", network, rbac.EXTERNAL, network.external)
        base.touch(network)
        s.flush()
        out = view(network, base.tags_of(s, network.id), _show_provider(ctx), granted)
    if "admin_state_up" in values or "dns_domain" in values:
        host_agent.changed()  # a network set down passes no frame; dnsmasq's --domain
    if "dns_domain" in values:
        from pocketstack.network import dhcp

        dhcp.sync(network_id)  # its guests' names are under its domain (internal DNS)
    return out


@base.retry_on_deadlock
def delete_network(ctx, network_id: str, if_revision: int | None = None) -> None:
    effects = base.AfterCommit()
    with db.transaction() as s:
        network = get_row(s, ctx, network_id, lock=True)
        base.authorize(ctx, "delete_network", policy_target(
            network, granted_actions(s, ctx, [network]).get(network.id)))
        base.check_revision(network, if_revision)
        ports = s.execute(sa.select(Port.id, Port.device_owner).where(
            Port.network_id == network.id)).all()
        if any(owner not in NETWORK_OWNED for _, owner in ports):
            raise exc.NetworkInUse(network.id)
        if s.scalar(sa.select(FloatingIP.id).where(
                FloatingIP.floating_network_id == network.id).limit(1)):
            raise exc.NetworkInUse(network.id)
        subnet_ids = list(s.scalars(sa.select(Subnet.id).where(
            Subnet.network_id == network.id)))
        ids = [p for p, _ in ports] + subnet_ids + [network.id]
        s.execute(sa.delete(Tag).where(Tag.resource_id.in_(ids)))
        s.execute(sa.delete(IPAllocation).where(IPAllocation.network_id == network.id))
        s.execute(sa.delete(Port).where(Port.network_id == network.id))
        s.execute(sa.delete(Subnet).where(Subnet.network_id == network.id))
        rbac.delete_for(s, "network", network.id)
        s.delete(network)
    effects.deleted_networks.add(network_id)
    effects.run()


@base.retry_on_deadlock
def create_networks(ctx, items) -> list[dict]:
    """Bulk create ({"networks": [...]}): all or nothing."""
    if not isinstance(items, list):
        raise exc.HTTPBadRequest("Unable to find 'networks' in request body")
    parsed = [v.parse(v.resource_body({"network": i}, "network"), ATTRS, update=False)
              for i in items]
    with db.transaction() as s:
        show = _show_provider(ctx)
        return [view(create_in(s, ctx, values), values.get("tags", []), show)
                for values in parsed]
