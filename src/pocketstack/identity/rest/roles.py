"""/v3/roles, implied roles (/v3/roles/{prior}/implies/{implied}) and /v3/role_inferences."""
from __future__ import annotations

from pocketstack.identity import assignment, schemas
from pocketstack.identity.rest import common, views
from pocketstack.wsgi import routing


def _action(verb: str, domain_id: str | None) -> str:
    return f"identity:{verb}_domain_role" if domain_id else f"identity:{verb}_role"


def _load(req, verb: str):
    role = assignment.get_role(req.params["role_id"])
    common.authorize(req, _action(verb, role.domain_id), {"target": {"role": {
        "id": role.id, "name": role.name, "domain_id": role.domain_id}}})
    return role


def list_roles(req):
    domain_id = req.query.get("domain_id") or None
    common.authorize(req, "identity:list_domain_roles" if domain_id else "identity:list_roles",
                     {"target": {"domain_id": domain_id}})
    roles = assignment.list_roles(name_filters=common.name_filter(req), domain_id=domain_id)
    return common.collection(req, "roles", roles, views.role)


def create_role(req):
    ref = common.body(req, schemas.role_create)["role"]
    common.authorize(req, _action("create", ref.get("domain_id")),
                     {"target": {"role": {"domain_id": ref.get("domain_id")}}})
    return common.member(req, "role", assignment.create_role(ref), views.role, 201)


def get_role(req):
    return common.member(req, "role", _load(req, "get"), views.role)


def update_role(req):
    role = _load(req, "update")
    ref = common.body(req, schemas.role_update)["role"]
    return common.member(req, "role", assignment.update_role(role.id, ref), views.role)


def delete_role(req):
    role = _load(req, "delete")
    assignment.delete_role(role.id)
    return routing.empty()


# --- implied roles --------------------------------------------------------------------

def _inference(req, prior, implied) -> dict:
    return {"role_inference": {"prior_role": views.role_ref(req, prior),
                               "implies": views.role_ref(req, implied)},
            "links": {"self": f"{req.service_url}/v3/roles/{prior.id}/implies/{implied.id}"}}


def get_implied_role(req):
    common.authorize(req, "identity:get_implied_role")
    prior, implied = assignment.get_implied_role(req.params["prior_role_id"],
                                                 req.params["implied_role_id"])
    return routing.json_response(_inference(req, prior, implied))


def check_implied_role(req):
    common.authorize(req, "identity:check_implied_role")
    assignment.get_implied_role(req.params["prior_role_id"], req.params["implied_role_id"])
    return routing.empty()


def create_implied_role(req):
    common.authorize(req, "identity:create_implied_role")
    prior, implied = assignment.create_implied_role(req.params["prior_role_id"],
                                                    req.params["implied_role_id"])
    return routing.json_response(_inference(req, prior, implied), status=201)


def delete_implied_role(req):
    common.authorize(req, "identity:delete_implied_role")
    assignment.delete_implied_role(req.params["prior_role_id"], req.params["implied_role_id"])
    return routing.empty()


def list_implied_roles(req):
    common.authorize(req, "identity:list_implied_roles")
    prior, implied = assignment.list_implied_roles(req.params["prior_role_id"])
    return routing.json_response({
        "role_inference": {"prior_role": views.role_ref(req, prior),
                           "implies": [views.role_ref(req, r) for r in implied]},
        "links": {"self": f"{req.service_url}/v3/roles/{prior.id}/implies"}})


def list_role_inferences(req):
    common.authorize(req, "identity:list_role_inference_rules")
    rules = assignment.list_role_inferences()
    return routing.json_response({
        "role_inferences": [{"prior_role": views.role_ref(req, prior),
                             "implies": [views.role_ref(req, r) for r in implied]}
                            for prior, implied in rules],
        "links": {"self": f"{req.service_url}/v3/role_inferences", "previous": None,
                  "next": None}})
