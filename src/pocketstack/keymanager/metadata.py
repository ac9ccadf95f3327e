"""A secret's user metadata (/v1/secrets/{id}/metadata): url-safe keys, lowercased, and
string values of at most 255 characters, as barbican's metadata validators."""
from __future__ import annotations

import re

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.keymanager.models import SecretMetadatum
from pocketstack.keymanager.secrets import authorized
from pocketstack.keymanager.validation import check_schema, invalid_object

_METADATA_SCHEMA = {"type": "object", "properties": {"metadata": {"type": "object"}},
                    "required": ["metadata"]}
_METADATUM_SCHEMA = {"type": "object",
                     "properties": {"key": {"type": "string", "maxLength": 255},
                                    "value": {"type": "string", "maxLength": 255}},
                     "required": ["key", "value"], "additionalProperties": False}


def _url_safe(key: str) -> None:
    if not re.fullmatch(r"[A-Za-z0-9_-]*", key):
        raise exceptions.BadRequest("Invalid Key. Key must be URL safe.")


def _metadata(s, secret_id: str) -> dict:
    return {m.key: m.value for m in s.scalars(
        sa.select(SecretMetadatum).where(SecretMetadatum.secret_id == secret_id))}


def get_metadata(ctx, secret_id: str) -> dict:
    with db.reader() as s:
        secret = authorized(s, ctx, secret_id, "secret_meta:get", "Secret metadata retrieval")
        return _metadata(s, secret.id)


def set_metadata(ctx, secret_id: str, body) -> dict:
    check_schema(body, _METADATA_SCHEMA, "SecretMetadata")
    metadata = {}
    for key, value in body["metadata"].items():
        if not isinstance(value, str):
            raise exceptions.BadRequest("Invalid Metadata. Keys and Values must be Strings.")
        _url_safe(key)
        if len(key) > 255 or len(value) > 255:
            raise invalid_object("SecretMetadata", "keys and values are at most 255 long",
                                 "metadata")
        metadata[key.lower()] = value
    with db.transaction() as s:
        secret = authorized(s, ctx, secret_id, "secret_meta:put", "Secret metadata creation")
        s.execute(sa.delete(SecretMetadatum).where(SecretMetadatum.secret_id == secret.id))
        s.flush()
        for key, value in metadata.items():
            s.add(SecretMetadatum(secret_id=secret.id, key=key, value=value))
    return metadata


def add_metadatum(ctx, secret_id: str, body) -> dict:
    check_schema(body, _METADATUM_SCHEMA, "SecretMetadatum")
    _url_safe(body["key"])
    key, value = body["key"].lower(), body["value"]
    with db.transaction() as s:
        secret = authorized(s, ctx, secret_id, "secret_meta:post", "Secret metadatum creation")
        if s.get(SecretMetadatum, (secret.id, key)) is not None:
            raise exceptions.Conflict("Conflict. Key in request is already in the secret "
                                      "metadata")
        s.add(SecretMetadatum(secret_id=secret.id, key=key, value=value))
    return {"key": key, "value": value}


def get_metadatum(ctx, secret_id: str, key: str) -> dict:
    with db.reader() as s:
        secret = authorized(s, ctx, secret_id, "secret_meta:get", "Secret metadatum retrieval")
        row = s.get(SecretMetadatum, (secret.id, key))
        if row is None:
            raise exceptions.NotFound("Secret metadata not found.")
        return {"key": row.key, "value": row.value}


def update_metadatum(ctx, secret_id: str, key: str, body) -> dict:
    check_schema(body, _METADATUM_SCHEMA, "SecretMetadatum")
    _url_safe(body["key"])
    if body["key"].lower() != key:
        raise exceptions.Conflict("Key in request data does not match key in the ")
    with db.transaction() as s:
        secret = authorized(s, ctx, secret_id, "secret_meta:put", "Secret metadatum update")
        row = s.get(SecretMetadatum, (secret.id, key))
        if row is None:
            raise exceptions.NotFound("Secret metadata not found.")
        row.value = body["value"]
    return {"key": key, "value": body["value"]}


def delete_metadatum(ctx, secret_id: str, key: str) -> None:
    with db.transaction() as s:
        secret = authorized(s, ctx, secret_id, "secret_meta:delete",
                            "Secret metadatum removal")
        row = s.get(SecretMetadatum, (secret.id, key))
        if row is None:
            raise exceptions.NotFound("Secret metadata not found.")
        s.delete(row)
