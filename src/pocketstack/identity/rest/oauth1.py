"""/v3/OS-OAUTH1/consumers (keystone/api/os_oauth1.py): the consumer records; the secret
is shown once, at creation, and kept only as a SHA-256 digest (32 random bytes need no
key stretching). Request and access tokens are not served (see docs/architecture.md)."""
from __future__ import annotations

import hashlib
import secrets

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.identity import base, schemas
from pocketstack.identity.models import OAuth1Consumer
from pocketstack.identity.rest import common
from pocketstack.wsgi import routing

_P = "/v3/OS-OAUTH1/consumers"
_consumer = {"description": schemas.nullable(schemas.description)}
CREATE = schemas.envelope("consumer", schemas._entity(_consumer))
UPDATE = schemas.envelope("consumer", schemas._entity(_consumer))


def view(req, c, secret: str | None = None) -> dict:
    body = dict(c.extra or {})
    body.update({"id": c.id, "description": c.description,
                 "links": {"self": common.self_url(req, f"{_P}/{c.id}")}})
    if secret is not None:
        body["secret"] = secret
    return body


def _get(s, consumer_id: str) -> OAuth1Consumer:
    return base.get_or_404(s, OAuth1Consumer, consumer_id, "consumer")


def list_consumers(req):
    common.authorize(req, "identity:list_consumers")
    with db.reader() as s:
        found = list(s.scalars(sa.select(OAuth1Consumer).order_by(OAuth1Consumer.id)))
    return common.collection(req, "consumers", found, view)


def create_consumer(req):
    common.authorize(req, "identity:create_consumer")
    ref = common.body(req, CREATE)["consumer"]
    secret = secrets.token_hex(32)
    consumer = OAuth1Consumer(
        id=base.new_id(), description=ref.get("description"),
        secret_hash=hashlib.sha256(secret.encode()).hexdigest(),
        extra={k: v for k, v in ref.items() if k not in ("id", "description", "secret")})
    with db.transaction() as s:
        s.add(consumer)
    return routing.json_response({"consumer": view(req, consumer, secret)}, status=201)


def get_consumer(req):
    common.authorize(req, "identity:get_consumer")
    with db.reader() as s:
        consumer = _get(s, req.params["consumer_id"])
    return common.member(req, "consumer", consumer, view)


def update_consumer(req):
    common.authorize(req, "identity:update_consumer")
    ref = common.body(req, UPDATE)["consumer"]
    if "secret" in ref:  # Keystone: the secret never changes
        raise exceptions.ValidationError("Cannot change consumer secret")
    if ref.get("id") not in (None, req.params["consumer_id"]):
        raise exceptions.ValidationError("Cannot change consumer id")
    with db.transaction() as s:
        consumer = _get(s, req.params["consumer_id"])
        if "description" in ref:
            consumer.description = ref["description"]
        extra = {k: v for k, v in ref.items() if k not in ("id", "description")}
        if extra:
            consumer.extra = dict(consumer.extra or {}, **extra)
    return common.member(req, "consumer", consumer, view)


def delete_consumer(req):
    common.authorize(req, "identity:delete_consumer")
    with db.transaction() as s:
        s.delete(_get(s, req.params["consumer_id"]))
    return routing.empty()


ROUTES = {
    _P: {"GET": list_consumers, "POST": create_consumer},
    f"{_P}/{{consumer_id}}": {"GET": get_consumer, "PATCH": update_consumer,
                              "DELETE": delete_consumer},
}
