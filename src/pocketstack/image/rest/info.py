"""/v2/info: which import methods this cloud offers; stores (single store: 404, as glance
without multiple backends)."""
from __future__ import annotations

from pocketstack.common import exceptions
from pocketstack.image import data
from pocketstack.wsgi import routing


async def import_methods(req):
    return routing.json_response({"import-methods": {
        "description": "Import methods available.", "type": "array",
        "value": list(data.IMPORT_METHODS)}})


async def stores(req):
    raise exceptions.NotFound("Multi backend is not supported at this site.")
