"""Glance v2 through its REST API: what compute (seed steps 19-21) and volume (an image
into a volume, a volume into an image) ask of it."""
from __future__ import annotations

import os
import uuid
from typing import Iterator

from pocketstack.clients.base import Client
from pocketstack.common import exceptions


class ImageClient(Client):
    base_path = "/image/v2"

    def get(self, image_id: str) -> dict | None:
        return self.find(f"/images/{image_id}")

    def list(self, **params) -> list[dict]:
        return self.request("GET", "/images", params=dict(params, limit=1000)).json()["images"]

    def chunks(self, image_id: str, size: int = 4 << 20) -> Iterator[bytes]:
        resp = self.request("GET", f"/images/{image_id}/file", stream=True, ok=(200, 204),
                            timeout=600)
        try:
            yield from resp.iter_content(size)
        finally:
            resp.close()

    def download(self, image_id: str, path: str) -> int:
        """Stream the image data into ``path``; returns the size."""
        size = 0
        # A temp name of its own: builds on hosts sharing a cache may fetch one image at
        # once, and each renames a complete file into place.
        part = f"{path}.{uuid.uuid4().hex}.part"
        try:
            with open(part, "wb") as f:
                for chunk in self.chunks(image_id, 1 << 20):
                    f.write(chunk)
                    size += len(chunk)
            os.replace(part, path)
        finally:
            if os.path.exists(part):
                os.unlink(part)
        return size

    def create(self, **fields) -> dict:
        return self.request("POST", "/images", json=fields, ok=(201,)).json()

    def upload(self, image_id: str, data) -> None:
        """Upload ``data`` (bytes or a file object) as the image's data."""
        self.request("PUT", f"/images/{image_id}/file", data=data, ok=(200, 201, 204),
                     headers={"Content-Type": "application/octet-stream"}, timeout=3600)

    def delete(self, image_id: str) -> None:
        try:
            self.request("DELETE", f"/images/{image_id}", ok=(204,))
        except exceptions.NotFound:
            pass

    # --- what nova's /images proxy below 2.36 asks: the answer as glance gave it, so
    # the caller can show glance's refusals as nova's --------------------------------------

    def list_page(self, **params):
        """One page of ``GET /v2/images`` (a filter's list value is sent repeated)."""
        return self.request("GET", "/images", params=params, ok=(200, 400))

    def fetch(self, image_id: str):
        return self.request("GET", f"/images/{image_id}", ok=(200, 403, 404))

    def remove(self, image_id: str):
        return self.request("DELETE", f"/images/{image_id}", ok=(204, 403, 404, 409))

    def patch(self, image_id: str, changes: list[dict]):
        """glance's JSON patch (``op`` add/replace/remove on ``/<property>``)."""
        return self.request(
            "PATCH", f"/images/{image_id}", json=changes, ok=(200, 400, 403, 404, 409, 413),
            headers={"Content-Type": "application/openstack-images-v2.1-json-patch"})
