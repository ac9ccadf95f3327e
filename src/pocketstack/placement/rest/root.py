"""GET / : placement's version document."""
from __future__ import annotations

from pocketstack.placement import microversion
from pocketstack.wsgi import routing


@routing.public
def home(req):
    low, high = microversion.text(microversion.MIN), microversion.text(microversion.MAX)
    return routing.json_response({"versions": [{
        "id": f"v{low}", "max_version": high, "min_version": low, "status": "CURRENT",
        "links": [{"rel": "self", "href": ""}]}]})
