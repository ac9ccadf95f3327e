"""Octavia's v2 API at /load-balancer: /v2/lbaas/... (also spelled /v2.0/lbaas/...) and
the admin's /v2/octavia/amphorae. Handlers are thin: the logic is in api.py, pools.py,
l7.py, admin.py and quotas.py; reads in show.py."""
from __future__ import annotations

from pocketstack.loadbalancer.rest import handlers as h

# Versions as Octavia dates them; the API surface served is v2.25's (PROMETHEUS listeners)
# without the later VIP additions (additional_vips, vip_sg_ids), so no later one is listed.
VERSIONS = [("v2.0", "2016-12-11T00:00:00Z"), ("v2.1", "2018-04-20T00:00:00Z"),
            ("v2.2", "2018-07-31T00:00:00Z"), ("v2.3", "2018-12-18T00:00:00Z"),
            ("v2.4", "2018-12-19T00:00:00Z"), ("v2.5", "2019-01-21T00:00:00Z"),
            ("v2.6", "2019-01-25T00:00:00Z"), ("v2.7", "2018-01-25T12:00:00Z"),
            ("v2.8", "2019-02-12T00:00:00Z"), ("v2.9", "2019-03-04T00:00:00Z"),
            ("v2.10", "2019-03-05T00:00:00Z"), ("v2.11", "2019-06-24T00:00:00Z"),
            ("v2.12", "2019-09-11T00:00:00Z"), ("v2.13", "2019-09-13T00:00:00Z"),
            ("v2.14", "2019-11-10T00:00:00Z"), ("v2.15", "2020-03-10T00:00:00Z"),
            ("v2.16", "2020-03-15T00:00:00Z"), ("v2.17", "2020-04-29T00:00:00Z"),
            ("v2.18", "2020-04-29T01:00:00Z"), ("v2.19", "2020-05-12T00:00:00Z"),
            ("v2.20", "2020-08-02T00:00:00Z"), ("v2.21", "2020-09-03T00:00:00Z"),
            ("v2.22", "2020-09-04T00:00:00Z"), ("v2.23", "2020-09-07T00:00:00Z"),
            ("v2.24", "2020-10-15T00:00:00Z"), ("v2.25", "2021-10-02T00:00:00Z")]


def _lbaas(prefix: str) -> dict:
    lbaas = f"{prefix}/lbaas"
    return {
        prefix: {"GET": h.versions},
        f"{lbaas}/loadbalancers": {"GET": h.list_load_balancers,
                                   "POST": h.create_load_balancer},
        f"{lbaas}/loadbalancers/{{lb_id}}": {"GET": h.show_load_balancer,
                                             "PUT": h.update_load_balancer,
                                             "DELETE": h.delete_load_balancer},
        f"{lbaas}/loadbalancers/{{lb_id}}/status": {"GET": h.load_balancer_status},
        f"{lbaas}/loadbalancers/{{lb_id}}/stats": {"GET": h.load_balancer_stats},
        f"{lbaas}/loadbalancers/{{lb_id}}/failover": {"PUT": h.failover_load_balancer},
        f"{lbaas}/listeners": {"GET": h.list_listeners, "POST": h.create_listener},
        f"{lbaas}/listeners/{{listener_id}}": {"GET": h.show_listener,
                                               "PUT": h.update_listener,
                                               "DELETE": h.delete_listener},
        f"{lbaas}/listeners/{{listener_id}}/stats": {"GET": h.listener_stats},
        f"{lbaas}/pools": {"GET": h.list_pools, "POST": h.create_pool},
        f"{lbaas}/pools/{{pool_id}}": {"GET": h.show_pool, "PUT": h.update_pool,
                                       "DELETE": h.delete_pool},
        f"{lbaas}/pools/{{pool_id}}/members": {"GET": h.list_members,
                                               "POST": h.create_member,
                                               "PUT": h.batch_update_members},
        f"{lbaas}/pools/{{pool_id}}/members/{{member_id}}": {
            "GET": h.show_member, "PUT": h.update_member, "DELETE": h.delete_member},
        f"{lbaas}/healthmonitors": {"GET": h.list_health_monitors,
                                    "POST": h.create_health_monitor},
        f"{lbaas}/healthmonitors/{{hm_id}}": {"GET": h.show_health_monitor,
                                              "PUT": h.update_health_monitor,
                                              "DELETE": h.delete_health_monitor},
        f"{lbaas}/l7policies": {"GET": h.list_l7policies, "POST": h.create_l7policy},
        f"{lbaas}/l7policies/{{policy_id}}": {"GET": h.show_l7policy,
                                              "PUT": h.update_l7policy,
                                              "DELETE": h.delete_l7policy},
        f"{lbaas}/l7policies/{{policy_id}}/rules": {"GET": h.list_l7rules,
                                                    "POST": h.create_l7rule},
        f"{lbaas}/l7policies/{{policy_id}}/rules/{{rule_id}}": {
            "GET": h.show_l7rule, "PUT": h.update_l7rule, "DELETE": h.delete_l7rule},
        f"{lbaas}/quotas": {"GET": h.list_quotas},
        f"{lbaas}/quotas/defaults": {"GET": h.quota_defaults},
        f"{lbaas}/quotas/{{project_id}}": {"GET": h.show_quota, "PUT": h.update_quota,
                                           "DELETE": h.reset_quota},
        f"{lbaas}/quotas/{{project_id}}/default": {"GET": h.quota_defaults},
        f"{lbaas}/providers": {"GET": h.list_providers},
        f"{lbaas}/providers/{{provider}}/flavor_capabilities": {
            "GET": h.flavor_capabilities},
        f"{lbaas}/providers/{{provider}}/availability_zone_capabilities": {
            "GET": h.zone_capabilities},
        **h.catalog_routes(lbaas),
        f"{prefix}/octavia/amphorae": {"GET": h.list_amphorae},
        f"{prefix}/octavia/amphorae/{{amphora_id}}": {"GET": h.show_amphora,
                                                      "DELETE": h.delete_amphora},
        f"{prefix}/octavia/amphorae/{{amphora_id}}/stats": {"GET": h.amphora_stats},
        f"{prefix}/octavia/amphorae/{{amphora_id}}/failover": {"PUT": h.failover_amphora},
        f"{prefix}/octavia/amphorae/{{amphora_id}}/config": {"PUT": h.configure_amphora},
    }


ROUTES = {"/": {"GET": h.versions}, **_lbaas("/v2"), **_lbaas("/v2.0")}
