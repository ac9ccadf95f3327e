"""os-volume_attachments: attach and detach volumes on an existing server (nova's
compute API attach_volume / detach_volume). The API checks what it can with the user's
token — the volume exists for the user, is not attached to this server already — names
the device, writes the mapping and reserves the volume (attachment_create: an in-use
volume fails here, with the volume service's reason, and nothing is written); the host
then connects and hot-plugs it (compute/manager/volumes.py). Both are synchronous calls,
so the volume is in-use (or available again) when the request returns.
"""
from __future__ import annotations

import uuid as uuidlib

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.compute import block_devices, states, trace
from pocketstack.clients.volume import VolumeClient
from pocketstack.compute.models import BlockDeviceMapping
from pocketstack.compute.trace import Step

# nova's attach_volume / detach_volume states (no shelve here yet)
OK_VM_STATES = (states.ACTIVE, states.PAUSED, states.STOPPED, states.RESIZED)


def _check(ctx, inst, action: str) -> None:
    from pocketstack.compute.guards import check_locked, host_up, invalid_state

    check_locked(ctx, inst)
    if inst.vm_state not in OK_VM_STATES:
        raise invalid_state(inst, action)
    if inst.task_state is not None:
        raise invalid_state(inst, action, "task_state")
    if not host_up(inst.host):
        raise exceptions.Conflict(f"Cannot '{action}' instance {inst.uuid}: its compute host "
                                  f"{inst.host or '-'} is not up.")


def _not_attached(inst, volume_id: str) -> exceptions.NotFound:
    return exceptions.NotFound(f"Instance {inst.uuid} is not attached to volume {volume_id}")


def mapping(inst, volume_id: str) -> BlockDeviceMapping:
    row = next((r for r in block_devices.for_instance(inst.uuid)
                if r.volume_id == volume_id), None)
    if row is None:
        raise _not_attached(inst, volume_id)
    return row


def _reserve(client: VolumeClient, volume_id: str, instance_uuid: str) -> str:
    """attachment_create: a volume the user cannot see is a 404, one that is not
    available (or not multiattach) the volume service's 400."""
    try:
        return client.attachment_create(volume_id, instance_uuid)["id"]
    except exceptions.NotFound:
        raise exceptions.NotFound(f"Volume {volume_id} could not be found.") from None
    except exceptions.BadRequest as error:
        raise exceptions.BadRequest(f"Invalid volume: {error.message}") from None


def _add_mapping(ctx, inst, values: dict, requested: str | None) -> None:
    """Write the mapping (and the action) with a free device name; the unique index on
    (server, device) settles a race between two attaches."""
    for _ in range(5):
        used = {r.device_name for r in block_devices.for_instance(inst.uuid)}
        used.add(inst.root_device_name or block_devices.ROOT_DEVICE)
        if requested and requested in used:
            raise exceptions.Conflict(f"The supplied device path ({requested}) is in use.")
        values["device_name"] = requested or block_devices.next_device_name(used)
        try:
            with db.transaction() as s:
                s.execute(sa.insert(BlockDeviceMapping), [values])
                trace.start_action(s, ctx, inst.uuid, "attach_volume")
                trace.store(s, [Step(ctx, inst.uuid, "api_attach_volume", "api", None,
                                     f"{values['volume_id']} as {values['device_name']}"
                                     ).done()])
            return
        except sa.exc.IntegrityError:
            continue
    raise exceptions.Conflict(f"The supplied device path ({values['device_name']}) is in "
                              "use.")


def attach(ctx, inst, volume_id: str, device: str | None = None, tag: str | None = None,
           delete_on_termination: bool = False) -> str:
    """Attach; returns the device name (a synchronous call to the host, as interfaces)."""
    from pocketstack.compute.actions import compute_rpc

    _check(ctx, inst, "attach_volume")
    if any(r.volume_id == volume_id for r in block_devices.for_instance(inst.uuid)):
        raise exceptions.BadRequest(f"Invalid volume: volume {volume_id} already attached")
    client = VolumeClient(ctx)
    values = {"uuid": str(uuidlib.uuid4()), "instance_uuid": inst.uuid,
              "source_type": "volume", "destination_type": "volume", "boot_index": None,
              "device_type": "disk", "volume_id": volume_id, "tag": tag,
              "delete_on_termination": bool(delete_on_termination),
              "attachment_id": _reserve(client, volume_id, inst.uuid)}
    try:
        _add_mapping(ctx, inst, values, block_devices.prepend_dev(device))
    except Exception:
        client.attachment_delete(values["attachment_id"])
        raise
    compute_rpc.attach_volume(ctx, inst.host, inst.uuid, values["uuid"])
    return values["device_name"]


def detach(ctx, inst, volume_id: str) -> None:
    from pocketstack.compute.actions import compute_rpc

    client = VolumeClient(ctx)
    row = mapping(inst, volume_id)  # nova asks the volume service first: 404 either way
    if row.boot_index == 0:
        raise exceptions.BadRequest("Cannot detach a root device volume")
    _check(ctx, inst, "detach_volume")
    try:
        client.begin_detaching(volume_id)
    except exceptions.BadRequest as error:
        raise exceptions.BadRequest(f"Invalid volume: {error.message}") from None
    with db.transaction() as s:
        trace.start_action(s, ctx, inst.uuid, "detach_volume")
        trace.store(s, [Step(ctx, inst.uuid, "api_detach_volume", "api", None,
                             f"{volume_id} from {row.device_name}").done()])
    try:
        compute_rpc.detach_volume(ctx, inst.host, inst.uuid, volume_id)
    except Exception:
        # The host did not detach it (its own failures roll back too; twice is harmless):
        # the volume goes back to in-use rather than staying in detaching.
        try:
            client.roll_detaching(volume_id)
        except exceptions.PocketstackError:
            pass
        raise


def set_delete_on_termination(inst, volume_id: str, value: bool) -> None:
    row = mapping(inst, volume_id)
    block_devices.update(row.id, {"delete_on_termination": value})
