"""Version discovery at /volume/ (300, every version) and /volume/v3/ (200), as cinder."""
from __future__ import annotations

from pocketstack.volume.rest import microversion
from pocketstack.wsgi import routing

UPDATED = "2023-07-17T00:00:00Z"


def _v3(req) -> dict:
    return {"id": "v3.0", "status": "CURRENT", "version": microversion.MAX_STR,
            "min_version": microversion.MIN_STR, "updated": UPDATED,
            "links": [{"rel": "describedby", "type": "text/html",
                       "href": "https://docs.openstack.org/"},
                      {"rel": "self", "href": f"{req.service_url}/v3/"}],
            "media-types": [{"base": "application/json",
                             "type": "application/vnd.openstack.volume+json;version=3"}]}


@routing.public
async def versions(req):
    return routing.json_response({"versions": [_v3(req)]}, status=300)


@routing.public
async def v3(req):
    return routing.json_response({"versions": [_v3(req)]})
