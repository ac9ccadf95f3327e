"""Glance v2 through its REST API (seed steps 19-21)."""
from __future__ import annotations

from pocketstack.common import exceptions
from pocketstack.compute.clients.base import Client


class ImageClient(Client):
    base_path = "/image/v2"

    def get(self, image_id: str) -> dict | None:
        try:
            return self.request("GET", f"/images/{image_id}").json()
        except exceptions.NotFound:
            return None

    def download(self, image_id: str, path: str) -> int:
        """Stream the image data into ``path``; returns the size."""
        import os
        import uuid

        resp = self.request("GET", f"/images/{image_id}/file", stream=True, ok=(200, 204))
        size = 0
        # A temp name of its own: builds on hosts sharing a cache may fetch one image at
        # once, and each renames a complete file into place.
        part = f"{path}.{uuid.uuid4().hex}.part"
        try:
            with open(part, "wb") as f:
                for chunk in resp.iter_content(1 << 20):
                    f.write(chunk)
                    size += len(chunk)
            os.replace(part, path)
        finally:
            if os.path.exists(part):
                os.unlink(part)
        return size

    def create(self, **fields) -> dict:
        return self.request("POST", "/images", json=fields, ok=(201,)).json()

    def upload(self, image_id: str, data: bytes) -> None:
        headers_ok = (204, 201, 200)
        from pocketstack.compute.clients.base import session

        resp = session().request(self.url + f"/images/{image_id}/file", "PUT", data=data,
                                 headers={"X-Auth-Token": self.token,
                                          "Content-Type": "application/octet-stream"},
                                 raise_exc=False, log=False)
        if resp.status_code not in headers_ok:
            self._error(resp)

    def delete(self, image_id: str) -> None:
        try:
            self.request("DELETE", f"/images/{image_id}", ok=(204,))
        except exceptions.NotFound:
            pass

    def list(self, **params) -> list[dict]:
        return self.request("GET", "/images", params=dict(params, limit=1000)).json()["images"]
