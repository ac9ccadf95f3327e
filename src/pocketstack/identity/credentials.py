"""Credentials (/v3/credentials) and their EC2 view (/v3/users/{id}/credentials/OS-EC2).

An EC2 credential's blob is JSON with ``access`` and ``secret``; as in Keystone its id is
the SHA-256 of the access key, and it needs a project (the one S3/EC2 requests act on).
Blobs are stored as given: the database is the secret store here, as everywhere else in
pocketstack (Keystone encrypts them with its credential keys).
"""
from __future__ import annotations

import hashlib
import json
import secrets

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.identity import base
from pocketstack.identity.models import Credential, Project, User

COLUMNS = {"id", "user_id", "project_id", "type", "blob"}


def _ec2_id(blob: str) -> str:
    try:
        access = json.loads(blob).get("access")
    except (ValueError, AttributeError):
        access = None
    if not isinstance(access, str) or not access:
        raise exceptions.ValidationError("Invalid blob in credential")
    return hashlib.sha256(access.encode()).hexdigest()


def _check_refs(s, user_id: str, project_id: str | None) -> None:
    if s.get(User, user_id) is None:
        raise exceptions.ValidationError(f"Could not find user: {user_id}.")
    if project_id is not None and s.get(Project, project_id) is None:
        raise exceptions.ValidationError(f"Could not find project: {project_id}.")


def create(ref: dict) -> Credential:
    if ref["type"] == "ec2":
        if not ref.get("project_id"):
            raise exceptions.ValidationError("Missing project_id for ec2 credential.")
        credential_id = _ec2_id(ref["blob"])
    else:
        credential_id = base.new_id()
    credential = Credential(id=credential_id, user_id=ref["user_id"],
                            project_id=ref.get("project_id"), type=ref["type"],
                            blob=ref["blob"], extra=base.extra_attributes(ref, COLUMNS))
    with base.writing("credential") as s:
        _check_refs(s, credential.user_id, credential.project_id)
        if s.get(Credential, credential_id) is not None:
            raise base.conflict("credential", "Duplicate ID, " + credential_id)
        s.add(credential)
    return credential


def get(credential_id: str) -> Credential:
    with db.reader() as s:
        return base.get_or_404(s, Credential, credential_id, "credential")


def list_credentials(*, user_id: str | None = None, type_: str | None = None) -> list:
    with db.reader() as s:
        q = sa.select(Credential)
        if user_id is not None:
            q = q.where(Credential.user_id == user_id)
        if type_ is not None:
            q = q.where(Credential.type == type_)
        return list(s.scalars(q.order_by(Credential.id)))


def update(credential_id: str, ref: dict) -> Credential:
    with db.transaction() as s:
        credential = base.get_or_404(s, Credential, credential_id, "credential")
        new_type = ref.get("type", credential.type)
        new_blob = ref.get("blob", credential.blob)
        if new_type == "ec2" and _ec2_id(new_blob) != credential.id:
            raise exceptions.ValidationError("Credential ID mismatch: the access key of an ec2 "
                                             "credential cannot change.")
        if new_type == "ec2" and not ref.get("project_id", credential.project_id):
            raise exceptions.ValidationError("Missing project_id for ec2 credential.")
        _check_refs(s, ref.get("user_id", credential.user_id),
                    ref.get("project_id", credential.project_id))
        for key in ("user_id", "project_id", "type", "blob"):
            if key in ref:
                setattr(credential, key, ref[key])
        extra = base.extra_attributes(ref, COLUMNS)
        if extra:
            credential.extra = dict(credential.extra or {}, **extra)
    return credential


def delete(credential_id: str) -> None:
    with db.transaction() as s:
        s.delete(base.get_or_404(s, Credential, credential_id, "credential"))


# --- the OS-EC2 view -----------------------------------------------------------------

def create_ec2(user_id: str, project_id: str) -> Credential:
    blob = json.dumps({"access": secrets.token_hex(16), "secret": secrets.token_hex(16),
                       "trust_id": None})
    return create({"user_id": user_id, "project_id": project_id, "type": "ec2",
                   "blob": blob})


def ec2_of_user(user_id: str, access: str) -> Credential:
    credential_id = hashlib.sha256(access.encode()).hexdigest()
    with db.reader() as s:
        credential = s.get(Credential, credential_id)
        if credential is None or credential.user_id != user_id or credential.type != "ec2":
            raise exceptions.NotFound(f"Could not find credential: {access}.")
        return credential
