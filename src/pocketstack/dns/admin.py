"""TLDs and blacklists (admin only): which zone names may exist. With TLDs defined, a
zone must end in one of them; a blacklisted pattern (a regular expression) refuses the
names it matches to everyone but admins."""
from __future__ import annotations

import re
import uuid

import sqlalchemy as sa

from pocketstack.common import db, policy
from pocketstack.common.timeutils import isotime_naive, utcnow
from pocketstack.dns import errors
from pocketstack.dns.models import Blacklist, Tld

TLD_NAME = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)(?:\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))*$")


def tld_view(tld: Tld) -> dict:
    return {"id": tld.id, "name": tld.name, "description": tld.description,
            "created_at": isotime_naive(tld.created_at),
            "updated_at": isotime_naive(tld.updated_at)}


def blacklist_view(row: Blacklist) -> dict:
    return {"id": row.id, "pattern": row.pattern, "description": row.description,
            "created_at": isotime_naive(row.created_at),
            "updated_at": isotime_naive(row.updated_at)}


def _fields(body, allowed: set, required: set) -> dict:
    if not isinstance(body, dict) or set(body) - allowed or required - set(body):
        raise errors.bad_request("Provided object does not match schema")
    description = body.get("description")
    if description is not None and (not isinstance(description, str)
                                    or len(description) > 160):
        raise errors.bad_request("Provided object does not match schema")
    return body


def _tld_name(value) -> str:
    if not isinstance(value, str) or len(value) > 255 or not TLD_NAME.match(value.rstrip(".")):
        raise errors.bad_request("Provided object does not match schema")
    return value.rstrip(".").lower()


def _pattern(value) -> str:
    if not isinstance(value, str) or not value or len(value) > 255:
        raise errors.bad_request("Provided object does not match schema")
    try:
        re.compile(value)
    except re.error as error:
        raise errors.bad_request(f"Invalid regular expression: {error}") from None
    return value


# model, view, field, its check, error names
KINDS = {
    "tld": (Tld, tld_view, "name", _tld_name, "TLD", "tld"),
    "blacklist": (Blacklist, blacklist_view, "pattern", _pattern, "Blacklist", "blacklist"),
}


def create(ctx, kind: str, body) -> dict:
    model, view, field, check, title, key = KINDS[kind]
    policy.authorize(ctx, f"create_{kind}", {})
    body = _fields(body, {field, "description"}, {field})
    row = model(id=str(uuid.uuid4()), description=body.get("description"),
                **{field: check(body[field])})
    try:
        with db.transaction() as s:
            if s.query(model).filter(getattr(model, field) == getattr(row, field)).first():
                raise errors.duplicate(title, f"duplicate_{key}")
            s.add(row)
    except sa.exc.IntegrityError as error:
        if db.is_duplicate(error):
            raise errors.duplicate(title, f"duplicate_{key}") from None
        raise
    return view(row)


def listing(ctx, kind: str, filters: dict) -> list:
    model, view, field, *_ = KINDS[kind]
    policy.authorize(ctx, "find_tlds" if kind == "tld" else "find_blacklists", {})
    with db.reader() as s:
        q = s.query(model)
        if filters.get(field):
            q = q.filter(getattr(model, field) == filters[field])
        return q.order_by(model.created_at, model.id).all()


def get(ctx, kind: str, row_id: str) -> dict:
    model, view, _, _, title, key = KINDS[kind]
    policy.authorize(ctx, f"get_{kind}", {})
    with db.reader() as s:
        row = s.get(model, row_id)
        if row is None:
            raise errors.not_found(title, f"{key}_not_found")
        return view(row)


def update(ctx, kind: str, row_id: str, body) -> dict:
    model, view, field, check, title, key = KINDS[kind]
    policy.authorize(ctx, f"update_{kind}", {})
    body = _fields(body, {field, "description"}, set())
    with db.transaction() as s:
        row = s.get(model, row_id)
        if row is None:
            raise errors.not_found(title, f"{key}_not_found")
        if field in body:
            value = check(body[field])
            clash = s.query(model).filter(getattr(model, field) == value,
                                          model.id != row.id).first()
            if clash is not None:
                raise errors.duplicate(title, f"duplicate_{key}")
            setattr(row, field, value)
        if "description" in body:
            row.description = body["description"]
        row.updated_at = utcnow()
        return view(row)


def delete(ctx, kind: str, row_id: str) -> None:
    model, _, _, _, title, key = KINDS[kind]
    policy.authorize(ctx, f"delete_{kind}", {})
    with db.transaction() as s:
        if not s.query(model).filter_by(id=row_id).delete():
            raise errors.not_found(title, f"{key}_not_found")
