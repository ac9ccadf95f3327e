"""GET / and GET /v1: barbican's version documents (the 1.0 form without a microversion
header, which is what clients' discovery reads; the microversion form with one)."""
from __future__ import annotations

from pocketstack.keymanager.rest import util
from pocketstack.wsgi import routing

MIN_VERSION, MAX_VERSION = ("%d.%d" % v for v in (util.MIN_VERSION, util.MAX_VERSION))


def _microversion(req) -> bool:
    header = req.headers.get("openstack-api-version") or ""
    service, _, version = header.strip().partition(" ")
    return service.lower() == "key-manager" and version.strip() not in ("", "1.0")


def _v1(req, microversions: bool) -> dict:
    info = {"id": "v1", "status": "CURRENT", "min_version": MIN_VERSION,
            "max_version": MAX_VERSION,
            "links": [{"rel": "self", "href": f"{req.service_url}/v1/"},
                      {"rel": "describedby", "type": "text/html",
                       "href": "https://docs.openstack.org/"}]}
    if not microversions:
        del info["min_version"], info["max_version"]
        info["status"] = "stable"
        info["media-types"] = [{"base": "application/json",
                                "type": "application/vnd.openstack.key-manager-v1+json"}]
    return info


@routing.public
def versions(req):
    if _microversion(req):
        body = {"versions": [_v1(req, True)]}
    else:
        body = {"versions": {"values": [_v1(req, False)]}}
    return routing.json_response(body, 300)


@routing.public
def v1(req):
    return routing.json_response({"version": _v1(req, _microversion(req))})
