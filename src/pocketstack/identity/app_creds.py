"""Application credentials: a secret a user hands to CI, bound to one project and a subset
of the roles the user holds there. The secret is shown once, stored as a bcrypt hash;
deleting the credential revokes every token issued with it."""
from __future__ import annotations

import base64
import secrets

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.common.timeutils import utcnow
from pocketstack.identity import access_rules, assignment, base, passwords, tokens
from pocketstack.identity.models import ApplicationCredential, Role, User
from pocketstack.identity.schemas import parse_expiry


def _generate_secret() -> str:
    return base64.urlsafe_b64encode(secrets.token_bytes(64)).rstrip(b"=").decode()


def _invalid(detail: str) -> exceptions.ValidationError:
    return exceptions.ValidationError(f"Invalid application credential: {detail}")


def _resolve_roles(s, refs: list[dict]) -> list[Role]:
    roles = []
    for ref in refs:
        if ref.get("id"):
            role = s.get(Role, ref["id"])
        else:
            q = sa.select(Role).where(Role.name == ref["name"])
            q = q.where(Role.domain_id == ref["domain_id"] if ref.get("domain_id")
                        else Role.domain_id.is_(None))
            role = s.scalar(q)
        if role is None:
            raise exceptions.NotFound(f"Could not find role: {ref.get('id') or ref['name']}.")
        roles.append(role)
    return roles


def create(ctx, user_id: str, ref: dict) -> tuple[ApplicationCredential, str]:
    """Create for the caller's own user on the caller's project; returns (cred, secret)."""
    if ctx.user_id != user_id:
        raise exceptions.Forbidden("You are not authorized to perform the requested action: "
                                   "Cannot create an application credential for another user.")
    if not ctx.project_id:
        raise exceptions.Forbidden("Application credentials can only be created with a "
                                   "project-scoped token.")
    expires_at = parse_expiry(ref.get("expires_at"))
    if expires_at is not None and expires_at <= utcnow():
        raise exceptions.ValidationError("The 'expires_at' must not be before now.")
    secret = ref.get("secret") or _generate_secret()
    with base.writing("application_credential", ref["name"]) as s:
        base.get_or_404(s, User, user_id, "user")
        held = {r.name: r for r in s.scalars(sa.select(Role).where(Role.name.in_(ctx.roles)))
                if r.domain_id is None}
        if ref.get("roles"):
            wanted = _resolve_roles(s, ref["roles"])
            implied = assignment.expand_implied(s, {r.id for r in wanted})
            wanted += [s.get(Role, rid) for rid in sorted(implied - {r.id for r in wanted})]
            held_ids = {r.id for r in held.values()}
            if any(r.id not in held_ids for r in wanted):
                raise _invalid("Cannot create an application credential with unassigned role")
        else:
            wanted = sorted(held.values(), key=lambda r: r.name)
        if s.scalar(sa.select(ApplicationCredential.id).where(
                ApplicationCredential.user_id == user_id,
                ApplicationCredential.name == ref["name"])):
            raise base.conflict("application_credential",
                                f"Duplicate entry found with name {ref['name']}")
        cred = ApplicationCredential(
            id=base.new_id(), name=ref["name"], user_id=user_id, project_id=ctx.project_id,
            secret_hash=passwords.hash_password(secret),
            description=ref.get("description") or "", expires_at=expires_at,
            unrestricted=ref.get("unrestricted", False),
            roles=[{"id": r.id, "name": r.name, "domain_id": r.domain_id} for r in wanted],
            access_rules=access_rules.resolve(s, user_id, ref.get("access_rules") or []))
        s.add(cred)
    return cred, secret


def list_for_user(user_id: str, name: str | None = None) -> list[ApplicationCredential]:
    with db.reader() as s:
        base.get_or_404(s, User, user_id, "user")
        q = sa.select(ApplicationCredential).where(ApplicationCredential.user_id == user_id)
        if name is not None:
            q = q.where(ApplicationCredential.name == name)
        return list(s.scalars(q.order_by(ApplicationCredential.name)))


def _get(s, user_id: str, cred_id: str) -> ApplicationCredential:
    cred = s.get(ApplicationCredential, cred_id) if isinstance(cred_id, str) else None
    if cred is None or cred.user_id != user_id:
        raise exceptions.NotFound(f"Could not find Application Credential: {cred_id}.")
    return cred


def get(user_id: str, cred_id: str) -> ApplicationCredential:
    with db.reader() as s:
        return _get(s, user_id, cred_id)


def delete(user_id: str, cred_id: str) -> None:
    with db.transaction() as s:
        s.delete(_get(s, user_id, cred_id))
        tokens.revoke(s, app_cred_id=cred_id)
