"""Application credential access rules (/v3/users/{id}/access_rules).

As in Keystone a rule belongs to its user and is shared by that user's credentials: a
credential naming an identical rule (or an existing rule by id) reuses it. The credential
keeps the ids of its rules in its ``access_rules`` column. A rule in use cannot be deleted.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.identity import base
from pocketstack.identity.models import AccessRule, ApplicationCredential, User


def _not_found(rule_id: str) -> exceptions.NotFound:
    return exceptions.NotFound(f"Could not find access rule: {rule_id}.")


def resolve(s, user_id: str, refs: list[dict]) -> list[str]:
    """The ids of the rules a new credential names, creating the new ones."""
    ids = []
    for ref in refs:
        rule = s.get(AccessRule, ref["id"]) if ref.get("id") else None
        if rule is not None and rule.user_id != user_id:
            rule = None  # another user's rule id: Keystone makes the rule anew
        if rule is None and not all(ref.get(k) for k in ("service", "path", "method")):
            raise exceptions.ValidationError(
                "Invalid access rule: service, path and method are required unless the "
                "id names an existing access rule of the user.")
        if rule is None:
            rule = s.scalar(sa.select(AccessRule).where(
                AccessRule.user_id == user_id, AccessRule.service == ref["service"],
                AccessRule.path == ref["path"], AccessRule.method == ref["method"]))
        if rule is None:
            taken = ref.get("id") and s.get(AccessRule, ref["id"]) is not None
            rule = AccessRule(id=base.new_id() if taken or not ref.get("id") else ref["id"],
                              user_id=user_id, service=ref["service"], path=ref["path"],
                              method=ref["method"])
            s.add(rule)
            s.flush()
        if rule.id not in ids:
            ids.append(rule.id)
    return ids


def rules_of(s, rule_ids: list) -> list[dict]:
    """What a credential shows: {"id", "service", "path", "method"} per rule."""
    if not rule_ids:
        return []
    ids = [r if isinstance(r, str) else r.get("id") for r in rule_ids]
    rows = {r.id: r for r in s.scalars(sa.select(AccessRule).where(AccessRule.id.in_(ids)))}
    return [{"id": r.id, "service": r.service, "path": r.path, "method": r.method}
            for r in (rows.get(i) for i in ids) if r is not None]


def describe(rule_ids: list) -> list[dict]:
    if not rule_ids:
        return []
    with db.reader() as s:
        return rules_of(s, rule_ids)


def list_for_user(user_id: str, filters: dict) -> list[AccessRule]:
    with db.reader() as s:
        base.get_or_404(s, User, user_id, "user")
        q = sa.select(AccessRule).where(AccessRule.user_id == user_id)
        for key in ("service", "path", "method"):
            if filters.get(key) is not None:
                q = q.where(getattr(AccessRule, key) == filters[key])
        return list(s.scalars(q.order_by(AccessRule.service, AccessRule.path)))


def get(user_id: str, rule_id: str) -> AccessRule:
    with db.reader() as s:
        rule = s.get(AccessRule, rule_id)
        if rule is None or rule.user_id != user_id:
            raise _not_found(rule_id)
        return rule


def delete(user_id: str, rule_id: str) -> None:
    with db.transaction() as s:
        rule = s.get(AccessRule, rule_id)
        if rule is None or rule.user_id != user_id:
            raise _not_found(rule_id)
        creds = s.scalars(sa.select(ApplicationCredential.access_rules).where(
            ApplicationCredential.user_id == user_id))
        if any(rule_id in (ids or []) for ids in creds):
            raise exceptions.Forbidden("May not delete access rule in use")
        s.delete(rule)
