"""Block device mappings on the API side (nova's block_device.py and the BDM half of
compute/api.py): turn a create request's block_device_mapping_v2 (or legacy
block_device_mapping) into volume mappings, check them against the volume service with
the user's token, reserve the existing volumes, and name the devices.

Only mappings with a volume destination become rows (compute_block_device_mappings); the
image a server boots from locally stays its image_ref, and local blank disks (swap,
ephemeral) stay in the request spec as before.
"""
from __future__ import annotations

import json
import re
import string
import uuid as uuidlib

import sqlalchemy as sa

from pocketstack.common import db, exceptions
from pocketstack.clients.volume import VolumeClient
from pocketstack.compute.models import BlockDeviceMapping

ROOT_DEVICE = "/dev/vda"
_DEVICE = re.compile(r"^(/dev/)?(x?[a-z]?d?)([a-z]+)[0-9]*$")


def _bad(details: str) -> exceptions.BadRequest:
    return exceptions.BadRequest(f"Block Device Mapping is Invalid: {details}")


def _bool(value) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "t", "true", "on", "y", "yes")
    return bool(value)


def _int(value, what: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise _bad(f"{what} is invalid.") from None


def prepend_dev(name: str | None) -> str | None:
    if not name:
        return None
    return name if name.startswith("/dev/") else "/dev/" + name


# --- request → mappings ------------------------------------------------------------------

def _from_v2(api: dict, image_specified: bool) -> dict:
    """nova's BlockDeviceDict.from_api, with its messages."""
    source = api.get("source_type")
    dest = api.get("destination_type") or ("local" if source in ("image", "blank")
                                           else "volume")
    uuid = api.get("uuid")
    if api.get("no_device"):
        return {}
    if not source:
        raise _bad("Some required fields are missing")
    if source == "blank" and uuid:
        raise _bad("Invalid device UUID.")
    if source != "blank" and not uuid:
        raise _bad("Missing device UUID.")
    boot_index = _int(api.get("boot_index"), "Boot index")
    if source == "image" and dest == "local" and not (image_specified and boot_index == 0):
        raise _bad("Mapping image to local is not supported.")
    if dest == "local" and api.get("volume_type"):
        raise _bad("Specifying a volume_type with destination_type=local is not supported.")
    if source == "volume" and api.get("volume_type"):
        raise _bad("Specifying volume type to existing volume is not supported.")
    if source in ("volume", "snapshot") and dest != "volume":
        raise _bad(f"Mapping {source} to local is not supported.")
    return {"source_type": source, "destination_type": dest, "boot_index": boot_index,
            "device_name": prepend_dev(api.get("device_name")),
            "volume_id": uuid if source == "volume" else None,
            "image_id": uuid if source == "image" else None,
            "snapshot_id": uuid if source == "snapshot" else None,
            "volume_size": _int(api.get("volume_size"), "Volume size"),
            "volume_type": api.get("volume_type") or None,
            "delete_on_termination": _bool(api.get("delete_on_termination")),
            "tag": api.get("tag"), "disk_bus": api.get("disk_bus"),
            "device_type": api.get("device_type"), "guest_format": api.get("guest_format")}


def _from_legacy(api: dict, image_ref: str) -> dict:
    """nova's BlockDeviceDict.from_legacy: volume_id / snapshot_id / virtual_name."""
    virtual = api.get("virtual_name") or ""
    if virtual == "swap" or virtual.startswith("ephemeral"):
        return {"source_type": "blank", "destination_type": "local", "boot_index": -1,
                "guest_format": "swap" if virtual == "swap" else None,
                "volume_size": _int(api.get("volume_size"), "Volume size"),
                "delete_on_termination": True, "device_name": prepend_dev(
                    api.get("device_name"))}
    if api.get("no_device"):
        return {}
    device = prepend_dev(api.get("device_name"))
    if api.get("snapshot_id"):
        source = "snapshot"
    elif api.get("volume_id"):
        source = "volume"
    else:
        raise _bad("Unrecognized legacy format.")
    # The device named like the root (or the first one, with no image) is the boot disk.
    root = device == ROOT_DEVICE or (not image_ref and device in (None, ROOT_DEVICE))
    return {"source_type": source, "destination_type": "volume",
            "boot_index": 0 if root else -1, "device_name": device,
            "volume_id": api.get("volume_id") if source == "volume" else None,
            "snapshot_id": api.get("snapshot_id") if source == "snapshot" else None,
            "image_id": None, "volume_size": _int(api.get("volume_size"), "Volume size"),
            "volume_type": None, "tag": None,
            "delete_on_termination": _bool(api.get("delete_on_termination"))}


def parse(v2: list, legacy: list, image_ref: str, max_count: int,
          image_defined: list[dict] | None = None) -> list[dict]:
    """The request's mappings, normalized and checked without asking anyone (400s).
    ``image_defined``: the image's own mappings (``image_defined()``), merged in as nova's
    _check_and_transform_bdm does."""
    if v2 and legacy:
        raise exceptions.BadRequest("Using different block_device_mapping syntaxes is not "
                                    "allowed in the same request.")
    image_defined = image_defined or []
    image_root = any(b.get("boot_index") == 0 for b in image_defined)
    if legacy:
        bdms = [_from_legacy(b, image_ref) for b in legacy]
    else:
        bdms = [_from_v2(dict(b), bool(image_ref)) for b in v2]
    bdms = [b for b in bdms if b]
    if image_root:
        # The image's own root (a snapshot of a volume-backed server's root) replaces the
        # image-to-local root the client sends along with the image.
        bdms = [b for b in bdms if not (b.get("boot_index") == 0
                                        and b["source_type"] == "image")]
    if image_defined:
        # nova's _merge_bdms_lists: the request's mappings override the image's by device
        overridden = {b.get("device_name") for b in bdms if b.get("device_name")}
        bdms = [b for b in image_defined if b.get("device_name") not in overridden] + bdms
    if image_ref and not any(b.get("boot_index") == 0 for b in bdms):
        # nova wants the client to send the image's own mapping; the CLI and SDK do,
        # other callers get it added.
        bdms.insert(0, image_bdm(image_ref))
    if not bdms:
        return []
    boot = sorted(b["boot_index"] for b in bdms
                  if b.get("boot_index") is not None and b["boot_index"] >= 0)
    if not boot or any(i != v for i, v in enumerate(boot)):
        raise _bad("Boot sequence for the instance and image/block device mapping "
                   "combination is not valid.")
    for b in bdms:
        if b["source_type"] == "blank" and b.get("boot_index") == 0 and not image_ref:
            # With an image, nova boots whatever the root mapping is (a blank volume too).
            raise exceptions.BadRequest("Blank device cannot be the boot device.")
        if b["destination_type"] != "volume":
            continue
        if b["source_type"] == "image" and not b.get("volume_size"):
            raise exceptions.BadRequest("Images with destination_type 'volume' need to have "
                                        "a non-zero size specified")
        if b["source_type"] == "blank" and not b.get("volume_size"):
            raise exceptions.BadRequest("Blank volumes (source: 'blank', dest: 'volume') "
                                        "need to have non-zero size")
        if b.get("device_name") and not _DEVICE.match(b["device_name"]):
            raise _bad(f"Device name {b['device_name']} is invalid.")
        if image_ref and b.get("boot_index") != 0 and b.get("device_name") == ROOT_DEVICE:
            raise exceptions.BadRequest("The volume cannot be assigned the same device name "
                                        "as the root device /dev/vda")
    if max_count > 1 and any(b["source_type"] == "volume" for b in bdms):
        raise exceptions.BadRequest("Cannot attach one or more volumes to multiple instances")
    volume_ids = [b["volume_id"] for b in bdms if b.get("volume_id")]
    if len(volume_ids) != len(set(volume_ids)):
        raise exceptions.BadRequest("Invalid volume: the same volume is mapped twice")
    return bdms


def image_defined(image: dict | None) -> list[dict]:
    """The mappings an image carries in its ``block_device_mapping`` property (a
    snapshot of a volume-backed server: its volumes' snapshots), normalized as a
    request's; v2 dicts when ``bdm_v2`` is set, nova's legacy ones otherwise."""
    raw = (image or {}).get("block_device_mapping")
    if not raw:
        return []
    try:
        items = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        raise _bad(f"the block_device_mapping of image {image.get('id')} is not JSON.") \
            from None
    if not isinstance(items, list) or not all(isinstance(b, dict) for b in items):
        raise _bad(f"the block_device_mapping of image {image.get('id')} is not a list of "
                   "mappings.")
    if not _bool(image.get("bdm_v2", False)):
        return [b for b in (_from_legacy(b, "") for b in items) if b]
    out = []
    for b in items:
        uuid = b.get("snapshot_id") or b.get("volume_id") or b.get("image_id")
        out.append(_from_v2(dict(b, uuid=uuid), False))
    return [b for b in out if b]


def image_bdm(image_ref: str) -> dict:
    return {"source_type": "image", "destination_type": "local", "boot_index": 0,
            "image_id": image_ref, "delete_on_termination": True, "device_type": "disk"}


def volume_backed(bdms: list[dict]) -> bool:
    return any(b.get("boot_index") == 0 and b["destination_type"] == "volume" for b in bdms)


def volumes_of(bdms: list[dict]) -> list[dict]:
    return [b for b in bdms if b["destination_type"] == "volume"]


# --- checks against the volume service ------------------------------------------------------

def _is_true(value) -> bool:
    return value is True or str(value).lower() == "true"


def check(ctx, bdms: list[dict], image_get, image_given: bool = False) -> dict | None:
    """Every volume, snapshot and image the mappings name exists for the user and is
    usable (nova's _validate_bdm, 400s with its messages); fills in sizes. Returns the
    boot volume's image metadata when the server boots from a volume ({} if it has none),
    None when it boots from an image. A boot volume must be bootable only when the request
    gives no image (nova reads the boot volume's image metadata only then)."""
    client = VolumeClient(ctx)
    boot_meta = None
    types = None
    for b in volumes_of(bdms):
        boot = b.get("boot_index") == 0
        if b.get("volume_type"):
            if types is None:
                types = client.volume_types()
            if not any(b["volume_type"] in (t.get("id"), t.get("name")) for t in types):
                raise exceptions.BadRequest(f"Volume type {b['volume_type']} could not be "
                                            "found.")
        if b["source_type"] == "volume":
            volume = client.get(b["volume_id"])
            if volume is None:
                raise _bad(f"failed to get volume {b['volume_id']}.")
            if volume.get("status") != "available":
                raise exceptions.BadRequest(
                    f"Invalid volume: volume '{b['volume_id']}' status must be 'available'. "
                    f"Currently in '{volume.get('status')}'")
            if boot and not image_given and not _is_true(volume.get("bootable", True)):
                raise exceptions.BadRequest(f"Block Device {b['volume_id']} is not bootable.")
            b["volume_size"] = volume.get("size")
            if boot:
                boot_meta = _volume_image_meta(volume)
        elif b["source_type"] == "snapshot":
            snap = client.get_snapshot(b["snapshot_id"])
            if snap is None:
                raise _bad(f"failed to get snapshot {b['snapshot_id']}.")
            b["volume_size"] = b.get("volume_size") or snap.get("size")
            if boot:
                boot_meta = {}
        elif b["source_type"] == "image":
            image = image_get(b["image_id"])
            if image is None or image.get("status") != "active":
                raise _bad(f"failed to get image {b['image_id']}.")
            size = image.get("size") or 0
            if size > b["volume_size"] * 1024 ** 3 or (image.get("min_disk") or 0) > \
                    b["volume_size"]:
                raise exceptions.BadRequest(
                    f"Volume is smaller than the minimum size specified in image metadata. "
                    f"Volume size is {b['volume_size'] * 1024 ** 3} bytes, minimum size is "
                    f"{max(size, (image.get('min_disk') or 0) * 1024 ** 3)} bytes.")
            if boot:
                boot_meta = {k: v for k, v in image.items()
                             if k in ("id", "name", "min_ram", "min_disk", "disk_format",
                                      "container_format", "size")}
        elif boot:
            boot_meta = {}
    return boot_meta


def _volume_image_meta(volume: dict) -> dict:
    """The image a bootable volume was made from, in the image service's keys."""
    meta = volume.get("volume_image_metadata") or {}
    out = {k: v for k, v in meta.items() if k.startswith(("hw_", "img_"))}
    out.update(id=meta.get("image_id"), name=meta.get("image_name"),
               min_ram=_int_or_zero(meta.get("min_ram")),
               min_disk=_int_or_zero(meta.get("min_disk")),
               disk_format=meta.get("disk_format"),
               container_format=meta.get("container_format"), size=meta.get("size"))
    return out


def _int_or_zero(value) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def reserve(ctx, bdms: list[dict], instance_uuid: str) -> list[str]:
    """Reserve the existing volumes for the server (attachment_create without a connector,
    as nova's API does); undoes its own reservations when one fails."""
    client = VolumeClient(ctx)
    made: list[str] = []
    try:
        for b in volumes_of(bdms):
            if b["source_type"] == "volume":
                try:
                    b["attachment_id"] = client.attachment_create(b["volume_id"],
                                                                  instance_uuid)["id"]
                except exceptions.NotFound:
                    raise _bad(f"failed to get volume {b['volume_id']}.") from None
                except exceptions.BadRequest as error:
                    raise exceptions.BadRequest(f"Invalid volume: {error.message}") from None
                made.append(b["attachment_id"])
    except Exception:
        unreserve(ctx, made)
        raise
    return made


def unreserve(ctx, attachment_ids: list[str]) -> None:
    client = VolumeClient(ctx)
    for attachment_id in attachment_ids:
        try:
            client.attachment_delete(attachment_id)
        except exceptions.PocketstackError:
            pass


# --- device names and rows ----------------------------------------------------------------

def next_device_name(used: set[str], prefix: str = "/dev/vd") -> str:
    """The first free /dev/vdX after the root (nova's get_next_device_name)."""
    for letters in _names():
        name = prefix + letters
        if name not in used:
            return name
    raise exceptions.BadRequest("No free disk device names for prefix 'vd'")


def _names():
    for a in string.ascii_lowercase:
        yield a
    for a in string.ascii_lowercase:
        for b in string.ascii_lowercase:
            yield a + b


def rows_for(bdms: list[dict], instance_uuid: str) -> list[dict]:
    """Column values of the instance's volume mappings, devices named (root /dev/vda)."""
    vols = volumes_of(bdms)
    used = {ROOT_DEVICE}
    for b in vols:
        if b.get("boot_index") != 0 and b.get("device_name"):
            used.add(b["device_name"])
    out = []
    for b in sorted(vols, key=lambda b: (b.get("boot_index") != 0,)):
        if b.get("boot_index") == 0:
            device = ROOT_DEVICE
        else:
            device = b.get("device_name")
            if not device or device in {r["device_name"] for r in out}:
                device = next_device_name(used)
            used.add(device)
        out.append({"uuid": str(uuidlib.uuid4()), "instance_uuid": instance_uuid,
                    "source_type": b["source_type"], "destination_type": "volume",
                    "boot_index": b.get("boot_index"), "device_name": device,
                    "device_type": b.get("device_type") or "disk",
                    "disk_bus": b.get("disk_bus"), "guest_format": b.get("guest_format"),
                    "volume_id": b.get("volume_id"), "image_id": b.get("image_id"),
                    "snapshot_id": b.get("snapshot_id"), "volume_size": b.get("volume_size"),
                    "volume_type": b.get("volume_type"),
                    "delete_on_termination": bool(b.get("delete_on_termination")),
                    "tag": b.get("tag"), "attachment_id": b.get("attachment_id"),
                    "connection_info": None})
    return out


# Built once: every delete reads them (most servers have none).
_OF_INSTANCE = (sa.select(BlockDeviceMapping)
                .where(BlockDeviceMapping.instance_uuid == sa.bindparam("uuid"))
                .order_by(BlockDeviceMapping.boot_index != 0, BlockDeviceMapping.id))


def for_instance(instance_uuid: str, session=None) -> list[BlockDeviceMapping]:
    """The server's mappings, boot disk first, then in the order they were made."""
    params = {"uuid": instance_uuid}
    if session is not None:
        return list(session.scalars(_OF_INSTANCE, params).all())
    with db.reader() as s:
        rows = list(s.scalars(_OF_INSTANCE, params).all())
        s.expunge_all()
        return rows


def attached_volumes(session, uuids) -> dict[str, list[tuple[str, bool]]]:
    """{instance uuid: [(volume id, delete_on_termination)]} for server views; ``uuids`` a
    list or a SELECT of ids."""
    out: dict[str, list] = {}
    for uuid, volume_id, dot in session.execute(
            sa.select(BlockDeviceMapping.instance_uuid, BlockDeviceMapping.volume_id,
                      BlockDeviceMapping.delete_on_termination)
            .where(BlockDeviceMapping.instance_uuid.in_(uuids),
                   BlockDeviceMapping.volume_id.is_not(None))
            .order_by(BlockDeviceMapping.id)):
        out.setdefault(uuid, []).append((volume_id, bool(dot)))
    return out


def update(bdm_id: int, values: dict, expect: dict | None = None) -> bool:
    """Set columns of one mapping; with ``expect``, only while those columns still hold
    those values (a cleanup never clears what a newer attempt wrote)."""
    stmt = sa.update(BlockDeviceMapping).where(BlockDeviceMapping.id == bdm_id)
    for column, value in (expect or {}).items():
        col = getattr(BlockDeviceMapping, column)
        stmt = stmt.where(col.is_(None) if value is None else col == value)
    from pocketstack.common.timeutils import utcnow

    with db.transaction() as s:
        return s.execute(stmt.values(**values, updated_at=utcnow())).rowcount > 0
