"""A namespace's objects, properties and tags (/v2/metadefs/namespaces/{ns}/...)."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.common.timeutils import utcnow
from pocketstack.image.metadefs import common
from pocketstack.image.models import (MetadefAssociation, MetadefObject, MetadefProperty,
                                      MetadefResourceType, MetadefTag)

KINDS = {"objects": MetadefObject, "properties": MetadefProperty, "tags": MetadefTag}


# --- views ------------------------------------------------------------------------------


def object_view(ns_name: str, obj: MetadefObject) -> dict:
    out = {"name": obj.name, "required": obj.required or [],
           "properties": obj.properties or {}, "schema": "/v2/schemas/metadefs/object",
           "self": f"{common.ns_href(ns_name)}/objects/{obj.name}", **common.times(obj)}
    if obj.description is not None:
        out["description"] = obj.description
    return out


def property_view(prop: MetadefProperty) -> dict:
    return {"name": prop.name, **(prop.schema or {})}


def tag_view(tag: MetadefTag) -> dict:
    return {"name": tag.name, **common.times(tag)}


def _rows(s, model, ns_id: int) -> list:
    return s.scalars(sa.select(model).where(model.namespace_id == ns_id)
                     .order_by(model.name)).all()


def _get(s, model, ns, name: str):
    row = s.scalar(sa.select(model).where(model.namespace_id == ns.id, model.name == name))
    if row is None:
        what = {MetadefObject: "The metadata definition object with",
                MetadefProperty: "The metadata definition property with",
                MetadefTag: "The metadata definition tag with"}[model]
        raise exceptions.NotFound(f"{what} name={name} was not found in "
                                  f"namespace={ns.namespace}.")
    return row


def _duplicate(s, model, ns, name: str, skip=None) -> None:
    column = sa.func.lower(model.name) if model is MetadefTag else model.name
    stmt = sa.select(model.id).where(model.namespace_id == ns.id,
                                     column == (name.lower() if model is MetadefTag else name))
    if skip is not None:
        stmt = stmt.where(model.id != skip.id)
    if s.scalar(stmt) is not None:
        raise exceptions.Conflict({
            MetadefObject: f"A metadata definition object with name={name} already exists "
                           f"in namespace={ns.namespace}.",
            MetadefProperty: f"A metadata definition property with name={name} already "
                             f"exists in namespace={ns.namespace}.",
            MetadefTag: f"A metadata tag with name={name} already exists in "
                        f"namespace={ns.namespace}. (Please note that metadata tag names "
                        "are case insensitive)."}[model])


def new_object(ns, body: dict) -> MetadefObject:
    common.validate("metadefs/object", body)
    now = utcnow()
    return MetadefObject(namespace_id=ns.id, name=common.check_name(body["name"]),
                         description=body.get("description"),
                         required=body.get("required") or [],
                         properties=body.get("properties") or {}, created_at=now,
                         updated_at=now)


def _property_schema(body: dict) -> dict:
    return {k: v for k, v in body.items() if k != "name"}


def new_property(ns, name: str, body: dict) -> MetadefProperty:
    # As glance: the body itself must name the property (nested ones: their key names it)
    common.validate("metadefs/property", body if name is None else dict(body, name=name))
    now = utcnow()
    return MetadefProperty(namespace_id=ns.id, name=common.check_name(name),
                           schema=_property_schema(body), created_at=now, updated_at=now)


def new_tag(ns, name) -> MetadefTag:
    now = utcnow()
    return MetadefTag(namespace_id=ns.id, name=common.check_name(name), created_at=now,
                      updated_at=now)


# --- objects ----------------------------------------------------------------------------


def list_objects(ctx, ns_name: str) -> dict:
    with db.reader() as s:
        ns = common.load(s, ctx, ns_name)
        common.authorize(ctx, "get_metadef_objects", ns)
        objects = [object_view(ns_name, o) for o in _rows(s, MetadefObject, ns.id)]
    return {"objects": objects, "schema": "v2/schemas/metadefs/objects"}


def create_object(ctx, ns_name: str, body) -> dict:
    with db.transaction() as s:
        ns = common.load(s, ctx, ns_name, lock=True)
        common.authorize(ctx, "add_metadef_object", ns)
        obj = new_object(ns, body)
        _duplicate(s, MetadefObject, ns, obj.name)
        s.add(obj)
        s.flush()
        return object_view(ns_name, obj)


def show_object(ctx, ns_name: str, name: str) -> dict:
    with db.reader() as s:
        ns = common.load(s, ctx, ns_name)
        common.authorize(ctx, "get_metadef_object", ns)
        return object_view(ns_name, _get(s, MetadefObject, ns, name))


def update_object(ctx, ns_name: str, name: str, body) -> dict:
    with db.transaction() as s:
        ns = common.load(s, ctx, ns_name, lock=True)
        common.authorize(ctx, "modify_metadef_object", ns)
        obj = _get(s, MetadefObject, ns, name)
        new = new_object(ns, body)
        _duplicate(s, MetadefObject, ns, new.name, skip=obj)
        obj.name, obj.description = new.name, new.description
        obj.required, obj.properties, obj.updated_at = new.required, new.properties, utcnow()
        s.flush()
        return object_view(ns_name, obj)


def delete_one(ctx, ns_name: str, kind: str, name: str) -> None:
    model = KINDS[kind]
    rule, noun = {"objects": ("delete_metadef_object", "object"),
                  "properties": ("remove_metadef_property", "property"),
                  "tags": ("delete_metadef_tag", "tag")}[kind]
    with db.transaction() as s:
        ns = common.load(s, ctx, ns_name, lock=True)
        common.authorize(ctx, rule, ns)
        row = _get(s, model, ns, name)
        common.protect(ns, f"Metadata definition {noun} {name} is protected and cannot be "
                           "deleted.")
        s.delete(row)


# --- properties -------------------------------------------------------------------------


def prefix_of(s, ns, resource_type: str) -> str | None:
    assoc = s.scalar(sa.select(MetadefAssociation).join(MetadefResourceType).where(
        MetadefAssociation.namespace_id == ns.id, MetadefResourceType.name == resource_type))
    if assoc is None:
        raise exceptions.NotFound(
            f"The metadata definition resource-type association of resource-type="
            f"{resource_type} to namespace={ns.namespace}, was not found.")
    return assoc.prefix


def list_properties(ctx, ns_name: str) -> dict:
    with db.reader() as s:
        ns = common.load(s, ctx, ns_name)
        common.authorize(ctx, "get_metadef_properties", ns)
        props = {p.name: dict(p.schema or {}) for p in _rows(s, MetadefProperty, ns.id)}
    return {"properties": props}


def create_property(ctx, ns_name: str, body) -> dict:
    if not isinstance(body, dict):
        raise exceptions.BadRequest("The request body must be a JSON object.")
    with db.transaction() as s:
        ns = common.load(s, ctx, ns_name, lock=True)
        common.authorize(ctx, "add_metadef_property", ns)
        prop = new_property(ns, body.get("name"), body)
        _duplicate(s, MetadefProperty, ns, prop.name)
        s.add(prop)
        s.flush()
        return property_view(prop)


def show_property(ctx, ns_name: str, name: str, resource_type: str | None) -> dict:
    with db.reader() as s:
        ns = common.load(s, ctx, ns_name)
        common.authorize(ctx, "get_metadef_property", ns)
        if resource_type:
            prefix = prefix_of(s, ns, resource_type)
            if not prefix or not name.startswith(prefix):
                raise exceptions.NotFound(
                    f"Property {name} does not start with the expected resource type "
                    f"association prefix of '{prefix}'.")
            name = name[len(prefix):]
        return property_view(_get(s, MetadefProperty, ns, name))


def update_property(ctx, ns_name: str, name: str, body) -> dict:
    if not isinstance(body, dict):
        raise exceptions.BadRequest("The request body must be a JSON object.")
    with db.transaction() as s:
        ns = common.load(s, ctx, ns_name, lock=True)
        common.authorize(ctx, "modify_metadef_property", ns)
        prop = _get(s, MetadefProperty, ns, name)
        new = new_property(ns, body.get("name"), body)
        _duplicate(s, MetadefProperty, ns, new.name, skip=prop)
        prop.name, prop.schema, prop.updated_at = new.name, new.schema, utcnow()
        s.flush()
        return property_view(prop)


# --- tags -------------------------------------------------------------------------------


def list_tags(ctx, ns_name: str) -> dict:
    with db.reader() as s:
        ns = common.load(s, ctx, ns_name)
        common.authorize(ctx, "get_metadef_tags", ns)
        return {"tags": [tag_view(t) for t in _rows(s, MetadefTag, ns.id)]}


def create_tags(ctx, ns_name: str, body, append: bool) -> dict:
    """POST .../tags: replace the namespace's tags (or add to them, X-Openstack-Append)."""
    common.validate("metadefs/tags", body)
    names = [t.get("name") for t in body.get("tags") or [] if isinstance(t, dict)]
    if len(names) != len(body.get("tags") or []):
        raise exceptions.BadRequest("Each tag must be an object with a 'name'.")
    lowered = [n.lower() if isinstance(n, str) else n for n in names]
    with db.transaction() as s:
        ns = common.load(s, ctx, ns_name, lock=True)
        common.authorize(ctx, "add_metadef_tags", ns)
        if len(set(lowered)) != len(lowered):
            dup = next(n for i, n in enumerate(names) if lowered.index(lowered[i]) != i)
            raise exceptions.Conflict(f"A metadata tag with name={dup} already exists in "
                                      f"namespace={ns.namespace}. (Please note that "
                                      "metadata tag names are case insensitive).")
        if append:
            for name in names:
                _duplicate(s, MetadefTag, ns, name)
        else:
            common.authorize(ctx, "delete_metadef_tags", ns)
            s.execute(sa.delete(MetadefTag).where(MetadefTag.namespace_id == ns.id))
        tags = [new_tag(ns, name) for name in names]
        s.add_all(tags)
    return {"tags": [{"name": t.name} for t in tags]}


def create_tag(ctx, ns_name: str, name: str) -> dict:
    with db.transaction() as s:
        ns = common.load(s, ctx, ns_name, lock=True)
        common.authorize(ctx, "add_metadef_tag", ns)
        tag = new_tag(ns, name)
        _duplicate(s, MetadefTag, ns, tag.name)
        s.add(tag)
        s.flush()
        return tag_view(tag)


def show_tag(ctx, ns_name: str, name: str) -> dict:
    with db.reader() as s:
        ns = common.load(s, ctx, ns_name)
        common.authorize(ctx, "get_metadef_tag", ns)
        return tag_view(_get(s, MetadefTag, ns, name))


def update_tag(ctx, ns_name: str, name: str, body) -> dict:
    common.validate("metadefs/tag", body)
    with db.transaction() as s:
        ns = common.load(s, ctx, ns_name, lock=True)
        common.authorize(ctx, "modify_metadef_tag", ns)
        tag = _get(s, MetadefTag, ns, name)
        new_name = common.check_name(body["name"])
        _duplicate(s, MetadefTag, ns, new_name, skip=tag)
        tag.name, tag.updated_at = new_name, utcnow()
        s.flush()
        return tag_view(tag)


def delete_all(ctx, ns_name: str, kind: str) -> None:
    """DELETE .../objects|properties|tags: all of them, unless the namespace is protected
    (glance checks the namespace's own delete rule and protection first)."""
    with db.transaction() as s:
        ns = common.load(s, ctx, ns_name, lock=True)
        common.authorize(ctx, "delete_metadef_namespace", ns)
        if kind == "tags":
            common.authorize(ctx, "delete_metadef_tags", ns)
        common.protect(ns, f"Metadata definition namespace {ns_name} is protected and "
                           "cannot be deleted.")
        model = KINDS[kind]
        s.execute(sa.delete(model).where(model.namespace_id == ns.id))
