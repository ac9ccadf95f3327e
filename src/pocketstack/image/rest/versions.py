"""Version discovery at /image and /image/versions, as glance answers it.

glance answers its root with 300 Multiple Choices and /versions with 200; keystoneauth1
reads either, picks the newest v2.x and follows its link to …/image/v2/. We list the
versions whose behaviour we implement: 2.5 community images, 2.6 image import
(glance-direct), 2.7 hidden images and multihash.
"""
from __future__ import annotations

from pocketstack.wsgi import routing

CURRENT = "2.7"
SUPPORTED = ("2.6", "2.5", "2.4", "2.3", "2.2", "2.1", "2.0")


def _document(req) -> dict:
    href = f"{req.service_url}/v2/"
    versions = [(CURRENT, "CURRENT")] + [(v, "SUPPORTED") for v in SUPPORTED]
    return {"versions": [{"id": f"v{v}", "status": status,
                          "links": [{"rel": "self", "href": href}]}
                         for v, status in versions]}


@routing.public
async def versions(req):
    return routing.json_response(_document(req), status=300)


@routing.public
async def versions_explicit(req):
    return routing.json_response(_document(req), status=200)
