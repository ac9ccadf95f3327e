"""Namespaces (/v2/metadefs/namespaces): list, create (with nested contents), show (with
its contents, property names prefixed for a resource type), update, delete."""
from __future__ import annotations

import urllib.parse

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions
from pocketstack.common.timeutils import utcnow
from pocketstack.image.metadefs import common, contents, resource_types
from pocketstack.image.models import (MetadefAssociation, MetadefNamespace, MetadefObject,
                                      MetadefProperty, MetadefResourceType, MetadefTag)

SORT_KEYS = ("created_at", "updated_at", "namespace", "display_name", "id")
FIELDS = ("namespace", "display_name", "description", "visibility", "protected", "owner")


def view(ns: MetadefNamespace) -> dict:
    out = {"namespace": ns.namespace, "visibility": ns.visibility,
           "protected": ns.protected, "owner": ns.owner, **common.times(ns),
           "schema": "/v2/schemas/metadefs/namespace", "self": common.ns_href(ns.namespace)}
    for key in ("display_name", "description"):
        if getattr(ns, key) is not None:
            out[key] = getattr(ns, key)
    return out


def _int(value: str, name: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise exceptions.BadRequest(f"{name} param must be an integer") from None
    if number < 0:
        raise exceptions.BadRequest(f"{name} param must be positive")
    return number


def list_namespaces(ctx, params: dict) -> dict:
    common.authorize(ctx, "get_metadef_namespaces")
    common.authorize(ctx, "list_metadef_resource_types")
    params = dict(params)
    limit = params.pop("limit", None)
    marker = params.pop("marker", None)
    sort_key = params.pop("sort_key", "created_at")
    sort_dir = params.pop("sort_dir", "desc")
    if sort_dir not in ("asc", "desc"):
        raise exceptions.BadRequest(f"Invalid sort direction: {sort_dir}")
    if sort_key not in SORT_KEYS:
        raise exceptions.BadRequest(f"Invalid sort key: {sort_key}.")
    size = min(config.CONF.image.api_limit_max,
               _int(limit, "limit") if limit is not None else
               config.CONF.image.limit_param_default)
    column = getattr(MetadefNamespace, sort_key)
    desc = sort_dir == "desc"
    with db.reader() as s:
        stmt = sa.select(MetadefNamespace).where(common.visible_clause(ctx))
        if params.get("visibility"):
            stmt = stmt.where(MetadefNamespace.visibility == params["visibility"])
        if params.get("resource_types"):
            wanted = [n.strip() for n in params["resource_types"].split(",") if n.strip()]
            stmt = stmt.where(MetadefNamespace.id.in_(
                sa.select(MetadefAssociation.namespace_id).join(MetadefResourceType)
                .where(MetadefResourceType.name.in_(wanted))))
        if marker is not None:
            mark = common.load(s, ctx, marker)
            value = getattr(mark, sort_key)
            tie = MetadefNamespace.id < mark.id if desc else MetadefNamespace.id > mark.id
            after = column < value if desc else column > value
            stmt = stmt.where(sa.or_(after, sa.and_(column == value, tie)))
        order = (column.desc(), MetadefNamespace.id.desc()) if desc else \
            (column.asc(), MetadefNamespace.id.asc())
        rows = s.scalars(stmt.order_by(*order).limit(size)).all()
        out = []
        for ns in rows:
            item = view(ns)
            assocs = resource_types.associations(s, ns.id)
            if assocs:
                item["resource_type_associations"] = assocs
            out.append(item)
    query = dict(params, sort_key=sort_key, sort_dir=sort_dir)
    if limit is not None:
        query["limit"] = limit
    body = {"namespaces": out, "schema": "/v2/schemas/metadefs/namespaces",
            "first": "/v2/metadefs/namespaces?" + urllib.parse.urlencode(query)}
    if rows and len(rows) == size:
        body["next"] = "/v2/metadefs/namespaces?" + urllib.parse.urlencode(
            dict(query, marker=rows[-1].namespace))
    return body


def _contents(s, ns: MetadefNamespace, resource_type: str | None) -> dict:
    out = view(ns)
    objects = [contents.object_view(ns.namespace, o)
               for o in contents._rows(s, MetadefObject, ns.id)]
    assocs = resource_types.associations(s, ns.id)
    props = {p.name: dict(p.schema or {}) for p in contents._rows(s, MetadefProperty, ns.id)}
    tags = [{"name": t.name} for t in contents._rows(s, MetadefTag, ns.id)]
    if resource_type:  # glance's _prefix_property_name
        prefix = next((a.get("prefix") for a in assocs if a["name"] == resource_type), None)
        if prefix:
            props = {prefix + k: v for k, v in props.items()}
            for obj in objects:
                obj["properties"] = {prefix + k: v for k, v in obj["properties"].items()}
                obj["required"] = [prefix + k for k in obj["required"]]
    for key, value in (("objects", objects), ("resource_type_associations", assocs),
                       ("properties", props), ("tags", tags)):
        if value:
            out[key] = value
    return out


def show(ctx, name: str, resource_type: str | None = None) -> dict:
    with db.reader() as s:
        ns = common.load(s, ctx, name)
        for rule in ("get_metadef_namespace", "list_metadef_resource_types",
                     "get_metadef_objects", "get_metadef_properties", "get_metadef_tags"):
            common.authorize(ctx, rule, ns)
        return _contents(s, ns, resource_type)


def _attributes(ctx, body: dict) -> dict:
    common.validate("metadefs/namespace", body)
    common.check_name(body["namespace"], "namespace")
    return {"namespace": body["namespace"], "display_name": body.get("display_name"),
            "description": body.get("description"),
            "visibility": body.get("visibility") or "private",
            "protected": bool(body.get("protected") or False),
            "owner": body.get("owner") or ctx.project_id}


def _taken(s, name: str, skip: MetadefNamespace | None = None) -> None:
    other = s.scalar(sa.select(MetadefNamespace).where(MetadefNamespace.namespace == name))
    if other is not None and other is not skip:
        raise exceptions.Conflict(f"The metadata definition namespace={name} already "
                                  "exists.")


def create(ctx, body) -> dict:
    try:
        return _create(ctx, body)
    except sa.exc.IntegrityError as error:  # a concurrent create won the name
        if not db.is_duplicate(error):
            raise
        raise exceptions.Conflict(f"The metadata definition namespace={body['namespace']} "
                                  "already exists.") from None


def _create(ctx, body) -> dict:
    common.authorize(ctx, "add_metadef_namespace")
    values = _attributes(ctx, body)
    for key, rule in (("resource_type_associations", "add_metadef_resource_type_association"),
                      ("objects", "add_metadef_object"), ("properties", "add_metadef_property"),
                      ("tags", "add_metadef_tag")):
        if body.get(key):
            common.authorize(ctx, rule)
    now = utcnow()
    with db.transaction() as s:  # all or nothing
        _taken(s, values["namespace"])
        ns = MetadefNamespace(**values, created_at=now, updated_at=now)
        s.add(ns)
        s.flush()
        for assoc in body.get("resource_type_associations") or []:
            resource_types.add(s, ns, assoc)
        seen = set()
        for obj in body.get("objects") or []:
            row = contents.new_object(ns, obj)
            if row.name in seen:
                contents._duplicate(s, MetadefObject, ns, row.name)
            seen.add(row.name)
            s.add(row)
        for name, schema in (body.get("properties") or {}).items():
            s.add(contents.new_property(ns, name, schema))
        lowered = set()
        for tag in body.get("tags") or []:
            row = contents.new_tag(ns, tag.get("name"))
            if row.name.lower() in lowered:
                raise exceptions.Conflict(f"A metadata tag with name={row.name} already "
                                          f"exists in namespace={ns.namespace}. (Please "
                                          "note that metadata tag names are case "
                                          "insensitive).")
            lowered.add(row.name.lower())
            s.add(row)
        s.flush()
        return _contents(s, ns, None)


def update(ctx, name: str, body) -> dict:
    try:
        return _update(ctx, name, body)
    except sa.exc.IntegrityError as error:  # a concurrent create or rename won the name
        if not db.is_duplicate(error):
            raise
        raise exceptions.Conflict(f"The metadata definition namespace={body['namespace']} "
                                  "already exists.") from None


def _update(ctx, name: str, body) -> dict:
    with db.transaction() as s:
        try:
            ns = common.load(s, ctx, name, lock=True)
        except exceptions.NotFound:
            raise exceptions.NotFound(f"Namespace {name} not found") from None
        common.authorize(ctx, "modify_metadef_namespace", ns)
        values = _attributes(ctx, body)
        _taken(s, values["namespace"], skip=ns)
        for key, value in values.items():
            setattr(ns, key, value)
        ns.updated_at = utcnow()
        s.flush()
        return view(ns)


def delete(ctx, name: str) -> None:
    with db.transaction() as s:
        try:
            ns = common.load(s, ctx, name, lock=True)
        except exceptions.NotFound:
            raise exceptions.NotFound(f"Namespace {name} not found") from None
        common.authorize(ctx, "delete_metadef_namespace", ns)
        common.protect(ns, f"Metadata definition namespace {name} is protected and cannot "
                           "be deleted.")
        # Explicitly, not by the foreign keys' cascade (SQLite may run without them).
        for model in (MetadefObject, MetadefProperty, MetadefTag, MetadefAssociation):
            s.execute(sa.delete(model).where(model.namespace_id == ns.id))
        s.delete(ns)
