"""Resource types (/v2/metadefs/resource_types) and their associations with namespaces
(/v2/metadefs/namespaces/{ns}/resource_types)."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.common.timeutils import utcnow
from pocketstack.image.metadefs import common
from pocketstack.image.models import MetadefAssociation, MetadefResourceType


def association_view(name: str, assoc: MetadefAssociation) -> dict:
    out = {"name": name, **common.times(assoc)}
    if assoc.prefix is not None:
        out["prefix"] = assoc.prefix
    if assoc.properties_target is not None:
        out["properties_target"] = assoc.properties_target
    return out


def associations(s, ns_id: int) -> list[dict]:
    rows = s.execute(sa.select(MetadefResourceType.name, MetadefAssociation)
                     .join(MetadefAssociation,
                           MetadefAssociation.resource_type_id == MetadefResourceType.id)
                     .where(MetadefAssociation.namespace_id == ns_id)
                     .order_by(MetadefResourceType.name)).all()
    return [association_view(name, assoc) for name, assoc in rows]


def list_resource_types(ctx) -> dict:
    common.authorize(ctx, "list_metadef_resource_types")
    with db.reader() as s:
        rows = s.scalars(sa.select(MetadefResourceType)
                         .order_by(MetadefResourceType.name)).all()
        return {"resource_types": [{"name": r.name, **common.times(r)} for r in rows]}


def list_associations(ctx, ns_name: str) -> dict:
    with db.reader() as s:
        ns = common.load(s, ctx, ns_name)
        common.authorize(ctx, "list_metadef_resource_types", ns)
        return {"resource_type_associations": associations(s, ns.id)}


def add(s, ns, body: dict) -> dict:
    """Associate a resource type (created unprotected if new, as glance) with ``ns``."""
    common.validate("metadefs/resource_type", body)
    name = common.check_name(body["name"])
    rtype = s.scalar(sa.select(MetadefResourceType).where(MetadefResourceType.name == name))
    now = utcnow()
    if rtype is None:
        rtype = MetadefResourceType(name=name, protected=False, created_at=now,
                                    updated_at=now)
        s.add(rtype)
        s.flush()
    elif s.get(MetadefAssociation, (rtype.id, ns.id)) is not None:
        raise exceptions.Conflict(
            f"The metadata definition resource-type association of resource-type={name} to "
            f"namespace={ns.namespace} already exists.")
    assoc = MetadefAssociation(resource_type_id=rtype.id, namespace_id=ns.id,
                               prefix=body.get("prefix"),
                               properties_target=body.get("properties_target"),
                               created_at=now, updated_at=now)
    s.add(assoc)
    s.flush()
    return association_view(name, assoc)


def create_association(ctx, ns_name: str, body) -> dict:
    with db.transaction() as s:
        ns = common.load(s, ctx, ns_name, lock=True)
        common.authorize(ctx, "add_metadef_resource_type_association", ns)
        return add(s, ns, body)


def delete_association(ctx, ns_name: str, name: str) -> None:
    with db.transaction() as s:
        ns = common.load(s, ctx, ns_name, lock=True)
        common.authorize(ctx, "remove_metadef_resource_type_association", ns)
        rtype = s.scalar(sa.select(MetadefResourceType)
                         .where(MetadefResourceType.name == name))
        assoc = s.get(MetadefAssociation, (rtype.id, ns.id)) if rtype is not None else None
        if assoc is None:
            raise exceptions.NotFound(f"Failed to find resource type {name} to delete")
        common.protect(ns, f"Metadata definition resource-type-association {name} is "
                           "protected and cannot be deleted.")
        s.delete(assoc)
