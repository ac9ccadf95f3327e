"""Version discovery at /identity and /identity/v3, as keystoneauth1 expects."""
from __future__ import annotations

from pocketstack.wsgi import routing

VERSION_ID = "v3.14"
UPDATED = "2020-04-07T00:00:00Z"
MEDIA_TYPES = [{"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}]


def _version(req) -> dict:
    return {"id": VERSION_ID, "status": "stable", "updated": UPDATED,
            "links": [{"rel": "self", "href": f"{req.service_url}/v3/"}],
            "media-types": MEDIA_TYPES}


@routing.public
async def versions(req):
    return routing.json_response({"versions": {"values": [_version(req)]}}, status=300)


@routing.public
async def v3(req):
    return routing.json_response({"version": _version(req)})
