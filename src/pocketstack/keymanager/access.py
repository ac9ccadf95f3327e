"""Who may do what to a secret or container: barbican's policy targets (the object's
project, creator and the caller's ACL grants) and the lookups that enforce them."""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import policy
from pocketstack.keymanager.models import Acl
from pocketstack.keymanager.validation import forbidden


def acls_of(s, entity_type: str, entity_id: str) -> list[Acl]:
    return list(s.scalars(sa.select(Acl).where(Acl.entity_type == entity_type,
                                               Acl.entity_id == entity_id)))


def target(ctx, entity_type: str, obj, acls: list[Acl]) -> dict:
    """barbican's ACLMixin.get_acl_tuple, flattened: ``target.secret.read`` is "read" when
    the ACL names the caller; ``read_project_access`` is True without an ACL."""
    values = {acl.operation: acl.operation for acl in acls if ctx.user_id in (acl.users or [])}
    access = {f"{acl.operation}_project_access": acl.project_access for acl in acls}
    values.update(access or {"read_project_access": True})
    values["project_id"] = obj.project_id
    values["creator_id"] = obj.creator_id
    return {f"target.{entity_type}.{key}": value for key, value in values.items()}


def enforce(ctx, action: str, operation: str, entity_type: str, obj, acls: list[Acl]):
    if not policy.check(ctx, action, target(ctx, entity_type, obj, acls)):
        raise forbidden(operation)


def enforce_plain(ctx, action: str, operation: str, project_id: str | None = None):
    """A rule on the caller alone (list, create)."""
    if not policy.check(ctx, action, {"project_id": project_id or ctx.project_id}):
        raise forbidden(operation)
