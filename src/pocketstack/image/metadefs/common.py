"""What every metadef resource shares: who sees a namespace, policy, schemas, views.

Visibility is glance's database rule (metadef_api/namespace.py _is_namespace_visible):
admins see every namespace; others the public ones, the ownerless ones and their
project's. One that cannot be seen is a 404, never a 403. Every write is admin-only by
policy (glance's metadef_admin), and the contents of a protected namespace cannot be
deleted (glance's domain: ProtectedMetadef*Delete, 403).
"""
from __future__ import annotations

import functools
import json
import os

import sqlalchemy as sa

from pocketstack.common import exceptions, policy
from pocketstack.common.timeutils import isotime
from pocketstack.image.models import MetadefNamespace

SCHEMAS = os.path.join(os.path.dirname(__file__), "schemas.json")


@functools.lru_cache(maxsize=1)
def schemas() -> dict:
    with open(SCHEMAS, encoding="utf-8") as f:
        return json.load(f)["schemas"]


def schema(name: str) -> dict:
    return json.loads(json.dumps(schemas()[name]))  # a copy the caller may change


@functools.lru_cache(maxsize=16)
def _validator(name: str):
    import jsonschema  # on the first validation: a start need not import it

    return jsonschema.Draft4Validator(schemas()[name])


def validate(name: str, body) -> dict:
    """400 unless ``body`` is a JSON object matching glance's schema ``name``."""
    if not isinstance(body, dict):
        raise exceptions.BadRequest("The request body must be a JSON object.")
    import jsonschema

    error = jsonschema.exceptions.best_match(_validator(name).iter_errors(body))
    if error is not None:
        raise exceptions.BadRequest(f"Provided object does not match schema "
                                    f"'{name.split('/')[-1]}': {error.message}")
    return body


def visible(ctx, ns: MetadefNamespace) -> bool:
    return ctx.is_admin or ns.owner is None or ns.visibility == "public" or \
        (ctx.project_id is not None and ns.owner == ctx.project_id)


def visible_clause(ctx):
    if ctx.is_admin:
        return sa.true()
    return sa.or_(MetadefNamespace.visibility == "public", MetadefNamespace.owner.is_(None),
                  MetadefNamespace.owner == (ctx.project_id or ""))


def not_found(name: str) -> exceptions.NotFound:
    return exceptions.NotFound(f"Metadata definition namespace={name} was not found.")


def load(s, ctx, name: str, *, lock: bool = False) -> MetadefNamespace:
    stmt = sa.select(MetadefNamespace).where(MetadefNamespace.namespace == name)
    if lock:
        stmt = stmt.with_for_update()
    ns = s.scalar(stmt)
    if ns is None or not visible(ctx, ns):
        raise not_found(name)
    return ns


def authorize(ctx, rule: str, ns: MetadefNamespace | None = None) -> None:
    target = {"project_id": ns.owner or "" if ns is not None else ctx.project_id or "",
              "visibility": ns.visibility if ns is not None else ""}
    policy.authorize(ctx, f"image:{rule}", target)


def protect(ns: MetadefNamespace, message: str) -> None:
    if ns.protected:
        raise exceptions.Forbidden(message)


def times(row) -> dict:
    return {"created_at": isotime(row.created_at), "updated_at": isotime(row.updated_at)}


def ns_href(name: str) -> str:
    return f"/v2/metadefs/namespaces/{name}"


def check_name(value, what: str = "name") -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 80:
        raise exceptions.BadRequest(f"Invalid {what}: it must be a non-empty string of at "
                                    "most 80 characters.")
    return value
