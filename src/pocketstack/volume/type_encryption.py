"""Volume type encryption (cinder's volume_type_encryption extension): how volumes of a
type are encrypted (provider, cipher, key size, where). Admin only; refused with 400 once a
volume of the type exists, as cinder. A volume of a LUKS type is LUKS on its backend
(luks.py); ``volume_metadata`` is cinder's per-volume view nova reads at attach."""
from __future__ import annotations

import uuid

import sqlalchemy as sa

from pocketstack.common import db, exceptions, numbers, policy
from pocketstack.common.timeutils import isotime_naive, utcnow
from pocketstack.volume import validation
from pocketstack.volume.models import Volume, VolumeType, VolumeTypeEncryption
from pocketstack.volume.types import TypeNotFound

FIELDS = ("provider", "cipher", "key_size", "control_location")
LOCATIONS = ("front-end", "back-end")


class EncryptionNotFound(exceptions.NotFound):
    def __init__(self, type_id: str):
        super().__init__(f"Volume type encryption for type {type_id} does not exist.")


def _authorize(ctx, action: str) -> None:
    policy.authorize(ctx, f"volume_extension:volume_type_encryption:{action}", {})


def _check_type(s, type_id: str) -> None:
    if s.get(VolumeType, type_id) is None:
        raise TypeNotFound(type_id)


def _in_use(s, type_id: str) -> bool:
    return s.scalar(sa.select(Volume.id).where(Volume.volume_type_id == type_id)
                    .limit(1)) is not None


def _validate(body, required: bool) -> dict:
    """cinder's schemas/volume_type_encryption.py; other keys are allowed and echoed."""
    if not isinstance(body, dict) or set(body) != {"encryption"} \
            or not isinstance(body["encryption"], dict):
        raise validation.bad("Invalid input for field/attribute encryption. 'encryption' is "
                             "a required property and the only one allowed")
    spec = dict(body["encryption"])
    for name in ("provider", "control_location") if required else ():
        if name not in spec:
            raise validation.bad(f"Invalid input for field/attribute encryption. "
                                 f"'{name}' is a required property")
    if "provider" in spec:
        validation.text(spec["provider"], "provider", nullable=False)
    if "cipher" in spec:
        validation.text(spec["cipher"], "cipher")
    if "control_location" in spec and spec["control_location"] not in LOCATIONS:
        raise validation.bad(f"Invalid input for field/attribute control_location. Value: "
                             f"{spec['control_location']!r}. {spec['control_location']!r} "
                             f"is not one of {list(LOCATIONS)}")
    if spec.get("key_size") is not None:
        size = spec["key_size"]
        text = size.strip() if isinstance(size, str) else size
        if isinstance(size, bool) or not (isinstance(size, int) or (
                numbers.is_int_text(text))) or int(text) < 0:  # ASCII, within int64
            raise validation.bad(f"Invalid input for field/attribute key_size. Value: "
                                 f"{size!r}. key_size must be non-negative")
        spec["key_size"] = int(text)
        if spec["key_size"] > validation.MAX_INT:
            raise validation.bad(f"Invalid input for field/attribute key_size. Value: "
                                 f"{size!r}. It is greater than the maximum of "
                                 f"{validation.MAX_INT}")
    return spec


def view(row: VolumeTypeEncryption) -> dict:
    return {"volume_type_id": row.volume_type_id, "encryption_id": row.encryption_id,
            "provider": row.provider, "cipher": row.cipher, "key_size": row.key_size,
            "control_location": row.control_location,
            "created_at": isotime_naive(row.created_at),
            "updated_at": isotime_naive(row.updated_at), "deleted": False,
            "deleted_at": None}


def get(ctx, type_id: str) -> dict:
    """The type's encryption, or {} when it has none (cinder's index)."""
    _authorize(ctx, "get")
    with db.reader() as s:
        _check_type(s, type_id)
        row = s.get(VolumeTypeEncryption, type_id)
        return view(row) if row else {}


def show_key(ctx, type_id: str, key: str) -> dict:
    found = get(ctx, type_id)
    if key not in found:
        raise EncryptionNotFound(type_id)
    return {key: found[key]}


def create(ctx, type_id: str, body) -> dict:
    _authorize(ctx, "create")
    spec = _validate(body, required=True)
    with db.transaction() as s:
        # cinder looks at the volumes before the type itself
        if _in_use(s, type_id):
            raise exceptions.BadRequest("Cannot create encryption specs. Volume type in use.")
        _check_type(s, type_id)
        if s.get(VolumeTypeEncryption, type_id) is not None:
            raise exceptions.BadRequest(f"Volume type encryption for type {type_id} already "
                                        "exists.")
        spec.setdefault("volume_type_id", type_id)
        spec.setdefault("encryption_id", str(uuid.uuid4()))
        s.add(VolumeTypeEncryption(volume_type_id=type_id,
                                   encryption_id=str(spec["encryption_id"]),
                                   **{k: spec.get(k) for k in FIELDS}))
    return {"encryption": spec}


def update(ctx, type_id: str, body) -> dict:
    _authorize(ctx, "update")
    spec = _validate(body, required=False)
    unknown = sorted(set(spec) - set(FIELDS))
    if unknown:  # cinder's database update would fail on them; say so instead
        raise validation.bad(f"Invalid input received: {', '.join(unknown)} cannot be "
                             "updated.")
    with db.transaction() as s:
        _check_type(s, type_id)
        if _in_use(s, type_id):
            raise exceptions.BadRequest("Cannot update encryption specs. Volume type in use.")
        row = s.get(VolumeTypeEncryption, type_id)
        if row is None:
            raise EncryptionNotFound(type_id)
        for key, value in spec.items():
            setattr(row, key, value)
        row.updated_at = utcnow()
    return {"encryption": spec}


def delete(ctx, type_id: str) -> None:
    _authorize(ctx, "delete")
    with db.transaction() as s:
        if _in_use(s, type_id):
            raise exceptions.BadRequest("Cannot delete encryption specs. Volume type in use.")
        row = s.get(VolumeTypeEncryption, type_id)
        if row is None:
            raise EncryptionNotFound(type_id)
        s.delete(row)


def volume_metadata(ctx, volume_id: str) -> dict:
    """cinder's volume_encryption_metadata (GET /volumes/{id}/encryption): the volume's key
    id, with its type's provider, cipher, key size and control location when encrypted."""
    from pocketstack.volume import api

    with db.reader() as s:
        volume = api.load(s, ctx, volume_id)
        policy.authorize(ctx, "volume_extension:volume_encryption_metadata",
                         api.target(volume))
        out = {"encryption_key_id": volume.encryption_key_id}
        spec = s.scalar(sa.select(VolumeTypeEncryption).where(
            VolumeTypeEncryption.volume_type_id == volume.volume_type_id)) \
            if volume.volume_type_id else None
        if spec is not None:
            out.update({field: getattr(spec, field) for field in FIELDS})
        return out
