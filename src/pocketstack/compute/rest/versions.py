"""Version discovery at /compute/ and /compute/v2.1 (as nova's versions controller)."""
from __future__ import annotations

from pocketstack.compute.rest import microversion
from pocketstack.wsgi import routing

UPDATED = "2013-07-23T11:33:21Z"


def _v21(req) -> dict:
    return {"id": "v2.1", "status": "CURRENT", "version": microversion.MAX_STR,
            "min_version": microversion.MIN_STR, "updated": UPDATED,
            "links": [{"rel": "self", "href": f"{req.service_url}/v2.1/"}]}


def _v20(req) -> dict:
    return {"id": "v2.0", "status": "SUPPORTED", "version": "", "min_version": "",
            "updated": "2011-01-21T11:33:21Z",
            "links": [{"rel": "self", "href": f"{req.service_url}/v2/"}]}


@routing.public
async def versions(req):
    return routing.json_response({"versions": [_v20(req), _v21(req)]})


@routing.public
async def v20(req):
    """The legacy v2 root the version list advertises (nova still answers it)."""
    doc = _v20(req)
    doc["links"].append({"rel": "describedby", "type": "text/html",
                         "href": "http://docs.openstack.org/"})
    doc["media-types"] = [{"base": "application/json",
                           "type": "application/vnd.openstack.compute+json;version=2"}]
    return routing.json_response({"version": doc})


@routing.public
async def v21(req):
    doc = _v21(req)
    doc["links"].append({"rel": "describedby", "type": "text/html",
                         "href": "http://docs.openstack.org/"})
    doc["media-types"] = [{"base": "application/json",
                           "type": "application/vnd.openstack.compute+json;version=2.1"}]
    return routing.json_response({"version": doc})
