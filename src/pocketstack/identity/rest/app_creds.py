"""/v3/users/{user_id}/application_credentials."""
from __future__ import annotations

from pocketstack.common import exceptions
from pocketstack.identity import access_rules, app_creds, schemas, tokens
from pocketstack.identity.rest import common, views
from pocketstack.wsgi import routing


def _target(req) -> dict:
    return {"target": {"user": {"id": req.params["user_id"]}}}


def _refuse_restricted_app_cred_token(req) -> None:
    """Keystone: a restricted application credential cannot manage credentials."""
    token = req.context.auth_token
    data = tokens.validate(token) if token else None
    if data is not None and data.app_cred_id:
        cred = None
        try:
            cred = app_creds.get(data.user_id, data.app_cred_id)
        except exceptions.NotFound:
            pass
        if cred is None or not cred.unrestricted:
            raise exceptions.Forbidden(
                "You are not authorized to perform the requested action: Using method "
                "'application_credential' is not allowed for managing additional "
                "application credentials.")


def list_app_creds(req):
    common.authorize(req, "identity:list_application_credentials", _target(req))
    found = app_creds.list_for_user(req.params["user_id"], req.query.get("name"))
    return common.collection(req, "application_credentials", found, views.app_cred)


def create_app_cred(req):
    common.authorize(req, "identity:create_application_credential", _target(req))
    ref = common.body(req, schemas.app_cred_create)["application_credential"]
    _refuse_restricted_app_cred_token(req)
    cred, secret = app_creds.create(req.context, req.params["user_id"], ref)
    return routing.json_response({"application_credential": views.app_cred(req, cred, secret)},
                                 status=201)


def get_app_cred(req):
    common.authorize(req, "identity:get_application_credential", _target(req))
    cred = app_creds.get(req.params["user_id"], req.params["app_cred_id"])
    return common.member(req, "application_credential", cred, views.app_cred)


def delete_app_cred(req):
    common.authorize(req, "identity:delete_application_credential", _target(req))
    _refuse_restricted_app_cred_token(req)
    app_creds.delete(req.params["user_id"], req.params["app_cred_id"])
    return routing.empty()


# --- access rules ------------------------------------------------------------------------

def list_access_rules(req):
    common.authorize(req, "identity:list_access_rules", _target(req))
    found = access_rules.list_for_user(req.params["user_id"], req.query)
    return common.collection(req, "access_rules", found, views.access_rule)


def get_access_rule(req):
    common.authorize(req, "identity:get_access_rule", _target(req))
    rule = access_rules.get(req.params["user_id"], req.params["access_rule_id"])
    return common.member(req, "access_rule", rule, views.access_rule)


def delete_access_rule(req):
    common.authorize(req, "identity:delete_access_rule", _target(req))
    access_rules.delete(req.params["user_id"], req.params["access_rule_id"])
    return routing.empty()
