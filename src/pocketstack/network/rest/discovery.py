"""Version discovery: /network lists v2.0 (neutron answers 200), /network/v2.0 the
collections."""
from __future__ import annotations

from pocketstack.wsgi import routing

COLLECTIONS = (("subnet", "subnets"), ("network", "networks"), ("port", "ports"))


@routing.public
async def versions(req):
    return routing.json_response({"versions": [{
        "id": "v2.0", "status": "CURRENT",
        "links": [{"href": f"{req.service_url}/v2.0/", "rel": "self"}]}]})


@routing.public
async def v2(req):
    return routing.json_response({"resources": [
        {"name": name, "collection": collection,
         "links": [{"href": f"{req.service_url}/v2.0/{collection}", "rel": "self"}]}
        for name, collection in COLLECTIONS]})
