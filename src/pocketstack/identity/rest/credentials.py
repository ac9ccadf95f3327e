"""/v3/credentials and /v3/users/{user_id}/credentials/OS-EC2."""
from __future__ import annotations

import json

from pocketstack.identity import credentials, schemas
from pocketstack.identity.rest import common
from pocketstack.wsgi import routing

_credential = {"user_id": schemas.id_string, "project_id": schemas.nullable(schemas.id_string),
               "type": {"type": "string", "minLength": 1, "maxLength": 255},
               "blob": {"type": "string", "minLength": 1}}
CREATE = schemas.envelope("credential", schemas._entity(_credential,
                                                        ["user_id", "type", "blob"]))
UPDATE = schemas.envelope("credential", schemas._entity(_credential, update=True))
EC2_CREATE = {"type": "object", "properties": {"tenant_id": schemas.id_string},
              "required": ["tenant_id"]}


def view(req, c) -> dict:
    return {"id": c.id, "user_id": c.user_id, "project_id": c.project_id, "type": c.type,
            "blob": c.blob, **(c.extra or {}),
            "links": {"self": common.self_url(req, f"/v3/credentials/{c.id}")}}


def _target(user_id: str) -> dict:
    return {"target": {"credential": {"user_id": user_id}}}


def list_credentials(req):
    ctx = req.context
    user_id, type_ = req.query.get("user_id"), req.query.get("type")
    if not common.allowed(req, "identity:list_credentials", _target(user_id or "")):
        # A user lists its own credentials only (Keystone filters to the caller's).
        common.authorize(req, "identity:list_credentials", _target(ctx.user_id))
        if user_id and user_id != ctx.user_id:
            return common.collection(req, "credentials", [], view)
        user_id = ctx.user_id
    found = credentials.list_credentials(user_id=user_id, type_=type_)
    return common.collection(req, "credentials", found, view)


def create_credential(req):
    ref = common.body(req, CREATE)["credential"]
    common.authorize(req, "identity:create_credential", _target(ref["user_id"]))
    return common.member(req, "credential", credentials.create(ref), view, 201)


def _existing(req, action: str):
    credential = credentials.get(req.params["credential_id"])
    common.authorize(req, action, _target(credential.user_id))
    return credential


def get_credential(req):
    return common.member(req, "credential", _existing(req, "identity:get_credential"), view)


def update_credential(req):
    _existing(req, "identity:update_credential")
    ref = common.body(req, UPDATE)["credential"]
    if "user_id" in ref:  # handing a credential to someone else: as if creating it
        common.authorize(req, "identity:update_credential", _target(ref["user_id"]))
    updated = credentials.update(req.params["credential_id"], ref)
    return common.member(req, "credential", updated, view)


def delete_credential(req):
    _existing(req, "identity:delete_credential")
    credentials.delete(req.params["credential_id"])
    return routing.empty()


# --- OS-EC2 ---------------------------------------------------------------------------

def ec2_view(req, c) -> dict:
    blob = json.loads(c.blob)
    return {"user_id": c.user_id, "tenant_id": c.project_id, "access": blob.get("access"),
            "secret": blob.get("secret"), "trust_id": blob.get("trust_id"),
            "links": {"self": common.self_url(
                req, f"/v3/users/{c.user_id}/credentials/OS-EC2/{blob.get('access')}")}}


def _ec2_target(req) -> dict:
    return {"target": {"credential": {"user_id": req.params["user_id"]}}}


def list_ec2(req):
    common.authorize(req, "identity:ec2_list_credentials", _ec2_target(req))
    found = credentials.list_credentials(user_id=req.params["user_id"], type_="ec2")
    return common.collection(req, "credentials", found, ec2_view)


def create_ec2(req):
    common.authorize(req, "identity:ec2_create_credential", _ec2_target(req))
    ref = common.body(req, EC2_CREATE)
    created = credentials.create_ec2(req.params["user_id"], ref["tenant_id"])
    return common.member(req, "credential", created, ec2_view, 201)


def get_ec2(req):
    common.authorize(req, "identity:ec2_get_credential", _ec2_target(req))
    found = credentials.ec2_of_user(req.params["user_id"], req.params["access"])
    return common.member(req, "credential", found, ec2_view)


def delete_ec2(req):
    common.authorize(req, "identity:ec2_delete_credential", _ec2_target(req))
    found = credentials.ec2_of_user(req.params["user_id"], req.params["access"])
    credentials.delete(found.id)
    return routing.empty()
