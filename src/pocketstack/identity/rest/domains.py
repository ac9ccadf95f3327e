"""/v3/domains."""
from __future__ import annotations

from pocketstack.identity import resource, schemas
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
