"""/v3/OS-OAUTH1 (keystone/api/os_oauth1.py and the OS-OAUTH1 part of api/users.py):
consumers (the secret is shown once, at creation), request tokens, their authorization
and access tokens, and a user's access tokens. The delegation itself is
identity/oauth1.py."""
from __future__ import annotations

import hashlib
import secrets

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.common.timeutils import isotime_us
from pocketstack.identity import base, oauth1, schemas, tokens
from pocketstack.identity.models import OAuth1Consumer, Role
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
        secret_hash=hashlib.sha256(secret.encode()).hexdigest(), secret=secret,
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
        consumer = _get(s, req.params["consumer_id"])
        oauth1.delete_consumer_tokens(s, consumer.id)
        s.delete(consumer)
    return routing.empty()


# --- the delegation: request token, authorization, access token ---------------------------

def _form(text: str):
    return routing.Response(text, status_code=201,
                            media_type="application/x-www-form-urlencoded")


@routing.public
def create_request_token(req):
    return _form(oauth1.create_request_token(
        common.request_url(req), req.headers))


@routing.public
def create_access_token(req):
    return _form(oauth1.create_access_token(
        common.request_url(req), req.headers))


AUTHORIZE = {"type": "object", "properties": {"roles": {
    "type": "array", "items": {
        "type": "object",
        "properties": {"id": schemas.id_string, "name": schemas.name_255},
        "minProperties": 1, "maxProperties": 1, "additionalProperties": False}}}}


def _not_delegated(req, message: str) -> None:
    """keystone refuses tokens issued through a delegation (trust, application
    credential, OAuth1) here."""
    token = tokens.validate(req.context.auth_token) if req.context.auth_token else None
    if token is not None and token.delegated:
        raise exceptions.Forbidden(message)


def authorize_request_token(req):
    common.authorize(req, "identity:authorize_request_token")
    roles = common.body(req, AUTHORIZE).get("roles") or []
    _not_delegated(req, "Cannot authorize a request token with a token issued via "
                        "delegation.")
    verifier = oauth1.authorize(req.context.user_id, req.params["request_token_id"], roles)
    return routing.json_response({"token": {"oauth_verifier": verifier}})


# --- /v3/users/{user_id}/OS-OAUTH1/access_tokens -------------------------------------------

_NOT_MANAGED = "Cannot manage OAuth access tokens with a token issued via delegation."


def access_token_view(req, t) -> dict:
    path = f"/v3/users/{t.authorizing_user_id}/OS-OAUTH1/access_tokens/{t.id}"
    return {"id": t.id, "consumer_id": t.consumer_id, "project_id": t.project_id,
            "authorizing_user_id": t.authorizing_user_id,
            "expires_at": isotime_us(t.expires_at),
            "links": {"self": common.self_url(req, path),
                      "roles": common.self_url(req, path + "/roles")}}


def _role_view(req, role: Role) -> dict:
    """keystone's role entity without description and enabled."""
    return {"id": role.id, "name": role.name, "domain_id": role.domain_id,
            "links": {"self": common.self_url(req, f"/v3/roles/{role.id}")}}


def list_access_tokens(req):
    common.authorize(req, "identity:list_access_tokens")
    _not_delegated(req, _NOT_MANAGED)
    return common.collection(req, "access_tokens",
                             oauth1.list_access_tokens(req.params["user_id"]),
                             access_token_view)


def get_access_token(req):
    common.authorize(req, "identity:get_access_token")
    _not_delegated(req, _NOT_MANAGED)
    found = oauth1.get_access_token(req.params["user_id"], req.params["access_token_id"])
    return common.member(req, "access_token", found, access_token_view)


def delete_access_token(req):
    # keystone checks its ec2_delete_credential rule here (admins)
    common.authorize(req, "identity:ec2_delete_credential")
    _not_delegated(req, _NOT_MANAGED)
    oauth1.delete_access_token(req.params["user_id"], req.params["access_token_id"])
    return routing.empty()


def _token_roles(req) -> list[Role]:
    found = oauth1.get_access_token(req.params["user_id"], req.params["access_token_id"])
    with db.reader() as s:
        return list(s.scalars(sa.select(Role).where(Role.id.in_(found.role_ids))
                              .order_by(Role.name)))


def list_access_token_roles(req):
    common.authorize(req, "identity:list_access_token_roles")
    return common.collection(req, "roles", _token_roles(req), _role_view)


def get_access_token_role(req):
    common.authorize(req, "identity:get_access_token_role")
    role_id = req.params["role_id"]
    for role in _token_roles(req):
        if role.id == role_id:
            return common.member(req, "role", role, _role_view)
    raise exceptions.NotFound(f"Could not find role: {role_id}.")


_TOKENS = "/v3/users/{user_id}/OS-OAUTH1/access_tokens"
ROUTES = {
    _P: {"GET": list_consumers, "POST": create_consumer},
    f"{_P}/{{consumer_id}}": {"GET": get_consumer, "PATCH": update_consumer,
                              "DELETE": delete_consumer},
    "/v3/OS-OAUTH1/request_token": {"POST": create_request_token},
    "/v3/OS-OAUTH1/access_token": {"POST": create_access_token},
    "/v3/OS-OAUTH1/authorize/{request_token_id}": {"PUT": authorize_request_token},
    _TOKENS: {"GET": list_access_tokens},
    _TOKENS + "/{access_token_id}": {"GET": get_access_token, "DELETE": delete_access_token},
    _TOKENS + "/{access_token_id}/roles": {"GET": list_access_token_roles},
    _TOKENS + "/{access_token_id}/roles/{role_id}": {"GET": get_access_token_role},
}
