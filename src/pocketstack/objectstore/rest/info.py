"""GET /info: what this object store supports, as swift's proxy lists it (clients such as
python-swiftclient and openstacksdk decide which features to use from it)."""
from __future__ import annotations

import json

from pocketstack.common import config
from pocketstack.objectstore import constraints
from pocketstack.objectstore.rest import (bulk, common, large_objects, object_versioning,
                                          staticweb, symlinks, versioning)
from pocketstack.wsgi import routing


def capabilities() -> dict:
    conf = config.CONF.objectstore
    return {
        "swift": constraints.info(),
        "tempurl": {"methods": sorted(conf.tempurl_methods),
                    "incoming_remove_headers": ["x-timestamp"],
                    "incoming_allow_headers": [],
                    "outgoing_remove_headers": ["x-object-meta-*"],
                    "outgoing_allow_headers": ["x-object-meta-public-*"],
                    "allowed_digests": sorted(conf.tempurl_digests)},
        "keystoneauth": {},
        "slo": large_objects.info(),
        "dlo": {"max_segments": 10000},
        "bulk_delete": bulk.info(),
        "container_quotas": {},
        "account_quotas": {},
        "versioned_writes": versioning.info(),
        "object_versioning": object_versioning.info(),
        "formpost": {},
        "symlink": symlinks.info(),
        "staticweb": staticweb.info(),
    }


@routing.public
def show(req):
    body = json.dumps(capabilities()).encode()
    if req.method == "HEAD":
        return common.response(200, b"", content_type="application/json; charset=UTF-8")
    return common.response(200, body, content_type="application/json; charset=UTF-8")
