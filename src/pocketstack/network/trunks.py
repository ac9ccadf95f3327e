"""Trunks (/v2.0/trunks): a parent port and its subports, each subport tagged with a VLAN
id (neutron's trunk extension; segmentation type ``vlan`` or ``inherit``). A port is the
parent of one trunk or a subport of one trunk, never both, and a trunk whose parent port
is in use by a server cannot be deleted.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.network import base, listing, ports
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.models import Network, Port, SubPort, Tag, Trunk

SEGMENTATION_TYPES = ("vlan", "inherit")


def _subport(value, name):
    sub = v.dict_of({"port_id": v.uuid_string,
                     "segmentation_type": v.one_of(*SEGMENTATION_TYPES),
                     "segmentation_id": v.integer(1, 4094)}, required=("port_id",))(value, name)
    if sub.get("segmentation_type", "vlan") == "vlan" and "segmentation_id" not in sub:
        raise v.invalid(name, "segmentation_id is required for vlan subports")
    return sub


ATTRS = {
    "name": v.Attr(v.string()),
    "description": v.Attr(v.string()),
    "admin_state_up": v.Attr(v.boolean),
    "port_id": v.Attr(v.uuid_string, put=False),
    "sub_ports": v.Attr(v.list_of(_subport), put=False),
    "project_id": v.Attr(v.project_id, put=False),
    "tenant_id": v.Attr(v.project_id, put=False),
    "tags": v.Attr(v.tags, put=False),
}

COLLECTION = listing.Collection(
    name="trunks", model=Trunk, not_found=exc.TrunkNotFound,
    columns={"id": Trunk.id, "name": Trunk.name, "description": Trunk.description,
             "project_id": Trunk.project_id, "tenant_id": Trunk.project_id,
             "port_id": Trunk.port_id, "admin_state_up": Trunk.admin_state_up,
             "status": Trunk.status, "revision_number": Trunk.revision_number,
             "created_at": Trunk.created_at, "updated_at": Trunk.updated_at},
    ignored=frozenset({"sub_ports"}),
)


def visible(ctx):
    return base.own_visible(Trunk, ctx)


def get_row(s, ctx, trunk_id: str, lock: bool = False) -> Trunk:
    query = sa.select(Trunk).where(Trunk.id == trunk_id, visible(ctx))
    trunk = s.scalar(query.with_for_update() if lock else query)
    if trunk is None:
        raise exc.TrunkNotFound(trunk_id)
    return trunk


def _subports(s, trunk_id: str) -> list[dict]:
    return [{"port_id": sp.port_id, "segmentation_type": sp.segmentation_type,
             "segmentation_id": sp.segmentation_id}
            for sp in s.scalars(sa.select(SubPort).where(SubPort.trunk_id == trunk_id)
                                .order_by(SubPort.segmentation_id))]


def view(s, trunk: Trunk, tags) -> dict:
    return {"id": trunk.id, "name": trunk.name, **base.project_view(trunk.project_id),
            "port_id": trunk.port_id, "admin_state_up": trunk.admin_state_up,
            "status": trunk.status, "sub_ports": _subports(s, trunk.id),
            **base.standard_view(trunk, tags)}


def _port_in_trunk(s, port_id: str) -> bool:
    return bool(s.scalar(sa.select(Trunk.id).where(Trunk.port_id == port_id).limit(1)) or
                s.scalar(sa.select(SubPort.trunk_id).where(SubPort.port_id == port_id)
                         .limit(1)))


def _add(s, ctx, trunk: Trunk, subports: list[dict]) -> None:
    rows, taken = [], {(sp["segmentation_type"], sp["segmentation_id"])
                       for sp in _subports(s, trunk.id)}
    for sub in subports:
        port = ports.get_row(s, ctx, sub["port_id"])
        if port.id == trunk.port_id or _port_in_trunk(s, port.id) or \
                port.id in {r.port_id for r in rows}:
            raise exc.PortInUseAsTrunkPort(port.id)
        seg_type = sub.get("segmentation_type", "vlan")
        seg_id = sub.get("segmentation_id")
        if seg_type == "inherit":  # the subport network's own VLAN
            seg_id = s.get(Network, port.network_id).segmentation_id
            if seg_id is None:
                raise exc.InvalidInput(f"Subport {port.id} cannot inherit a segmentation id: "
                                       "its network has none")
        if (seg_type, seg_id) in taken:
            raise exc.DuplicateSubPort(trunk.id)
        taken.add((seg_type, seg_id))
        rows.append(SubPort(port_id=port.id, trunk_id=trunk.id, segmentation_type=seg_type,
                            segmentation_id=seg_id))
    try:  # the unique constraints settle a race with another request
        with s.begin_nested():
            s.add_all(rows)
            s.flush()
    except sa.exc.IntegrityError:
        raise exc.DuplicateSubPort(trunk.id) from None


@base.retry_on_deadlock
def create_trunk(ctx, body: dict) -> dict:
    values = v.parse(v.resource_body(body, "trunk"), ATTRS, update=False)
    if "port_id" not in values:
        raise exc.HTTPBadRequest("Failed to parse request. Required attribute 'port_id' not "
                                 "specified")
    with db.transaction() as s:
        parent = ports.get_row(s, ctx, values["port_id"])
        project_id = base.owner_project(ctx, values)
        base.authorize(ctx, "create_trunk", {"project_id": project_id})
        if _port_in_trunk(s, parent.id):
            raise exc.PortInUseAsTrunkPort(parent.id)
        trunk = Trunk(id=base.new_id(), project_id=project_id, name=values.get("name", ""),
                      description=values.get("description", ""),
                      admin_state_up=values.get("admin_state_up", True),
                      status="ACTIVE" if parent.device_id else "DOWN", port_id=parent.id)
        base.init_standard(trunk)
        s.add(trunk)
        s.flush()
        _add(s, ctx, trunk, values.get("sub_ports") or [])
        if values.get("tags"):
            base.set_tags(s, trunk.id, values["tags"])
        return view(s, trunk, values.get("tags"))


def get_trunk(ctx, trunk_id: str) -> dict:
    with db.reader() as s:
        trunk = get_row(s, ctx, trunk_id)
        return view(s, trunk, base.tags_of(s, trunk.id))


def list_trunks(ctx, params: listing.Params) -> tuple[list[dict], listing.Page]:
    with db.reader() as s:
        page = listing.select_page(s, COLLECTION, params, visible(ctx))
        tags = listing.tags_by_id(s, [t.id for t in page.rows])
        items = [listing.select_fields(view(s, t, tags.get(t.id)), params) for t in page.rows]
    return items, page


@base.retry_on_deadlock
def update_trunk(ctx, trunk_id: str, body: dict, if_revision: int | None = None) -> dict:
    values = v.parse(v.resource_body(body, "trunk"), ATTRS, update=True)
    with db.transaction() as s:
        trunk = get_row(s, ctx, trunk_id, lock=True)
        base.authorize(ctx, "update_trunk", {"project_id": trunk.project_id})
        base.check_revision(trunk, if_revision)
        for key in ("name", "description", "admin_state_up"):
            if key in values:
                setattr(trunk, key, values[key])
        base.touch(trunk)
        s.flush()
        return view(s, trunk, base.tags_of(s, trunk.id))


@base.retry_on_deadlock
def delete_trunk(ctx, trunk_id: str, if_revision: int | None = None) -> None:
    with db.transaction() as s:
        trunk = get_row(s, ctx, trunk_id, lock=True)
        base.authorize(ctx, "delete_trunk", {"project_id": trunk.project_id})
        base.check_revision(trunk, if_revision)
        parent = s.get(Port, trunk.port_id)
        if parent is not None and parent.device_id:
            raise exc.TrunkInUse(trunk.id)
        s.execute(sa.delete(SubPort).where(SubPort.trunk_id == trunk.id))
        s.execute(sa.delete(Tag).where(Tag.resource_id == trunk.id))
        s.delete(trunk)


def _subports_body(body) -> list[dict]:
    if not isinstance(body, dict) or not isinstance(body.get("sub_ports"), list):
        raise exc.HTTPBadRequest("Failed to parse request. Required attribute 'sub_ports' "
                                 "not specified")
    return body["sub_ports"]


@base.retry_on_deadlock
def add_subports(ctx, trunk_id: str, body) -> dict:
    subports = v.list_of(_subport)(_subports_body(body), "sub_ports")
    with db.transaction() as s:
        trunk = get_row(s, ctx, trunk_id, lock=True)
        base.authorize(ctx, "add_subports", {"project_id": trunk.project_id})
        _add(s, ctx, trunk, subports)
        base.touch(trunk)
        s.flush()
        return view(s, trunk, base.tags_of(s, trunk.id))


@base.retry_on_deadlock
def remove_subports(ctx, trunk_id: str, body) -> dict:
    wanted = _subports_body(body)
    with db.transaction() as s:
        trunk = get_row(s, ctx, trunk_id, lock=True)
        base.authorize(ctx, "remove_subports", {"project_id": trunk.project_id})
        for item in wanted:
            port_id = item.get("port_id") if isinstance(item, dict) else None
            row = s.get(SubPort, port_id) if isinstance(port_id, str) else None
            if row is None or row.trunk_id != trunk.id:
                raise exc.SubPortNotFound(trunk.id, port_id)
            s.delete(row)
        base.touch(trunk)
        s.flush()
        return view(s, trunk, base.tags_of(s, trunk.id))


def get_subports(ctx, trunk_id: str) -> dict:
    with db.reader() as s:
        trunk = get_row(s, ctx, trunk_id)
        return {"sub_ports": _subports(s, trunk.id)}
