"""createBackup (nova's compute/api.py backup): a snapshot image marked
image_type=backup with its backup_type, then only the newest ``rotation`` backups of that
type of the server are kept (older ones deleted), as nova's _rotate_backups."""
from __future__ import annotations

import logging

from pocketstack.common import exceptions
from pocketstack.compute import actions
from pocketstack.clients.image import ImageClient

LOG = logging.getLogger(__name__)


def create_backup(ctx, inst, name: str, backup_type: str, rotation: int,
                  metadata: dict) -> str:
    if (inst.request_spec or {}).get("is_bfv"):
        raise exceptions.BadRequest("Backup is not supported for volume-backed instances.")
    client = ImageClient(ctx)
    image = actions.snapshot(ctx, inst, lambda: client.create(**dict(
        metadata, name=name, disk_format="qcow2", container_format="bare",
        instance_uuid=inst.uuid, image_type="backup", backup_type=backup_type)),
        "createBackup")
    backups = [i for i in client.list(instance_uuid=inst.uuid)
               if i.get("instance_uuid") == inst.uuid and i.get("image_type") == "backup"
               and i.get("backup_type") == backup_type
               and i["id"] != image["id"]]
    backups.sort(key=lambda i: i.get("created_at") or "", reverse=True)
    for old in backups[max(rotation - 1, 0):]:
        LOG.info("Rotating out backup %s of %s", old["id"], inst.uuid)
        client.delete(old["id"])
    return image["id"]
