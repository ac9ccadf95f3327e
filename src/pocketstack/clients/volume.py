"""Cinder v3 through its REST API (seed steps 25-27), the calls nova's
nova/volume/cinder.py makes since Queens: volumes and snapshots to look at and create,
and the attachments API (3.27+) to attach —

    attachment_create (reserve) → attachment_update (host connector → connection_info)
    → attachment_complete (in-use);  attachment_delete to detach.

The URL carries no project id (Cinder accepts both forms since Yoga), so the same call
works with the user's token and with the service token of a background cleanup.
"""
from __future__ import annotations

import platform

from pocketstack.common import exceptions
from pocketstack.clients.base import Client, ServiceError

# 3.44: attachment_complete; everything else here needs at most that.
MICROVERSION = "3.44"


def connector(host: str, mountpoint: str | None = None) -> dict:
    """What the host tells the volume service about itself (os-brick's connector)."""
    out = {"host": host, "ip": "127.0.0.1", "platform": platform.machine() or "x86_64",
           "os_type": "linux", "multipath": False, "do_local_attach": False,
           "initiator": f"iqn.2026-11.org.pocketstack:{host}"}
    if mountpoint:
        out["mountpoint"] = mountpoint
        out["mode"] = "rw"
    return out


class VolumeClient(Client):
    base_path = "/volume/v3"

    def request(self, method, path, *, microversion: str = MICROVERSION, **kwargs):
        # The base class sends no microversion; the attachments API needs one.
        return super().request(method, path, headers={
            "OpenStack-API-Version": f"volume {microversion}"}, **kwargs)

    def _error(self, resp):
        """Cinder's {"badRequest": {"message": ...}}: keep the message a user can act on."""
        try:
            body = resp.json()
            message = next(iter(body.values()))["message"]
        except (ValueError, StopIteration, KeyError, TypeError, AttributeError):
            return super()._error(resp)
        error = {404: exceptions.NotFound, 409: exceptions.Conflict,
                 400: exceptions.BadRequest, 403: exceptions.BadRequest}.get(resp.status_code)
        if error is None:  # 413 over quota, 5xx: the build fails with the service's words
            raise ServiceError(f"The volume service answered {resp.status_code}: {message}")
        raise error(message)

    # --- volumes and snapshots -----------------------------------------------------------

    def get(self, volume_id: str) -> dict | None:
        return self.find(f"/volumes/{volume_id}", "volume")

    def create(self, size: int, *, name: str = "", image_id: str | None = None,
               snapshot_id: str | None = None, volume_type: str | None = None,
               availability_zone: str | None = None, description: str | None = None,
               metadata: dict | None = None) -> dict:
        body = {"size": size, "name": name, "description": description}
        if metadata:
            body["metadata"] = metadata
        if image_id:
            body["imageRef"] = image_id
        if snapshot_id:
            body["snapshot_id"] = snapshot_id
        if volume_type:
            body["volume_type"] = volume_type
        if availability_zone:
            body["availability_zone"] = availability_zone
        return self.request("POST", "/volumes", json={"volume": body},
                            ok=(200, 202)).json()["volume"]

    def list(self, **params) -> list[dict]:
        return self.request("GET", "/volumes/detail", params=params).json()["volumes"]

    def delete(self, volume_id: str) -> bool:
        try:
            self.request("DELETE", f"/volumes/{volume_id}", ok=(202, 204))
            return True
        except exceptions.NotFound:
            return False

    def force_delete(self, volume_id: str) -> None:
        """os-force_delete (admin): whatever the volume's status, e.g. still being created."""
        self.request("POST", f"/volumes/{volume_id}/action",
                     json={"os-force_delete": {}}, ok=(202, 204))

    def get_snapshot(self, snapshot_id: str) -> dict | None:
        return self.find(f"/snapshots/{snapshot_id}", "snapshot")

    def create_snapshot_force(self, volume_id: str, name: str,
                              description: str | None = None) -> dict:
        """A snapshot of a volume that may be in use (nova's create_snapshot_force)."""
        body = {"volume_id": volume_id, "name": name, "description": description,
                "force": True}
        resp = self.request("POST", "/snapshots", json={"snapshot": body}, ok=(200, 202, 413))
        if resp.status_code == 413:  # the project's snapshot or gigabyte quota
            raise exceptions.OverQuota(next(iter(resp.json().values()))["message"])
        return resp.json()["snapshot"]

    def delete_snapshot(self, snapshot_id: str) -> None:
        try:
            self.request("DELETE", f"/snapshots/{snapshot_id}", ok=(202, 204))
        except exceptions.NotFound:
            pass

    def absolute_limits(self) -> dict:
        return self.request("GET", "/limits").json()["limits"]["absolute"]

    def volume_types(self) -> list[dict]:
        return self.request("GET", "/types").json()["volume_types"]

    def begin_detaching(self, volume_id: str) -> None:
        self.request("POST", f"/volumes/{volume_id}/action",
                     json={"os-begin_detaching": {}}, ok=(202, 204))

    def roll_detaching(self, volume_id: str) -> None:
        self.request("POST", f"/volumes/{volume_id}/action",
                     json={"os-roll_detaching": {}}, ok=(202, 204))

    def reimage(self, volume_id: str, image_id: str, reimage_reserved: bool = False) -> None:
        """os-reimage: the volume service writes the image over the volume and answers
        with a volume-reimaged external event."""
        self.request("POST", f"/volumes/{volume_id}/action",
                     json={"os-reimage": {"image_id": image_id,
                                          "reimage_reserved": reimage_reserved}},
                     ok=(202,), microversion="3.68")  # the action exists from 3.68 on

    # --- attachments (3.27+) --------------------------------------------------------------

    def attachment_create(self, volume_id: str, instance_uuid: str,
                          connector: dict | None = None) -> dict:
        """Reserve the volume for the server (connector None), or reserve and connect."""
        body = {"volume_uuid": volume_id, "instance_uuid": instance_uuid}
        if connector is not None:
            body["connector"] = connector
        return self.request("POST", "/attachments", json={"attachment": body},
                            ok=(200, 202)).json()["attachment"]

    def attachment_update(self, attachment_id: str, connector: dict) -> dict:
        """Hand the host's connector over; the answer carries the connection_info."""
        return self.request("PUT", f"/attachments/{attachment_id}",
                            json={"attachment": {"connector": connector}}
                            ).json()["attachment"]

    def attachment_complete(self, attachment_id: str) -> None:
        self.request("POST", f"/attachments/{attachment_id}/action",
                     json={"os-complete": None}, ok=(200, 202, 204))

    def attachment_list(self, **params) -> list[dict]:
        """GET /attachments (filters: instance_id, volume_id; all_tenants for admins)."""
        return self.request("GET", "/attachments", params=params).json()["attachments"]

    def attachment_delete(self, attachment_id: str) -> bool:
        try:
            self.request("DELETE", f"/attachments/{attachment_id}", ok=(200, 202, 204))
            return True
        except exceptions.NotFound:
            return False
