"""/v2/info: which import methods this cloud offers; which stores (glance's discovery:
404 with a single store, as glance without enabled_backends)."""
from __future__ import annotations

from pocketstack.common import policy
from pocketstack.image import data, stores
from pocketstack.wsgi import routing


async def import_methods(req):
    return routing.json_response({"import-methods": {
        "description": "Import methods available.", "type": "array",
        "value": list(data.IMPORT_METHODS)}})


async def stores_info(req):
    return routing.json_response({"stores": stores.info(detail=False)})


def stores_detail(req):
    listing = stores.info(detail=False)  # 404 first, as glance
    policy.authorize(req.context, "image:stores_info_detail", {})
    return routing.json_response({"stores": stores.info(detail=True) if listing else []})
