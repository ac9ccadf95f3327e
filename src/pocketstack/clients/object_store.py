"""The Swift API of the catalog's object-store endpoint (the embedded service or the
cloud's RADOS Gateway), as glance's swift store and cinder's swift backup driver call it:
an account — the calling service's own (its user's project, glance's single-tenant store)
or, given a user's context, the user's (cinder's per_user backups) — its containers and
objects."""
from __future__ import annotations

import urllib.parse

from pocketstack.clients import service_users
from pocketstack.clients.base import Client
from pocketstack.common import config, exceptions, rgw


def account_url(project_id: str) -> str:
    """The object-store endpoint of ``project_id``, as the catalog names it."""
    if rgw.enabled():
        return rgw.catalog_url().replace("$(project_id)s", project_id)
    return (f"{config.public_url()}/object-store/v1/"
            f"{config.CONF.objectstore.reseller_prefix}{project_id}")


def quote(name: str) -> str:
    return urllib.parse.quote(name, safe="")


class ObjectStoreClient(Client):
    def __init__(self, ctx=None, *, caller: str, as_service: bool = False,
                 project_id: str | None = None):
        """``project_id``: the account of another project than the user's (an admin's)."""
        own = ctx is None or as_service
        super().__init__(ctx, caller=caller, as_service=own)
        self.project_id = service_users.project_id(caller) if own else \
            (project_id or ctx.project_id)
        url = account_url(self.project_id)
        public = config.public_url()
        if url.startswith(public + "/"):  # served here: in-process where it can be
            self.base_path = url[len(public):]
        else:
            self.endpoint = url
        self.account_url = url

    def _error(self, resp):
        text = resp.text[:300] if hasattr(resp, "text") else ""
        if resp.status_code == 404:
            raise exceptions.NotFound(text or "Not Found")
        if resp.status_code == 413:
            raise exceptions.PayloadTooLarge(f"The object store refused: {text}")
        return super()._error(resp)

    def ensure_container(self, container: str) -> None:
        self.request("PUT", "/" + quote(container), ok=(201, 202))

    def put(self, container: str, name: str, data, *, headers=None, timeout=300.0) -> str:
        """PUT an object (bytes or a file object, streamed); its ETag."""
        resp = self.request("PUT", f"/{quote(container)}/{quote(name)}", data=data,
                            headers=headers, ok=(201,), timeout=timeout)
        return resp.headers.get("ETag", "").strip('"')

    def head(self, container: str, name: str) -> dict | None:
        try:
            resp = self.request("HEAD", f"/{quote(container)}/{quote(name)}")
        except exceptions.NotFound:
            return None
        return {k.lower(): v for k, v in resp.headers.items()}

    def get(self, container: str, name: str, *, byte_range: tuple[int, int] | None = None,
            timeout: float = 300.0) -> bytes:
        headers = {"Range": f"bytes={byte_range[0]}-{byte_range[1]}"} if byte_range else None
        resp = self.request("GET", f"/{quote(container)}/{quote(name)}", headers=headers,
                            ok=(200, 206), timeout=timeout)
        return resp.content

    def list(self, container: str, prefix: str = "") -> list[str]:
        """Names of the container's objects under ``prefix`` (all pages)."""
        names, marker = [], ""
        while True:
            try:
                resp = self.request("GET", "/" + quote(container), params={
                    "format": "json", "prefix": prefix, "marker": marker})
            except exceptions.NotFound:
                return names
            page = [o["name"] for o in resp.json()] if resp.status_code == 200 else []
            if not page:
                return names
            names += page
            marker = page[-1]

    def delete(self, container: str, name: str) -> bool:
        """Whether it was there."""
        try:
            self.request("DELETE", f"/{quote(container)}/{quote(name)}")
        except exceptions.NotFound:
            return False
        return True
