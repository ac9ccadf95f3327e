"""POST /v3/ec2tokens and /v3/s3tokens (Keystone's EC2_S3_Resource): a service hands over
what a client signed with its EC2 credential; when the signature matches the stored
secret, a project-scoped token for the credential's user comes back.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json

from pocketstack.common import db, exceptions
from pocketstack.common.timeutils import parse_isotime, utcnow
from pocketstack.identity import auth, ec2_signer, tokens
from pocketstack.identity.assignment import effective_role_ids
from pocketstack.identity.models import (ApplicationCredential, Credential, Domain,
                                         Project, User)

AUTH_TTL = dt.timedelta(minutes=15)  # Keystone's [credential] auth_ttl


def _unauthorized(message: str) -> exceptions.Unauthorized:
    return exceptions.Unauthorized(message)


def _credentials(body) -> dict:
    if not body:
        raise exceptions.ValidationError("request must include a request body")
    creds = None
    if isinstance(body, dict):
        creds = body.get("credentials") or body.get("credential") or body.get("ec2Credentials")
    if not isinstance(creds, dict) or not isinstance(creds.get("access"), str):
        raise _unauthorized("EC2 Signature not supplied")
    return creds


def _stored(s, access: str) -> tuple[Credential, dict]:
    row = s.get(Credential, hashlib.sha256(access.encode()).hexdigest())
    if row is None or row.type != "ec2":
        raise exceptions.NotFound("EC2 access key not found.")
    try:
        blob = json.loads(row.blob)
    except ValueError:
        blob = None
    if not isinstance(blob, dict) or not isinstance(blob.get("secret"), str):
        raise _unauthorized("Invalid EC2 signature.")
    return row, blob


def _check_ec2(secret: str, creds: dict) -> None:
    if not creds.get("signature"):
        raise _unauthorized("EC2 signature not supplied.")
    hosts = [creds.get("host")]
    if ":" in str(creds.get("host") or ""):  # Keystone retries without the port
        hosts.append(str(creds["host"]).rsplit(":", 1)[0])
    for host in hosts:
        try:
            expected = ec2_signer.ec2(secret, dict(creds, host=host))
        except (ValueError, KeyError, TypeError, AttributeError):
            break
        if hmac.compare_digest(str(creds["signature"]).encode(), expected.encode()):
            return
    raise _unauthorized("Invalid EC2 signature.")


def _check_s3(secret: str, creds: dict) -> None:
    try:
        expected = ec2_signer.s3(secret, creds.get("token", ""))
    except (ValueError, TypeError):
        raise _unauthorized("Invalid EC2 signature.") from None
    if not hmac.compare_digest(str(creds.get("signature", "")).encode(), expected.encode()):
        raise _unauthorized("Credential signature mismatch")


def _check_timestamp(creds: dict) -> None:
    params, headers = creds.get("params") or {}, creds.get("headers") or {}
    stamp = params.get("Timestamp") or headers.get("X-Amz-Date") or params.get("X-Amz-Date")
    if not stamp:
        return
    try:
        when = parse_isotime(str(stamp))
    except ValueError as error:
        raise _unauthorized(f"Credential timestamp is invalid: {error}") from None
    if utcnow() > when + AUTH_TTL:
        raise _unauthorized("Credential is expired")


def authenticate(body, kind: str) -> tuple[str, dict]:
    """``kind`` "ec2" or "s3"; returns (token id, token body) or raises 4xx."""
    creds = _credentials(body)
    with db.reader() as s:
        row, blob = _stored(s, creds["access"])
        (_check_ec2 if kind == "ec2" else _check_s3)(blob["secret"], creds)
        user, project = s.get(User, row.user_id), s.get(Project, row.project_id or "")
        if project is None:
            raise exceptions.NotFound(f"Could not find project: {row.project_id}.")
        for obj in (user, project):
            domain = s.get(Domain, obj.domain_id) if obj is not None else None
            if obj is None or not obj.enabled or domain is None or not domain.enabled:
                raise _unauthorized("The credential's user or project is disabled.")
        _check_timestamp(creds)
        if blob.get("trust_id"):
            raise _unauthorized("EC2 credentials bound to a trust are not supported.")
        role_ids = effective_role_ids(s, user.id, project_id=project.id)
        cred = None
        if blob.get("app_cred_id"):
            cred = s.get(ApplicationCredential, blob["app_cred_id"])
            if cred is None or cred.project_id != project.id:
                raise _unauthorized("EC2 credential project does not match the application "
                                    "credential project.")
            role_ids &= {r["id"] for r in cred.roles}
        if not role_ids:
            raise _unauthorized("User not valid for project.")
        roles = auth._role_refs(s, role_ids)
        token_id, data = tokens.issue(
            user_id=user.id, user_domain_id=user.domain_id, methods=["ec2credential"],
            roles=[r["name"] for r in roles], project_id=project.id, user_name=user.name,
            project_name=project.name,
            project_domain_id=project.domain_id, app_cred_id=cred.id if cred else None)
        return token_id, auth.render(s, data, roles=roles)
