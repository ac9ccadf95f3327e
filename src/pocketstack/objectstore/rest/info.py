"""GET /info: what this object store supports, as swift's proxy lists it (clients such as
python-swiftclient and openstacksdk decide which features to use from it). With
``[objectstore] backend = rgw`` the cloud's object store is the RADOS Gateway, which does
much less (no object versioning, symlinks, FormPOST...): then this answers the gateway's
own /swift/info, so no client is told of a feature the cloud's object store lacks."""
from __future__ import annotations

import json
import urllib.error
import urllib.request

from pocketstack.common import config, rgw
from pocketstack.objectstore import constraints
from pocketstack.objectstore.errors import SwiftError
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


def _gateway_capabilities() -> bytes:
    url = rgw.base_url() + "/swift/info"
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.read()
    except (OSError, urllib.error.URLError):
        raise SwiftError(503, "The object store's gateway does not answer") from None


@routing.public
def show(req):
    body = _gateway_capabilities() if rgw.enabled() else json.dumps(capabilities()).encode()
    if req.method == "HEAD":
        return common.response(200, b"", content_type="application/json; charset=UTF-8")
    return common.response(200, body, content_type="application/json; charset=UTF-8")
