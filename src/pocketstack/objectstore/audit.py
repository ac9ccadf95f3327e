"""`pocketstack audit`'s object store checks: files under the store that no object holds
(what a crash mid-upload leaves; the store's hourly sweep removes them too)."""
from __future__ import annotations

from pocketstack.common import rgw
from pocketstack.objectstore import api, blobs, store


def problems(s) -> list[str]:
    if rgw.enabled():  # the bytes are the gateway's
        return []
    return [f"object store {'blob' if blobs.is_blob(found) else 'file'} {found} is held by "
            "no object (an upload cut short)"
            for found in sorted(store.orphans(api.all_files, min_age=0))]
