"""GET / and /v2: designate's version documents."""
from __future__ import annotations

from pocketstack.common import config
from pocketstack.wsgi import routing


def _versions(req) -> list[dict]:
    href = f"{req.service_url}/v2/"
    return [{"id": "v2.1", "status": "CURRENT", "links": [{"href": href, "rel": "self"}]},
            {"id": "v2.0", "status": "SUPPORTED", "links": [{"href": href, "rel": "self"}]}]


@routing.public
def versions(req):
    return routing.json_response({"versions": _versions(req)})


@routing.public
def v2(req):
    return routing.json_response({"version": _versions(req)[0]})


def pools(req):
    """Designate's one default pool: this cloud's name servers."""
    from pocketstack.common import policy
    from pocketstack.dns.api import POOL_ID

    policy.authorize(req.context, "find_pools", {})
    pool = {"id": POOL_ID, "name": "default", "description": "Default Pool",
            "project_id": None, "attributes": {},
            "ns_records": [{"hostname": ns, "priority": i + 1}
                           for i, ns in enumerate(config.CONF.dns.ns_records)],
            "created_at": None, "updated_at": None,
            "links": {"self": f"{req.service_url}/v2/pools/{POOL_ID}"}}
    return routing.json_response({"pools": [pool], "links": {
        "self": f"{req.service_url}/v2/pools"}, "metadata": {"total_count": 1}})


def service_statuses(req):
    """What `openstack dns service list` shows: designate's roles, all in this process."""
    from pocketstack.common import policy

    policy.authorize(req.context, "find_pools", {})
    rows = [{"id": f"00000000-0000-0000-0000-00000000000{i}", "hostname": "pocketstack",
             "service_name": name, "status": "UP", "stats": {}, "capabilities": {},
             "heartbeated_at": None, "created_at": None, "updated_at": None,
             "links": {"self": f"{req.service_url}/v2/service_statuses/"
                               f"00000000-0000-0000-0000-00000000000{i}"}}
            for i, name in enumerate(("api", "central", "mdns", "producer", "worker"))]
    return routing.json_response({"service_statuses": rows, "links": {
        "self": f"{req.service_url}/v2/service_statuses"}})


def limits(req):
    dns = config.CONF.dns
    return routing.json_response({
        "max_page_limit": 1000, "max_recordset_name_length": 255,
        "max_zone_name_length": 255, "max_zone_records": dns.quota_zone_records,
        "max_zone_recordsets": dns.quota_zone_recordsets,
        "max_recordset_records": dns.quota_recordset_records,
        "min_ttl": dns.min_ttl, "max_zones": dns.quota_zones})
