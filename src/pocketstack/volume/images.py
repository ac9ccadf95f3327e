"""The image service through its REST API (as cinder talks to glance): image metadata,
downloads into a volume and uploads of a volume, with the caller's token (or pocketstack's
service token for work that outlives it)."""
from __future__ import annotations

from typing import Iterator

from pocketstack.common import exceptions
from pocketstack.compute.clients.base import Client, session


class ImageClient(Client):
    base_path = "/image/v2"

    def get(self, image_id: str) -> dict | None:
        try:
            return self.request("GET", f"/images/{image_id}").json()
        except exceptions.NotFound:
            return None

    def chunks(self, image_id: str, size: int = 4 << 20) -> Iterator[bytes]:
        resp = self.request("GET", f"/images/{image_id}/file", stream=True, ok=(200, 204),
                            timeout=600)
        try:
            yield from resp.iter_content(size)
        finally:
            resp.close()

    def create(self, **fields) -> dict:
        return self.request("POST", "/images", json=fields, ok=(201,)).json()

    def upload(self, image_id: str, data) -> None:
        """Upload ``data`` (bytes or a file object) as the image's data."""
        resp = session().request(self.url + f"/images/{image_id}/file", "PUT", data=data,
                                 headers={"X-Auth-Token": self.token,
                                          "Content-Type": "application/octet-stream"},
                                 raise_exc=False, log=False, timeout=3600)
        if resp.status_code not in (200, 201, 204):
            self._error(resp)

    def delete(self, image_id: str) -> None:
        try:
            self.request("DELETE", f"/images/{image_id}", ok=(204,))
        except exceptions.NotFound:
            pass


def get_image(ctx, image_id: str) -> dict | None:
    return ImageClient(ctx).get(image_id)
