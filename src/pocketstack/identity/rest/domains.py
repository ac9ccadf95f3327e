"""/v3/domains."""
from __future__ import annotations

from pocketstack.common import config, exceptions
from pocketstack.identity import domain_config, resource, schemas
from pocketstack.identity.rest import common, views
from pocketstack.wsgi import routing


def list_domains(req):
    common.authorize(req, "identity:list_domains")
    domains = resource.list_domains(common.name_filter(req), common.query_bool(req, "enabled"))
    return common.collection(req, "domains", domains, views.domain)


def create_domain(req):
    common.authorize(req, "identity:create_domain")
    ref = common.body(req, schemas.domain_create)["domain"]
    return common.member(req, "domain", resource.create_domain(ref), views.domain, 201)


def get_domain(req):
    domain_id = req.params["domain_id"]
    common.authorize(req, "identity:get_domain", {"target": {"domain": {"id": domain_id}}})
    return common.member(req, "domain", resource.get_domain(domain_id), views.domain)


def update_domain(req):
    domain_id = req.params["domain_id"]
    common.authorize(req, "identity:update_domain", {"target": {"domain": {"id": domain_id}}})
    ref = common.body(req, schemas.domain_update)["domain"]
    return common.member(req, "domain", resource.update_domain(domain_id, ref), views.domain)


def delete_domain(req):
    domain_id = req.params["domain_id"]
    common.authorize(req, "identity:delete_domain", {"target": {"domain": {"id": domain_id}}})
    resource.delete_domain(domain_id)
    return routing.empty()


# --- domain-specific configuration ---------------------------------------------------------

def _config_domain(req, action: str) -> str:
    """Policy first, then the domain (Keystone does not tell a caller who may not read the
    config whether the domain exists)."""
    domain_id = req.params["domain_id"]
    common.authorize(req, action, {"target": {"domain": {"id": domain_id}}})
    resource.get_domain(domain_id)
    return domain_id


def _config_body(req):
    body = common.json_body(req)
    if not isinstance(body, dict) or "config" not in body:
        raise exceptions.ValidationError("Expecting to find config in request body.")
    return body["config"]


def _where(req) -> tuple:
    return req.params.get("group"), req.params.get("option")


def get_config(req):
    group, option = _where(req)
    if group == "security_compliance":
        domain_id = req.params["domain_id"]
        common.authorize(req, "identity:get_security_compliance_domain_config",
                         {"target": {"domain": {"id": domain_id}}})
        resource.get_domain(domain_id)
        return routing.json_response({"config": domain_config.security_compliance(
            domain_id, config.CONF.identity.default_domain_id, option)})
    domain_id = _config_domain(req, "identity:get_domain_config")
    return routing.json_response({"config": domain_config.get(domain_id, group, option)})


def create_config(req):
    domain_id = _config_domain(req, "identity:create_domain_config")
    shown, created = domain_config.create(domain_id, _config_body(req))
    return routing.json_response({"config": shown}, status=201 if created else 200)


def update_config(req):
    domain_id = _config_domain(req, "identity:update_domain_config")
    group, option = _where(req)
    shown = domain_config.update(domain_id, _config_body(req), group, option)
    return routing.json_response({"config": shown})


def delete_config(req):
    domain_id = _config_domain(req, "identity:delete_domain_config")
    domain_config.delete(domain_id, *_where(req))
    return routing.empty()


def default_config(req):
    common.authorize(req, "identity:get_domain_config_default")
    return routing.json_response({"config": domain_config.defaults(*_where(req))})


_CONFIG = {"GET": get_config, "PATCH": update_config, "DELETE": delete_config}
CONFIG_ROUTES = {
    "/v3/domains/{domain_id}/config": dict(_CONFIG, PUT=create_config),
    "/v3/domains/{domain_id}/config/{group}": _CONFIG,
    "/v3/domains/{domain_id}/config/{group}/{option}": _CONFIG,
    "/v3/domains/config/default": {"GET": default_config},
    "/v3/domains/config/{group}/default": {"GET": default_config},
    "/v3/domains/config/{group}/{option}/default": {"GET": default_config},
}
