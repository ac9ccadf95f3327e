"""Version discovery at /image and /image/versions, as glance answers it.

glance answers its root with 300 Multiple Choices and /versions with 200; keystoneauth1
reads either, picks the newest v2.x and follows its link to …/image/v2/. glance has no
microversions: clients (python-glanceclient) look for a version's id in this list before
they call what it added. So the list is glance's for the same configuration
(glance/api/versions.py: the cache versions with an image cache, 2.8-2.13 with several
stores), minus what is not implemented here: 2.17 (the location APIs,
POST/GET /v2/images/{id}/locations) is never listed, so glanceclient refuses those calls
itself. What each version added: 2.6 import (glance-direct), 2.7 hidden images and
multihash, 2.8 stores, 2.9 copy-image, 2.10 DELETE /v2/stores/{store}/{image}, 2.11 the
import lock, 2.12 /v2/images/{id}/tasks, 2.13 /v2/info/usage, 2.14 /v2/cache, 2.15
/v2/info/stores/detail, 2.16 PUT /v2/cache/{id} → 202, 2.18 /v2/cache/clean and prune.
"""
from __future__ import annotations

from pocketstack.common import config
from pocketstack.image import stores
from pocketstack.wsgi import routing


def listed() -> list[tuple[str, str]]:
    cache = config.CONF.image.image_cache_enabled
    out = []
    if cache:
        out += [("2.18", "CURRENT"), ("2.16", "SUPPORTED"), ("2.15", "SUPPORTED"),
                ("2.14", "SUPPORTED")]
    else:
        out += [("2.15", "SUPPORTED")]
    if stores.multiple():
        out += [(f"2.{n}", "SUPPORTED") for n in range(13, 7, -1)]
    else:
        out += [("2.9", "SUPPORTED")]
    if not cache:  # glance: 2.17 CURRENT; without the location APIs, 2.16 is the newest
        out += [("2.16", "CURRENT")]
    out += [(f"2.{n}", "SUPPORTED") for n in range(7, -1, -1)]
    return out


def _document(req) -> dict:
    href = f"{req.service_url}/v2/"
    return {"versions": [{"id": f"v{v}", "status": status,
                          "links": [{"rel": "self", "href": href}]}
                         for v, status in listed()]}


@routing.public
async def versions(req):
    return routing.json_response(_document(req), status=300)


@routing.public
async def versions_explicit(req):
    return routing.json_response(_document(req), status=200)
