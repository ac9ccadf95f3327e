"""createImage of a volume-backed server (nova's compute/api.py snapshot_volume_backed).

The server has no local disk to copy: each of its volumes is snapshotted in the volume
service (forced, as the volumes are in use), and the image made is zero bytes of data
whose properties map those snapshots (``block_device_mapping`` as JSON, ``bdm_v2``,
``root_device_name``). A server booted from that image gets new volumes made from the
snapshots (the image-defined mappings in block_devices.py).
"""
from __future__ import annotations

import json
import logging
import time

from pocketstack.clients.image import ImageClient
from pocketstack.clients.volume import VolumeClient
from pocketstack.common import db, exceptions
from pocketstack.compute import block_devices, trace
from pocketstack.compute.actions import SNAPSHOT_STATES
from pocketstack.compute.guards import check
from pocketstack.compute.trace import Step

LOG = logging.getLogger(__name__)
UNDO_WAIT = 30.0  # seconds a snapshot of a failed request may take to be made

# The mapping fields an image keeps (nova's get_image_mapping: everything but the
# database's own columns and the connection).
_IMAGE_MAPPING_KEYS = ("device_name", "device_type", "disk_bus", "guest_format", "boot_index",
                       "volume_size", "delete_on_termination", "tag", "volume_type")


def snapshot_volume_backed(ctx, inst, name: str, properties: dict) -> dict:
    check(ctx, inst, SNAPSHOT_STATES, "createImage")
    rows = [r for r in block_devices.for_instance(inst.uuid) if r.volume_id]
    volumes = VolumeClient(ctx)
    # Over quota halfway through the volumes would leave snapshots behind: checked first,
    # as nova does (a best effort: a concurrent request may still take the last one).
    limits = volumes.absolute_limits()
    if 0 <= limits["maxTotalSnapshots"] < limits["totalSnapshotsUsed"] + len(rows):
        raise exceptions.OverQuota("Quota exceeded for snapshots: Requested "
                                   f"{len(rows)}, but already used "
                                   f"{limits['totalSnapshotsUsed']} of "
                                   f"{limits['maxTotalSnapshots']} snapshots")
    with db.transaction() as s:
        trace.start_action(s, ctx, inst.uuid, "createImage")
    step = Step(ctx, inst.uuid, "api_snapshot_instance", "api", None)
    mapping, made, image = [], [], None
    images = ImageClient(ctx)
    try:
        for row in rows:
            volume = volumes.get(row.volume_id) or {}
            snap = volumes.create_snapshot_force(row.volume_id, f"snapshot for {name}",
                                                 volume.get("description"))
            made.append(snap["id"])
            mapping.append(image_mapping(row, snap["id"]))
        image = images.create(**dict(
            properties, name=name, disk_format="raw", container_format="bare",
            root_device_name=inst.root_device_name or block_devices.ROOT_DEVICE,
            bdm_v2="True", block_device_mapping=json.dumps(mapping)))
        # No data: an empty upload makes the image active (nova's force_activate).
        images.upload(image["id"], b"")
    except exceptions.PocketstackError as error:
        if image is not None:
            images.delete(image["id"])
        _undo(volumes, made)
        step.fail(error)
        with db.transaction() as s:
            trace.store(s, [step])
            trace.finish_action(s, ctx.request_id, inst.uuid)
        raise
    with db.transaction() as s:
        trace.store(s, [step.done(detail=f"{len(made)} volume snapshot(s) in image "
                                         f"{image['id']}")])
        trace.finish_action(s, ctx.request_id, inst.uuid)
    return image


def image_mapping(row, snapshot_id: str) -> dict:
    """nova's snapshot_from_bdm(...).get_image_mapping(): the server's mapping, its source
    now the snapshot."""
    out = {"source_type": "snapshot", "destination_type": "volume",
           "snapshot_id": snapshot_id, "volume_id": None, "image_id": None,
           "no_device": None}
    for key in _IMAGE_MAPPING_KEYS:
        out[key] = getattr(row, key)
    out["delete_on_termination"] = bool(out["delete_on_termination"])
    return out


def _undo(volumes: VolumeClient, snapshot_ids: list[str]) -> None:
    """Delete the snapshots a failed request made (the volume service deletes a snapshot
    only once it is made: each gets a bounded wait)."""
    for snapshot_id in snapshot_ids:
        deadline = time.monotonic() + UNDO_WAIT
        while ((volumes.get_snapshot(snapshot_id) or {}).get("status") == "creating"
               and time.monotonic() < deadline):
            time.sleep(0.1)
        try:
            volumes.delete_snapshot(snapshot_id)
        except exceptions.PocketstackError as error:
            LOG.warning("Could not delete snapshot %s of a failed createImage: %s",
                        snapshot_id, error)
