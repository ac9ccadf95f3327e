"""ACLs of a secret or container: ``read`` shared with ``users`` (of any project), and
``project-access`` (false: only the creator and those users, besides admins)."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, timeutils
from pocketstack.keymanager import access
from pocketstack.keymanager.models import Acl
from pocketstack.keymanager.validation import check_schema

OPERATIONS = ("read", "write", "delete", "list")
_DEFINITION = {
    "type": "object",
    "properties": {"users": {"type": "array", "items": {"type": "string", "maxLength": 255}},
                   "project-access": {"type": "boolean"}},
    "additionalProperties": False,
}
SCHEMA = {"type": "object", "properties": {"read": _DEFINITION}, "additionalProperties": False}
_NAMES = {"secret": "SecretACL(s)", "container": "ContainerACL(s)"}


def _view(acls: list[Acl]) -> dict:
    if not acls:
        return {"read": {"project-access": True}}
    return {acl.operation: {"project-access": acl.project_access, "users": list(acl.users),
                            "created": timeutils.isotime_naive(acl.created),
                            "updated": timeutils.isotime_naive(acl.updated)}
            for acl in acls}


def get(ctx, kind: str, lookup, entity_id: str) -> dict:
    with db.reader() as s:
        obj = lookup(s, entity_id)
        acls = access.acls_of(s, kind, obj.id)
        access.enforce(ctx, f"{kind}_acls:get", f"{_NAMES[kind]} retrieval", kind, obj, acls)
        return _view(acls)


def update(ctx, kind: str, lookup, entity_id: str, body, replace: bool) -> None:
    """PUT (``replace``: missing values are defaults, missing operations removed) or
    PATCH (only what the body names changes)."""
    check_schema(body, SCHEMA, "ACL")
    now = timeutils.utcnow()
    with db.transaction() as s:
        obj = lookup(s, entity_id)
        acls = access.acls_of(s, kind, obj.id)
        access.enforce(ctx, f"{kind}_acls:put_patch", f"{_NAMES[kind]} Update", kind, obj,
                       acls)
        existing = {acl.operation: acl for acl in acls}
        for operation in (op for op in OPERATIONS if body.get(op)):
            given = body[operation]
            acl = existing.pop(operation, None)
            if acl is None:
                acl = Acl(entity_type=kind, entity_id=obj.id, operation=operation,
                          project_access=True, users=[], created=now)
                s.add(acl)
            if replace or "project-access" in given:
                acl.project_access = given.get("project-access", True)
            if replace or "users" in given:
                acl.users = list(dict.fromkeys(given.get("users", [])))
            acl.updated = now
        if replace:
            for acl in existing.values():
                s.delete(acl)


def delete(ctx, kind: str, lookup, entity_id: str) -> None:
    with db.transaction() as s:
        obj = lookup(s, entity_id)
        acls = access.acls_of(s, kind, obj.id)
        access.enforce(ctx, f"{kind}_acls:delete", f"{_NAMES[kind]} deletion", kind, obj,
                       acls)
        s.execute(sa.delete(Acl).where(Acl.entity_type == kind, Acl.entity_id == obj.id))
