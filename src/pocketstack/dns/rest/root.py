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


def limits(req):
    dns = config.CONF.dns
    return routing.json_response({
        "max_page_limit": 1000, "max_recordset_name_length": 255,
        "max_zone_name_length": 255, "max_zone_records": dns.quota_zone_records,
        "max_zone_recordsets": dns.quota_zone_recordsets,
        "max_recordset_records": dns.quota_recordset_records,
        "min_ttl": dns.min_ttl, "max_zones": dns.quota_zones})
