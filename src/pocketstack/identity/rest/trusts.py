"""/v3/OS-TRUST/trusts and their roles."""
from __future__ import annotations

from pocketstack.common import exceptions
from pocketstack.common.timeutils import isotime_us
from pocketstack.identity import tokens, trusts
from pocketstack.identity.rest import common
from pocketstack.wsgi import routing


def _role(req, r: dict) -> dict:
    return {"id": r["id"], "name": r["name"], "domain_id": r.get("domain_id"),
            "links": {"self": common.self_url(req, f"/v3/roles/{r['id']}")}}


def view(req, t, with_roles: bool = True) -> dict:
    url = common.self_url(req, f"/v3/OS-TRUST/trusts/{t.id}")
    out = {**(t.extra or {}), "id": t.id, "trustor_user_id": t.trustor_user_id,
           "trustee_user_id": t.trustee_user_id, "project_id": t.project_id,
           "impersonation": t.impersonation, "expires_at": isotime_us(t.expires_at),
           "remaining_uses": t.remaining_uses, "allow_redelegation": t.allow_redelegation,
           "redelegation_count": t.redelegation_count, "redelegated_trust_id": None,
           "links": {"self": url}}
    if with_roles:
        out["roles"] = [_role(req, r) for r in t.roles or []]
        out["roles_links"] = {"self": url + "/roles", "previous": None, "next": None}
    return out


def _target(trustor_user_id: str, trustee_user_id: str) -> dict:
    return {"target": {"trust": {"trustor_user_id": trustor_user_id,
                                 "trustee_user_id": trustee_user_id}}}


def _existing(req, action: str):
    trust = trusts.get(req.params["trust_id"])
    common.authorize(req, action, _target(trust.trustor_user_id, trust.trustee_user_id))
    return trust


def create_trust(req):
    ref = common.body(req, trusts.CREATE)["trust"]
    if req.context.user_id != ref["trustor_user_id"]:
        raise exceptions.Forbidden("You are not authorized to perform the requested action: "
                                   "The authenticated user should match the trustor.")
    common.authorize(req, "identity:create_trust",
                     _target(ref["trustor_user_id"], ref["trustee_user_id"]))
    token = tokens.validate(req.context.auth_token) if req.context.auth_token else None
    if token is not None and token.delegated:
        raise exceptions.Forbidden(
            "You are not authorized to perform the requested action: a trust cannot be "
            "created with a trust-scoped, application credential or OAuth1 token "
            "(redelegation is not supported).")
    return common.member(req, "trust", trusts.create(req.context, ref), view, 201)


def list_trusts(req):
    trustor, trustee = req.query.get("trustor_user_id"), req.query.get("trustee_user_id")
    if trustor:
        common.authorize(req, "identity:list_trusts_for_trustor",
                         {"target": {"trust": {"trustor_user_id": trustor}}})
    elif trustee:
        common.authorize(req, "identity:list_trusts_for_trustee",
                         {"target": {"trust": {"trustee_user_id": trustee}}})
    else:
        common.authorize(req, "identity:list_trusts")
    found = trusts.list_trusts(trustor_user_id=trustor or None,
                               trustee_user_id=trustee or None)
    return common.collection(req, "trusts", found,
                             lambda r, t: view(r, t, with_roles=False))


def get_trust(req):
    return common.member(req, "trust", _existing(req, "identity:get_trust"), view)


def delete_trust(req):
    _existing(req, "identity:delete_trust")
    trusts.delete(req.params["trust_id"])
    return routing.empty()


def list_trust_roles(req):
    trust = _existing(req, "identity:list_roles_for_trust")
    return common.collection(req, "roles", trust.roles or [], _role)


def get_trust_role(req):
    trust = _existing(req, "identity:get_role_for_trust")
    for role in trust.roles or []:
        if role["id"] == req.params["role_id"]:
            if req.method == "HEAD":
                return routing.empty(200)
            return routing.json_response({"role": _role(req, role)})
    raise exceptions.NotFound(f"Could not find role: {req.params['role_id']}.")
