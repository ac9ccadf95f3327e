"""Orders: the server generates a key (``key``: a symmetric key, ``asymmetric``: an RSA key
pair into an rsa container), at once, so an order is ACTIVE when the POST returns — or
ERROR, with barbican's error_status_code and error_reason, when no generator fits."""
from __future__ import annotations

import os
import uuid

import sqlalchemy as sa

from pocketstack.common import db, exceptions, policy, timeutils
from pocketstack.common.context import RequestContext
from pocketstack.keymanager import containers, paging, quotas, secrets
from pocketstack.keymanager.models import Order
from pocketstack.keymanager.validation import check_schema, forbidden, invalid_object, require

SCHEMA = {
    "type": "object",
    "properties": {"meta": {"type": "object"},
                   "type": {"type": "string", "enum": ["key", "asymmetric"]}},
    "required": ["meta", "type"],
}
# simple_crypto's support table (barbican/plugin/crypto/base.PluginSupportTypes)
SYMMETRIC = ("aes", "des", "3des", "hmacsha1", "hmacsha256", "hmacsha384", "hmacsha512")
SYMMETRIC_BITS = (64, 128, 192, 256)
RSA_BITS = (1024, 2048, 4096)


def validate(body) -> dict:
    """barbican's TypeOrderValidator: the order's meta, normalized as a new secret's."""
    check_schema(body, SCHEMA, "Order")
    kind = body["type"]
    meta = secrets.validate_new(body["meta"], "Secret' within 'Order", from_order=True)
    require(meta.get("payload") is None, "Order",
            f"'payload' not allowed for {kind} type order", "meta")
    words = "key" if kind == "key" else "asymmetric key"
    require(meta.get("algorithm"), "Order",
            f"'algorithm' is required field for {words} type order", "meta")
    require(meta.get("bit_length"), "Order",
            f"'bit_length' is required field for {words} type order", "meta")
    if meta["bit_length"] % 8:
        raise exceptions.BadRequest("Provided field value is not supported")
    return meta


def _symmetric(meta) -> bytes | None:
    algorithm, bits = meta["algorithm"].lower(), meta["bit_length"]
    # xts splits the key in two: twice a supported length (LUKS' aes-xts-plain64, 512)
    factor = 2 if (meta.get("mode") or "").lower() == "xts" else 1
    if algorithm not in SYMMETRIC or bits / factor not in SYMMETRIC_BITS:
        return None
    return os.urandom(bits // 8)


def _rsa(meta) -> tuple[bytes, bytes, bytes | None] | None:
    """(private PKCS#8 PEM, public PEM, passphrase) as simple_crypto makes them."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    if meta["algorithm"].lower() != "rsa" or meta["bit_length"] not in RSA_BITS:
        return None
    key = rsa.generate_private_key(public_exponent=65537, key_size=meta["bit_length"])
    passphrase = meta.get("passphrase")
    protection = (serialization.BestAvailableEncryption(passphrase.encode())
                  if passphrase else serialization.NoEncryption())
    private = key.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.PKCS8, protection)
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    return private, public, passphrase.encode() if passphrase else None


def create(ctx, body, base: str) -> str:
    meta = validate(body)
    if meta.get("passphrase") is not None and not isinstance(meta["passphrase"], str):
        raise invalid_object("Order", "'passphrase' must be a string", "meta")
    with db.transaction() as s:
        quotas.enforce(s, ctx.project_id, "orders", "Order creation")
    now = timeutils.utcnow()
    order = Order(id=str(uuid.uuid4()), project_id=ctx.project_id, creator_id=ctx.user_id,
                  type=body["type"], meta=_stored_meta(body["meta"]), status="ACTIVE",
                  created=now, updated=now)
    fields = {k: meta.get(k) for k in ("name", "algorithm", "bit_length", "mode",
                                       "expiration")}
    if body["type"] == "key":
        key = _symmetric(meta)
        if key is None:
            _fail(order, "No plugin was found that supports the requested algorithm")
        else:
            order.secret_id = secrets.create(ctx, {**fields, "secret_type": "symmetric"},
                                             generated=key)
    else:
        pair = _rsa(meta)
        if pair is None:
            _fail(order, "No plugin was found that supports the requested algorithm")
        else:
            order.container_id = _key_pair_container(ctx, base, fields, meta, *pair)
    with db.transaction() as s:
        s.add(order)
    return order.id


def _key_pair_container(ctx, base: str, fields: dict, meta: dict, private: bytes,
                        public: bytes, passphrase: bytes | None) -> str:
    """The rsa container of a generated pair; nothing is left behind if a quota stops it."""
    made: list[tuple[str, str]] = []
    parts = [("private_key", "private", private, "application/octet-stream"),
             ("public_key", "public", public, "application/octet-stream")]
    if passphrase:
        parts.append(("private_key_passphrase", "passphrase", passphrase, "text/plain"))
    try:
        for name, kind, payload, content_type in parts:
            made.append((name, secrets.create(ctx, {**fields, "secret_type": kind},
                                              generated=payload,
                                              generated_type=content_type)))
        return containers.create(ctx, {"name": meta.get("name"), "type": "rsa"}, base,
                                 pairs=made)
    except exceptions.PocketstackError:
        for _, secret_id in made:
            secrets.delete(RequestContext.admin(), secret_id)
        raise


def _stored_meta(meta: dict) -> dict:
    return {k: v for k, v in meta.items() if k != "passphrase"}  # no secret in the order


def _fail(order: Order, reason: str) -> None:
    order.status = "ERROR"
    order.meta = {**order.meta, "_error": [400, f"Process TypeOrder issue seen - {reason}."]}


def view(base: str, o: Order) -> dict:
    meta = {k: v for k, v in o.meta.items() if k != "_error"}
    body = {"type": o.type, "meta": meta, "status": o.status, "creator_id": o.creator_id,
            "order_ref": f"{base}/v1/orders/{o.id}",
            "created": timeutils.isotime_naive(o.created),
            "updated": timeutils.isotime_naive(o.updated),
            "sub_status": "Unknown", "sub_status_message": "Unknown"}
    if o.secret_id:
        body["secret_ref"] = f"{base}/v1/secrets/{o.secret_id}"
    if o.container_id:
        body["container_ref"] = f"{base}/v1/containers/{o.container_id}"
    if "_error" in o.meta:
        body["error_status_code"], body["error_reason"] = o.meta["_error"]
    return body


def _lookup(s, ctx, order_id: str, action: str, operation: str) -> Order:
    try:
        uuid.UUID(order_id)
    except ValueError:
        raise exceptions.NotFound("Not Found. Provided order id is invalid.") from None
    order = s.get(Order, order_id)
    if order is None or order.project_id != ctx.project_id:
        raise exceptions.NotFound("Order not found.")
    if not policy.check(ctx, action, {"target.order.project_id": order.project_id}):
        raise forbidden(operation)
    return order


def show(ctx, order_id: str, base: str) -> dict:
    with db.reader() as s:
        return view(base, _lookup(s, ctx, order_id, "order:get", "Order retrieval"))


def delete(ctx, order_id: str) -> None:
    with db.transaction() as s:
        s.delete(_lookup(s, ctx, order_id, "order:delete", "Order deletion"))


def list_orders(ctx, query, base: str) -> dict:
    offset, limit = paging.clean(query.get("offset"), query.get("limit"))
    where = [Order.project_id == ctx.project_id]
    with db.reader() as s:
        total = s.scalar(sa.select(sa.func.count()).select_from(Order).where(*where))
        rows = s.scalars(sa.select(Order).where(*where).order_by(Order.created)
                         .offset(offset).limit(limit))
        items = [view(base, o) for o in rows]
    return paging.page(base, "orders", items, offset, limit, total, query)
