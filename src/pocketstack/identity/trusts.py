"""Trusts (Keystone's OS-TRUST): a trustor delegates some of the roles it holds on a project
to a trustee, who authenticates with ``scope: {"OS-TRUST:trust": {"id": …}}`` and gets a
token on that project carrying those roles — as the trustor with ``impersonation``.

A trust is usable until it expires or its ``remaining_uses`` are spent (each trust-scoped
token spends one). Its tokens carry only the delegated roles the trustor still holds, and
stop validating when the trust is deleted (a revocation event by trust id).
Redelegation (a trust created with a trust-scoped token) is not built.
"""
from __future__ import annotations

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.common.timeutils import parse_isotime, utcnow
from pocketstack.identity import assignment, base, tokens
from pocketstack.identity.models import Project, Role, Trust, User

_role_ref = {"type": "object",
             "properties": {"id": {"type": "string", "minLength": 1, "maxLength": 64},
                            "name": {"type": "string", "minLength": 1, "maxLength": 255}},
             "minProperties": 1, "maxProperties": 1, "additionalProperties": False}
_user_id = {"type": "string", "minLength": 1, "maxLength": 64}
CREATE = {"type": "object", "properties": {"trust": {
    "type": "object",
    "properties": {"trustor_user_id": _user_id, "trustee_user_id": _user_id,
                   "impersonation": {"type": "boolean"},
                   "project_id": {"type": ["string", "null"], "maxLength": 64},
                   "remaining_uses": {"type": ["integer", "null"], "minimum": 1},
                   "expires_at": {"type": ["string", "null"]},
                   "allow_redelegation": {"type": ["boolean", "null"]},
                   "redelegation_count": {"type": ["integer", "null"], "minimum": 0},
                   "roles": {"type": "array", "items": _role_ref}},
    "required": ["trustor_user_id", "trustee_user_id", "impersonation"],
    "additionalProperties": True}}, "required": ["trust"], "additionalProperties": False}

_KNOWN = set(CREATE["properties"]["trust"]["properties"])


def _not_found(trust_id) -> exceptions.NotFound:
    return exceptions.NotFound(f"Could not find trust: {trust_id}.")


def _expiry(text):
    if text is None:
        return None
    try:
        value = parse_isotime(text)
    except (ValueError, TypeError):
        raise exceptions.ValidationError(
            "Timestamp not in expected format. The server could not comply with the request "
            "since it is either malformed or otherwise incorrect. The client is assumed to "
            "be in error.") from None
    if value <= utcnow():
        raise exceptions.ValidationError("The 'expires_at' must not be before now.")
    return value


def _roles(s, refs: list[dict]) -> list[Role]:
    roles = []
    for ref in refs:
        if "id" in ref:
            role = s.get(Role, ref["id"])
        else:
            role = s.scalar(sa.select(Role).where(Role.name == ref["name"],
                                                  Role.domain_id.is_(None)))
        if role is None:
            raise exceptions.NotFound(f"Could not find role: {ref.get('id') or ref['name']}.")
        if role not in roles:
            roles.append(role)
    return roles


def create(ctx, ref: dict) -> Trust:
    """POST /v3/OS-TRUST/trusts by the trustor (the handler checked who may call)."""
    if ref.get("project_id") and not ref.get("roles"):
        raise exceptions.ValidationError("At least one role should be specified.")
    expires_at = _expiry(ref.get("expires_at"))
    with db.transaction() as s:
        base.get_or_404(s, User, ref["trustor_user_id"], "user")
        base.get_or_404(s, User, ref["trustee_user_id"], "user")
        roles = _roles(s, ref.get("roles") or [])
        project_id = ref.get("project_id")
        if project_id:
            base.get_or_404(s, Project, project_id, "project")
            held = assignment.effective_role_ids(s, ref["trustor_user_id"],
                                                 project_id=project_id)
            for role in roles:
                if role.id not in held:  # Keystone's answer for a role not held there
                    raise exceptions.NotFound(f"Could not find role: {role.id}.")
        trust = Trust(id=base.new_id(), trustor_user_id=ref["trustor_user_id"],
                      trustee_user_id=ref["trustee_user_id"], project_id=project_id,
                      impersonation=ref["impersonation"], expires_at=expires_at,
                      remaining_uses=ref.get("remaining_uses"),
                      allow_redelegation=bool(ref.get("allow_redelegation")),
                      redelegation_count=ref.get("redelegation_count") or 0,
                      roles=[{"id": r.id, "name": r.name, "domain_id": r.domain_id}
                             for r in roles],
                      extra=base.extra_attributes(ref, _KNOWN))
        s.add(trust)
    return trust


def usable(trust: Trust | None) -> bool:
    """Not expired and not used up (Keystone answers 404 for either)."""
    return (trust is not None
            and (trust.expires_at is None or trust.expires_at > utcnow())
            and (trust.remaining_uses is None or trust.remaining_uses > 0))


def get(trust_id: str) -> Trust:
    with db.reader() as s:
        trust = s.get(Trust, trust_id) if isinstance(trust_id, str) else None
        if not usable(trust):
            raise _not_found(trust_id)
        return trust


def list_trusts(trustor_user_id: str | None = None,
                trustee_user_id: str | None = None) -> list[Trust]:
    with db.reader() as s:
        query = sa.select(Trust).order_by(Trust.id)
        if trustor_user_id is not None:
            query = query.where(Trust.trustor_user_id == trustor_user_id)
        if trustee_user_id is not None:
            query = query.where(Trust.trustee_user_id == trustee_user_id)
        return [t for t in s.scalars(query) if usable(t)]


def delete(trust_id: str) -> None:
    with db.transaction() as s:
        trust = s.get(Trust, trust_id) if isinstance(trust_id, str) else None
        if trust is None:
            raise _not_found(trust_id)
        s.delete(trust)
        tokens.revoke(s, trust_id=trust_id)


# --- trust-scoped authentication ----------------------------------------------------------

def scope(s, ref, user: User) -> tuple[Trust, User, set[str]]:
    """For ``scope: {"OS-TRUST:trust": ref}`` authenticated as ``user``: the trust, the
    token's user (the trustor if impersonating) and the role ids the token carries."""
    if not isinstance(ref, dict) or not isinstance(ref.get("id"), str) or not ref["id"]:
        raise exceptions.ValidationError("Expecting to find id in OS-TRUST:trust.")
    trust = s.get(Trust, ref["id"])
    if not usable(trust):
        raise _not_found(ref["id"])
    if trust.trustee_user_id != user.id:
        raise exceptions.Forbidden("User is not a trustee.")
    trustor = s.get(User, trust.trustor_user_id)
    if trustor is None or not trustor.enabled:
        raise exceptions.Forbidden("Trustor is disabled.")
    role_ids: set[str] = set()
    if trust.project_id:
        delegated = assignment.expand_implied(s, {r["id"] for r in trust.roles})
        role_ids = delegated & assignment.effective_role_ids(
            s, trust.trustor_user_id, project_id=trust.project_id)
        if not role_ids:
            raise exceptions.Forbidden("Trustee has no delegated roles.")
    return trust, (trustor if trust.impersonation else user), role_ids


def consume_use(trust_id: str) -> None:
    """Spend one of a limited trust's uses; 404 if none is left (a race lost)."""
    with db.transaction() as s:
        spent = s.execute(sa.update(Trust).where(
            Trust.id == trust_id, Trust.remaining_uses.is_not(None),
            Trust.remaining_uses > 0).values(remaining_uses=Trust.remaining_uses - 1))
        if spent.rowcount == 0 and s.scalar(sa.select(Trust.remaining_uses).where(
                Trust.id == trust_id)) is not None:
            raise _not_found(trust_id)
