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


def _collection(model, key: str, create, update, delete) -> tuple:
    """The list, create, show, update and delete handlers of a top-level collection (the
    id in ``req.params[key]``): ``create(ctx, body)``, ``update(ctx, id, body)`` and
    ``delete(ctx, id)`` do the work."""
    def list_all(req):
        return json_response(show.many(req.context, model, req.query, url=_here(req)))

    def create_one(req):
        return json_response(create(req.context, _json(req)), 201)

    def show_one(req):
        return json_response(show.one(req.context, model, req.params[key], req.query))

    def update_one(req):
        return json_response(update(req.context, req.params[key], _json(req)))

    def delete_one(req):
        delete(req.context, req.params[key])
        return routing.empty(204)

    return list_all, create_one, show_one, update_one, delete_one


def _children(parent_model, parent_key: str, parent_column, key: str, create, update,
              delete) -> tuple:
    """The same for a collection under a parent (members of a pool, rules of an L7
    policy): ``parent_column`` (a model's attribute) holds the parent's id, which is in
    ``req.params[parent_key]``; the writes take it first."""
    model, column = parent_column.class_, parent_column.key

    def list_all(req):
        parent = req.params[parent_key]
        show.require_exists(parent_model, parent)
        return json_response(show.many(req.context, model, req.query, parent_column == parent,
                                       url=_here(req)))

    def create_one(req):
        return json_response(create(req.context, req.params[parent_key], _json(req)), 201)

    def show_one(req):
        return json_response(show.one(req.context, model, req.params[key], req.query,
                                      parent=(column, req.params[parent_key])))

    def update_one(req):
        return json_response(update(req.context, req.params[parent_key], req.params[key],
                                    _json(req)))

    def delete_one(req):
        delete(req.context, req.params[parent_key], req.params[key])
        return routing.empty(204)

    return list_all, create_one, show_one, update_one, delete_one


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

list_listeners, create_listener, show_listener, update_listener, delete_listener = \
    _collection(M.Listener, "listener_id", api.create_listener, api.update_listener,
                api.delete_listener)


def listener_stats(req):
    return json_response(show.stats(req.context, M.Listener, req.params["listener_id"],
                                    driver.counters))


# --- pools, members, monitors -------------------------------------------------------------

list_pools, create_pool, show_pool, update_pool, delete_pool = _collection(
    M.Pool, "pool_id", pools.create_pool, pools.update_pool, pools.delete_pool)

list_members, create_member, show_member, update_member, delete_member = _children(
    M.Pool, "pool_id", M.Member.pool_id, "member_id", pools.create_member, pools.update_member,
    pools.delete_member)


def batch_update_members(req):
    pools.batch_update_members(req.context, req.params["pool_id"], _json(req),
                               _truthy(req.query.get("additive_only")))
    return routing.empty(202)


(list_health_monitors, create_health_monitor, show_health_monitor, update_health_monitor,
 delete_health_monitor) = _collection(M.HealthMonitor, "hm_id", pools.create_health_monitor,
                                      pools.update_health_monitor, pools.delete_health_monitor)


# --- L7 -----------------------------------------------------------------------------------

list_l7policies, create_l7policy, show_l7policy, update_l7policy, delete_l7policy = \
    _collection(M.L7Policy, "policy_id", l7.create_l7policy, l7.update_l7policy,
                l7.delete_l7policy)

list_l7rules, create_l7rule, show_l7rule, update_l7rule, delete_l7rule = _children(
    M.L7Policy, "policy_id", M.L7Rule.l7policy_id, "rule_id", l7.create_l7rule, l7.update_l7rule,
    l7.delete_l7rule)


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


