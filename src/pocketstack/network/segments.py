"""/v2.0/segments (neutron's segment extension): a network's segments. Its first lives in
the network's row (the provider attributes, id derived from the network's); an admin adds
more to an existing network (network_segments) and they show in the network's
multi-provider ``segments``. Ports bind to the first segment; a further one is removed
freely (no subnet or port is on it), the first only with the network. Admin-only, as in
neutron.
"""
from __future__ import annotations

import uuid

import sqlalchemy as sa

from pocketstack.common import db
from pocketstack.common.timeutils import isotime
from pocketstack.network import base, networks
from pocketstack.network import exceptions as exc
from pocketstack.network import validate as v
from pocketstack.network.inventory import matches
from pocketstack.network.models import Network, NetworkSegment

UPDATE_ATTRS = {"name": v.Attr(v.string(nullable=True)), "description": v.Attr(v.string())}
CREATE_ATTRS = {
    **UPDATE_ATTRS,
    "network_id": v.Attr(v.uuid_string),
    "network_type": v.Attr(v.one_of(*networks.NETWORK_TYPES)),
    "physical_network": v.Attr(v.string(64, nullable=True)),
    "segmentation_id": v.Attr(v.integer(1, nullable=True)),
    # accepted and not shown, as neutron's segment (a segment belongs to no project)
    "project_id": v.Attr(v.project_id),
    "tenant_id": v.Attr(v.project_id),
}


def _first_id(network_id: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"pocketstack:segment:{network_id}"))


def _view(segment_id: str, network_id: str, row, name, description) -> dict:
    return {"id": segment_id, "network_id": network_id, "name": name,
            "description": description or "", "network_type": row.network_type,
            "physical_network": row.physical_network,
            "segmentation_id": row.segmentation_id,
            "revision_number": row.revision_number,
            "created_at": isotime(row.created_at), "updated_at": isotime(row.updated_at)}


def _first_view(network: Network) -> dict:
    return _view(_first_id(network.id), network.id, network, network.segment_name,
                 network.segment_description)


def _further_view(row: NetworkSegment) -> dict:
    return _view(row.id, row.network_id, row, row.name, row.description)


def list_segments(ctx, params) -> list[dict]:
    if not base.sees_all(ctx):
        return []
    networks_query = sa.select(Network).order_by(Network.created_at)
    further_query = sa.select(NetworkSegment)
    if params.get("network_id"):
        networks_query = networks_query.where(Network.id.in_(params["network_id"]))
        further_query = further_query.where(NetworkSegment.network_id.in_(params["network_id"]))
    with db.reader() as s:
        further: dict[str, list[dict]] = {}
        for row in s.scalars(further_query.order_by(NetworkSegment.created_at,
                                                    NetworkSegment.id)):
            further.setdefault(row.network_id, []).append(_further_view(row))
        segments = [seg for n in s.scalars(networks_query)
                    for seg in (_first_view(n), *further.get(n.id, []))]
    return [seg for seg in segments if matches(seg, params)]


def _find(s, ctx, segment_id: str) -> Network | NetworkSegment:
    """The segment's row: a further segment, or the network whose first it is."""
    if base.sees_all(ctx):
        row = s.get(NetworkSegment, segment_id)
        if row is not None:
            return row
        for network in s.scalars(sa.select(Network)):
            if _first_id(network.id) == segment_id:
                return network
    raise exc.SegmentNotFound(segment_id)


def _row_view(row) -> dict:
    return _first_view(row) if isinstance(row, Network) else _further_view(row)


def get_segment(ctx, segment_id: str) -> dict:
    with db.reader() as s:
        return _row_view(_find(s, ctx, segment_id))


def create_segment(ctx, body: dict) -> dict:
    """A further segment on an existing network (neutron's POST /v2.0/segments)."""
    values = v.parse(v.resource_body(body, "segment"), CREATE_ATTRS, update=False)
    base.authorize(ctx, "create_segment", {"project_id": ctx.project_id})
    for key in ("network_id", "network_type"):
        if key not in values:
            raise exc.HTTPBadRequest(f"Failed to parse request. Required attribute '{key}' "
                                     "not specified")
    with db.transaction() as s:
        network = networks.get_row(s, ctx, values["network_id"], lock=True)
        network_type, physnet, seg_id = networks.validate_segment(s, {
            "provider:network_type": values["network_type"],
            "provider:physical_network": values.get("physical_network"),
            "provider:segmentation_id": values.get("segmentation_id")})
        row = networks.add_segment(s, network, network_type, physnet, seg_id,
                                   values.get("name"), values.get("description", ""))
        base.touch(network)
        s.flush()
        return _further_view(row)


def update_segment(ctx, segment_id: str, body: dict) -> dict:
    values = v.parse(v.resource_body(body, "segment"), UPDATE_ATTRS, update=True)
    base.authorize(ctx, "update_segment", {"project_id": ctx.project_id})
    with db.transaction() as s:
        row = _find(s, ctx, segment_id)
        first = isinstance(row, Network)
        if "name" in values:
            setattr(row, "segment_name" if first else "name", values["name"])
        if "description" in values:
            setattr(row, "segment_description" if first else "description",
                    values["description"])
        base.touch(row)
        s.flush()
        return _row_view(row)


def delete_segment(ctx, segment_id: str) -> None:
    base.authorize(ctx, "delete_segment", {"project_id": ctx.project_id})
    with db.transaction() as s:
        row = _find(s, ctx, segment_id)
        if isinstance(row, Network):
            raise exc.SegmentInUse(segment_id, f"it is the first segment of network "
                                               f"{row.id}, which its ports are bound to; "
                                               "delete the network instead")
        network = s.get(Network, row.network_id)
        s.delete(row)
        base.touch(network)
