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
        import threading

        resp = self.request("GET", f"/images/{image_id}/file", stream=True, ok=(200, 204))
        size = 0
        # A part file of its own: two builds of one image on one host download at once,
        # and with a shared name one renamed the other's file away (ENOENT, a reschedule).
        part = f"{path}.part.{os.getpid()}.{threading.get_ident()}"
        with open(part, "wb") as f:
            for chunk in resp.iter_content(1 << 20):
                f.write(chunk)
                size += len(chunk)
        os.replace(part, path)
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
