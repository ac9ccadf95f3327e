"""QoS specs (cinder's qos_specs_manage extension and volume/qos_specs.py): admin-defined
limits that volume types point to through ``qos_specs_id``. Pocketstack's backends do not
enforce them; clients and orchestration tools create, associate and read them."""
from __future__ import annotations

import re
import uuid

import sqlalchemy as sa

from pocketstack.common import db, exceptions, policy
from pocketstack.common.timeutils import utcnow
from pocketstack.volume import api, validation
from pocketstack.volume.models import QosSpecs, VolumeType
from pocketstack.volume.types import TypeNotFound

CONSUMERS = ("front-end", "back-end", "both")
SORT_KEYS = ("id", "name", "consumer", "created_at", "updated_at")
# cinder's parameter_types.extra_specs_with_null key pattern
_KEY = re.compile(r"^[a-zA-Z0-9-_:. ]{1,255}$")


class QosSpecsNotFound(exceptions.NotFound):
    def __init__(self, specs_id: str):
        super().__init__(f"No such QoS spec {specs_id}.")


class InvalidQosSpecs(exceptions.BadRequest):
    def __init__(self, reason: str):
        super().__init__(f"Invalid qos specs: {reason}")


def _authorize(ctx, action: str) -> None:
    policy.authorize(ctx, f"volume_extension:qos_specs_manage:{action}", {})


def load(s, specs_id: str, *, lock: bool = False) -> QosSpecs:
    stmt = sa.select(QosSpecs).where(QosSpecs.id == specs_id)
    if lock:
        stmt = stmt.with_for_update()
    found = s.scalar(stmt)
    if found is None:
        raise QosSpecsNotFound(specs_id)
    return found


def _type(s, type_id: str) -> VolumeType:
    vt = s.get(VolumeType, type_id)
    if vt is None:
        raise TypeNotFound(type_id)
    return vt


def _string_values(specs: dict) -> None:
    """cinder's utils.validate_dictionary_string_length: strings of at most 255."""
    for key, value in specs.items():
        if not 1 <= len(key) <= 255:
            raise validation.bad(f"Invalid input received: {key} has a minimum character "
                                 "requirement of 1 and a maximum of 255.")
        if value is None:
            continue
        if not isinstance(value, str):
            raise validation.bad(f"Invalid input received: {value!r} is not a string or "
                                 "unicode")
        if len(value) > 255:
            raise validation.bad(f"Invalid input received: {key} has more than 255 "
                                 "characters.")


def _consumer(value) -> str:
    if value not in CONSUMERS:
        raise InvalidQosSpecs(f"Valid consumer of QoS specs are: {list(CONSUMERS)}")
    return value


def create(ctx, body) -> QosSpecs:
    _authorize(ctx, "create")
    if not isinstance(body, dict) or set(body) != {"qos_specs"} \
            or not isinstance(body["qos_specs"], dict):
        raise validation.bad("Invalid input for field/attribute qos_specs. 'qos_specs' is a "
                             "required property and the only one allowed")
    specs = dict(body["qos_specs"])
    if "name" not in specs:
        raise validation.bad("Invalid input for field/attribute qos_specs. 'name' is a "
                             "required property")
    name = specs.pop("name")
    if not isinstance(name, str) or not name.strip():
        raise validation.bad("Invalid input for field/attribute name. Value: "
                             f"{name!r}. Name has a minimum character requirement of 1.")
    name = name.strip()
    if len(name) > 255:
        raise validation.bad("Invalid input for field/attribute name. Name has more than "
                             "255 characters.")
    _string_values(specs)
    consumer = _consumer(specs.pop("consumer")) if specs.get("consumer") else "back-end"
    specs.pop("consumer", None)
    row = QosSpecs(id=str(uuid.uuid4()), name=name, consumer=consumer, specs=specs)
    try:
        with db.transaction() as s:
            if s.scalar(sa.select(QosSpecs.id).where(QosSpecs.name == name)):
                raise exceptions.Conflict(f"QoS Specs {name} already exists.")
            s.add(row)
    except sa.exc.IntegrityError as error:  # a concurrent create of the same name
        if db.is_duplicate(error):
            raise exceptions.Conflict(f"QoS Specs {name} already exists.") from None
        raise
    return row


def list_specs(ctx, query) -> list[QosSpecs]:
    _authorize(ctx, "get_all")
    keys = api.sort_params(query, SORT_KEYS)
    limit, marker, offset = api.limit_marker(query)
    with db.reader() as s:
        items = list(s.scalars(sa.select(QosSpecs)).all())
    # cinder filters on these and drops any other filter silently
    for key in ("id", "name", "consumer"):
        if key in query:
            items = [q for q in items if getattr(q, key) == query[key]]
    return api.paginate(items, keys, marker, limit, offset, getattr,
                        missing=QosSpecsNotFound)


def get(ctx, specs_id: str) -> QosSpecs:
    _authorize(ctx, "get")
    with db.reader() as s:
        return load(s, specs_id)


def update(ctx, specs_id: str, body) -> dict:
    """Merge keys into the specs (``consumer`` sets the consumer); answers the body."""
    _authorize(ctx, "update")
    if not isinstance(body, dict) or set(body) != {"qos_specs"} \
            or not isinstance(body["qos_specs"], dict):
        raise validation.bad("Invalid input for field/attribute qos_specs. 'qos_specs' is a "
                             "required property and the only one allowed")
    specs = body["qos_specs"]
    for key, value in specs.items():
        if not _KEY.match(key):
            raise validation.bad(f"Invalid input for field/attribute qos_specs. Additional "
                                 f"properties are not allowed ({key!r} was unexpected)")
        if value is not None and (not isinstance(value, str) or len(value) > 255):
            raise validation.bad(f"Invalid input for field/attribute {key}. Value: "
                                 f"{value!r}. Expected a string of at most 255 characters "
                                 "or null.")
    with db.transaction() as s:
        row = load(s, specs_id, lock=True)
        merged = dict(row.specs or {})
        for key, value in specs.items():
            if key == "consumer":
                row.consumer = _consumer(value)
            else:
                merged[key] = value
        row.specs, row.updated_at = merged, utcnow()
    return {"qos_specs": dict(specs)}


def delete(ctx, specs_id: str, force: bool) -> None:
    _authorize(ctx, "delete")
    with db.transaction() as s:
        row = load(s, specs_id, lock=True)
        users = s.scalars(sa.select(VolumeType).where(VolumeType.qos_specs_id == row.id)).all()
        if users and not force:
            raise exceptions.BadRequest("Qos specs still in use.")
        for vt in users:
            vt.qos_specs_id, vt.updated_at = None, utcnow()
        s.delete(row)


def delete_keys(ctx, specs_id: str, body) -> None:
    """Delete keys in order; as cinder, the keys before a missing one stay deleted."""
    _authorize(ctx, "delete")
    if not isinstance(body, dict) or set(body) != {"keys"} or not isinstance(
            body["keys"], list):
        raise validation.bad("Invalid input for field/attribute keys. 'keys' is a required "
                             "property and must be an array")
    keys = body["keys"]
    if any(not isinstance(k, str) or not 1 <= len(k) <= 255 for k in keys) \
            or len(set(keys)) != len(keys):
        raise validation.bad(f"Invalid input for field/attribute keys. Value: {keys!r}. "
                             "Expected unique strings of 1 to 255 characters.")
    missing = None
    with db.transaction() as s:
        row = load(s, specs_id, lock=True)
        specs = dict(row.specs or {})
        for key in keys:
            if key not in specs:
                missing = key
                break
            del specs[key]
        row.specs, row.updated_at = specs, utcnow()
    if missing is not None:
        raise exceptions.NotFound(f"QoS spec {specs_id} has no spec with key {missing}.")


def associations(ctx, specs_id: str) -> list[dict]:
    _authorize(ctx, "get_all")
    with db.reader() as s:
        load(s, specs_id)
        found = s.scalars(sa.select(VolumeType).where(VolumeType.qos_specs_id == specs_id)
                          .order_by(VolumeType.name)).all()
        return [{"association_type": "volume_type", "name": vt.name, "id": vt.id}
                for vt in found]


def _type_id(query) -> str:
    type_id = query.get("vol_type_id")
    if not type_id:
        raise exceptions.BadRequest("Volume Type id must not be None.")
    return type_id


def associate(ctx, specs_id: str, query) -> None:
    _authorize(ctx, "update")
    type_id = _type_id(query)
    with db.transaction() as s:
        load(s, specs_id)
        vt = _type(s, type_id)
        if vt.qos_specs_id and vt.qos_specs_id != specs_id:
            raise exceptions.BadRequest(
                f"Invalid volume type: Type {type_id} is already associated with another "
                f"qos specs: {vt.qos_specs_id}")
        if vt.qos_specs_id != specs_id:
            vt.qos_specs_id, vt.updated_at = specs_id, utcnow()


def disassociate(ctx, specs_id: str, query) -> None:
    _authorize(ctx, "update")
    type_id = _type_id(query)
    with db.transaction() as s:
        load(s, specs_id)
        vt = _type(s, type_id)
        if vt.qos_specs_id == specs_id:
            vt.qos_specs_id, vt.updated_at = None, utcnow()


def disassociate_all(ctx, specs_id: str) -> None:
    _authorize(ctx, "update")
    with db.transaction() as s:
        load(s, specs_id)
        for vt in s.scalars(sa.select(VolumeType).where(VolumeType.qos_specs_id == specs_id)):
            vt.qos_specs_id, vt.updated_at = None, utcnow()
