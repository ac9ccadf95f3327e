"""Secrets: create (payload now or by a later PUT), read, decrypt the payload by Accept,
list with barbican's filters, delete; their consumers. A secret whose expiration has
passed is gone for every call, as barbican's lookups filter it out. (User metadata:
metadata.py.)"""
from __future__ import annotations

import base64
import binascii
import datetime as dt
import uuid

import sqlalchemy as sa

from pocketstack.common import config, db, exceptions, timeutils
from pocketstack.keymanager import access, crypto, paging, quotas
from pocketstack.keymanager.models import Acl, Secret, SecretConsumer, SecretMetadatum
from pocketstack.keymanager.validation import check_schema, invalid_object, issue, require

TYPES = ("symmetric", "passphrase", "private", "public", "certificate", "opaque")
PLAIN_TEXT = ["text/plain", "text/plain;charset=utf-8", "text/plain; charset=utf-8"]
BINARY = ["application/octet-stream", "application/pkcs8"]
SUPPORTED = PLAIN_TEXT + BINARY
_INTERNAL = {"text/plain": "text/plain", "text/plain;charset=utf-8": "text/plain",
             "text/plain; charset=utf-8": "text/plain",
             "application/octet-stream": "application/octet-stream",
             "application/pkcs8": "application/pkcs8"}
_ENCODINGS = {"text/plain": None, "application/octet-stream": ["base64", "binary"],
              "application/pkcs8": ["base64", "binary"]}

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": ["string", "null"], "maxLength": 255},
        "algorithm": {"type": "string", "maxLength": 255},
        "mode": {"type": "string", "maxLength": 255},
        "bit_length": {"type": "integer", "minimum": 1, "maximum": 32767},
        "expiration": {"type": "string", "maxLength": 255},
        "payload": {"type": "string"},
        "secret_type": {"type": "string", "maxLength": 80, "enum": list(TYPES)},
        "payload_content_type": {"type": ["string", "null"], "maxLength": 255},
        "payload_content_encoding": {"type": "string", "maxLength": 255, "enum": ["base64"]},
        "transport_key_needed": {"type": "string", "enum": ["true", "false"]},
        "transport_key_id": {"type": "string"},
    },
}
SORT_KEYS = ("algorithm", "bit_length", "created", "expiration", "mode", "name",
             "secret_type", "status", "updated")


def normalize_content_type(mime: str) -> str:
    """barbican's mime_types.normalize_content_type."""
    parts = [p.strip() for p in mime.split(";")]
    if len(parts) > 1:
        if "=" not in parts[1].lower():
            return mime
        if parts[1].lower().split("=")[1].strip() != "utf-8":
            return mime
    return _INTERNAL.get(parts[0].lower(), mime)


def is_supported(mime: str) -> bool:
    return normalize_content_type(mime) in SUPPORTED


def too_big(payload) -> bool:
    size = len(payload.encode("utf-8")) if isinstance(payload, str) else len(payload)
    return size > config.CONF.keymanager.max_allowed_secret_in_bytes


def _too_large(operation: str | None = None):
    if operation:
        return issue(operation, "Provided information too large to process",
                     exceptions.PayloadTooLarge)
    return exceptions.PayloadTooLarge("Provided information too large to process")


def validate_new(body, schema_name: str = "Secret", from_order: bool = False) -> dict:
    """barbican's NewSecretValidator: the normalized body (name stripped, expiration a
    naive UTC datetime, payload stripped)."""
    check_schema(body, SCHEMA, schema_name)
    data = dict(body)
    data["name"] = data["name"].strip() if isinstance(data.get("name"), str) else None
    expiration = None
    raw = data.get("expiration")
    if raw and raw.strip():
        try:
            expiration = timeutils.parse_isotime(raw.strip())
        except ValueError:
            raise invalid_object(schema_name, "Invalid date for 'expiration'",
                                 "expiration") from None
        require(expiration > timeutils.utcnow(), schema_name,
                "'expiration' is before current time", "expiration")
    data["expiration"] = expiration
    content_type = data.get("payload_content_type")
    if "payload" in data:
        encoding = data.get("payload_content_encoding")
        require(content_type is not None, schema_name,
                "If 'payload' is supplied, 'payload_content_type' must also be supplied.",
                "payload_content_type")
        require(is_supported(content_type), schema_name,
                f"payload_content_type is not one of {SUPPORTED}", "payload_content_type")
        allowed = _ENCODINGS[normalize_content_type(content_type)]
        require((encoding in allowed) if allowed else encoding is None, schema_name,
                f"payload_content_encoding is not one of {allowed}",
                "payload_content_encoding")
        if too_big(data["payload"]):
            raise _too_large()
        payload = data["payload"].strip()
        require(payload, schema_name, "If 'payload' specified, must be non empty", "payload")
        if encoding == "base64":
            try:
                base64.b64decode(payload)
            except (binascii.Error, ValueError):
                raise invalid_object(schema_name,
                                     "Invalid payload for payload_content_encoding",
                                     "payload") from None
        data["payload"] = payload
    elif "payload_content_type" in data:
        require(from_order, schema_name,
                "payload must be provided when payload_content_type is specified", "payload")
        if content_type:
            require(is_supported(content_type), schema_name,
                    f"payload_content_type is not one of {SUPPORTED}", "payload_content_type")
    return data


def _plaintext(payload, content_type: str, encoding: str | None) -> tuple[bytes, str]:
    """The payload's bytes and its normalized type (translations.normalize_before_encryption)."""
    media = normalize_content_type(content_type)
    if media in PLAIN_TEXT:
        return (payload.encode("utf-8") if isinstance(payload, str) else payload), media
    if encoding and encoding.lower() == "base64":
        try:
            return base64.b64decode(payload), media
        except (binascii.Error, ValueError):
            raise exceptions.BadRequest("Problem decoding payload") from None
    if encoding and encoding.lower() != "binary":
        raise exceptions.BadRequest(f"Secret Content-Encoding of '{encoding}' not supported")
    return (payload.encode("utf-8") if isinstance(payload, str) else payload), media


def create(ctx, body, *, generated: bytes | None = None,
           generated_type: str = "application/octet-stream") -> str:
    """A new secret in the caller's project; its id. ``generated``: a payload made by an
    order (already bytes)."""
    data = body if generated is not None else validate_new(body)
    project_id = ctx.project_id
    ciphertext = content_type = None
    if generated is not None:
        ciphertext, content_type = crypto.encrypt(project_id, generated), generated_type
    elif "payload" in data:
        plain, content_type = _plaintext(data["payload"], data["payload_content_type"],
                                         data.get("payload_content_encoding"))
        ciphertext = crypto.encrypt(project_id, plain)  # before the write transaction
    now = timeutils.utcnow()
    secret = Secret(id=str(uuid.uuid4()), project_id=project_id, creator_id=ctx.user_id,
                    name=data.get("name"), secret_type=data.get("secret_type") or "opaque",
                    algorithm=data.get("algorithm"), bit_length=data.get("bit_length"),
                    mode=data.get("mode"), expiration=data.get("expiration"),
                    content_type=content_type, ciphertext=ciphertext, created=now, updated=now)
    with db.transaction() as s:
        quotas.enforce(s, project_id, "secrets", "Secret creation")
        s.add(secret)
    return secret.id


def _alive():
    return sa.or_(Secret.expiration.is_(None), Secret.expiration > timeutils.utcnow())


def _valid_id(secret_id: str) -> None:
    try:
        uuid.UUID(secret_id)
    except ValueError:
        raise exceptions.NotFound("Not Found. Provided secret id is invalid.") from None


def lookup(s, secret_id: str, lock: bool = False) -> Secret:
    """Any project's secret that has not expired (SecretsController._lookup); ``lock``:
    its row, for a write that depends on what it holds."""
    _valid_id(secret_id)
    query = sa.select(Secret).where(Secret.id == secret_id, _alive())
    secret = s.scalar(query.with_for_update() if lock else query)
    if secret is None:
        raise exceptions.NotFound("Secret not found.")
    return secret


def authorized(s, ctx, secret_id: str, action: str, operation: str) -> Secret:
    secret = lookup(s, secret_id)
    access.enforce(ctx, action, operation, "secret", secret,
                   access.acls_of(s, "secret", secret.id))
    return secret


def view(base: str, secret: Secret, consumers: list | None = None) -> dict:
    """The secret's metadata; ``consumers`` (from microversion 1.1) when given."""
    body = {
        "status": "ACTIVE", "secret_type": secret.secret_type,
        "created": timeutils.isotime_naive(secret.created),
        "updated": timeutils.isotime_naive(secret.updated),
        "expiration": _expiration(secret.expiration),
        "algorithm": secret.algorithm, "bit_length": secret.bit_length, "mode": secret.mode,
        "name": secret.name, "creator_id": secret.creator_id,
        "secret_ref": f"{base}/v1/secrets/{secret.id}",
    }
    if consumers is not None:
        body["consumers"] = consumers
    if secret.ciphertext is not None and secret.content_type:
        body["content_types"] = {"default": secret.content_type}
    return body


def _consumers_of(s, secret_ids: list[str]) -> dict[str, list]:
    found: dict[str, list] = {i: [] for i in secret_ids}
    for c in s.scalars(sa.select(SecretConsumer).where(SecretConsumer.secret_id.in_(secret_ids))
                       .order_by(SecretConsumer.created)):
        found[c.secret_id].append(_consumer_view(c))
    return found


def _consumer_view(c: SecretConsumer) -> dict:
    return {"service": c.service, "resource_type": c.resource_type,
            "resource_id": c.resource_id, "created": timeutils.isotime_naive(c.created)}


def _expiration(value: dt.datetime | None) -> str | None:
    return None if value is None else value.isoformat() + "+00:00"


def show(ctx, secret_id: str, base: str, with_consumers: bool = True) -> dict:
    with db.reader() as s:
        secret = authorized(s, ctx, secret_id, "secret:get", "Secret retrieval")
        consumers = _consumers_of(s, [secret.id])[secret.id] if with_consumers else None
        return view(base, secret, consumers)


def payload(ctx, secret_id: str, accept: str | None,
            operation: str = "Secret payload retrieval") -> tuple[bytes | str, str]:
    """The decrypted payload in the type ``accept`` asks for, and that type."""
    with db.reader() as s:
        secret = authorized(s, ctx, secret_id, "secret:decrypt", operation)
        project_id, ciphertext = secret.project_id, secret.ciphertext
        stored_type = secret.content_type
    accept = (accept or "").strip() or "application/octet-stream"
    if ciphertext is None:
        raise exceptions.NotFound("Not Found. Sorry but your secret has no payload.")
    wanted = stored_type if accept == "*/*" else accept
    if not is_supported(wanted):
        raise issue(operation, f"Secret Accept of '{wanted}' not supported",
                    exceptions.NotAcceptable)
    plain = crypto.decrypt(project_id, ciphertext)
    if wanted in PLAIN_TEXT:
        try:
            return plain.decode("utf-8"), wanted
        except UnicodeDecodeError:
            raise issue(operation, f"Secret Accept of '{wanted}' not supported",
                        exceptions.NotAcceptable) from None
    return plain, wanted


def put_payload(ctx, secret_id: str, body: bytes, content_type: str | None,
                content_encoding: str | None) -> None:
    operation = "Secret update"
    with db.reader() as s:
        secret = authorized(s, ctx, secret_id, "secret:put", operation)
        project_id = secret.project_id
    media = (content_type or "").split(";")[0].strip().lower()
    if media not in ("application/octet-stream", "text/plain"):
        raise exceptions.UnsupportedMediaType(
            "Unexpected content type. Expected content types are: "
            "['application/octet-stream', 'text/plain']")
    if not body:
        raise issue(operation, "No data supplied to process.")
    if too_big(body):
        raise _too_large(operation)
    if media == "text/plain":
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            raise issue(operation, "Problem decoding payload") from None
    plain, media = _plaintext(body, media, content_encoding)
    ciphertext = crypto.encrypt(project_id, plain)
    with db.transaction() as s:
        secret = lookup(s, secret_id, lock=True)  # two PUTs: one payload, one 409
        if secret.ciphertext is not None:
            raise exceptions.Conflict("Secret already has data, cannot modify it.")
        secret.ciphertext, secret.content_type = ciphertext, media
        secret.updated = timeutils.utcnow()


def delete(ctx, secret_id: str, refuse_if_consumed: bool = False) -> None:
    """Delete a secret (with its consumers, ACLs and metadata); ``refuse_if_consumed``
    (microversion 1.2 without force): not while something consumes it."""
    with db.transaction() as s:
        secret = authorized(s, ctx, secret_id, "secret:delete", "Secret deletion")
        if refuse_if_consumed and s.scalar(sa.select(SecretConsumer.id).where(
                SecretConsumer.secret_id == secret.id).limit(1)) is not None:
            raise issue("Secret deletion", "Secret cannot be deleted as it has consumers")
        s.execute(sa.delete(Acl).where(Acl.entity_type == "secret",
                                       Acl.entity_id == secret.id))
        for model in (SecretMetadatum, SecretConsumer):
            s.execute(sa.delete(model).where(model.secret_id == secret.id))
        s.delete(secret)


# --- consumers (microversion 1.1) --------------------------------------------------------

CONSUMER_SCHEMA = {
    "type": "object",
    "properties": {"service": {"type": "string", "maxLength": 255, "minLength": 1},
                   "resource_type": {"type": "string", "maxLength": 255, "minLength": 1},
                   "resource_id": {"type": "string", "maxLength": 36, "minLength": 1}},
    "required": ["service", "resource_type", "resource_id"],
}


def _consumer_where(secret_id: str, body: dict) -> list:
    return [SecretConsumer.secret_id == secret_id, SecretConsumer.service == body["service"],
            SecretConsumer.resource_type == body["resource_type"],
            SecretConsumer.resource_id == body["resource_id"]]


def list_consumers(ctx, secret_id: str, query, base: str) -> dict:
    offset, limit = paging.clean(query.get("offset"), query.get("limit"))
    with db.reader() as s:
        secret = authorized(s, ctx, secret_id, "secret_consumers:get",
                            "SecretConsumers(s) retrieval")
        where = SecretConsumer.secret_id == secret.id
        total = s.scalar(sa.select(sa.func.count()).select_from(SecretConsumer).where(where))
        items = [_consumer_view(c) for c in s.scalars(
            sa.select(SecretConsumer).where(where).order_by(SecretConsumer.created)
            .offset(offset).limit(limit))]
    path = f"secrets/{secret_id}/consumers"
    body = paging.page(base, path, items, offset, limit, total, query)
    return {"consumers": body.pop(path), **body}


def add_consumer(ctx, secret_id: str, body, base: str) -> dict:
    check_schema(body, CONSUMER_SCHEMA, "Secret Consumer")
    now = timeutils.utcnow()
    with db.transaction() as s:
        secret = authorized(s, ctx, secret_id, "secret_consumers:post",
                            "SecretConsumer creation")
        quotas.enforce(s, ctx.project_id, "consumers", "SecretConsumer creation")
        existing = s.scalar(sa.select(SecretConsumer).where(*_consumer_where(secret.id, body)))
        if existing is None:  # registering again is no error (create_or_update_from)
            s.add(SecretConsumer(id=str(uuid.uuid4()), secret_id=secret.id,
                                 project_id=ctx.project_id, service=body["service"],
                                 resource_type=body["resource_type"],
                                 resource_id=body["resource_id"], created=now, updated=now))
        else:
            existing.updated = now
        s.flush()
        return view(base, secret, _consumers_of(s, [secret.id])[secret.id])


def remove_consumer(ctx, secret_id: str, body, base: str) -> dict:
    check_schema(body, CONSUMER_SCHEMA, "Secret Consumer")
    with db.transaction() as s:
        secret = authorized(s, ctx, secret_id, "secret_consumers:delete",
                            "SecretConsumer deletion")
        consumer = s.scalar(sa.select(SecretConsumer).where(*_consumer_where(secret.id, body)))
        if consumer is None:
            raise exceptions.NotFound("Consumer not found.")
        if consumer.project_id != ctx.project_id and secret.project_id != ctx.project_id:
            raise exceptions.Forbidden("Not Allowed. Sorry, only the creator of a consumer "
                                       "can delete it.")
        s.delete(consumer)
        s.flush()
        return view(base, secret, _consumers_of(s, [secret.id])[secret.id])


# --- listing ---------------------------------------------------------------------------

def _date_filter(text: str):
    """barbican's _is_valid_date_filter, as conditions; None when invalid."""
    seen: dict = {}
    try:
        for item in text.split(","):
            for op in ("gte:", "gt:", "lte:", "lt:"):
                if item.startswith(op):
                    key = op[:-1]
                    value = timeutils.parse_isotime(item[len(op):])
                    break
            else:
                key, value = "eq", timeutils.parse_isotime(item)
            clash = {"gt": ("gt", "gte"), "gte": ("gt", "gte", "eq"), "lt": ("lt", "lte"),
                     "lte": ("lt", "lte", "eq"), "eq": ("eq", "gte", "lte")}[key]
            if any(c in seen for c in clash):
                return None
            seen[key] = value
    except ValueError:
        return None
    return seen


def _sort(text: str):
    keys: dict = {}
    for item in text.split(","):
        key, _, direction = item.partition(":")
        direction = direction or "asc"
        if item.count(":") > 1 or key not in SORT_KEYS or direction not in ("asc", "desc") \
                or key in keys:
            return None
        keys[key] = direction
    return keys


def _bad_query():
    return exceptions.BadRequest("URI provided invalid query string parameters.")


def list_secrets(ctx, query, base: str,
                 with_consumers: bool = True) -> tuple[list, int, int, int]:
    """(views, offset, limit, total) of the caller's project's secrets."""
    conditions = [Secret.project_id == ctx.project_id, _alive()]
    if query.get("name"):
        conditions.append(Secret.name == query["name"])
    if query.get("alg"):
        conditions.append(Secret.algorithm == query["alg"])
    if query.get("mode"):
        conditions.append(Secret.mode == query["mode"])
    try:
        bits = int(query.get("bits") or 0)
    except ValueError:
        bits = 0  # barbican ignores a bad bits
    if bits > 0:  # above any bit_length (at most 32767): no match, and no int64 overflow
        conditions.append(Secret.bit_length == min(bits, 1 << 20))
    if query.get("secret_type"):
        conditions.append(Secret.secret_type == query["secret_type"])
    ops = {"gt": "__gt__", "gte": "__ge__", "lt": "__lt__", "lte": "__le__", "eq": "__eq__"}
    for field in ("created", "updated", "expiration"):
        if query.get(field):
            parsed = _date_filter(query[field])
            if parsed is None:
                raise _bad_query()
            column = getattr(Secret, field)
            conditions += [getattr(column, ops[op])(value) for op, value in parsed.items()]
    order = [Secret.created]
    if query.get("sort"):
        keys = _sort(query["sort"])
        if keys is None:
            raise _bad_query()
        order = [getattr(getattr(Secret, "created" if k == "status" else k), d)()
                 for k, d in keys.items()]
    offset, limit = paging.clean(query.get("offset"), query.get("limit"))
    with db.reader() as s:
        if (query.get("acl_only") or "").lower() == "true":
            # the database narrows to ACLs whose JSON text names the user (ids carry no
            # LIKE wildcards); the exact check is on the decoded list
            shared = [a.entity_id for a in s.scalars(sa.select(Acl).where(
                Acl.entity_type == "secret", Acl.operation == "read",
                sa.cast(Acl.users, sa.Text).like(f'%"{ctx.user_id}"%')))
                if ctx.user_id in (a.users or [])]
            conditions = [Secret.id.in_(shared), _alive()] + conditions[2:]
        total = s.scalar(sa.select(sa.func.count()).select_from(Secret).where(*conditions))
        rows = list(s.scalars(sa.select(Secret).where(*conditions).order_by(*order)
                              .offset(offset).limit(limit)))
        consumers = _consumers_of(s, [r.id for r in rows]) if with_consumers else {}
        return [view(base, r, consumers.get(r.id)) for r in rows], offset, limit, total
