"""The handlers: policy and validation happen in the logic modules; these pick the
request apart and choose the status code."""
from __future__ import annotations

from pocketstack.loadbalancer import admin, api, graph, l7, pools, quotas, show
from pocketstack.loadbalancer import driver
from pocketstack.loadbalancer import models as M
from pocketstack.loadbalancer import tree
from pocketstack.wsgi import routing
from pocketstack.wsgi.routing import json_response


@routing.public
def versions(req):
    from pocketstack.loadbalancer.rest import VERSIONS

    base = req.service_url.rstrip("/") + "/v2"
    out = [{"id": v, "status": "CURRENT" if i == len(VERSIONS) - 1 else "SUPPORTED",
            "updated": when, "links": [{"href": base, "rel": "self"}]}
           for i, (v, when) in enumerate(VERSIONS)]
    return json_response({"versions": out})


def _here(req) -> str:
    """The URL asked, without its query (the base of a collection's next link)."""
    return str(req.raw.url.replace(query=""))


def _json(req):
    return req.json()


def _truthy(value: str | None) -> bool:
    return (value or "").lower() in ("true", "1", "yes")


# --- load balancers -----------------------------------------------------------------------

def list_load_balancers(req):
    return json_response(show.many(req.context, M.LoadBalancer, req.query, url=_here(req)))


def create_load_balancer(req):
    body = _json(req)
    if graph.is_graph(body):  # listeners and pools in the body: the fully populated create
        return json_response(graph.create(req.context, body), 201)
    return json_response(api.create_load_balancer(req.context, body), 201)


def show_load_balancer(req):
    return json_response(show.one(req.context, M.LoadBalancer, req.params["lb_id"], req.query))


def update_load_balancer(req):
    return json_response(api.update_load_balancer(req.context, req.params["lb_id"],
                                                  _json(req)), 200)


def delete_load_balancer(req):
    api.delete_load_balancer(req.context, req.params["lb_id"],
                             _truthy(req.query.get("cascade")))
    return routing.empty(204)


def load_balancer_status(req):
    return json_response(show.status_tree(req.context, req.params["lb_id"]))


def load_balancer_stats(req):
    return json_response(show.stats(req.context, M.LoadBalancer, req.params["lb_id"],
                                    driver.counters))


def failover_load_balancer(req):
    api.failover_load_balancer(req.context, req.params["lb_id"])
    return routing.empty(202)


# --- listeners ----------------------------------------------------------------------------

def list_listeners(req):
    return json_response(show.many(req.context, M.Listener, req.query, url=_here(req)))


def create_listener(req):
    return json_response(api.create_listener(req.context, _json(req)), 201)


def show_listener(req):
    return json_response(show.one(req.context, M.Listener, req.params["listener_id"],
                                  req.query))


def update_listener(req):
    return json_response(api.update_listener(req.context, req.params["listener_id"],
                                             _json(req)))


def delete_listener(req):
    api.delete_listener(req.context, req.params["listener_id"])
    return routing.empty(204)


def listener_stats(req):
    return json_response(show.stats(req.context, M.Listener, req.params["listener_id"],
                                    driver.counters))


# --- pools, members, monitors -------------------------------------------------------------

def list_pools(req):
    return json_response(show.many(req.context, M.Pool, req.query, url=_here(req)))


def create_pool(req):
    return json_response(pools.create_pool(req.context, _json(req)), 201)


def show_pool(req):
    return json_response(show.one(req.context, M.Pool, req.params["pool_id"], req.query))


def update_pool(req):
    return json_response(pools.update_pool(req.context, req.params["pool_id"], _json(req)))


def delete_pool(req):
    pools.delete_pool(req.context, req.params["pool_id"])
    return routing.empty(204)


def list_members(req):
    show.require_exists(M.Pool, req.params["pool_id"])
    return json_response(show.many(req.context, M.Member, req.query,
                                   M.Member.pool_id == req.params["pool_id"], url=_here(req)))


def create_member(req):
    return json_response(pools.create_member(req.context, req.params["pool_id"], _json(req)),
                         201)


def batch_update_members(req):
    pools.batch_update_members(req.context, req.params["pool_id"], _json(req),
                               _truthy(req.query.get("additive_only")))
    return routing.empty(202)


def show_member(req):
    return json_response(show.one(req.context, M.Member, req.params["member_id"], req.query,
                                  parent=("pool_id", req.params["pool_id"])))


def update_member(req):
    return json_response(pools.update_member(req.context, req.params["pool_id"],
                                             req.params["member_id"], _json(req)))


def delete_member(req):
    pools.delete_member(req.context, req.params["pool_id"], req.params["member_id"])
    return routing.empty(204)


def list_health_monitors(req):
    return json_response(show.many(req.context, M.HealthMonitor, req.query, url=_here(req)))


def create_health_monitor(req):
    return json_response(pools.create_health_monitor(req.context, _json(req)), 201)


def show_health_monitor(req):
    return json_response(show.one(req.context, M.HealthMonitor, req.params["hm_id"],
                                  req.query))


def update_health_monitor(req):
    return json_response(pools.update_health_monitor(req.context, req.params["hm_id"],
                                                     _json(req)))


def delete_health_monitor(req):
    pools.delete_health_monitor(req.context, req.params["hm_id"])
    return routing.empty(204)


# --- L7 -----------------------------------------------------------------------------------

def list_l7policies(req):
    return json_response(show.many(req.context, M.L7Policy, req.query, url=_here(req)))


def create_l7policy(req):
    return json_response(l7.create_l7policy(req.context, _json(req)), 201)


def show_l7policy(req):
    return json_response(show.one(req.context, M.L7Policy, req.params["policy_id"],
                                  req.query))


def update_l7policy(req):
    return json_response(l7.update_l7policy(req.context, req.params["policy_id"],
                                            _json(req)))


def delete_l7policy(req):
    l7.delete_l7policy(req.context, req.params["policy_id"])
    return routing.empty(204)


def list_l7rules(req):
    show.require_exists(M.L7Policy, req.params["policy_id"])
    return json_response(show.many(req.context, M.L7Rule, req.query,
                                   M.L7Rule.l7policy_id == req.params["policy_id"],
                                   url=_here(req)))


def create_l7rule(req):
    return json_response(l7.create_l7rule(req.context, req.params["policy_id"], _json(req)),
                         201)


def show_l7rule(req):
    return json_response(show.one(req.context, M.L7Rule, req.params["rule_id"], req.query,
                                  parent=("l7policy_id", req.params["policy_id"])))


def update_l7rule(req):
    return json_response(l7.update_l7rule(req.context, req.params["policy_id"],
                                          req.params["rule_id"], _json(req)))


def delete_l7rule(req):
    l7.delete_l7rule(req.context, req.params["policy_id"], req.params["rule_id"])
    return routing.empty(204)


# --- quotas -------------------------------------------------------------------------------

def list_quotas(req):
    project = req.query.get("project_id") or req.query.get("tenant_id")
    if not req.context.is_admin:
        tree.authorize(req.context, "quota", "get_one", req.context.project_id)
        project = req.context.project_id
    else:
        tree.authorize(req.context, "quota", "get_all", None)
    return json_response(quotas.listing(project))


def quota_defaults(req):
    tree.authorize(req.context, "quota", "get_defaults",
                   req.params.get("project_id", req.context.project_id))
    return json_response({"quota": quotas._with_legacy(quotas.defaults())})


def show_quota(req):
    tree.authorize(req.context, "quota", "get_one", req.params["project_id"])
    return json_response(quotas.show(req.params["project_id"]))


def update_quota(req):
    tree.authorize(req.context, "quota", "put", req.params["project_id"])
    return json_response(quotas.update(req.params["project_id"], _json(req)), 202)


def reset_quota(req):
    tree.authorize(req.context, "quota", "delete", req.params["project_id"])
    quotas.reset(req.params["project_id"])
    return routing.empty(202)


# --- providers, flavors, zones, amphorae --------------------------------------------------

def list_providers(req):
    return json_response(admin.providers(req.context, req.query))


def flavor_capabilities(req):
    return json_response(admin.capabilities(req.context, req.params["provider"], "flavor",
                                            req.query))


def zone_capabilities(req):
    return json_response(admin.capabilities(req.context, req.params["provider"], "zone",
                                            req.query))


def catalog_routes(lbaas: str) -> dict:
    """flavors, flavorprofiles, availabilityzones, availabilityzoneprofiles."""
    routes = {}
    for path, kind in (("flavors", "flavor"), ("flavorprofiles", "flavorprofile"),
                       ("availabilityzones", "availability_zone"),
                       ("availabilityzoneprofiles", "availability_zone_profile")):
        routes[f"{lbaas}/{path}"] = {"GET": _lister(kind), "POST": _creator(kind)}
        routes[f"{lbaas}/{path}/{{key}}"] = {"GET": _shower(kind), "PUT": _updater(kind),
                                             "DELETE": _deleter(kind)}
    return routes


def _lister(kind):
    def handler(req):
        return json_response(admin.list_kind(req.context, kind, req.query))
    return handler


def _creator(kind):
    def handler(req):
        return json_response(admin.create_kind(req.context, kind, _json(req)), 201)
    return handler


def _shower(kind):
    def handler(req):
        return json_response(admin.show_kind(req.context, kind, req.params["key"], req.query))
    return handler


def _updater(kind):
    def handler(req):
        return json_response(admin.update_kind(req.context, kind, req.params["key"],
                                               _json(req)))
    return handler


def _deleter(kind):
    def handler(req):
        admin.delete_kind(req.context, kind, req.params["key"])
        return routing.empty(204)
    return handler


def list_amphorae(req):
    return json_response(admin.list_amphorae(req.context, req.query))


def show_amphora(req):
    return json_response(admin.show_amphora(req.context, req.params["amphora_id"], req.query))


def amphora_stats(req):
    return json_response(admin.amphora_stats(req.context, req.params["amphora_id"]))


def failover_amphora(req):
    admin.failover_amphora(req.context, req.params["amphora_id"])
    return routing.empty(202)


def configure_amphora(req):
    admin.configure_amphora(req.context, req.params["amphora_id"])
    return routing.empty(202)


def delete_amphora(req):
    admin.delete_amphora(req.context, req.params["amphora_id"])
    return routing.empty(204)


